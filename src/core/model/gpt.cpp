#include "gpt.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "../attention_impl.h"
#include "../kernels/kernels.h"
#include "../kernels/training.h"
#include "../gemm_blocked.h"
#include "../rope.h"
#include "../size_math.h"
#include "../format.h"
#include "../validate.h"
#include "layers.h"
#include "random.h"
#include "sampling.h"

namespace attnlab::model {

namespace kern = kernels::active;

namespace {

std::size_t sat_add(std::size_t a, std::size_t b) noexcept { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

// Offsets (in floats, 16-byte aligned) of the training activations for n tokens. Per-layer buffers are stacked
// [layers × …]. Without an MLP the residual after attention is the next layer's input, so `mid` is not stored.
struct WorkOffsets {
  std::size_t resid, mid, ln1, ln1_stats, qkv, atty, lse, ln2, ln2_stats, pre, act, lnf, lnf_stats, logits;
  std::size_t dres, dbuf, datty, dln, rope, mm, total;
};

WorkOffsets work_offsets(const GPTConfig& c, std::size_t n) noexcept {
  std::size_t at = 0;
  auto take = [&](std::size_t floats) {
    const std::size_t o = at;
    at = sat_add(at, sat_add(floats, 3) & ~std::size_t{3});
    return o;
  };
  const std::size_t d = c.d_model, L = c.layers, q = c.qkv_width(), nd = sat_mul(n, d);
  WorkOffsets o{};
  o.resid = take(sat_mul(L + 1, nd));
  o.mid = c.mlp ? take(sat_mul(L, nd)) : kAbsent;
  o.ln1 = take(sat_mul(L, nd));
  o.ln1_stats = take(sat_mul(L, sat_mul(2, n)));
  o.qkv = take(sat_mul(L, sat_mul(n, q)));
  o.atty = take(sat_mul(L, nd));
  o.lse = take(sat_mul(L, sat_mul(c.heads, n)));
  if (c.mlp) {
    o.ln2 = take(sat_mul(L, nd));
    o.ln2_stats = take(sat_mul(L, sat_mul(2, n)));
    o.pre = take(sat_mul(L, sat_mul(4, nd)));
    o.act = take(sat_mul(L, sat_mul(4, nd)));
  } else {
    o.ln2 = o.ln2_stats = o.pre = o.act = kAbsent;
  }
  o.lnf = take(nd);
  o.lnf_stats = take(sat_mul(2, n));
  o.logits = take(sat_mul(n, c.vocab_size));
  o.dres = take(nd);
  o.dbuf = take(sat_mul(n, std::max({q, c.mlp ? 4 * d : d, d})));
  o.datty = take(nd);
  o.dln = take(nd);
  o.rope = c.position == Position::rope ? take(sat_mul(n, (c.heads + c.kv()) * c.head_dim())) : kAbsent;
  o.mm = take(kGemmScratch);
  o.total = at;
  return o;
}

bool is_layernorm_weight(const std::string& name) {
  for (const char* s : {"ln_1.weight", "ln_2.weight", "ln_f.weight"})
    if (name.size() >= std::strlen(s) && name.compare(name.size() - std::strlen(s), std::string::npos, s) == 0) return true;
  return false;
}
bool ends_with(const std::string& s, const char* tail) {
  const std::size_t n = std::strlen(tail);
  return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

// RoPE on the query and key heads of c_attn's output [batch·seq × qkv_width] (each token: query heads, key heads,
// value heads), in place: positions 0 … seq − 1 of every sequence, or `position` for a single token (decoding).
// The heads are gathered into `tmp` [batch·seq × (heads + kvHeads)·headDim] for rope() and put back. With
// `inverse` this is the rotation's transpose: the backward, from dL/d(rotated) to dL/d(unrotated).
// LLaMA's (GPT-NeoX's) pairing (i, i + headDim/2), base 10000, the whole head rotated.
Status rotate_qk(const GPTConfig& c, float* qkv, std::size_t batch, std::size_t seq, const std::int32_t* position,
                 bool inverse, float* tmp) {
  const std::size_t w = c.qkv_width(), qk = (c.heads + c.kv()) * c.head_dim(), n = batch * seq;
  for (std::size_t t = 0; t < n; ++t) std::memcpy(tmp + t * qk, qkv + t * w, qk * sizeof(float));
  RopeArgs a;
  a.x = {tmp, n * qk};
  a.batch = batch, a.heads = c.heads + c.kv(), a.dk = c.head_dim(), a.layout = RopeLayout::bshd, a.inverse = inverse;
  if (position) a.offset = {position, 1};
  if (auto s = rope(a, {tmp, n * qk}); !s.ok())  // only values too large to rotate: the weights have diverged
    return Status::numerical_error("loss", detail::format("the model's queries or keys are not finite (%s); its weights have diverged",
                                                          s.message.c_str()));
  for (std::size_t t = 0; t < n; ++t) std::memcpy(qkv + t * w, tmp + t * qk, qk * sizeof(float));
  return Status::success();
}

}  // namespace

// Pointers into the workspace for n = batch·seq tokens.
struct GPT::Workspace {
  WorkOffsets o;
  float* base;
  std::size_t n, d;
  float* at(std::size_t off) const noexcept { return off == kAbsent ? nullptr : base + off; }
  float* resid(std::size_t l) const noexcept { return base + o.resid + l * n * d; }
  float* mid(std::size_t l) const noexcept { return o.mid == kAbsent ? resid(l + 1) : base + o.mid + l * n * d; }
};

GPT::GPT(const GPTConfig& c, ParamLayout layout, Scratch params, Scratch grads, Scratch m, Scratch v)
    : config_(c), layout_(std::move(layout)), params_(std::move(params)), grads_(std::move(grads)), m_(std::move(m)),
      v_(std::move(v)) {}

Status GPT::create(const GPTConfig& config, std::unique_ptr<GPT>& out) {
  GPTConfig c = config;
  if (auto s = validate_config(c); !s.ok()) return s;
  c.kv_heads = c.kv();
  ParamLayout layout = make_layout(c);
  const std::size_t n = layout.total;
  Scratch p(n), g(n), m(n), v(n);
  if (!p.ok_for(n) || !g.ok_for(n) || !m.ok_for(n) || !v.ok_for(n)) return Status::no_memory("the model's parameters");
  std::memset(g.data(), 0, n * sizeof(float));
  std::memset(m.data(), 0, n * sizeof(float));
  std::memset(v.data(), 0, n * sizeof(float));
  out.reset(new GPT(c, std::move(layout), std::move(p), std::move(g), std::move(m), std::move(v)));
  out->init_weights();
  return Status::success();
}

void GPT::init_weights() {
  // nanoGPT's _init_weights: every Linear and Embedding weight N(0, 0.02), biases 0, LayerNorm weights 1; then the
  // residual projections (attn.c_proj, mlp.c_proj) N(0, 0.02/√(2·layers)). Drawn in state_dict order, each tensor
  // in its state_dict layout, so a seed means the same weights whatever the storage order.
  Rng rng(config_.seed);
  const double proj_std = 0.02 / std::sqrt(2.0 * double(config_.layers));
  for (const TensorInfo& t : layout_.tensors) {
    if (t.alias) continue;
    float* dst = params_.data() + t.offset;
    const std::size_t rows = t.rows, cols = t.cols ? t.cols : 1;
    if (ends_with(t.name, ".bias") || is_layernorm_weight(t.name)) {
      std::fill(dst, dst + t.size(), is_layernorm_weight(t.name) ? 1.0f : 0.0f);
      continue;
    }
    const double sd = ends_with(t.name, "c_proj.weight") ? proj_std : 0.02;
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) dst[t.transposed ? c * rows + r : r * cols + c] = float(sd * rng.normal());
  }
}

std::size_t GPT::memory_bytes() const noexcept {
  return (4 * layout_.total + work_.size() + cache_.size()) * sizeof(float);
}

Status GPT::ensure_workspace(std::size_t batch, std::size_t seq) {
  const std::size_t need = work_offsets(config_, sat_mul(batch, seq)).total;
  if (work_.size() >= need && work_.data()) {
    work_batch_ = batch, work_seq_ = seq;
    return Status::success();
  }
  Scratch fresh(need);  // the old workspace stays until the new one exists
  if (!fresh.ok_for(need)) return Status::no_memory(detail::format("the model's activations (%zu × %zu tokens)", batch, seq));
  work_ = std::move(fresh);
  work_batch_ = batch, work_seq_ = seq;
  return Status::success();
}

Status GPT::check_tokens(std::span<const std::int32_t> tokens, const char* name, bool allow_ignore) const {
  const auto v = static_cast<std::int64_t>(config_.vocab_size);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::int64_t t = tokens[i];
    if (t >= v || t < (allow_ignore ? -1 : 0))
      return detail::range_errorf(name, "%s[%zu] = %lld is outside the vocabulary 0…%lld%s", name, i, (long long)t,
                                  (long long)(v - 1), allow_ignore ? " (or -1: ignored)" : "");
  }
  return Status::success();
}

Status GPT::check_batch(std::size_t length, std::size_t seq, const char* name) const {
  if (seq < 1 || seq > config_.context)
    return detail::range_errorf(name, "%s must hold sequences of 1…context = %zu tokens, got sequences of %zu", name,
                                config_.context, seq);
  if (length == 0 || length % seq != 0)
    return detail::range_errorf(name, "%s.length must be a positive multiple of the sequence length %zu, got %zu", name, seq,
                                length);
  return Status::success();
}

Status GPT::run_forward(const std::int32_t* tokens, std::size_t batch, std::size_t seq, float* attention,
                        bool fill_cache) {
  const GPTConfig& c = config_;
  const std::size_t n = batch * seq, d = c.d_model, q = c.qkv_width(), L = c.layers, H = c.heads, G = c.kv_heads,
                    dh = c.head_dim();
  const Workspace w{work_offsets(c, n), work_.data(), n, d};
  const float* P = params_.data();
  auto opt = [&](std::size_t off) { return off == kAbsent ? nullptr : P + off; };
  float* mm = w.at(w.o.mm);
  const AttentionShape shape{batch, seq, H, G, dh};

  embedding_forward(tokens, batch, seq, P + layout_.wte, opt(layout_.wpe), d, w.resid(0));
  for (std::size_t l = 0; l < L; ++l) {
    const LayerParams& lp = layout_.layers[l];
    float* x = w.resid(l);
    float* ln1 = w.at(w.o.ln1) + l * n * d;
    float* stats1 = w.at(w.o.ln1_stats) + l * 2 * n;
    float* qkv = w.at(w.o.qkv) + l * n * q;
    float* atty = w.at(w.o.atty) + l * n * d;
    float* mid = w.mid(l);
    layernorm_forward(x, n, d, P + lp.ln1_w, opt(lp.ln1_b), ln1, stats1, stats1 + n);
    linear_forward(ln1, n, d, q, P + lp.qkv_w, opt(lp.qkv_b), qkv, false, mm);
    if (c.position == Position::rope)
      if (auto s = rotate_qk(c, qkv, batch, seq, nullptr, false, w.at(w.o.rope)); !s.ok()) return s;
    if (fill_cache) {  // batch 1: keys and values of every position, per key/value head
      for (std::size_t t = 0; t < seq; ++t)
        for (std::size_t g = 0; g < G; ++g) {
          float* kc = cache_.data() + ((l * 2 + 0) * G + g) * c.context * dh;
          float* vc = cache_.data() + ((l * 2 + 1) * G + g) * c.context * dh;
          std::memcpy(kc + t * dh, qkv + t * q + (H + g) * dh, dh * sizeof(float));
          std::memcpy(vc + t * dh, qkv + t * q + (H + G + g) * dh, dh * sizeof(float));
        }
    }
    if (auto s = attention_forward(shape, qkv, atty, attention ? nullptr : w.at(w.o.lse) + l * H * n,
                                   attention ? attention + l * batch * H * seq * seq : nullptr);
        !s.ok())
      return s;
    std::memcpy(mid, x, n * d * sizeof(float));
    linear_forward(atty, n, d, d, P + lp.proj_w, opt(lp.proj_b), mid, true, mm);
    if (c.mlp) {
      float* ln2 = w.at(w.o.ln2) + l * n * d;
      float* stats2 = w.at(w.o.ln2_stats) + l * 2 * n;
      float* next = w.resid(l + 1);
      layernorm_forward(mid, n, d, P + lp.ln2_w, opt(lp.ln2_b), ln2, stats2, stats2 + n);
      std::memcpy(next, mid, n * d * sizeof(float));
      mlp_forward(ln2, n, d, {P + lp.fc_w, opt(lp.fc_b), P + lp.fc_proj_w, opt(lp.fc_proj_b)},
                  w.at(w.o.pre) + l * n * 4 * d, w.at(w.o.act) + l * n * 4 * d, next, true, mm);
    }
  }
  float* lnf = w.at(w.o.lnf);
  layernorm_forward(w.resid(L), n, d, P + layout_.lnf_w, opt(layout_.lnf_b), lnf, w.at(w.o.lnf_stats),
                    w.at(w.o.lnf_stats) + n);
  gemm_blocked(Op::n, Op::t, n, c.vocab_size, d, lnf, d, P + layout_.lm_head, d, w.at(w.o.logits), c.vocab_size, false, mm);
  return Status::success();
}

Status GPT::run_backward(const std::int32_t* tokens, std::size_t batch, std::size_t seq) {
  // The logits buffer holds dL/dlogits (cross_entropy). Every parameter gradient is summed into grads_.
  const GPTConfig& c = config_;
  const std::size_t n = batch * seq, d = c.d_model, q = c.qkv_width(), L = c.layers, H = c.heads, V = c.vocab_size;
  const Workspace w{work_offsets(c, n), work_.data(), n, d};
  const float* P = params_.data();
  float* Gr = grads_.data();
  auto opt = [&](std::size_t off) { return off == kAbsent ? nullptr : P + off; };
  auto gopt = [&](std::size_t off) { return off == kAbsent ? nullptr : Gr + off; };
  float *mm = w.at(w.o.mm), *dres = w.at(w.o.dres), *dln = w.at(w.o.dln), *dbuf = w.at(w.o.dbuf),
        *datty = w.at(w.o.datty), *dlogits = w.at(w.o.logits), *lnf = w.at(w.o.lnf);
  const AttentionShape shape{batch, seq, H, c.kv_heads, c.head_dim()};

  std::memset(Gr, 0, layout_.total * sizeof(float));
  gemm_blocked(Op::n, Op::n, n, d, V, dlogits, V, P + layout_.lm_head, d, dln, d, false, mm);      // d ln_f(x)
  gemm_blocked(Op::t, Op::n, V, d, n, dlogits, V, lnf, d, Gr + layout_.lm_head, d, true, mm);      // d lm_head
  std::memset(dres, 0, n * d * sizeof(float));
  layernorm_backward(w.resid(L), n, d, w.at(w.o.lnf_stats), w.at(w.o.lnf_stats) + n, P + layout_.lnf_w, dln, dres,
                     Gr + layout_.lnf_w, gopt(layout_.lnf_b));
  for (std::size_t l = L; l-- > 0;) {
    const LayerParams& lp = layout_.layers[l];
    float* ln1 = w.at(w.o.ln1) + l * n * d;
    float* stats1 = w.at(w.o.ln1_stats) + l * 2 * n;
    float* qkv = w.at(w.o.qkv) + l * n * q;
    float* atty = w.at(w.o.atty) + l * n * d;
    if (c.mlp) {  // dres = dL/d resid(l+1), and resid(l+1) = mid + MLP(ln_2(mid))
      float* ln2 = w.at(w.o.ln2) + l * n * d;
      float* stats2 = w.at(w.o.ln2_stats) + l * 2 * n;
      mlp_backward(ln2, w.at(w.o.pre) + l * n * 4 * d, w.at(w.o.act) + l * n * 4 * d, dres, n, d,
                   {P + lp.fc_w, opt(lp.fc_b), P + lp.fc_proj_w, opt(lp.fc_proj_b)},
                   {Gr + lp.fc_w, gopt(lp.fc_b), Gr + lp.fc_proj_w, gopt(lp.fc_proj_b)}, dln, false, dbuf, mm);
      layernorm_backward(w.mid(l), n, d, stats2, stats2 + n, P + lp.ln2_w, dln, dres, Gr + lp.ln2_w, gopt(lp.ln2_b));
    }
    // dres = dL/d mid(l), and mid = resid(l) + c_proj(attention(c_attn(ln_1(resid(l)))))
    linear_backward(atty, dres, n, d, d, P + lp.proj_w, datty, false, Gr + lp.proj_w, gopt(lp.proj_b), mm);
    if (auto s = attention_backward(shape, qkv, atty, w.at(w.o.lse) + l * H * n, datty, dbuf); !s.ok()) return s;
    if (c.position == Position::rope)  // back through the rotation: its transpose
      if (auto s = rotate_qk(c, dbuf, batch, seq, nullptr, true, w.at(w.o.rope)); !s.ok()) return s;
    linear_backward(ln1, dbuf, n, d, q, P + lp.qkv_w, dln, false, Gr + lp.qkv_w, gopt(lp.qkv_b), mm);
    layernorm_backward(w.resid(l), n, d, stats1, stats1 + n, P + lp.ln1_w, dln, dres, Gr + lp.ln1_w, gopt(lp.ln1_b));
  }
  embedding_backward(tokens, batch, seq, dres, d, Gr + layout_.wte, gopt(layout_.wpe));
  return Status::success();
}

Status GPT::check_sizes(std::size_t tokens, std::size_t targets, std::size_t seq) const {
  if (seq < 1 || seq > config_.context || tokens == 0 || tokens % seq != 0) return check_batch(tokens, seq, "tokens");
  if (targets != tokens)
    return detail::range_errorf("targets", "targets must have tokens.length = %zu elements, got %zu", tokens, targets);
  return Status::success();
}

Status GPT::check_inputs(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                         std::size_t seq) const {
  if (auto s = check_sizes(tokens.size(), targets.size(), seq); !s.ok()) return s;
  if (auto s = check_tokens(tokens, "tokens", false); !s.ok()) return s;
  return check_tokens(targets, "targets", true);
}

Status GPT::check_loss(double mean) {
  if (std::isfinite(mean)) return Status::success();
  return Status::numerical_error("loss", detail::format("the loss is %s; the step was not applied and the weights are "
                                                        "unchanged (is lr too large?)", detail::fmt(mean).c_str()));
}

// normalizer 0: the whole batch (its own count; no counted target is an error); otherwise one part of a batch.
Status GPT::loss_and_gradients(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                               std::size_t seq, std::size_t normalizer, double& loss_sum, std::size_t& count) {
  if (auto s = check_inputs(tokens, targets, seq); !s.ok()) return s;
  const auto counted = static_cast<std::size_t>(std::count_if(targets.begin(), targets.end(), [](std::int32_t t) { return t >= 0; }));
  if (!normalizer && counted == 0)
    return Status::range_error("targets", "targets are all -1 (ignored): the batch has nothing to learn from");
  if (normalizer && counted > normalizer)
    return detail::range_errorf("normalizer", "normalizer must count at least this part's %zu targets, got %zu", counted,
                                normalizer);
  const std::size_t batch = tokens.size() / seq, n = tokens.size();
  if (auto s = ensure_workspace(batch, seq); !s.ok()) return s;
  if (auto s = run_forward(tokens.data(), batch, seq, nullptr, false); !s.ok()) return s;
  const Workspace w{work_offsets(config_, n), work_.data(), n, config_.d_model};
  const CrossEntropy ce = cross_entropy(w.at(w.o.logits), targets.data(), n, config_.vocab_size, true, nullptr, normalizer);
  loss_sum = ce.sum, count = ce.count;
  if (normalizer && !std::isfinite(ce.sum)) return Status::success();  // the caller names the whole batch's loss
  if (auto s = check_loss(ce.mean); !normalizer && !s.ok()) return s;
  return run_backward(tokens.data(), batch, seq);
}

Status GPT::compute_gradients(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                              std::size_t seq, float& loss) {
  double sum = 0.0;
  std::size_t count = 0;
  if (auto s = loss_and_gradients(tokens, targets, seq, 0, sum, count); !s.ok()) return s;
  loss = static_cast<float>(sum / double(count));
  return Status::success();
}

Status GPT::partial_gradients(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                              std::size_t seq, std::size_t normalizer, double& loss_sum) {
  if (normalizer == 0) return Status::range_error("normalizer", "normalizer must be >= 1, got 0");
  std::size_t count = 0;
  return loss_and_gradients(tokens, targets, seq, normalizer, loss_sum, count);
}

Status GPT::check_options(const TrainOptions& o) {
  auto bad = [](const char* name, float v, const char* want) {
    return detail::range_errorf(name, "%s must be %s, got %s", name, want, detail::fmt(v).c_str());
  };
  if (!(std::isfinite(o.lr) && o.lr >= 0.0f)) return bad("lr", o.lr, "finite and >= 0");
  if (!(std::isfinite(o.weight_decay) && o.weight_decay >= 0.0f)) return bad("weightDecay", o.weight_decay, "finite and >= 0");
  if (!(o.beta1 >= 0.0f && o.beta1 < 1.0f)) return bad("beta1", o.beta1, "in [0, 1)");
  if (!(o.beta2 >= 0.0f && o.beta2 < 1.0f)) return bad("beta2", o.beta2, "in [0, 1)");
  if (!(std::isfinite(o.eps) && o.eps > 0.0f)) return bad("eps", o.eps, "finite and > 0");
  if (!(std::isfinite(o.grad_clip) && o.grad_clip >= 0.0f)) return bad("gradClip", o.grad_clip, "finite and >= 0 (0: no clipping)");
  return Status::success();
}

Status GPT::check_step(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets, std::size_t seq,
                       const TrainOptions& o) const {
  if (auto s = check_options(o); !s.ok()) return s;
  if (auto s = check_inputs(tokens, targets, seq); !s.ok()) return s;
  if (std::none_of(targets.begin(), targets.end(), [](std::int32_t t) { return t >= 0; }))
    return Status::range_error("targets", "targets are all -1 (ignored): the batch has nothing to learn from");
  return Status::success();
}

Status GPT::train_step(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets, std::size_t seq,
                       const TrainOptions& o, float& loss) {
  if (auto s = check_options(o); !s.ok()) return s;
  float l = 0.0f;
  if (auto s = compute_gradients(tokens, targets, seq, l); !s.ok()) return s;
  if (auto s = update(grads_.data(), o); !s.ok()) return s;
  loss = l;
  return Status::success();
}

Status GPT::apply_gradients(std::span<const float> grads, const TrainOptions& o) {
  if (auto s = check_options(o); !s.ok()) return s;
  if (auto s = detail::check_length("gradients", grads.size(), layout_.total, "parameterCount"); !s.ok()) return s;
  return update(grads.data(), o);
}

Status GPT::check_norm(double norm) {
  if (std::isfinite(norm)) return Status::success();
  return Status::numerical_error("loss", detail::format("the gradient is not finite (its norm is %s); the step was not "
                                                        "applied and the weights are unchanged", detail::fmt(norm).c_str()));
}

// torch.nn.utils.clip_grad_norm_: scale by max_norm / (norm + 1e-6) when that is below 1.
static float clip_scale(double norm, const TrainOptions& o) {
  return o.grad_clip > 0.0f && norm > o.grad_clip ? float(double(o.grad_clip) / (norm + 1e-6)) : 1.0f;
}

void GPT::adamw_range(const float* g, std::size_t begin, std::size_t end, float gscale, std::uint64_t t,
                      const TrainOptions& o) noexcept {
  const float bc1 = float(1.0 - std::pow(double(o.beta1), double(t))), bc2 = float(1.0 - std::pow(double(o.beta2), double(t)));
  for (const TensorInfo& ti : layout_.tensors) {
    if (ti.alias) continue;
    const std::size_t from = std::max(begin, ti.offset), to = std::min(end, ti.offset + ti.size());
    if (from >= to) continue;
    kern::adamw(to - from, params_.data() + from, g + from, m_.data() + from, v_.data() + from, gscale, o.lr, o.beta1,
                o.beta2, bc1, bc2, o.eps, ti.decay ? o.weight_decay : 0.0f);
  }
}

Status GPT::update(const float* g, const TrainOptions& o) {
  // The global gradient norm, in double (per chunk of the float kernel), both to clip and to refuse a non-finite
  // gradient before anything is updated.
  double sq = 0.0;
  for (std::size_t i = 0; i < layout_.total; i += kNormChunk)
    sq += double(kern::sum_squares(g + i, std::min<std::size_t>(kNormChunk, layout_.total - i)));
  const double norm = std::sqrt(sq);
  if (auto s = check_norm(norm); !s.ok()) return s;
  const std::uint64_t t = steps_ + 1;
  adamw_range(g, 0, layout_.total, clip_scale(norm, o), t, o);
  steps_ = t;
  return Status::success();
}

Status GPT::reduce_slice(std::size_t offset, std::size_t length, std::span<const float> parts, double& sum_squares) {
  if (offset > layout_.total || length > layout_.total - offset)
    return detail::range_errorf("offset", "offset + length must be at most parameterCount = %zu, got %zu + %zu",
                                layout_.total, offset, length);
  if (length == 0 ? !parts.empty() : parts.empty() || parts.size() % length != 0)
    return detail::range_errorf("gradients", "gradients must be whole slices of length %zu, got %zu floats", length,
                                parts.size());
  float* g = grads_.data() + offset;
  if (length) std::memcpy(g, parts.data(), length * sizeof(float));
  for (std::size_t k = 1; k < parts.size() / length; ++k) {
    const float* p = parts.data() + k * length;
    for (std::size_t i = 0; i < length; ++i) g[i] += p[i];  // float32 sums in the parts' order, each rounded once
  }
  double sq = 0.0;
  for (std::size_t i = offset; i < offset + length;) {
    const std::size_t next = std::min(offset + length, (i / kNormChunk + 1) * kNormChunk);
    sq += double(kern::sum_squares(grads_.data() + i, next - i));
    i = next;
  }
  sum_squares = sq;
  return Status::success();
}

Status GPT::update_slice(std::size_t offset, std::size_t length, const TrainOptions& o, std::uint64_t step,
                         double norm) {
  if (auto s = check_options(o); !s.ok()) return s;
  if (offset > layout_.total || length > layout_.total - offset)
    return detail::range_errorf("offset", "offset + length must be at most parameterCount = %zu, got %zu + %zu",
                                layout_.total, offset, length);
  if (step == 0) return Status::range_error("step", "step must be >= 1, got 0");
  if (auto s = check_norm(norm); !s.ok()) return s;
  adamw_range(grads_.data(), offset, offset + length, clip_scale(norm, o), step, o);
  steps_ = step;
  return Status::success();
}

Status GPT::forward_sizes(std::size_t tokens, std::size_t seq, bool want_attention, std::size_t& logits,
                          std::size_t& attention) const {
  if (seq < 1 || seq > config_.context || tokens == 0 || tokens % seq != 0) return check_batch(tokens, seq, "tokens");
  attention = 0;
  if (!detail::checked_mul(tokens, config_.vocab_size, logits)) return detail::check_product("logits", tokens, config_.vocab_size, logits);
  if (want_attention) {
    std::size_t per_layer;
    if (auto s = detail::check_product("attention", sat_mul(tokens / seq, config_.heads), sat_mul(seq, seq), per_layer); !s.ok()) return s;
    if (auto s = detail::check_product("attention", config_.layers, per_layer, attention); !s.ok()) return s;
  }
  return Status::success();
}

Status GPT::forward(std::span<const std::int32_t> tokens, std::size_t seq, std::span<float> logits,
                    std::span<float> attention) {
  std::size_t want_logits, want_attention;
  if (auto s = forward_sizes(tokens.size(), seq, !attention.empty(), want_logits, want_attention); !s.ok()) return s;
  if (logits.size() != want_logits) return detail::check_length("logits", logits.size(), want_logits, "batch·seq·vocabSize");
  if (want_attention && attention.size() != want_attention)
    return detail::check_length("attention", attention.size(), want_attention, "layers·batch·heads·seq·seq");
  if (auto s = check_tokens(tokens, "tokens", false); !s.ok()) return s;
  const std::size_t batch = tokens.size() / seq, n = tokens.size();
  if (auto s = ensure_workspace(batch, seq); !s.ok()) return s;
  // The weights go straight into the caller's buffer; on a (scratch) failure midway it holds partial rows, so
  // stage them when asked for: attention maps are small next to the workspace.
  Scratch staged(want_attention);
  if (!staged.ok_for(want_attention)) return Status::no_memory("the attention maps");
  if (auto s = run_forward(tokens.data(), batch, seq, want_attention ? staged.data() : nullptr, false); !s.ok()) return s;
  const Workspace w{work_offsets(config_, n), work_.data(), n, config_.d_model};
  std::memcpy(logits.data(), w.at(w.o.logits), want_logits * sizeof(float));
  if (want_attention) std::memcpy(attention.data(), staged.data(), want_attention * sizeof(float));
  return Status::success();
}

Status GPT::decode_step(std::int32_t token, std::size_t pos, float* logits, float* buf) {
  // One new token at `pos` through every layer, reading and extending the KV cache.
  const GPTConfig& c = config_;
  const std::size_t d = c.d_model, q = c.qkv_width(), H = c.heads, G = c.kv_heads, dh = c.head_dim(),
                    group = H / G, ctx = c.context;
  const float* P = params_.data();
  auto opt = [&](std::size_t off) { return off == kAbsent ? nullptr : P + off; };
  float *x = buf, *ln = x + d, *qkv = ln + d, *atty = qkv + q, *pre = atty + d, *act = pre + 4 * d, *stats = act + 4 * d,
        *rot = stats + 4, *mm = rot + q;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  std::memcpy(x, P + layout_.wte + std::size_t(token) * d, d * sizeof(float));
  if (layout_.wpe != kAbsent) kern::axpy(d, 1.0f, P + layout_.wpe + pos * d, x);
  for (std::size_t l = 0; l < c.layers; ++l) {
    const LayerParams& lp = layout_.layers[l];
    layernorm_forward(x, 1, d, P + lp.ln1_w, opt(lp.ln1_b), ln, stats, stats + 1);
    linear_forward(ln, 1, d, q, P + lp.qkv_w, opt(lp.qkv_b), qkv, false, mm);
    if (c.position == Position::rope) {
      const auto at = static_cast<std::int32_t>(pos);
      if (auto s = rotate_qk(c, qkv, 1, 1, &at, false, rot); !s.ok()) return s;
    }
    for (std::size_t g = 0; g < G; ++g) {
      std::memcpy(cache_.data() + ((l * 2 + 0) * G + g) * ctx * dh + pos * dh, qkv + (H + g) * dh, dh * sizeof(float));
      std::memcpy(cache_.data() + ((l * 2 + 1) * G + g) * ctx * dh + pos * dh, qkv + (H + G + g) * dh, dh * sizeof(float));
    }
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t g = h / group;
      const detail::AttentionProblem p{qkv + h * dh, dh, cache_.data() + ((l * 2 + 0) * G + g) * ctx * dh, dh,
                                       cache_.data() + ((l * 2 + 1) * G + g) * ctx * dh, dh, 1, pos + 1, dh, dh, scale,
                                       false, nullptr, atty + h * dh, dh, nullptr, nullptr, nullptr};
      if (auto s = detail::attend_streaming(p); !s.ok()) return s;
    }
    linear_forward(atty, 1, d, d, P + lp.proj_w, opt(lp.proj_b), x, true, mm);
    if (c.mlp) {
      layernorm_forward(x, 1, d, P + lp.ln2_w, opt(lp.ln2_b), ln, stats, stats + 1);
      mlp_forward(ln, 1, d, {P + lp.fc_w, opt(lp.fc_b), P + lp.fc_proj_w, opt(lp.fc_proj_b)}, pre, act, x, true, mm);
    }
  }
  layernorm_forward(x, 1, d, P + layout_.lnf_w, opt(layout_.lnf_b), ln, stats, stats + 1);
  gemm_blocked(Op::n, Op::t, 1, c.vocab_size, d, ln, d, P + layout_.lm_head, d, logits, c.vocab_size, false, mm);
  return Status::success();
}

