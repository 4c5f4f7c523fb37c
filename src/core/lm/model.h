// A loaded decoder-only checkpoint (GPT-2, or Llama / Qwen2 / Mistral): its forward written out layer by layer on
// the engine's operators — the panel products of linear.h, attention (attention_impl.h) with its KV cache
// (kv_cache.h), RoPE (rope.h), LayerNorm and the other kernels — and generation token by token.
//
//   GPT-2:  x = wte[id] + wpe[pos];  per layer: x += c_proj(attn(ln_1(x)));  x += c_proj(gelu(c_fc(ln_2(x))))  (tanh form or exact)
//   Llama:  x = embed[id];           per layer: x += o(attn(rope(q), rope(k), v)(rms(x)));  x += down(silu(gate)·up)
//   logits = norm(x)·headᵀ  (head = the embedding when tied)
//
// A model is whole (one thread runs it) or one shard of a model cut across workers (shard.h: its WeightSet holds
// that shard's slices). Either way a step runs in phases — the embedding, each layer's attention and MLP, the
// logits — and a shard's phases each end with a partial sum of d_model floats per row that every shard must see:
// between two phases the caller exchanges them (parts()), and the next phase first adds them up in rank order
// (reduce, phase()). A whole model runs its phases itself (forward, begin, next), writing each sum in place.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "../kv_cache.h"
#include "../model/random.h"
#include "../scratch.h"
#include "../status.h"
#include "config.h"
#include "weights.h"

namespace attnlab::lm {

// How the next token is picked (Hugging Face's order: temperature, then top-k, then top-p).
struct Sampling {
  float temperature = 0.0f;  // 0: greedy (the first largest logit)
  std::size_t top_k = 0;     // 0: all
  float top_p = 1.0f;        // (0, 1]: the smallest set of most likely tokens holding at least this much probability
  std::uint64_t seed = 0;
};

class LmModel {
 public:
  static Status create(std::unique_ptr<WeightSet> weights, std::unique_ptr<LmModel>& out);

  const LmConfig& config() const noexcept { return w_->config(); }
  const ShardPlan& shard() const noexcept { return w_->shard(); }
  const ModelWeights& weights() const noexcept { return w_->weights(); }
  std::size_t weight_bytes() const noexcept { return w_->bytes(); }
  // Bytes of memory the model holds now: weights, KV caches, activations, sampling buffers.
  std::size_t memory_bytes() const noexcept;

  // logits [n × vocab]; attention, when not empty, [layers × heads × n × n] (the softmax weights each head used);
  // qkv, when not empty, per layer the queries, keys and values as the attention consumed them (after the
  // projections' biases and RoPE): q [n × heads × head_dim], then k and v [n × kv_heads × head_dim] each
  // (qkv_floats() a layer). Independent of any generation in progress.
  Status forward(std::span<const std::int32_t> ids, std::span<float> logits, std::span<float> attention,
                 std::span<float> qkv = {});
  // forward()'s checks that read no id, for n ids: the lengths its outputs need (attention, qkv: 0 unless wanted).
  Status forward_sizes(std::size_t n, bool want_attention, bool want_qkv, std::size_t& logits, std::size_t& attention,
                       std::size_t& qkv) const;
  // Floats of one layer's q, k and v for n rows (this shard's heads).
  std::size_t qkv_floats(std::size_t n) const noexcept;

  // Starts generating after `prompt`: at most max_tokens tokens (prompt + max_tokens ≤ context), stopping early after
  // a token of `stop`. Runs the prompt through the model into the KV caches. A new begin() ends the previous one.
  Status begin(std::span<const std::int32_t> prompt, std::size_t max_tokens, const Sampling& sampling,
               std::span<const std::int32_t> stop);
  // begin()'s checks that read no id, for a prompt of `prompt` ids.
  Status check_begin(std::size_t prompt, std::size_t max_tokens, const Sampling& sampling) const;
  // The next token; `done` when no other will follow (max_tokens reached, or a stop token). An error ends the
  // generation. After done, next() is an error until begin().
  Status next(std::int32_t& token, bool& done);
  std::size_t generated() const noexcept { return produced_; }
  bool active() const noexcept { return active_; }  // a generation is in progress and will give another token

  // Reads every weight byte once, the plainest way (kernels' stream_sum): what a decode step must stream, for
  // measuring memory bandwidth. Returns a checksum.
  std::uint32_t read_weights() const noexcept;

