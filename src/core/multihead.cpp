#include "multihead.h"

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>

#include "attention_impl.h"
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
  if (auto s = check_size("n", a.n); !s.ok()) return s;
  if (auto s = check_size("dModel", a.d_model); !s.ok()) return s;
  if (auto s = check_size("heads", a.heads); !s.ok()) return s;
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
      return Status::range_error(name, std::string(name) + " defaults to dModel / heads, but dModel = " +
                                           std::to_string(a.d_model) + " is not a multiple of heads = " +
                                           std::to_string(a.heads) + "; give " + name + " explicitly");
    }
  }
  return Status::success();
}

Status multi_head_attention(const MultiHeadArgs& a, const MultiHeadOutputs& o) {
  MultiHeadDims d{};
  if (auto s = multi_head_dims(a, d); !s.ok()) return s;
  const std::size_t H = d.heads, G = d.kv_heads;
  // Every product below must fit in size_t (32 bits in wasm); check the factors one by one.
  std::size_t x_len, qw, kw, vw, ow, q_len, k_len, v_len, c_len, out_len, wq_len, wk_len, wv_len, wo_len, nn, hnn;
  for (auto [what, x, y, r] : {std::tuple{"x", a.n, a.d_model, &x_len}, {"heads·dk", H, d.dk, &qw},
                               {"kvHeads·dk", G, d.dk, &kw}, {"kvHeads·dv", G, d.dv, &vw}, {"heads·dv", H, d.dv, &ow}})
    if (auto s = check_product(what, x, y, *r); !s.ok()) return s;
  for (auto [what, x, y, r] : {std::tuple{"q", a.n, qw, &q_len}, {"k", a.n, kw, &k_len}, {"v", a.n, vw, &v_len},
                               {"concat", a.n, ow, &c_len}, {"out", a.n, a.d_model, &out_len},
                               {"wq", a.d_model, qw, &wq_len}, {"wk", a.d_model, kw, &wk_len},
                               {"wv", a.d_model, vw, &wv_len}, {"wo", ow, a.d_model, &wo_len}})
    if (auto s = check_product(what, x, y, *r); !s.ok()) return s;
  const bool wants_matrix = !o.scores.empty() || !o.weights.empty();
  if (wants_matrix || !a.mask.empty()) {
    if (auto s = check_product("n·n", a.n, a.n, nn); !s.ok()) return s;
    if (auto s = check_product("heads·n·n", H, nn, hnn); !s.ok()) return s;
  }
  const std::string n_s = std::to_string(a.n), dm_s = std::to_string(a.d_model);
  const std::string qw_s = std::to_string(qw), kw_s = std::to_string(kw), vw_s = std::to_string(vw),
                    ow_s = std::to_string(ow);
  if (auto s = check_length("x", a.x.size(), x_len, "n·dModel = " + n_s + "·" + dm_s); !s.ok()) return s;
  if (auto s = check_length("wq", a.wq.size(), wq_len, "dModel·heads·dk = " + dm_s + "·" + qw_s); !s.ok()) return s;
  if (auto s = check_length("wk", a.wk.size(), wk_len, "dModel·kvHeads·dk = " + dm_s + "·" + kw_s); !s.ok()) return s;
  if (auto s = check_length("wv", a.wv.size(), wv_len, "dModel·kvHeads·dv = " + dm_s + "·" + vw_s); !s.ok()) return s;
  if (auto s = check_length("wo", a.wo.size(), wo_len, "heads·dv·dModel = " + ow_s + "·" + dm_s); !s.ok()) return s;
  if (!a.mask.empty())
    if (auto s = check_length("mask", a.mask.size(), nn, "n·n = " + n_s + "·" + n_s); !s.ok()) return s;
  if (auto s = check_length("out", o.out.size(), out_len, "n·dModel = " + n_s + "·" + dm_s); !s.ok()) return s;
  for (auto [name, span, want, shape] :
       {std::tuple{"q", o.q, q_len, "n·heads·dk = " + n_s + "·" + qw_s}, {"k", o.k, k_len, "n·kvHeads·dk = " + n_s + "·" + kw_s},
        {"v", o.v, v_len, "n·kvHeads·dv = " + n_s + "·" + vw_s}, {"concat", o.concat, c_len, "n·heads·dv = " + n_s + "·" + ow_s},
        {"scores", o.scores, hnn, "heads·n·n"}, {"weights", o.weights, hnn, "heads·n·n"}})
    if (!span.empty())
      if (auto s = check_length(name, span.size(), want, shape); !s.ok()) return s;
  float scale = 1.0f / std::sqrt(static_cast<float>(d.dk));
  if (a.scale)
    if (auto s = check_float32_positive("scale", *a.scale, scale); !s.ok()) return s;
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