Status GPT::check_generate(std::size_t prompt, const GenerateOptions& o, std::size_t out) const {
  if (prompt == 0) return Status::range_error("prompt", "prompt must hold at least one token, got 0");
  if (!(std::isfinite(o.temperature) && o.temperature >= 0.0f))
    return detail::range_errorf("temperature", "temperature must be finite and >= 0 (0: greedy), got %s", detail::fmt(o.temperature).c_str());
  if (o.temperature > 0.0f && !std::isfinite(1.0f / o.temperature))
    return detail::range_errorf("temperature", "temperature must be 0 or at least 3e-39, got %s", detail::fmt(o.temperature).c_str());
  return out == o.max_tokens ? Status::success() : detail::check_length("out", out, o.max_tokens, "maxTokens");
}

Status GPT::generate(std::span<const std::int32_t> prompt, const GenerateOptions& o, std::span<std::int32_t> out) {
  const GPTConfig& c = config_;
  if (auto s = check_generate(prompt.size(), o, out.size()); !s.ok()) return s;
  if (auto s = check_tokens(prompt, "prompt", false); !s.ok()) return s;
  if (o.max_tokens == 0) return Status::success();

  const std::size_t V = c.vocab_size, d = c.d_model;
  const std::size_t cache_floats = sat_mul(sat_mul(2 * c.layers, c.kv_heads), sat_mul(c.context, c.head_dim()));
  const std::size_t buf_floats = sat_add(sat_mul(d, 12) + 2 * c.qkv_width() + 4, kGemmScratch);
  const std::size_t side = sat_add(sat_mul(3, V), buf_floats);  // logits, sampling scratch, decode buffers
  if (!cache_.data()) {
    Scratch fresh(cache_floats);
    if (!fresh.ok_for(cache_floats)) return Status::no_memory("the KV cache");
    cache_ = std::move(fresh);
  }
  Scratch aux(side);
  std::vector<std::int32_t> tokens, result;
  if (!aux.ok_for(side)) return Status::no_memory("generation buffers");
  float *logits = aux.data(), *sample_scratch = logits + V, *buf = sample_scratch + 2 * V;
  tokens.assign(prompt.size() > c.context ? prompt.end() - std::ptrdiff_t(c.context) : prompt.begin(), prompt.end());
  result.reserve(o.max_tokens);

  // Prefill: the whole window through the batched forward, which fills the cache; the last row's logits.
  auto prefill = [&]() -> Status {
    const std::size_t n = tokens.size();
    if (auto s = ensure_workspace(1, n); !s.ok()) return s;
    if (auto s = run_forward(tokens.data(), 1, n, nullptr, true); !s.ok()) return s;
    const Workspace w{work_offsets(c, n), work_.data(), n, d};
    std::memcpy(logits, w.at(w.o.logits) + (n - 1) * V, V * sizeof(float));
    return Status::success();
  };
  if (auto s = prefill(); !s.ok()) return s;
  Rng rng(o.seed);
  for (std::size_t i = 0; i < o.max_tokens; ++i) {
    if (kern::first_invalid(logits, V, false) < V)
      return Status::numerical_error("logits", "the model's logits are not finite (its weights have diverged)");
    const std::int32_t next = sample_token(logits, V, o.temperature, o.top_k, rng, sample_scratch);
    result.push_back(next);
    if (i + 1 == o.max_tokens) break;
    tokens.push_back(next);
    if (tokens.size() > c.context) {  // the window slides: positions change, so the cache is rebuilt
      tokens.erase(tokens.begin());
      if (auto s = prefill(); !s.ok()) return s;
    } else if (auto s = decode_step(next, tokens.size() - 1, logits, buf); !s.ok()) {
      return s;
    }
  }
  std::copy(result.begin(), result.end(), out.begin());
  return Status::success();
}

