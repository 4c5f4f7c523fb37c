// A small decoder-only transformer with nanoGPT's architecture, trained and run in the engine:
//   x = wte[token] + wpe[position]
//   per block: x += c_proj(attention(c_attn(ln_1(x))))   (causal, heads / kvHeads, scale 1/√headDim)
//              x += c_proj(GELU(c_fc(ln_2(x))))            (unless mlp is false)
//   logits = ln_f(x) · lm_headᵀ                             (lm_head = wte when tied)
// One contiguous buffer holds every parameter (params.h); gradients and the two AdamW moments are buffers of
// the same layout. Activations live in a workspace sized for the largest batch seen, kept for the backward.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "../scratch.h"
#include "../status.h"
#include "config.h"
#include "params.h"

namespace attnlab::model {

// AdamW as PyTorch's torch.optim.AdamW, with PyTorch's defaults; weight decay applies to matrices and embeddings
// only (nanoGPT's configure_optimizers). grad_clip > 0 scales the gradient to that global L2 norm when above it.
struct TrainOptions {
  float lr = 1e-3f;
  float weight_decay = 0.01f;
  float beta1 = 0.9f, beta2 = 0.999f;
  float eps = 1e-8f;
  float grad_clip = 0.0f;
};

struct GenerateOptions {
  std::size_t max_tokens = 0;
  float temperature = 1.0f;  // 0: greedy (the first most likely token)
  std::size_t top_k = 0;     // sample among the k most likely tokens (and any tied with the k-th); 0: all
  std::uint64_t seed = 0;    // the sampler's seed: equal seeds give equal samples
};

struct NamedTensor {
  std::string_view name;        // a state_dict() name (params.h)
  std::span<const float> data;  // in nanoGPT's layout: nn.Linear weights [out, in]
};

class GPT {
 public:
  // A validated config and freshly initialized weights (seeded), or the error that names the bad field.
  static Status create(const GPTConfig& config, std::unique_ptr<GPT>& out);

  const GPTConfig& config() const noexcept { return config_; }
  const ParamLayout& layout() const noexcept { return layout_; }
  std::size_t parameter_count() const noexcept { return layout_.total; }
  std::uint64_t steps() const noexcept { return steps_; }  // AdamW updates applied so far
  // Bytes of wasm/native heap the model holds now: parameters, gradients, moments, workspace, KV cache.
  std::size_t memory_bytes() const noexcept;

  // One AdamW step on a batch of sequences: tokens and targets are [batch × seq] (seq ≤ context), a target of
  // −1 is ignored. `loss` gets the mean cross-entropy before the update. A non-finite loss or gradient is a
  // numerical error and nothing changes; so does every argument error.
  Status train_step(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets, std::size_t seq,
                    const TrainOptions& options, float& loss);
  // Forward, loss and backward without the update: gradients() then holds dL/dθ (parameter layout).
  Status compute_gradients(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                           std::size_t seq, float& loss);

  // Data-parallel training: a batch cut into parts (whole sequences), each part's gradient computed by a replica
  // of this model, the parts summed and applied once.
  // Every check train_step makes on its arguments, computing nothing: the same errors, the same messages.
  Status check_step(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets, std::size_t seq,
                    const TrainOptions& options) const;
  // One part of a batch whose counted targets (≥ 0) number `normalizer` in all: gradients() gets the gradient of
  // (the sum of this part's per-token losses) / normalizer, so the parts' gradients sum to the whole batch's
  // (summed in another order); loss_sum gets that sum of losses, in double. A part may have no counted target
  // (zero gradient). A non-finite loss_sum is returned as it is, without the backward (gradients() is then
  // stale): the caller adds the parts' sums and check_loss names the whole batch's loss.
  Status partial_gradients(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                           std::size_t seq, std::size_t normalizer, double& loss_sum);
  // The error train_step gives for a mean loss that is not finite (success when it is).
  static Status check_loss(double mean);

  // The checks that read no token or value, for a caller that places its tensors only once a call is known to
  // fit (lengths in elements; the errors and messages are the calls' own):
  // train_step's options,
  static Status check_options(const TrainOptions& options);
  // the shape of a batch of tokens (a positive multiple of seq, seq ≤ context) and of its targets (as long),
  Status check_sizes(std::size_t tokens, std::size_t targets, std::size_t seq) const;
  // forward()'s, with the lengths its outputs need (attention: 0 unless wanted),
  Status forward_sizes(std::size_t tokens, std::size_t seq, bool want_attention, std::size_t& logits,
                       std::size_t& attention) const;
  // generate()'s (out: the output's length, options.max_tokens).
  Status check_generate(std::size_t prompt, const GenerateOptions& options, std::size_t out) const;
  // train_step's AdamW update with a gradient from elsewhere (parameter layout, e.g. partial_gradients' parts
  // summed): grad_clip on this gradient, then one step. A bad option or length, or a non-finite gradient, changes
  // nothing (weights, moments, step count). Given compute_gradients' gradients it is train_step, bit for bit.
  Status apply_gradients(std::span<const float> grads, const TrainOptions& options);

