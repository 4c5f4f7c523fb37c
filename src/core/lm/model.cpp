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

// The activations of n rows, each buffer 16-byte aligned, in floats from the workspace's start; sized for this
// shard's heads and hidden width (a whole model's: all of them). `parts`: every shard's partial sums, ranks × n × d
// (none for a whole model, which sums in place).
struct Work {
  std::size_t x, h, q, k, v, att, ff1, ff2, gemm, parts, total;
  Work(const LmConfig& c, const ShardPlan& sp, std::size_t n) noexcept {
    std::size_t at = 0;
    auto take = [&](std::size_t floats) {
      const std::size_t o = at;
      at = sat_add(at, sat_add(floats, 3) & ~std::size_t{3});
      return o;
    };
    const std::size_t d = c.d_model, qw = sp.heads.size() * c.head_dim, kw = sp.kv_heads.size() * c.head_dim,
                      f = sp.ffn.size();
    x = take(sat_mul(n, d));
    h = take(sat_mul(n, d));
    q = take(sat_mul(n, qw));
    k = take(sat_mul(n, kw));
    v = take(sat_mul(n, kw));
    att = take(sat_mul(n, qw));
    // GPT-2's fused q|k|v output lands in ff1 before it is split.
    ff1 = take(sat_mul(n, std::max(f, c.family == Family::gpt2 ? 3 * qw : 0)));
    ff2 = take(c.family == Family::llama ? sat_mul(n, f) : 0);
    gemm = take(linear_scratch(n, std::max({d, f, qw})));
    parts = take(sp.ranks > 1 ? sat_mul(sat_mul(sp.ranks, n), d) : 0);
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
  // The last logits, then sample_token's scratch; a shard's own logits only (vocab_logits() grows it for sampling).
  const std::size_t side = m->shard().whole() ? sat_mul(4, m->config().vocab) : std::max<std::size_t>(m->shard().vocab.size(), 1);
  m->side_ = Scratch(side);
  if (!m->side_.ok_for(side)) return Status::no_memory("the model's logits");
  out = std::move(m);
  return Status::success();
}

std::size_t LmModel::memory_bytes() const noexcept {
  std::size_t cache = 0;
  const LmConfig& c = config();
  if (capacity_)
    cache = caches_.size() * shard().kv_heads.size() * c.head_dim * 4 *
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
  const Work o(config(), shard(), n);
  if (work_.size() < o.total || work_rows_ < n) {
    Scratch fresh(o.total);
    if (!fresh.ok_for(o.total)) return Status::no_memory(detail::format("the activations of %zu tokens", n));
    work_ = std::move(fresh);
    work_rows_ = n;
  }
  parts_at_ = o.parts;
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
  // A shard without heads has no cache (its attention phases add nothing).
  std::vector<std::unique_ptr<KvCache>> fresh(shard().kv_heads.size() ? c.layers : 0);
  for (auto& cache : fresh) {
    KvCacheConfig k;
    k.batch = 1, k.kv_heads = shard().kv_heads.size(), k.dk = k.dv = c.head_dim, k.capacity = capacity, k.layout = Layout::bshd;
    if (auto s = KvCache::create(k, cache); !s.ok()) return s;
  }
  caches_ = std::move(fresh);
  capacity_ = capacity;
  return Status::success();
}

void LmModel::start(const std::int32_t* ids, std::size_t n, std::size_t pos0, bool use_cache, float* logits, std::size_t ldl,
                    std::size_t logit_rows, float* attention) noexcept {
  step_.ids = ids, step_.n = n, step_.pos0 = pos0, step_.use_cache = use_cache, step_.logits = logits, step_.ldl = ldl;
  step_.logit_rows = logit_rows, step_.attention = attention, step_.qkv = nullptr, step_.next = 0, step_.ready = true;
  step_.advance = step_.generating = false;
}

Status LmModel::run(const std::int32_t* ids, std::size_t n, std::size_t pos0, bool use_cache, float* logits,
                    std::size_t logit_rows, float* attention) {
  start(ids, n, pos0, use_cache, logits, config().vocab, logit_rows, attention);
  for (std::size_t p = 0; p <= last_phase(); ++p)
    if (auto s = phase(p); !s.ok()) return s;
  return Status::success();
}

Status LmModel::phase(std::size_t p) {
  if (!step_.ready || p != step_.next)
    return detail::range_errorf("phase", "phase %zu of a step is out of order (%s)", p,
                                step_.ready ? detail::format("phase %zu is next", step_.next).c_str() : "no step is in progress");
  ++step_.next, ++phases_run_;
  if (p == last_phase()) step_.ready = false;
  if (p > 0 && !shard().whole()) reduce(p - 1);
  Status s = p == 0 ? embed() : p == last_phase() ? head() : p % 2 ? attend((p - 1) / 2) : mlp((p - 1) / 2);
  if (!s.ok()) step_.ready = false;
  return s;
}

// The partial sums of phase `from` of every shard, in rank order, into the residual stream (and the bias of the
// block's output projection, which each shard left out).
void LmModel::reduce(std::size_t from) noexcept {
  const LmConfig& c = config();
  const std::size_t d = c.d_model, n = step_.n, count = n * d, P = shard().ranks;
  const Work o(c, shard(), n);
  float* x = work_.data() + o.x;
  const float* p = parts();
  for (std::size_t i = 0; i < count; ++i) {
    float sum = p[i];
    for (std::size_t r = 1; r < P; ++r) sum += p[r * count + i];
    x[i] = from == 0 ? sum : x[i] + sum;  // the embedding: the rows the shards looked up, whole
  }
  if (from == 0) return;
  const LayerWeights& L = weights().layers[(from - 1) / 2];
  const float* bias = from % 2 ? L.o_b : c.family == Family::gpt2 ? L.proj_b : L.down_b;
  if (bias)
    for (std::size_t i = 0; i < n; ++i) kern::axpy(d, 1.0f, bias, x + i * d);
}

Status LmModel::embed() {
  const LmConfig& c = config();
  const ModelWeights& W = weights();
  const ShardPlan& sp = shard();
  const std::size_t d = c.d_model, n = step_.n;
  const Work o(c, sp, n);
  // A whole model writes the residual stream; a shard its part: its rows of the embedding and the position table.
  float* x = sp.whole() ? work_.data() + o.x : parts() + sp.rank * n * d;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t id = std::size_t(step_.ids[i]), pos = step_.pos0 + i;
    if (sp.vocab.contains(id)) W.embed.read_row(id - sp.vocab.begin, x + i * d);
    else std::fill(x + i * d, x + (i + 1) * d, 0.0f);
    if (W.positions && sp.positions.contains(pos)) kern::axpy(d, 1.0f, W.positions + (pos - sp.positions.begin) * d, x + i * d);
  }
  return Status::success();
}

