#include "model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

#include "../attention_impl.h"
#include "../format.h"
#include "../kernels/kernels.h"
#include "../kernels/lm_kernels.h"
#include "../kernels/training.h"
#include "../model/random.h"
#include "../model/sampling.h"
#include "../rope.h"
#include "../size_math.h"
#include "../validate.h"
#include "linear.h"

namespace attnlab::lm {

namespace kern = kernels::active;
namespace lmk = kernels::lm_active;

namespace {

std::size_t sat_add(std::size_t a, std::size_t b) noexcept { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

// The activations of n rows, each buffer 16-byte aligned, in floats from the workspace's start.
struct Work {
  std::size_t x, h, q, k, v, att, ff1, ff2, gemm, total;
  Work(const LmConfig& c, std::size_t n) noexcept {
    std::size_t at = 0;
    auto take = [&](std::size_t floats) {
      const std::size_t o = at;
      at = sat_add(at, sat_add(floats, 3) & ~std::size_t{3});
      return o;
    };
    const std::size_t d = c.d_model;
    x = take(sat_mul(n, d));
    h = take(sat_mul(n, d));
    q = take(sat_mul(n, c.q_width()));
    k = take(sat_mul(n, c.kv_width()));
    v = take(sat_mul(n, c.kv_width()));
    att = take(sat_mul(n, c.q_width()));
    // GPT-2's fused q|k|v output lands in ff1 before it is split.
    ff1 = take(sat_mul(n, std::max(c.ffn, c.family == Family::gpt2 ? 3 * d : 0)));
    ff2 = take(c.family == Family::llama ? sat_mul(n, c.ffn) : 0);
    gemm = take(linear_scratch(n, std::max({d, c.ffn, c.q_width()})));
    total = at;
  }
};

void norm_rows(const LmConfig& c, const float* x, std::size_t n, const float* w, const float* b, float* y) noexcept {
  const std::size_t d = c.d_model;
  const float eps = float(c.norm_eps);
  for (std::size_t i = 0; i < n; ++i) {
    if (c.family == Family::gpt2) {
      float mean, rstd;
      kern::layernorm_row(x + i * d, d, w, b, eps, y + i * d, &mean, &rstd);
    } else {
      lmk::rmsnorm_row(x + i * d, d, w, eps, y + i * d);
    }
  }
}

}  // namespace

Status LmModel::create(std::unique_ptr<WeightSet> weights, std::unique_ptr<LmModel>& out) {
  std::unique_ptr<LmModel> m(new (std::nothrow) LmModel());
  if (!m) return Status::no_memory("the model");
  m->w_ = std::move(weights);
  const std::size_t side = sat_mul(4, m->config().vocab);  // logits, then sample_token's scratch
  m->side_ = Scratch(side);
  if (!m->side_.ok_for(side)) return Status::no_memory("the model's logits");
  out = std::move(m);
  return Status::success();
}

std::size_t LmModel::memory_bytes() const noexcept {
  std::size_t cache = 0;
  const LmConfig& c = config();
  if (capacity_)
    cache = caches_.size() * c.kv_heads * c.head_dim * 4 *
            ((capacity_ + detail::kKeyTile - 1) / detail::kKeyTile * detail::kKeyTile + capacity_);
  return w_->bytes() + (work_.size() + side_.size()) * sizeof(float) + cache;
}

std::uint32_t LmModel::read_weights() const noexcept {
  std::uint32_t sum = 0;
  for (const auto& [p, n] : w_->buffers()) sum += lmk::stream_sum(p, n);
  return sum;
}

Status LmModel::check_ids(std::span<const std::int32_t> ids, const char* name) const {
  if (ids.empty()) return detail::range_errorf(name, "%s must hold at least one token id, got none", name);
  const std::size_t V = config().vocab;
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || std::size_t(ids[i]) >= V)
      return detail::range_errorf(name, "%s[%zu] = %d is not a token id: the vocabulary has ids 0 to %zu (config.json vocab_size = %zu)",
                                  name, i, int(ids[i]), V - 1, V);
  return Status::success();
}

Status LmModel::check_vocabulary(std::size_t largest_id, const char* what) const {
  const std::size_t V = config().vocab;
  if (largest_id < V) return Status::success();
  return detail::range_errorf(what, "%s has token id %zu, but the embeddings have %zu rows (config.json vocab_size = %zu): "
                              "the tokenizer does not belong to these weights", what, largest_id, V, V);
}

Status LmModel::ensure_work(std::size_t n) {
  const std::size_t need = Work(config(), n).total;
  if (work_.size() >= need && work_rows_ >= n) return Status::success();
  Scratch fresh(need);
  if (!fresh.ok_for(need)) return Status::no_memory(detail::format("the activations of %zu tokens", n));
  work_ = std::move(fresh);
  work_rows_ = n;
  return Status::success();
}

Status LmModel::ensure_caches(std::size_t capacity) {
  const LmConfig& c = config();
  if (capacity <= capacity_) {
    for (auto& cache : caches_) cache->reset();
    return Status::success();
  }
  caches_.clear();  // the old ones go first: memory for one set at a time
  capacity_ = 0;
  std::vector<std::unique_ptr<KvCache>> fresh(c.layers);
  for (auto& cache : fresh) {
    KvCacheConfig k;
    k.batch = 1, k.kv_heads = c.kv_heads, k.dk = k.dv = c.head_dim, k.capacity = capacity, k.layout = Layout::bshd;
    if (auto s = KvCache::create(k, cache); !s.ok()) return s;
  }
  caches_ = std::move(fresh);
  capacity_ = capacity;
  return Status::success();
}

Status LmModel::run(const std::int32_t* ids, std::size_t n, std::size_t pos0, bool use_cache, float* logits,
                    std::size_t logit_rows, float* attention) {
  const LmConfig& c = config();
  const ModelWeights& W = weights();
  const std::size_t d = c.d_model, H = c.heads, G = c.kv_heads, dh = c.head_dim, qw = c.q_width(), kw = c.kv_width();
  const Work o(c, n);
  float* base = work_.data();
  float *x = base + o.x, *h = base + o.h, *q = base + o.q, *k = base + o.k, *v = base + o.v, *att = base + o.att,
        *ff1 = base + o.ff1, *ff2 = base + o.ff2, *mm = base + o.gemm;

  for (std::size_t i = 0; i < n; ++i) {
    W.embed.read_row(std::size_t(ids[i]), x + i * d);
    if (W.positions) kern::axpy(d, 1.0f, W.positions + (pos0 + i) * d, x + i * d);
  }
  const std::int32_t offset = std::int32_t(pos0);
  for (std::size_t l = 0; l < c.layers; ++l) {
    const LayerWeights& L = W.layers[l];
    norm_rows(c, x, n, L.norm1_w, L.norm1_b, h);
    if (c.family == Family::gpt2) {  // c_attn's rows are q, k, v: split them
      linear(L.qkv, h, n, ff1, 3 * d, L.qkv_b, false, mm);
      for (std::size_t i = 0; i < n; ++i) {
        std::memcpy(q + i * qw, ff1 + i * 3 * d, d * sizeof(float));
        std::memcpy(k + i * kw, ff1 + i * 3 * d + d, d * sizeof(float));
        std::memcpy(v + i * kw, ff1 + i * 3 * d + 2 * d, d * sizeof(float));
      }
    } else {
      linear(L.q, h, n, q, qw, L.q_b, false, mm);
      linear(L.k, h, n, k, kw, L.k_b, false, mm);
      linear(L.v, h, n, v, kw, L.v_b, false, mm);
      RopeArgs r;
      r.batch = 1, r.dk = dh, r.layout = RopeLayout::bshd, r.base = c.rope_theta;
      r.offset = std::span<const std::int32_t>(&offset, 1);
      r.x = {q, n * qw}, r.heads = H;
      if (auto s = rope(r, {q, n * qw}); !s.ok()) return Status::numerical_error("q", detail::format("layer %zu's queries: %s", l, s.message.c_str()));
      r.x = {k, n * kw}, r.heads = G;
      if (auto s = rope(r, {k, n * kw}); !s.ok()) return Status::numerical_error("k", detail::format("layer %zu's keys: %s", l, s.message.c_str()));
    }

    detail::AttentionBatch b{};
    b.batch = 1, b.heads = H, b.kv_heads = G, b.nq = n, b.dk = b.dv = dh;
    b.q = {q, n * qw, dh, qw};
    b.out = att, b.out_batch_stride = n * qw, b.out_head_stride = dh, b.out_row_stride = qw;
    b.scale = c.attention_scale(l);
    b.causal = Causal(Causal::bottom_right);
    b.window = {c.window_left(l), -1};
    if (use_cache) {
      KvAppendArgs a;
      a.k = {k, n * kw}, a.v = {v, n * kw};
      if (auto s = caches_[l]->append(a); !s.ok())
        return Status::numerical_error("k", detail::format("layer %zu's keys or values: %s", l, s.message.c_str()));
      b.cache = caches_[l].get();
      b.nk = caches_[l]->length(0);
    } else {
      b.nk = n;
      b.k = {k, n * kw, dh, kw};
      b.v = {v, n * kw, dh, kw};
    }
    if (attention) {
      b.weights = attention + l * H * n * b.nk;
      b.materialize = true;
    }
    if (auto s = detail::run_attention(b); !s.ok()) return s;
    linear(L.o, att, n, x, d, L.o_b, true, mm);

    norm_rows(c, x, n, L.norm2_w, L.norm2_b, h);
    if (c.family == Family::gpt2) {
      linear(L.fc, h, n, ff1, c.ffn, L.fc_b, false, mm);
      lmk::gelu_tanh(ff1, n * c.ffn, ff1);
      linear(L.proj, ff1, n, x, d, L.proj_b, true, mm);
    } else {
      linear(L.gate, h, n, ff1, c.ffn, L.gate_b, false, mm);
      linear(L.up, h, n, ff2, c.ffn, L.up_b, false, mm);
      lmk::silu_mul(ff1, ff2, n * c.ffn, ff1);
      linear(L.down, ff1, n, x, d, L.down_b, true, mm);
    }
  }
  const std::size_t first = n - logit_rows;
  norm_rows(c, x + first * d, logit_rows, W.norm_w, W.norm_b, h);
  linear(W.lm_head(), h, logit_rows, logits, c.vocab, nullptr, false, mm);
  if (kern::first_invalid(logits, logit_rows * c.vocab, false) < logit_rows * c.vocab)
    return Status::numerical_error("logits", "the model's logits are not finite (its activations overflowed float32)");
  return Status::success();
}

Status LmModel::forward(std::span<const std::int32_t> ids, std::span<float> logits, std::span<float> attention) {
  const LmConfig& c = config();
  if (auto s = check_ids(ids, "ids"); !s.ok()) return s;
  const std::size_t n = ids.size();
  if (n > c.context)
    return detail::range_errorf("ids", "ids holds %zu tokens, more than the model's context of %zu positions (config.json %s)", n,
                                c.context, c.family == Family::gpt2 ? "n_positions" : "max_position_embeddings");
  if (auto s = detail::check_length("logits", logits.size(), n * c.vocab, detail::format("n·vocab = %zu·%zu", n, c.vocab)); !s.ok())
    return s;
  const std::size_t maps = sat_mul(sat_mul(c.layers, c.heads), sat_mul(n, n));
  if (!attention.empty())
    if (auto s = detail::check_length("attention", attention.size(), maps,
                                      detail::format("layers·heads·n·n = %zu·%zu·%zu·%zu", c.layers, c.heads, n, n));
        !s.ok())
      return s;
  if (auto s = ensure_work(n); !s.ok()) return s;
  return run(ids.data(), n, 0, false, logits.data(), n, attention.empty() ? nullptr : attention.data());
}

Status LmModel::begin(std::span<const std::int32_t> prompt, std::size_t max_tokens, const Sampling& o,
                      std::span<const std::int32_t> stop) {
  const LmConfig& c = config();
  active_ = false;
  if (auto s = check_ids(prompt, "prompt"); !s.ok()) return s;
  if (max_tokens < 1) return Status::range_error("maxTokens", "maxTokens must be at least 1, got 0");
  if (prompt.size() > c.context || max_tokens > c.context - prompt.size())
    return detail::range_errorf("maxTokens", "the prompt's %zu tokens and maxTokens = %zu make %zu positions, past the model's context of %zu "
                                "(config.json %s)", prompt.size(), max_tokens, prompt.size() + max_tokens, c.context,
                                c.family == Family::gpt2 ? "n_positions" : "max_position_embeddings");
  if (!(std::isfinite(o.temperature) && o.temperature >= 0.0f))
    return detail::range_errorf("temperature", "temperature must be finite and >= 0 (0: greedy), got %s", detail::fmt(o.temperature).c_str());
  if (o.temperature > 0.0f && !std::isfinite(1.0f / o.temperature))
    return detail::range_errorf("temperature", "temperature must be 0 or at least 3e-39, got %s", detail::fmt(o.temperature).c_str());
  if (!(o.top_p > 0.0f && o.top_p <= 1.0f))
    return detail::range_errorf("topP", "topP must be in (0, 1], got %s", detail::fmt(o.top_p).c_str());
  for (std::size_t i = 0; i < stop.size(); ++i)
    if (stop[i] < 0 || std::size_t(stop[i]) >= c.vocab)
      return detail::range_errorf("stop", "stop[%zu] = %d is not a token id (0 to %zu)", i, int(stop[i]), c.vocab - 1);
  // The prompt and every token but the last go through the model (the last is returned, never run).
  const std::size_t n = prompt.size();
  if (auto s = ensure_caches(n + max_tokens - 1 > n ? n + max_tokens - 1 : n); !s.ok()) return s;
  if (auto s = ensure_work(n); !s.ok()) return s;
  if (auto s = run(prompt.data(), n, 0, true, side_.data(), 1, nullptr); !s.ok()) return s;
  stop_.assign(stop.begin(), stop.end());
  sampling_ = o, rng_ = model::Rng(o.seed);
  position_ = n, produced_ = 0, max_tokens_ = max_tokens, pending_ = -1;
  active_ = true;
  return Status::success();
}

Status LmModel::next(std::int32_t& token, bool& done) {
  if (!active_) return Status::range_error("generate", "no generation in progress: begin one first (or it already ended)");
  active_ = false;  // an error below ends it
  const LmConfig& c = config();
  if (pending_ >= 0) {  // the token returned last time, through the model at its position
    if (auto s = ensure_work(1); !s.ok()) return s;
    if (auto s = run(&pending_, 1, position_, true, side_.data(), 1, nullptr); !s.ok()) return s;
    ++position_;
  }
  token = model::sample_token(side_.data(), c.vocab, sampling_.temperature, sampling_.top_k, rng_, side_.data() + c.vocab,
                              sampling_.top_p);
  ++produced_;
  done = produced_ >= max_tokens_ || std::find(stop_.begin(), stop_.end(), token) != stop_.end();
  pending_ = token;
  active_ = !done;
  return Status::success();
}

}  // namespace attnlab::lm