  // The same update by slices of the parameter layout, each slice owned by one replica (the async step's
  // workers): reduce_slice sums `parts` (that many gradients of the slice, laid end to end, added in order into
  // gradients()[offset, offset + length)) and gives their sum of squares, in double over the float kernel's sums
  // of the chunks of kNormChunk floats that update() uses (a chunk cut by the slice's ends is summed in pieces, so
  // slices that start at multiples of kNormChunk add up to update()'s norm but for the order of the double sum);
  // update_slice then applies step `step` of AdamW to the slice with the global norm of the summed gradient (the
  // square root of the slices' sums), clipping as update() does. A non-finite norm is update()'s numerical error.
  static constexpr std::size_t kNormChunk = 4096;
  Status reduce_slice(std::size_t offset, std::size_t length, std::span<const float> parts, double& sum_squares);
  static Status check_norm(double norm);
  Status update_slice(std::size_t offset, std::size_t length, const TrainOptions& options, std::uint64_t step,
                      double norm);
  // Sets the count of AdamW updates applied (a replica's, or the model's after steps taken by replicas).
  void set_steps(std::uint64_t steps) noexcept { steps_ = steps; }
  // The AdamW moments (parameter layout): part 1 the first, 2 the second.
  std::span<const float> moments(int part) const noexcept { return {(part == 1 ? m_ : v_).data(), layout_.total}; }
  std::span<float> moments(int part) noexcept { return {(part == 1 ? m_ : v_).data(), layout_.total}; }
  // logits [batch × seq × vocab]; attention, when not empty, [layers × batch × heads × seq × seq].
  Status forward(std::span<const std::int32_t> tokens, std::size_t seq, std::span<float> logits,
                 std::span<float> attention);
  // Continues `prompt` (its last `context` tokens) by options.max_tokens tokens into out, with the model's
  // KV cache. Past the context each new token conditions on the last `context` tokens, as nanoGPT's generate.
  Status generate(std::span<const std::int32_t> prompt, const GenerateOptions& options, std::span<std::int32_t> out);

  // Weights in nanoGPT's layout (transposed back for nn.Linear weights).
  void read_tensor(const TensorInfo& t, float* out) const noexcept;
  // Any subset of the state dict; every name, length and value is checked before anything is written.
  // For a tied model lm_head.weight sets the shared embedding (equal to transformer.wte.weight if both given).
  Status set_weights(std::span<const NamedTensor> tensors);

  std::span<const float> parameters() const noexcept { return {params_.data(), layout_.total}; }
  std::span<float> parameters() noexcept { return {params_.data(), layout_.total}; }
  std::span<const float> gradients() const noexcept { return {grads_.data(), layout_.total}; }
  std::span<float> gradients() noexcept { return {grads_.data(), layout_.total}; }

 private:
  struct Workspace;  // activation buffers for a given number of tokens (gpt.cpp)
  GPT(const GPTConfig& c, ParamLayout layout, Scratch params, Scratch grads, Scratch m, Scratch v);
  Status check_tokens(std::span<const std::int32_t> tokens, const char* name, bool allow_ignore) const;
  Status check_batch(std::size_t length, std::size_t seq, const char* name) const;
  Status ensure_workspace(std::size_t batch, std::size_t seq);
  Status run_forward(const std::int32_t* tokens, std::size_t batch, std::size_t seq, float* attention,
                     bool fill_cache);
  Status run_backward(const std::int32_t* tokens, std::size_t batch, std::size_t seq);
  Status check_inputs(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                      std::size_t seq) const;
  Status loss_and_gradients(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                            std::size_t seq, std::size_t normalizer, double& loss_sum, std::size_t& count);
  Status update(const float* grads, const TrainOptions& options);  // the update, options already checked
  // AdamW step t on the parameters [begin, end) with the gradient g (parameter layout), scaled by gscale.
  void adamw_range(const float* g, std::size_t begin, std::size_t end, float gscale, std::uint64_t t,
                   const TrainOptions& options) noexcept;
  Status decode_step(std::int32_t token, std::size_t pos, float* logits, float* buf);
  void init_weights();

  GPTConfig config_;
  ParamLayout layout_;
  Scratch params_, grads_, m_, v_;
  std::uint64_t steps_ = 0;
  Scratch work_;  // the workspace's floats
  std::size_t work_batch_ = 0, work_seq_ = 0;
  Scratch cache_;  // KV cache [layers][2][kvHeads][context][headDim], allocated by the first generate
};

}  // namespace attnlab::model
