#include "multihead.h"

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>

#include "attention_impl.h"
#include "format.h"
#include "kernels/kernels.h"
#include "scratch.h"
#include "validate.h"

namespace attnlab {
namespace {

using namespace detail;
namespace kern = kernels::active;

Status check_finite_result(const char* name, const float* data, std::size_t count, const char* from) {
  for (std::size_t i = 0; i < count; ++i)
    if (!std::isfinite(data[i]))
      return Status::range_error(name, std::string(from) + " overflowed float32 (element " + std::to_string(i) +
                                           " is " + fmt(data[i]) + "); scale the inputs down");
  return Status::success();
}

}  // namespace

Status multi_head_dims(const MultiHeadArgs& a, MultiHeadDims& d) {
  for (auto [name, value] : {std::pair{"n", a.n}, {"dModel", a.d_model}, {"heads", a.heads}})
    if (!value) return check_size(name, value);
  d.heads = a.heads;
  d.kv_heads = a.kv_heads ? a.kv_heads : a.heads;
  if (d.kv_heads > d.heads || d.heads % d.kv_heads != 0)
    return Status::range_error("kvHeads", "kvHeads must divide heads = " + std::to_string(d.heads) + ", got " +
                                              std::to_string(d.kv_heads));
  for (auto [name, given, out] : {std::tuple{"dk", a.dk, &d.dk}, {"dv", a.dv, &d.dv}}) {
    if (given) {
      *out = given;
    } else if (a.d_model % a.heads == 0) {
      *out = a.d_model / a.heads;
    } else {
      return range_errorf(name, "%s must be given when dModel is not a multiple of heads (it defaults to dModel / heads), "
                                "got dModel = %zu, heads = %zu", name, a.d_model, a.heads);
    }
  }
  return Status::success();
}

Status multi_head_lengths(const MultiHeadArgs& a, bool wants_matrix, MultiHeadDims& d, MultiHeadLengths& len) {
  if (auto s = multi_head_dims(a, d); !s.ok()) return s;
  const std::size_t H = d.heads, G = d.kv_heads;
  // Every product below must fit in size_t (32 bits in wasm); check the factors one by one.
  std::size_t qw, kw, vw, ow, nn = 0;
  // (a product past size_t is named by the sizes the caller gave)
  auto too_large = [](const char* tensor, const char* names, std::size_t x, std::size_t y) {
    return range_errorf(tensor, "%s is too large: %s = %zu × %zu elements would not fit in memory", tensor, names, x, y);
  };
  for (auto [what, x, y, r, names] : {std::tuple{"x", a.n, a.d_model, &len.x, "n·dModel"}, {"wq", H, d.dk, &qw, "dModel·heads·dk"},
                                      {"wk", G, d.dk, &kw, "dModel·kvHeads·dk"}, {"wv", G, d.dv, &vw, "dModel·kvHeads·dv"},
                                      {"wo", H, d.dv, &ow, "heads·dv·dModel"}})
    if (!checked_mul(x, y, *r)) return too_large(what, names, x, y);
  for (auto [what, x, y, r, names] : {std::tuple{"q", a.n, qw, &len.q, "n·heads·dk"}, {"k", a.n, kw, &len.k, "n·kvHeads·dk"},
                                      {"v", a.n, vw, &len.v, "n·kvHeads·dv"}, {"concat", a.n, ow, &len.concat, "n·heads·dv"},
                                      {"out", a.n, a.d_model, &len.out, "n·dModel"}, {"wq", a.d_model, qw, &len.wq, "dModel·heads·dk"},
                                      {"wk", a.d_model, kw, &len.wk, "dModel·kvHeads·dk"}, {"wv", a.d_model, vw, &len.wv, "dModel·kvHeads·dv"},
                                      {"wo", ow, a.d_model, &len.wo, "heads·dv·dModel"}})
    if (!checked_mul(x, y, *r)) return too_large(what, names, x, y);
  len.matrix = 0;
  if (wants_matrix || !a.mask.empty())
    if (!checked_mul(a.n, a.n, nn) || !checked_mul(H, nn, len.matrix))
      return range_errorf("scores", "scores is too large: heads·n·n = %zu·%zu·%zu elements would not fit in memory", H, a.n, a.n);
  len.mask = nn;
  return Status::success();
}

Status check_multi_head_attention(const MultiHeadArgs& a, const MultiHeadOutputs& o) {
  MultiHeadDims d{};
  MultiHeadLengths len{};
  if (auto s = multi_head_lengths(a, !o.scores.empty() || !o.weights.empty(), d, len); !s.ok()) return s;
  const std::size_t qw = d.heads * d.dk, kw = d.kv_heads * d.dk, vw = d.kv_heads * d.dv, ow = d.heads * d.dv;
  // (messages only on failure: every call is checked twice in the package)
  auto two = [](const char* names, std::size_t x, std::size_t y) { return format("%s = %zu·%zu", names, x, y); };
  for (auto [name, got, want, names, x, y] :
       {std::tuple{"x", a.x.size(), len.x, "n·dModel", a.n, a.d_model}, {"wq", a.wq.size(), len.wq, "dModel·heads·dk", a.d_model, qw},
        {"wk", a.wk.size(), len.wk, "dModel·kvHeads·dk", a.d_model, kw}, {"wv", a.wv.size(), len.wv, "dModel·kvHeads·dv", a.d_model, vw},
        {"wo", a.wo.size(), len.wo, "heads·dv·dModel", ow, a.d_model}})
    if (got != want) return check_length(name, got, want, two(names, x, y));
  if (!a.mask.empty() && a.mask.size() != len.mask) return check_length("mask", a.mask.size(), len.mask, two("n·n", a.n, a.n));
  if (o.out.size() != len.out) return check_length("out", o.out.size(), len.out, two("n·dModel", a.n, a.d_model));
  for (auto [name, span, want, names, w] :
       {std::tuple{"q", o.q, len.q, "n·heads·dk", qw}, {"k", o.k, len.k, "n·kvHeads·dk", kw}, {"v", o.v, len.v, "n·kvHeads·dv", vw},
        {"concat", o.concat, len.concat, "n·heads·dv", ow}, {"scores", o.scores, len.matrix, nullptr, 0},
        {"weights", o.weights, len.matrix, nullptr, 0}})
    if (!span.empty() && span.size() != want) return check_length(name, span.size(), want, names ? two(names, a.n, w) : "heads·n·n");
  float scale;
  if (a.scale) return check_float32_positive("scale", *a.scale, scale);
  return Status::success();
}

Status multi_head_attention(const MultiHeadArgs& a, const MultiHeadOutputs& o) {
  if (auto s = check_multi_head_attention(a, o); !s.ok()) return s;
  const bool wants_matrix = !o.scores.empty() || !o.weights.empty();
  MultiHeadDims d{};
  MultiHeadLengths len{};
  if (auto s = multi_head_lengths(a, wants_matrix, d, len); !s.ok()) return s;
  const std::size_t H = d.heads, G = d.kv_heads;
  const std::size_t qw = H * d.dk, kw = G * d.dk, vw = G * d.dv, ow = H * d.dv;
  const std::size_t q_len = len.q, k_len = len.k, v_len = len.v, c_len = len.concat, out_len = len.out, hnn = len.matrix;
  float scale = 1.0f / std::sqrt(static_cast<float>(d.dk));
  if (a.scale) scale = static_cast<float>(*a.scale);
  for (auto [name, span] : {std::pair{"x", a.x}, {"wq", a.wq}, {"wk", a.wk}, {"wv", a.wv}, {"wo", a.wo}})
    if (auto s = check_values(name, span, false); !s.ok()) return s;
  if (auto s = check_values("mask", a.mask, true); !s.ok()) return s;

  // All scratch first; the outputs are written only once nothing can fail.
  // Per-head scores/weights are staged too: the output projection can still overflow after the heads ran.
  const std::size_t s_len = o.scores.empty() ? 0 : hnn, w_len = o.weights.empty() ? 0 : hnn;
  Scratch qs(q_len), ks(k_len), vs(v_len), cs(c_len), outs(out_len), ss(s_len), ws(w_len);
  if (!qs.ok_for(q_len) || !ks.ok_for(k_len) || !vs.ok_for(v_len) || !cs.ok_for(c_len) || !outs.ok_for(out_len) ||
      !ss.ok_for(s_len) || !ws.ok_for(w_len))
    return Status::no_memory("multi-head attention");
  kern::gemm(a.n, qw, a.d_model, a.x.data(), a.d_model, a.wq.data(), qw, qs.data(), qw, false);
  kern::gemm(a.n, kw, a.d_model, a.x.data(), a.d_model, a.wk.data(), kw, ks.data(), kw, false);
  kern::gemm(a.n, vw, a.d_model, a.x.data(), a.d_model, a.wv.data(), vw, vs.data(), vw, false);
  if (auto s = check_finite_result("wq", qs.data(), q_len, "x·wq"); !s.ok()) return s;
  if (auto s = check_finite_result("wk", ks.data(), k_len, "x·wk"); !s.ok()) return s;
  if (auto s = check_finite_result("wv", vs.data(), v_len, "x·wv"); !s.ok()) return s;

  // The overflow check per head, on the projected Q and K (named after the weights that made them).
  for (std::size_t h = 0; h < H; ++h) {
    const std::size_t g = h / (H / G);
    AttentionProblem p{qs.data() + h * d.dk, qw, ks.data() + g * d.dk, kw, vs.data() + g * d.dv, vw, a.n, a.n, d.dk, d.dv,
                       scale, a.causal, nullptr, nullptr, 0, nullptr, nullptr, nullptr};
    if (auto s = check_score_range(p, "wq", "wk"); !s.ok()) return s;
  }
  // The heads, read straight out of the projections: Q, K, V and the concatenation are [n × heads·d], the
  // 'bshd' layout of a batch of one.
  AttentionBatch batch{1, H, G, a.n, a.n, d.dk, d.dv, TensorView{qs.data(), 0, d.dk, qw}, TensorView{ks.data(), 0, d.dk, kw},
                       TensorView{vs.data(), 0, d.dv, vw}, cs.data(), 0, d.dv, ow};
  batch.scores = s_len ? ss.data() : nullptr;
  batch.weights = w_len ? ws.data() : nullptr;
  batch.scale = scale;
  batch.causal = a.causal;
  if (!a.mask.empty()) batch.mask = MaskView{a.mask.data(), nullptr, a.n, 1, SIZE_MAX, 0};  // [n × n], every head
  batch.materialize = wants_matrix;
  if (auto s = run_attention(batch); !s.ok()) return s;
  kern::gemm(a.n, a.d_model, ow, cs.data(), ow, a.wo.data(), a.d_model, outs.data(), a.d_model, false);
  if (auto s = check_finite_result("wo", outs.data(), out_len, "concat·wo"); !s.ok()) return s;

  std::memcpy(o.out.data(), outs.data(), out_len * sizeof(float));
  if (!o.q.empty()) std::memcpy(o.q.data(), qs.data(), q_len * sizeof(float));
  if (!o.k.empty()) std::memcpy(o.k.data(), ks.data(), k_len * sizeof(float));
  if (!o.v.empty()) std::memcpy(o.v.data(), vs.data(), v_len * sizeof(float));
  if (!o.concat.empty()) std::memcpy(o.concat.data(), cs.data(), c_len * sizeof(float));
  if (s_len) std::memcpy(o.scores.data(), ss.data(), s_len * sizeof(float));
  if (w_len) std::memcpy(o.weights.data(), ws.data(), w_len * sizeof(float));
  return Status::success();
}

}  // namespace attnlab