  // A tokenizer's largest id must be a row of the embedding: `what` names the tokenizer's file in the message.
  Status check_vocabulary(std::size_t largest_id, const char* what) const;

  // ---- A shard's step, in phases. Start one (each validates what forward / begin / next validate, with the same
  // messages), then run phase(0) … phase(last_phase()) in order; between two phases every shard's parts() must
  // hold all the shards' partial sums: rank r's at parts() + r·rows()·d_model (this shard wrote its own there).
  // A failed phase ends the step (and the generation).
  // forward: logits [n × this shard's vocabulary rows], attention (when not empty) [layers × its heads × n × n],
  // qkv (when not empty) forward()'s for its heads and K/V heads.
  Status step_forward(std::span<const std::int32_t> ids, std::span<float> logits, std::span<float> attention,
                      std::span<float> qkv = {});
  // The prompt; then every step_next() runs the last token chosen. After the last phase, the caller picks the
  // next token from every shard's logits (best(), or sample() over logits gathered into vocab_logits()) and
  // gives it to accept().
  Status step_begin(std::span<const std::int32_t> prompt, std::size_t max_tokens, const Sampling& sampling,
                    std::span<const std::int32_t> stop);
  Status step_next();
  std::size_t last_phase() const noexcept { return 2 * config().layers + 1; }
  Status phase(std::size_t p);
  std::size_t rows() const noexcept { return step_.n; }
  float* parts() noexcept { return work_.data() + parts_at_; }
  // A generation step's logits of its last row, this shard's vocabulary rows (after the last phase).
  const float* step_logits() const noexcept { return side_.data(); }
  // Greedy: this shard's first largest logit and its token id (−1 and −∞ for a shard without vocabulary rows).
  void best(float& value, std::int32_t& index) const noexcept;
  // Sampling: room for the whole vocabulary's logits (null when out of memory); sample() draws from them.
  float* vocab_logits() noexcept;
  std::int32_t sample() noexcept;
  const Sampling& sampling() const noexcept { return sampling_; }
  Status accept(std::int32_t token, bool& done);
  std::uint64_t phases_run() const noexcept { return phases_run_; }  // every phase this model ran

 private:
  LmModel() = default;
  Status check_ids(std::span<const std::int32_t> ids, const char* name) const;
  Status check_begin(std::span<const std::int32_t> prompt, std::size_t max_tokens, const Sampling& o,
                     std::span<const std::int32_t> stop) const;
  Status ensure_work(std::size_t n);
  Status ensure_caches(std::size_t capacity);
  // Rows [0, n) of ids at positions pos0 … : the layers; logits of the last `logit_rows` rows into `logits`
  // (this shard's columns of them, `ldl` apart).
  void start(const std::int32_t* ids, std::size_t n, std::size_t pos0, bool use_cache, float* logits, std::size_t ldl,
             std::size_t logit_rows, float* attention) noexcept;
  Status run(const std::int32_t* ids, std::size_t n, std::size_t pos0, bool use_cache, float* logits,
             std::size_t logit_rows, float* attention);
  Status embed();
  Status attend(std::size_t l);
  Status mlp(std::size_t l);
  Status head();
  void reduce(std::size_t from_phase) noexcept;

  std::unique_ptr<WeightSet> w_;
  // The step in progress (start()).
  struct Step {
    const std::int32_t* ids = nullptr;
    std::size_t n = 0, pos0 = 0, logit_rows = 0, ldl = 0, next = 0;
    bool use_cache = false, ready = false;
    bool generating = false, advance = false;  // a generation step (advance: one that runs the pending token)
    float *logits = nullptr, *attention = nullptr, *qkv = nullptr;
  } step_;
  std::vector<std::int32_t> step_ids_;
  std::size_t parts_at_ = 0;  // where parts() lies in the workspace
  std::uint64_t phases_run_ = 0;
  Scratch work_;
  std::size_t work_rows_ = 0;
  std::vector<std::unique_ptr<KvCache>> caches_;  // one per layer, `capacity_` tokens each
  std::size_t capacity_ = 0;
  Scratch side_;  // the last logits and sampling scratch: 4·vocab floats

  // The generation in progress.
  bool active_ = false;
  std::size_t position_ = 0, produced_ = 0, max_tokens_ = 0;
  std::int32_t pending_ = -1;  // the last token returned, not yet run through the model
  Sampling sampling_{};
  model::Rng rng_{0};
  std::vector<std::int32_t> stop_;
};

}  // namespace attnlab::lm
