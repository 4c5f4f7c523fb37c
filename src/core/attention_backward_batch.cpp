// attention_backward() over the whole operator: validated by the forward's own code (attention_batch.cpp's
// plan_attention), then cut into per-head problems by strides and run by the FlashAttention-2 kernel
// (attention_backward.cpp), each query head of a GQA group adding into its shared K/V head's gradients.
#include <cmath>
#include <cstring>
#include <tuple>

#include "attention_backward.h"
#include "attention_backward_impl.h"
#include "attention_impl.h"
#include "format.h"
#include "kernels/kernels.h"
#include "scratch.h"
#include "validate.h"

namespace attnlab {
namespace {

using namespace detail;

// Whether query i of the head whose mask view is `m` sees any key of [lo, hi) through the mask.
bool mask_lets_through(const MaskView& m, std::size_t i, KeySpan span) noexcept {
  if (!m) return span.lo < span.hi;
  const std::size_t at = i * m.row_stride;
  for (std::size_t j = span.lo; j < span.hi; ++j) {
    const std::size_t x = at + j * m.col_stride;
    if (m.add ? m.add[x] != -INFINITY : m.keep[x] != 0) return true;
  }
  return false;
}

}  // namespace

namespace {

// Everything attention_backward() checks before reading a value (an empty gradient's length only when `required`).
Status plan_backward(const AttentionArgs& a, const AttentionSaved& saved, const AttentionGradients& g, bool required,
                     AttentionPlan& plan) {
  if (a.cache)
    return Status::range_error("cache", "attentionBackward takes explicit k and v, not a cache: pass the keys and values "
                                        "the forward attended to");
  // A split backward is cut into sub-calls of whole K/V heads instead (an item's gradients are its heads' alone).
  if (a.q_begin != 0 || a.q_end != 0) return Status::range_error("nq", "attentionBackward takes every query row: a query range is the forward's alone");
  if (a.item_begin != 0 || a.item_end != SIZE_MAX) return Status::range_error("batch", "attentionBackward takes every work item: an item range is the forward's alone");
  if (auto s = plan_attention(a, false, plan); !s.ok()) return s;
  const AttentionBatch& b = plan.batch;
  const std::size_t heads = b.heads, kv_heads = b.kv_heads, nq = b.nq, nk = b.nk, dk = b.dk, dv = b.dv;
  const std::string out_shape = plan.shape("nq·dv", "heads", heads, nq, dv),
                    lse_shape = plan.single ? format("nq = %zu", nq) : format("batch·heads·nq = %zu·%zu·%zu", b.batch, heads, nq);
  for (auto [name, size, want, shape] :
       {std::tuple{"output", saved.output.size(), plan.out_len, &out_shape}, {"lse", saved.lse.size(), plan.lse_len, &lse_shape},
        {"dOutput", saved.d_output.size(), plan.out_len, &out_shape}})
    if (size != want) return check_length(name, size, want, *shape);
  if ((required || !g.dq.empty()) && g.dq.size() != plan.q_len)
    return check_length("out.dq", g.dq.size(), plan.q_len, plan.shape("nq·dk", "heads", heads, nq, dk));
  if ((required || !g.dk.empty()) && g.dk.size() != plan.k_len)
    return check_length("out.dk", g.dk.size(), plan.k_len, plan.shape("nk·dk", "kvHeads", kv_heads, nk, dk));
  if ((required || !g.dv.empty()) && g.dv.size() != plan.v_len)
    return check_length("out.dv", g.dv.size(), plan.v_len, plan.shape("nk·dv", "kvHeads", kv_heads, nk, dv));
  return Status::success();
}

}  // namespace

Status check_attention_backward(const AttentionArgs& a, const AttentionSaved& saved, const AttentionGradients& g,
                                AttentionShape& shape) {
  AttentionPlan plan;
  if (auto s = plan_backward(a, saved, g, false, plan); !s.ok()) return s;
  shape_of(a, plan, shape);
  return Status::success();
}

Status attention_backward(const AttentionArgs& a, const AttentionSaved& saved, const AttentionGradients& g) {
  AttentionPlan plan;
  if (auto s = plan_backward(a, saved, g, true, plan); !s.ok()) return s;
  const AttentionBatch& b = plan.batch;
  const std::size_t heads = b.heads, kv_heads = b.kv_heads, nq = b.nq, nk = b.nk, dk = b.dk, dv = b.dv;
  if (auto s = check_attention_values(a, plan); !s.ok()) return s;
  for (auto [name, span, neg_inf] : {std::tuple{"output", saved.output, false}, {"lse", saved.lse, true}, {"dOutput", saved.d_output, false}})
    if (auto s = check_values(name, span, neg_inf); !s.ok()) return s;

  // Each head's problem; `dq`, `dk`, `dv` (staged, same layouts as q, k, v) and `sums` [batch, heads, nq].
  auto problem = [&](std::size_t bi, std::size_t h, float* dq, float* dkb, float* dvb, float* sums) {
    const std::size_t group = heads / kv_heads, kg = h / group;
    const TensorView &q = b.q, &k = b.k, &v = b.v;
    const std::size_t qo = bi * q.batch_stride + h * q.head_stride, ko = bi * k.batch_stride + kg * k.head_stride,
                      vo = bi * v.batch_stride + kg * v.head_stride, oo = bi * b.out_batch_stride + h * b.out_head_stride;
    AttentionGradProblem p{q.data + qo, q.row_stride, k.data + ko, k.row_stride, v.data + vo, v.row_stride,
                           saved.output.data() + oo, b.out_row_stride, saved.d_output.data() + oo, b.out_row_stride,
                           saved.lse.data() + (bi * heads + h) * nq, nq, nk, dk, dv, b.scale, bool(b.causal), nullptr,
                           dq ? dq + qo : nullptr, q.row_stride, dkb ? dkb + ko : nullptr, k.row_stride,
                           dvb ? dvb + vo : nullptr, v.row_stride, h % group != 0,
                           sums ? sums + (bi * heads + h) * nq : nullptr};
    p.top_left = b.causal.align == Causal::top_left;
    p.window = b.window;
    p.kv_len = b.key_lengths ? std::size_t(b.key_lengths[bi]) : nk;
    p.softcap = b.softcap;
    p.alibi = b.alibi ? b.alibi[h] : 0.0f;
    p.mask_view = b.mask;
    const std::size_t mo = bi * b.mask_batch_stride + h * b.mask.head_stride;
    if (b.mask.add) p.mask_view.add = b.mask.add + mo;
    if (b.mask.keep) p.mask_view.keep = b.mask.keep + mo;
    return p;
  };

  // A row whose lse is −inf must see no key (the forward gives −inf exactly then).
  for (std::size_t bi = 0; bi < b.batch; ++bi)
    for (std::size_t h = 0; h < heads; ++h) {
      const AttentionGradProblem p = problem(bi, h, nullptr, nullptr, nullptr, nullptr);
      const Visibility vis{nq, nk, p.kv_len, p.mask_view ? p.mask_view.keys : SIZE_MAX, p.causal, p.top_left, p.window};
      for (std::size_t i = 0; i < nq; ++i) {
        const std::size_t at = (bi * heads + h) * nq + i;
        if (saved.lse[at] == -INFINITY && mask_lets_through(p.mask_view, i, key_span(vis, i)))
          return range_errorf("lse", "lse[%zu] is -Infinity but query %zu of head %zu of item %zu sees keys; pass the lse the "
                              "forward returned for these inputs and options", at, i, h, bi);
      }
    }

  // Staged: the gradients reach the caller only once the lse and the results are known to be good.
  Scratch dq(plan.q_len), dkb(plan.k_len), dvb(plan.v_len), sums(plan.lse_len);
  if (!dq.ok_for(plan.q_len) || !dkb.ok_for(plan.k_len) || !dvb.ok_for(plan.v_len) || !sums.ok_for(plan.lse_len))
    return Status::no_memory("the attention gradients");
  // Query heads in group order, so that the first head of each group overwrites its K/V head's gradients.
  for (std::size_t bi = 0; bi < b.batch; ++bi)
    for (std::size_t h = 0; h < heads; ++h)
      if (auto s = attend_backward(problem(bi, h, dq.data(), dkb.data(), dvb.data(), sums.data())); !s.ok()) return s;

  // Recomputed weights must sum to 1 up to the rounding of the logits and of lse (first order, generous ×8), each
  // row on its own: the products are bounded by scale·‖q‖·‖k‖ and ALiBi's slope·(nq + nk). A mask value enters a
  // logit exactly, by one rounded addition (u·|logit|), and only the logits within a few dozen of the row's lse
  // carry weight: the row's |lse| covers them, whatever the mask holds elsewhere (−1e9 on padded keys or rows).
  const TensorView &q = b.q, &k = b.k;
  const std::size_t group = heads / kv_heads;
  for (std::size_t bi = 0; bi < b.batch; ++bi)
    for (std::size_t h = 0; h < heads; ++h) {
      const std::size_t kg = h / group;
      const double k_max = max_row_norm(k.data + bi * k.batch_stride + kg * k.head_stride, nk, dk, k.row_stride);
      const double bias = b.alibi ? std::fabs(double(b.alibi[h])) * double(nq + nk) : 0.0;
      for (std::size_t i = 0; i < nq; ++i) {
        const std::size_t at = (bi * heads + h) * nq + i;
        const double lse = saved.lse[at];
        if (lse == -INFINITY) continue;
        const double qn = max_row_norm(q.data + bi * q.batch_stride + h * q.head_stride + i * q.row_stride, 1, dk, 0);
        const double u = 0x1p-24, tol = 1e-3 + 8.0 * double(dk + 2) * u * (b.scale * qn * k_max + bias + std::fabs(lse));
        const double total = sums.data()[at];
        if (!(std::fabs(total - 1.0) <= tol))
          return range_errorf("lse", "lse[%zu] = %s does not match q and k: the weights it gives sum to %s, not 1; pass the lse "
                              "the forward returned for these inputs and options", at, fmt(lse).c_str(), fmt(total).c_str());
      }
    }
  for (auto [name, buf, len] : {std::tuple{"dq", dq.data(), plan.q_len}, {"dk", dkb.data(), plan.k_len}, {"dv", dvb.data(), plan.v_len}})
    if (kernels::active::first_invalid(buf, len, false) < len)
      return range_errorf("dOutput", "the gradient %s overflowed float32; scale dOutput (or the inputs) down", name);
  std::memcpy(g.dq.data(), dq.data(), plan.q_len * sizeof(float));
  std::memcpy(g.dk.data(), dkb.data(), plan.k_len * sizeof(float));
  std::memcpy(g.dv.data(), dvb.data(), plan.v_len * sizeof(float));
  return Status::success();
}

}  // namespace attnlab
