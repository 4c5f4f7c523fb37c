#include "attention_backward.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include "attention_backward_impl.h"
#include "attention_impl.h"
#include "kernels/kernels.h"
#include "kernels/training.h"
#include "scratch.h"
#include "format.h"
#include "validate.h"

namespace attnlab {
namespace detail {
namespace {

namespace kern = kernels::active;

// Query rows per block and keys per tile. 32 × 64 rather than the forward's 32 × 128: the backward holds five
// tiles at once (S/P, dP/dS and three packed copies), and on a causal diagonal smaller tiles waste less.
constexpr std::size_t kRows = 32, kKeys = 64;

// The keys query row i sees, as a half-open range [lo, hi) of key indices: every rule that hides keys by position
// (causal, window, key length, a short mask) is in attention.cpp's key_span, shared with the forward.
using KeyRange = KeySpan;
Visibility visibility(const AttentionGradProblem& p) noexcept {
  return {p.nq, p.nk, p.kv_len, p.mask ? SIZE_MAX : p.mask_view.keys, p.causal, p.top_left, p.window};
}
// The same, clipped to the tile [j0, j0 + cols) and relative to it (empty: lo == hi).
KeyRange visible_in_tile(const Visibility& vis, std::size_t i, std::size_t j0, std::size_t cols) noexcept {
  const KeyRange r = key_span(vis, i);
  const std::size_t lo = r.lo > j0 ? r.lo - j0 : 0, hi = r.hi > j0 ? r.hi - j0 : 0;
  const std::size_t h = hi < cols ? hi : cols, l = lo < h ? lo : h;
  return {l, h};
}

// Row i's weights over the visible part [lo, hi) of a tile, in place. First its logits, as the forward's
// finish_scores makes them (attention.cpp; Q came pre-scaled unless `scale` ≠ 1): softcap — its derivative
// 1 − tanh² kept in `cap` —, ALiBi, the mask; then P = exp(logit − lse). Everything outside [lo, hi) becomes 0.
// Returns Σ P over the row's part of the tile, or +inf when a logit exceeds lse (lse not from these inputs).
float weights_row(const AttentionGradProblem& p, const MaskView& m, const Visibility& vis, float scale, std::size_t i,
                  std::size_t j0, KeyRange r, std::size_t cols, float* row, float* cap) noexcept {
  const float lse = p.lse[i];
  if (lse == -INFINITY || r.lo == r.hi) {
    std::memset(row, 0, cols * sizeof(float));
    return 0.0f;
  }
  float* live = row + r.lo;
  const std::size_t n = r.hi - r.lo, j = j0 + r.lo;
  float s = scale;
  if (p.softcap > 0.0f) {
    kern::soft_cap(live, n, s, p.softcap);
    s = 1.0f;
    const float c = p.softcap;
    for (std::size_t t = 0; t < n; ++t) {
      const float th = live[t] / c;
      cap[r.lo + t] = 1.0f - th * th;
    }
  }
  if (p.alibi != 0.0f) {
    if (s != 1.0f) kern::scale(live, n, s), s = 1.0f;
    kern::distance_bias(live, n, float(row_diagonal(vis, i) - std::int64_t(j)), p.alibi);
  }
  const std::size_t at = i * m.row_stride;
  if (m.add && m.col_stride) {
    kern::scale_add(live, n, s, m.add + at + j);
  } else if (m.add) {  // one value for every key of the row
    kern::scale_add(live, n, s, nullptr);
    const float c = m.add[at];
    if (c != 0.0f)
      for (std::size_t t = 0; t < n; ++t) live[t] = std::fmin(live[t] + c, FLT_MAX);
  } else if (s != 1.0f) {
    kern::scale_add(live, n, s, nullptr);
  }
  if (m.keep && m.col_stride) {
    kern::mask_bool(live, n, m.keep + at + j);
  } else if (m.keep && !m.keep[at]) {
    for (std::size_t t = 0; t < n; ++t) live[t] = -INFINITY;
  }
  // lse ≥ every logit of its row (up to rounding). Far above it the vector exp has no valid range: refuse.
  const float top = kern::row_max(live, n);
  float total = 0.0f;
  if (top - lse > 0.5f) {
    std::memset(row, 0, cols * sizeof(float));
    total = INFINITY;
  } else {
    total = kern::exp_shifted(live, n, lse, 1.0f, live);
    std::memset(row, 0, r.lo * sizeof(float));
  }
  std::memset(row + r.hi, 0, (cols - r.hi) * sizeof(float));
  return total;
}

}  // namespace

Status attend_backward(const AttentionGradProblem& p) {
  const std::size_t kt_size = sat_mul(p.dk, kKeys), vt_size = sat_mul(p.dv, kKeys),
                    qp_size = kernels::packed_size(kRows, p.dk), dop_size = kernels::packed_size(kRows, p.dv),
                    tile_size = kRows * kKeys, pc_size = kernels::packed_size(kKeys, kRows),
                    dsr_size = kernels::packed_size(kRows, kKeys);
  Scratch kt(kt_size), vt(vt_size), qp(qp_size), dop(dop_size), s(tile_size), ds(tile_size), pc(pc_size),
      dsr(dsr_size), d(p.nq), sums(p.row_sums ? 0 : p.nq), cap(p.softcap > 0.0f ? tile_size : 0);
  if (!kt.ok_for(kt_size) || !vt.ok_for(vt_size) || !qp.ok_for(qp_size) || !dop.ok_for(dop_size) ||
      !s.ok_for(tile_size) || !ds.ok_for(tile_size) || !pc.ok_for(pc_size) || !dsr.ok_for(dsr_size) ||
      !d.ok_for(p.nq) || !sums.ok_for(p.row_sums ? 0 : p.nq) || !cap.ok_for(p.softcap > 0.0f ? tile_size : 0))
    return Status::no_memory("the attention backward tiles");
  float* const row_sums = p.row_sums ? p.row_sums : sums.data();
  const Visibility vis = visibility(p);
  // The dense [nq×nk] mask of the single-head problem, as a view like the broadcast one.
  const MaskView mask = p.mask ? MaskView{p.mask, nullptr, p.nk, 1, SIZE_MAX, 0} : p.mask_view;

  // As the forward: Q·scale is packed when that cannot overflow, else the tiles are scaled.
  double q_norm = 0.0;
  for (std::size_t i = 0; i < p.nq; ++i) {
    double n2 = 0.0;
    for (std::size_t c = 0; c < p.dk; ++c) n2 += double(p.q[i * p.ldq + c]) * double(p.q[i * p.ldq + c]);
    q_norm = n2 > q_norm ? n2 : q_norm;
  }
  const bool prescale = std::sqrt(q_norm) * p.scale <= 1e37;
  const float q_scale = prescale ? p.scale : 1.0f, tile_scale = prescale ? 1.0f : p.scale;

  for (std::size_t i = 0; i < p.nq; ++i) {
    d.data()[i] = kern::dot(p.d_o + i * p.ld_do, p.o + i * p.ldo, p.dv);  // D = rowsum(dO∘O)
    row_sums[i] = 0.0f;
    std::memset(p.dq + i * p.lddq, 0, p.dk * sizeof(float));
  }
  if (!p.accumulate_kv)
    for (std::size_t j = 0; j < p.nk; ++j) {
      std::memset(p.dk_out + j * p.lddk, 0, p.dk * sizeof(float));
      std::memset(p.dv_out + j * p.lddv, 0, p.dv * sizeof(float));
    }

  for (std::size_t j0 = 0; j0 < p.nk; j0 += kKeys) {
    const std::size_t cols = p.nk - j0 < kKeys ? p.nk - j0 : kKeys;
    // Kᵀ and Vᵀ of the tile: the right-hand operands of S = Q·Kᵀ and dP = dO·Vᵀ, rows kKeys apart.
    kern::transpose(cols, p.dk, p.k + j0 * p.ldk, p.ldk, kt.data(), kKeys);
    kern::transpose(cols, p.dv, p.v + j0 * p.ldv, p.ldv, vt.data(), kKeys);

    for (std::size_t i0 = 0; i0 < p.nq; i0 += kRows) {
      const std::size_t rows = p.nq - i0 < kRows ? p.nq - i0 : kRows;
      KeyRange ranges[kRows];
      KeyRange block{cols, 0};  // keys of the tile that any row of the block sees
      for (std::size_t r = 0; r < rows; ++r) {
        ranges[r] = p.lse[i0 + r] == -INFINITY ? KeyRange{0, 0} : visible_in_tile(vis, i0 + r, j0, cols);
        if (ranges[r].lo < ranges[r].hi) {
          block.lo = ranges[r].lo < block.lo ? ranges[r].lo : block.lo;
          block.hi = ranges[r].hi > block.hi ? ranges[r].hi : block.hi;
        }
      }
      if (block.lo >= block.hi) continue;  // the whole block sees nothing of this tile

      // S and dP, panel by panel (4 rows), each over the keys its rows see: on a causal diagonal the rest is masked.
      kern::pack_rows(rows, p.dk, p.q + i0 * p.ldq, p.ldq, q_scale, qp.data());
      kern::pack_rows(rows, p.dv, p.d_o + i0 * p.ld_do, p.ld_do, 1.0f, dop.data());
      for (std::size_t r0 = 0; r0 < rows; r0 += kernels::kPanelRows) {
        const std::size_t pr = rows - r0 < kernels::kPanelRows ? rows - r0 : kernels::kPanelRows;
        KeyRange panel{cols, 0};
        for (std::size_t r = r0; r < r0 + pr; ++r)
          if (ranges[r].lo < ranges[r].hi) {
            panel.lo = ranges[r].lo < panel.lo ? ranges[r].lo : panel.lo;
            panel.hi = ranges[r].hi > panel.hi ? ranges[r].hi : panel.hi;
          }
        if (panel.lo >= panel.hi) continue;
        const std::size_t w = panel.hi - panel.lo;
        kern::gemm_packed(pr, w, p.dk, qp.data() + r0 * p.dk, kt.data() + panel.lo, kKeys,
                          s.data() + r0 * kKeys + panel.lo, kKeys, false);
        kern::gemm_packed(pr, w, p.dv, dop.data() + r0 * p.dv, vt.data() + panel.lo, kKeys,
                          ds.data() + r0 * kKeys + panel.lo, kKeys, false);
      }
      for (std::size_t r = 0; r < rows; ++r) {
        float* prow = s.data() + r * kKeys;
        float* dsrow = ds.data() + r * kKeys;
        const std::size_t i = i0 + r;
        float* caprow = p.softcap > 0.0f ? cap.data() + r * kKeys : nullptr;  // (no buffer without softcap)
        row_sums[i] += weights_row(p, mask, vis, tile_scale, i, j0, ranges[r], cols, prow, caprow);
        // dS = P∘(dP − D) over the visible keys (times softcap's 1 − tanh²); 0 elsewhere (there dP was never computed).
        const KeyRange rr = ranges[r];
        if (rr.lo < rr.hi) {
          kern::mul_diff(prow + rr.lo, dsrow + rr.lo, rr.hi - rr.lo, d.data()[i], 1.0f, dsrow + rr.lo);
          if (p.softcap > 0.0f)
            for (std::size_t j = rr.lo; j < rr.hi; ++j) dsrow[j] *= caprow[j];
        }
        std::memset(dsrow, 0, rr.lo * sizeof(float));
        std::memset(dsrow + rr.hi, 0, (cols - rr.hi) * sizeof(float));
      }
      // The three products over the block's keys [lo, hi): rows of P and dS past them are zero.
      const std::size_t lo = block.lo, nkeys = block.hi - block.lo;
      kern::pack_cols(nkeys, rows, s.data() + lo, kKeys, 1.0f, pc.data());  // Pᵀ
      kern::gemm_packed(nkeys, p.dv, rows, pc.data(), p.d_o + i0 * p.ld_do, p.ld_do, p.dv_out + (j0 + lo) * p.lddv,
                        p.lddv, true);
      kern::pack_cols(nkeys, rows, ds.data() + lo, kKeys, p.scale, pc.data());  // scale·dSᵀ
      kern::gemm_packed(nkeys, p.dk, rows, pc.data(), p.q + i0 * p.ldq, p.ldq, p.dk_out + (j0 + lo) * p.lddk, p.lddk,
                        true);
      kern::pack_rows(rows, nkeys, ds.data() + lo, kKeys, p.scale, dsr.data());  // scale·dS
      kern::gemm_packed(rows, p.dk, nkeys, dsr.data(), p.k + (j0 + lo) * p.ldk, p.ldk, p.dq + i0 * p.lddq, p.lddq, true);
    }
  }
  return Status::success();
}

}  // namespace detail

namespace {

// Norms for the lse consistency tolerance (double: exact enough and cannot overflow).
std::vector<double> row_norms(std::span<const float> x, std::size_t rows, std::size_t cols) {
  std::vector<double> n(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (std::size_t c = 0; c < cols; ++c) s += double(x[r * cols + c]) * double(x[r * cols + c]);
    n[r] = std::sqrt(s);
  }
  return n;
}

}  // namespace

Status attention_backward(const AttentionBackwardArgs& a, const AttentionGradients& g) {
  using namespace detail;
  for (auto [name, value] : {std::pair{"nq", a.nq}, {"nk", a.nk}, {"dk", a.dk}, {"dv", a.dv}})
    if (auto s = check_size(name, value); !s.ok()) return s;
  std::size_t q_len, k_len, v_len, o_len, nn = 0;
  if (auto s = check_product("q", a.nq, a.dk, q_len); !s.ok()) return s;
  if (auto s = check_product("k", a.nk, a.dk, k_len); !s.ok()) return s;
  if (auto s = check_product("v", a.nk, a.dv, v_len); !s.ok()) return s;
  if (auto s = check_product("output", a.nq, a.dv, o_len); !s.ok()) return s;
  if (!a.mask.empty())
    if (auto s = check_product("nq·nk", a.nq, a.nk, nn); !s.ok()) return s;
  // Shapes as the messages name them ("nq·dk = 6·4"), formatted once.
  const std::string qk = format("nq·dk = %zu·%zu", a.nq, a.dk), kk = format("nk·dk = %zu·%zu", a.nk, a.dk),
                    kv = format("nk·dv = %zu·%zu", a.nk, a.dv), qv = format("nq·dv = %zu·%zu", a.nq, a.dv);
  for (auto [name, size, want, shape] :
       {std::tuple{"q", a.q.size(), q_len, &qk}, {"k", a.k.size(), k_len, &kk}, {"v", a.v.size(), v_len, &kv},
        {"output", a.output.size(), o_len, &qv}, {"dOutput", a.d_output.size(), o_len, &qv}, {"dq", g.dq.size(), q_len, &qk},
        {"dk", g.dk.size(), k_len, &kk}, {"dv", g.dv.size(), v_len, &kv}})
    if (auto s = check_length(name, size, want, *shape); !s.ok()) return s;
  if (auto s = check_length("lse", a.lse.size(), a.nq, "nq"); !s.ok()) return s;
  if (!a.mask.empty())
    if (auto s = check_length("mask", a.mask.size(), nn, format("nq·nk = %zu·%zu", a.nq, a.nk)); !s.ok()) return s;
  const float scale = a.scale ? *a.scale : 1.0f / std::sqrt(static_cast<float>(a.dk));
  if (a.scale)
    if (auto s = check_positive_finite("scale", *a.scale); !s.ok()) return s;
  for (auto [name, span, neg_inf] : {std::tuple{"q", a.q, false}, {"k", a.k, false}, {"v", a.v, false},
                                     {"output", a.output, false}, {"lse", a.lse, true}, {"dOutput", a.d_output, false},
                                     {"mask", a.mask, true}})
    if (auto s = check_values(name, span, neg_inf); !s.ok()) return s;

  AttentionProblem fwd{a.q.data(), a.dk, a.k.data(), a.dk, a.v.data(), a.dv, a.nq, a.nk, a.dk, a.dv, scale, a.causal,
                       a.mask.empty() ? nullptr : a.mask.data(), nullptr, a.dv, nullptr, nullptr, nullptr};
  if (auto s = check_score_range(fwd, "q", "k"); !s.ok()) return s;
  // A row whose lse is −inf must see no key (the forward gives −inf exactly then).
  for (std::size_t i = 0; i < a.nq; ++i) {
    if (a.lse[i] != -INFINITY) continue;
    const std::size_t hi = a.causal ? causal_keys(i, a.nq, a.nk) : a.nk;
    bool sees = false;
    for (std::size_t j = 0; j < hi && !sees; ++j) sees = a.mask.empty() || a.mask[i * a.nk + j] != -INFINITY;
    if (sees)
      return range_errorf("lse", "lse[%zu] is -Infinity but query %zu sees keys; pass the lse the forward returned for these q, k "
                          "and mask", i, i);
  }

  // Staged: the gradients reach the caller only once the lse and the results are known to be good.
  Scratch dq(q_len), dk(k_len), dv(v_len), sums(a.nq);
  if (!dq.ok_for(q_len) || !dk.ok_for(k_len) || !dv.ok_for(v_len) || !sums.ok_for(a.nq))
    return Status::no_memory("the attention gradients");
  AttentionGradProblem p{a.q.data(), a.dk, a.k.data(), a.dk, a.v.data(), a.dv, a.output.data(), a.dv,
                         a.d_output.data(), a.dv, a.lse.data(), a.nq, a.nk, a.dk, a.dv, scale, a.causal,
                         a.mask.empty() ? nullptr : a.mask.data(), dq.data(), a.dk, dk.data(), a.dk, dv.data(), a.dv,
                         false, sums.data()};
  if (auto s = attend_backward(p); !s.ok()) return s;

  // Recomputed weights must sum to 1 up to the rounding of the logits and of lse (first order, generous ×8).
  const auto qn = row_norms(a.q, a.nq, a.dk), kn = row_norms(a.k, a.nk, a.dk);
  double k_max = 0.0;
  for (double x : kn) k_max = x > k_max ? x : k_max;
  for (std::size_t i = 0; i < a.nq; ++i) {
    if (a.lse[i] == -INFINITY) continue;
    const double u = 0x1p-24, tol = 1e-3 + 8.0 * double(a.dk + 2) * u * (scale * qn[i] * k_max + std::fabs(a.lse[i]));
    const double total = sums.data()[i];
    if (!(std::fabs(total - 1.0) <= tol))
      return range_errorf("lse", "lse[%zu] = %s does not match q and k: the weights it gives sum to %s, not 1; pass the lse "
                          "the forward returned for these inputs", i, fmt(a.lse[i]).c_str(), fmt(total).c_str());
  }
  for (auto [name, buf, len] : {std::tuple{"dq", dq.data(), q_len}, {"dk", dk.data(), k_len}, {"dv", dv.data(), v_len}})
    if (kernels::active::first_invalid(buf, len, false) < len)
      return range_errorf("dOutput", "the gradient %s overflowed float32; scale dOutput (or the inputs) down", name);
  std::memcpy(g.dq.data(), dq.data(), q_len * sizeof(float));
  std::memcpy(g.dk.data(), dk.data(), k_len * sizeof(float));
  std::memcpy(g.dv.data(), dv.data(), v_len * sizeof(float));
  return Status::success();
}

}  // namespace attnlab