Status LmModel::attend(std::size_t l) {
  const LmConfig& c = config();
  const ShardPlan& sp = shard();
  const LayerWeights& L = weights().layers[l];
  const std::size_t d = c.d_model, n = step_.n, H = sp.heads.size(), G = sp.kv_heads.size(), dh = c.head_dim;
  const std::size_t qw = H * dh, kw = G * dh;
  const Work o(c, sp, n);
  float* base = work_.data();
  float *x = base + o.x, *h = base + o.h, *q = base + o.q, *k = base + o.k, *v = base + o.v, *att = base + o.att,
        *ff1 = base + o.ff1, *mm = base + o.gemm;
  // A whole model adds the block's output to the residual stream; a shard writes its part of it.
  float* out = sp.whole() ? x : parts() + sp.rank * n * d;
  if (!H) {  // a shard without heads (kv_heads < ranks) adds nothing
    std::fill(out, out + n * d, 0.0f);
    return Status::success();
  }
  norm_rows(c, x, n, L.norm1_w, L.norm1_b, h);
  if (c.family == Family::gpt2) {  // c_attn's rows are q, k, v (of this shard's heads): split them
    linear(L.qkv, h, n, ff1, 3 * qw, L.qkv_b, false, mm);
    for (std::size_t i = 0; i < n; ++i) {
      std::memcpy(q + i * qw, ff1 + i * 3 * qw, qw * sizeof(float));
      std::memcpy(k + i * kw, ff1 + i * 3 * qw + qw, qw * sizeof(float));
      std::memcpy(v + i * kw, ff1 + i * 3 * qw + 2 * qw, qw * sizeof(float));
    }
  } else {
    linear(L.q, h, n, q, qw, L.q_b, false, mm);
    linear(L.k, h, n, k, kw, L.k_b, false, mm);
    linear(L.v, h, n, v, kw, L.v_b, false, mm);
    const std::int32_t offset = std::int32_t(step_.pos0);
    RopeArgs r;
    r.batch = 1, r.dk = dh, r.layout = RopeLayout::bshd, r.base = c.rope_theta;
    r.offset = std::span<const std::int32_t>(&offset, 1);
    r.x = {q, n * qw}, r.heads = H;
    if (auto s = rope(r, {q, n * qw}); !s.ok()) return Status::numerical_error("q", detail::format("layer %zu's queries: %s", l, s.message.c_str()));
    r.x = {k, n * kw}, r.heads = G;
    if (auto s = rope(r, {k, n * kw}); !s.ok()) return Status::numerical_error("k", detail::format("layer %zu's keys: %s", l, s.message.c_str()));
  }

  if (step_.qkv) {  // what the attention below reads, as it reads it
    float* at = step_.qkv + l * qkv_floats(n);
    std::memcpy(at, q, n * qw * sizeof(float));
    std::memcpy(at + n * qw, k, n * kw * sizeof(float));
    std::memcpy(at + n * qw + n * kw, v, n * kw * sizeof(float));
  }

  detail::AttentionBatch b{};
  b.batch = 1, b.heads = H, b.kv_heads = G, b.nq = n, b.dk = b.dv = dh;
  b.q = {q, n * qw, dh, qw};
  b.out = att, b.out_batch_stride = n * qw, b.out_head_stride = dh, b.out_row_stride = qw;
  b.scale = c.attention_scale(l);
  b.causal = Causal(Causal::bottom_right);
  b.window = {c.window_left(l), -1};
  if (step_.use_cache) {
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
  if (step_.attention) {
    b.weights = step_.attention + l * H * n * b.nk;
    b.materialize = true;
  }
  if (auto s = detail::run_attention(b); !s.ok()) return s;
  if (sp.whole()) linear(L.o, att, n, x, d, L.o_b, true, mm);
  else linear(L.o, att, n, out, d, nullptr, false, mm);
  return Status::success();
}

Status LmModel::mlp(std::size_t l) {
  const LmConfig& c = config();
  const ShardPlan& sp = shard();
  const LayerWeights& L = weights().layers[l];
  const std::size_t d = c.d_model, n = step_.n, f = sp.ffn.size();
  const Work o(c, sp, n);
  float* base = work_.data();
  float *x = base + o.x, *h = base + o.h, *ff1 = base + o.ff1, *ff2 = base + o.ff2, *mm = base + o.gemm;
  const bool whole = sp.whole();
  float* out = whole ? x : parts() + sp.rank * n * d;
  if (!f) {
    std::fill(out, out + n * d, 0.0f);
    return Status::success();
  }
  norm_rows(c, x, n, L.norm2_w, L.norm2_b, h);
  if (c.family == Family::gpt2) {
    linear(L.fc, h, n, ff1, f, L.fc_b, false, mm);
    if (c.activation == Activation::gelu_erf)
      lmk::gelu_erf(ff1, n * f, ff1);
    else
      lmk::gelu_tanh(ff1, n * f, ff1);
    linear(L.proj, ff1, n, out, d, whole ? L.proj_b : nullptr, whole, mm);
  } else {
    linear(L.gate, h, n, ff1, f, L.gate_b, false, mm);
    linear(L.up, h, n, ff2, f, L.up_b, false, mm);
    lmk::silu_mul(ff1, ff2, n * f, ff1);
    linear(L.down, ff1, n, out, d, whole ? L.down_b : nullptr, whole, mm);
  }
  return Status::success();
}

Status LmModel::head() {
  const LmConfig& c = config();
  const ModelWeights& W = weights();
  const std::size_t d = c.d_model, n = step_.n, rows = step_.logit_rows, V = shard().vocab.size();
  const Work o(c, shard(), n);
  float* base = work_.data();
  const std::size_t first = n - rows;
  norm_rows(c, base + o.x + first * d, rows, W.norm_w, W.norm_b, base + o.h);
  linear(W.lm_head(), base + o.h, rows, step_.logits, step_.ldl, nullptr, false, base + o.gemm);
  for (std::size_t i = 0; i < rows; ++i)
    if (kern::first_invalid(step_.logits + i * step_.ldl, V, false) < V)
      return Status::numerical_error("logits", "the model's logits are not finite (its activations overflowed float32)");
  return Status::success();
}

namespace {

Status not_whole(const char* fn) {
  return detail::range_errorf(fn, "%s: this model is one shard of a model cut across workers: it runs in steps (step_forward, "
                              "step_begin, step_next)", fn);
}

}  // namespace

Status LmModel::forward(std::span<const std::int32_t> ids, std::span<float> logits, std::span<float> attention,
                        std::span<float> qkv) {
  if (!shard().whole()) return not_whole("forward");
  if (auto s = step_forward(ids, logits, attention, qkv); !s.ok()) return s;
  for (std::size_t p = 0; p <= last_phase(); ++p)
    if (auto s = phase(p); !s.ok()) return s;
  return Status::success();
}

std::size_t LmModel::qkv_floats(std::size_t n) const noexcept {
  return sat_mul(sat_mul(n, config().head_dim), sat_add(shard().heads.size(), sat_mul(2, shard().kv_heads.size())));
}

// (a shard's: its vocabulary rows and its heads)
Status LmModel::forward_sizes(std::size_t n, bool want_attention, bool want_qkv, std::size_t& logits, std::size_t& attention,
                              std::size_t& qkv) const {
  const LmConfig& c = config();
  const ShardPlan& sp = shard();
  if (n == 0) return check_ids({}, "ids");
  if (n > c.context)
    return detail::range_errorf("ids", "ids holds %zu tokens, more than the model's context of %zu positions (config.json %s)", n,
                                c.context, c.family == Family::gpt2 ? "n_positions" : "max_position_embeddings");
  logits = sat_mul(n, sp.vocab.size());
  attention = want_attention ? sat_mul(sat_mul(c.layers, sp.heads.size()), sat_mul(n, n)) : 0;
  qkv = want_qkv ? sat_mul(c.layers, qkv_floats(n)) : 0;
  return Status::success();
}

Status LmModel::step_forward(std::span<const std::int32_t> ids, std::span<float> logits, std::span<float> attention,
                             std::span<float> qkv) {
  const LmConfig& c = config();
  const ShardPlan& sp = shard();
  step_.ready = false;
  if (auto s = check_ids(ids, "ids"); !s.ok()) return s;
  const std::size_t n = ids.size(), V = sp.vocab.size(), H = sp.heads.size();
  std::size_t want_logits, maps, want_qkv;
  if (auto s = forward_sizes(n, !attention.empty(), !qkv.empty(), want_logits, maps, want_qkv); !s.ok()) return s;
  if (logits.size() != want_logits)
    return detail::check_length("logits", logits.size(), want_logits, detail::format("n·vocab = %zu·%zu", n, V));
  if (!attention.empty() && attention.size() != maps)
    return detail::check_length("attention", attention.size(), maps,
                                detail::format("layers·heads·n·n = %zu·%zu·%zu·%zu", c.layers, H, n, n));
  if (!qkv.empty() && qkv.size() != want_qkv)
    return detail::check_length("qkv", qkv.size(), want_qkv,
                                detail::format("layers·n·(heads + 2·kvHeads)·headDim = %zu·%zu·(%zu + 2·%zu)·%zu", c.layers, n, H,
                                               sp.kv_heads.size(), c.head_dim));
  if (auto s = ensure_work(n); !s.ok()) return s;
  start(ids.data(), n, 0, false, logits.data(), V, n, attention.empty() ? nullptr : attention.data());
  step_.qkv = qkv.empty() ? nullptr : qkv.data();
  return Status::success();
}

Status LmModel::check_begin(std::size_t prompt, std::size_t max_tokens, const Sampling& o) const {
  const LmConfig& c = config();
  if (prompt == 0) return check_ids({}, "prompt");
  if (max_tokens < 1) return Status::range_error("maxTokens", "maxTokens must be at least 1, got 0");
  if (prompt > c.context || max_tokens > c.context - prompt)
    return detail::range_errorf("maxTokens", "the prompt's %zu token%s and maxTokens = %zu make %zu positions, past the model's context of %zu "
                                "(config.json %s)", prompt, prompt == 1 ? "" : "s", max_tokens, prompt + max_tokens, c.context,
                                c.family == Family::gpt2 ? "n_positions" : "max_position_embeddings");
  if (!(std::isfinite(o.temperature) && o.temperature >= 0.0f))
    return detail::range_errorf("temperature", "temperature must be finite and >= 0 (0: greedy), got %s", detail::fmt(o.temperature).c_str());
  if (o.temperature > 0.0f && !std::isfinite(1.0f / o.temperature))
    return detail::range_errorf("temperature", "temperature must be 0 or at least 3e-39, got %s", detail::fmt(o.temperature).c_str());
  if (!(o.top_p > 0.0f && o.top_p <= 1.0f))
    return detail::range_errorf("topP", "topP must be in (0, 1], got %s", detail::fmt(o.top_p).c_str());
  return Status::success();
}

Status LmModel::check_begin(std::span<const std::int32_t> prompt, std::size_t max_tokens, const Sampling& o,
                            std::span<const std::int32_t> stop) const {
  const LmConfig& c = config();
  if (auto s = check_ids(prompt, "prompt"); !s.ok()) return s;
  if (auto s = check_begin(prompt.size(), max_tokens, o); !s.ok()) return s;
  for (std::size_t i = 0; i < stop.size(); ++i)
    if (stop[i] < 0 || std::size_t(stop[i]) >= c.vocab)
      return detail::range_errorf("stop", "stop[%zu] = %d is not a token id (0 to %zu)", i, int(stop[i]), c.vocab - 1);
  return Status::success();
}

Status LmModel::begin(std::span<const std::int32_t> prompt, std::size_t max_tokens, const Sampling& o,
                      std::span<const std::int32_t> stop) {
  active_ = false;
  if (!shard().whole()) return not_whole("begin");
  if (auto s = check_begin(prompt, max_tokens, o, stop); !s.ok()) return s;
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
  if (!shard().whole()) return not_whole("next");
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

// A shard's generation: each step runs its rows and ends with this shard's logits of the last one (side_); the
// token picked from every shard's comes back through accept().
Status LmModel::step_begin(std::span<const std::int32_t> prompt, std::size_t max_tokens, const Sampling& o,
                           std::span<const std::int32_t> stop) {
  active_ = false;
  step_.ready = false;
  if (auto s = check_begin(prompt, max_tokens, o, stop); !s.ok()) return s;
  const std::size_t n = prompt.size();
  if (auto s = ensure_caches(n + max_tokens - 1 > n ? n + max_tokens - 1 : n); !s.ok()) return s;
  if (auto s = ensure_work(n); !s.ok()) return s;
  if (o.temperature > 0.0f && !vocab_logits()) return Status::no_memory("the model's sampling buffers");
  step_ids_.assign(prompt.begin(), prompt.end());
  stop_.assign(stop.begin(), stop.end());
  sampling_ = o, rng_ = model::Rng(o.seed);
  position_ = n, produced_ = 0, max_tokens_ = max_tokens, pending_ = -1;
  start(step_ids_.data(), n, 0, true, side_.data(), shard().vocab.size(), 1, nullptr);
  step_.generating = true;
  return Status::success();
}

Status LmModel::step_next() {
  step_.ready = false;
  if (!active_ || pending_ < 0) return Status::range_error("generate", "no generation in progress: begin one first (or it already ended)");
  active_ = false;  // an error ends it
  if (auto s = ensure_work(1); !s.ok()) return s;
  step_ids_.assign(1, pending_);
  start(step_ids_.data(), 1, position_, true, side_.data(), shard().vocab.size(), 1, nullptr);
  step_.advance = step_.generating = true;
  return Status::success();
}

void LmModel::best(float& value, std::int32_t& index) const noexcept {
  const std::size_t V = shard().vocab.size();
  value = -INFINITY, index = -1;
  if (!V) return;
  const float* l = side_.data();
  const std::size_t at = model::first_max(l, V);  // the first largest, as sample_token's greedy
  value = l[at], index = std::int32_t(shard().vocab.begin + at);
}

float* LmModel::vocab_logits() noexcept {
  const LmConfig& c = config();
  // A whole model's logits, then sample_token's 3·vocab of scratch; a shard's own logits first.
  const std::size_t V = shard().vocab.size(), need = sat_add(shard().whole() ? 0 : V, sat_mul(4, c.vocab));
  if (side_.size() < need) {
    Scratch fresh(need);
    if (!fresh.ok_for(need)) return nullptr;
    std::memcpy(fresh.data(), side_.data(), V * sizeof(float));
    side_ = std::move(fresh);
  }
  // This shard's own logits stay at the start of side_ (best() reads them there); the whole vocabulary's follow.
  return shard().whole() ? side_.data() : side_.data() + V;
}

std::int32_t LmModel::sample() noexcept {
  const std::size_t V = config().vocab;
  float* all = vocab_logits();  // (allocated by step_begin when sampling), then 3·vocab of scratch
  return model::sample_token(all, V, sampling_.temperature, sampling_.top_k, rng_, all + V, sampling_.top_p);
}

Status LmModel::accept(std::int32_t token, bool& done) {
  done = true;
  if (!step_.generating || step_.ready || step_.next != last_phase() + 1 || token < 0 || std::size_t(token) >= config().vocab)
    return detail::range_errorf("token", "token %d cannot end this step (not a generation step whose phases all ran, or not a token id)",
                                int(token));
  step_.next = 0, step_.generating = false;
  if (step_.advance) ++position_;
  ++produced_;
  done = produced_ >= max_tokens_ || std::find(stop_.begin(), stop_.end(), token) != stop_.end();
  pending_ = token;
  active_ = !done;
  return Status::success();
}

}  // namespace attnlab::lm