void GPT::read_tensor(const TensorInfo& t, float* out) const noexcept {
  const float* src = params_.data() + t.offset;
  if (t.transposed) kern::transpose(t.cols, t.rows, src, t.rows, out, t.cols);  // stored [in × out] → [out, in]
  else std::memcpy(out, src, t.size() * sizeof(float));
}

Status GPT::set_weights(std::span<const NamedTensor> given) {
  std::vector<const TensorInfo*> targets(given.size());
  const TensorInfo* wte_info = &layout_.tensors.front();
  const NamedTensor *wte_given = nullptr, *head_given = nullptr;
  for (std::size_t i = 0; i < given.size(); ++i) {
    const NamedTensor& g = given[i];
    const std::string name(g.name);
    auto it = std::find_if(layout_.tensors.begin(), layout_.tensors.end(), [&](const TensorInfo& t) { return t.name == name; });
    if (it == layout_.tensors.end())
      return detail::range_errorf(name.c_str(), "unknown weight \"%.100s\": this model's state dict has %zu names, from %s to %s",
                                  name.c_str(), layout_.tensors.size(), layout_.tensors.front().name.c_str(),
                                  layout_.tensors.back().name.c_str());
    for (std::size_t j = 0; j < i; ++j)
      if (targets[j] == &*it) return detail::range_errorf(name.c_str(), "weight \"%s\" is given twice", name.c_str());
    const std::string shape = it->cols ? detail::format("[%zu, %zu]", it->rows, it->cols) : detail::format("[%zu]", it->rows);
    if (auto s = detail::check_length(name.c_str(), g.data.size(), it->size(), shape); !s.ok()) return s;
    if (auto s = detail::check_values(name.c_str(), g.data, false); !s.ok()) return s;
    targets[i] = &*it;
    if (&*it == wte_info) wte_given = &g;
    if (it->alias) head_given = &g;
  }
  if (wte_given && head_given &&
      !std::equal(wte_given->data.begin(), wte_given->data.end(), head_given->data.begin()))
    return Status::range_error("lm_head.weight", "lm_head.weight is tied to transformer.wte.weight (config tied: true): "
                                                 "when both are given they must be equal");
  for (std::size_t i = 0; i < given.size(); ++i) {
    const TensorInfo& t = *targets[i];
    float* dst = params_.data() + t.offset;
    if (t.transposed) kern::transpose(t.rows, t.cols, given[i].data.data(), t.cols, dst, t.rows);
    else std::memcpy(dst, given[i].data.data(), t.size() * sizeof(float));
  }
  return Status::success();
}

}  // namespace attnlab::model
