// A loaded decoder-only checkpoint (GPT-2, or Llama / Qwen2 / Mistral): its forward written out layer by layer on
// the engine's operators — the panel products of linear.h, attention (attention_impl.h) with its KV cache
// (kv_cache.h), RoPE (rope.h), LayerNorm and the other kernels — and generation token by token.
//
//   GPT-2:  x = wte[id] + wpe[pos];  per layer: x += c_proj(attn(ln_1(x)));  x += c_proj(gelu_new(c_fc(ln_2(x))))
//   Llama:  x = embed[id];           per layer: x += o(attn(rope(q), rope(k), v)(rms(x)));  x += down(silu(gate)·up)
//   logits = norm(x)·headᵀ  (head = the embedding when tied)
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
  const ModelWeights& weights() const noexcept { return w_->weights(); }
  std::size_t weight_bytes() const noexcept { return w_->bytes(); }
  // Bytes of memory the model holds now: weights, KV caches, activations, sampling buffers.
  std::size_t memory_bytes() const noexcept;

  // logits [n × vocab]; attention, when not empty, [layers × heads × n × n] (the softmax weights each head used).
  // Independent of any generation in progress.
  Status forward(std::span<const std::int32_t> ids, std::span<float> logits, std::span<float> attention);

  // Starts generating after `prompt`: at most max_tokens tokens (prompt + max_tokens ≤ context), stopping early after
  // a token of `stop`. Runs the prompt through the model into the KV caches. A new begin() ends the previous one.
  Status begin(std::span<const std::int32_t> prompt, std::size_t max_tokens, const Sampling& sampling,
               std::span<const std::int32_t> stop);
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

 private:
  LmModel() = default;
  Status check_ids(std::span<const std::int32_t> ids, const char* name) const;
  Status ensure_work(std::size_t n);
  Status ensure_caches(std::size_t capacity);
  // Rows [0, n) of ids at positions pos0 … : the layers; logits of the last `logit_rows` rows into `logits`.
  Status run(const std::int32_t* ids, std::size_t n, std::size_t pos0, bool use_cache, float* logits,
             std::size_t logit_rows, float* attention);

  std::unique_ptr<WeightSet> w_;
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
