// Double-precision reference of the whole attention operator (batch, heads, GQA, layouts, causal alignments,
// windows, softcap, broadcast additive/boolean masks, key lengths, ALiBi, lse), with first-order error bounds
// derived as in reference.h. Written independently of the engine: visibility is decided per (i, j) from the
// definitions, masks are indexed by NumPy broadcasting, tensors are read by their layout's index formula.
//
// Score of a visible key, in the order the engine computes it:
//   s0 = scale·(q·k)               error E_s (reference.h: materialized or streaming order) + 2u|s0| + 2u|s|
//   s1 = softcap·tanh(s0/softcap)  + 2u|s0| (the multiplier scale/softcap and the product round) + (T + u)|s1|
//                                  (tanh's relative error T, the product by softcap); tanh is 1-Lipschitz, so the
//                                  error of s0 passes through at most unchanged
//   s2 = s1 − slope·|i' − j|       + 2u|bias| (product) + u|s2| (difference)
//   s  = s2 + mask                 (the final rounding is the 2u|s| above)
// lse = m + log Σ exp(sⱼ − m): Σ pⱼ·δsⱼ (first order) + the sum's relative error (the softmax's E, γ(n) and the
// streaming rescales) + 2u·(|m| + 2|log Σ| + |lse|) (the log within 1 ulp, the sum m + log).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "reference.h"

namespace ref {

// Relative error spec of the softcap's tanh (measured and enforced by exp_test.cpp): libm tanhf in the scalar
// build, the vector tanh in the SIMD build; both within 2 ulp.
constexpr double tanh_rel_error = 4 * u;

struct FullCase {
  std::size_t batch = 1, heads = 1, kv_heads = 1, nq = 1, nk = 1, dk = 1, dv = 1;
  bool bshd = false;
  int causal = 0;                        // 0 none, 1 bottom-right, 2 top-left
  std::int64_t window_left = -1, window_right = -1;
  double scale = 1.0;                    // the float32 scale the engine uses
  double softcap = 0.0;
  const std::vector<float>* mask = nullptr;          // additive
  const std::vector<std::uint8_t>* keep = nullptr;   // boolean
  std::array<std::size_t, 4> mask_shape{1, 1, 1, 1};  // right-aligned to [batch, heads, nq, nk]
  std::vector<std::int32_t> key_lengths;  // empty = nk for all
  std::vector<float> alibi;               // empty = none
  bool streaming = false;
};

struct FullRef {
  Bounded out;                     // in the case's layout
  Bounded raw, scores, weights;    // [batch, heads, nq, nk]
  Bounded lse;                     // [batch, heads, nq]
};

inline std::size_t at_layout(bool bshd, std::size_t b, std::size_t h, std::size_t s, std::size_t d, std::size_t heads,
                             std::size_t seq, std::size_t dim) {
  return bshd ? ((b * seq + s) * heads + h) * dim + d : ((b * heads + h) * seq + s) * dim + d;
}

// Whether query i of item b sees key j, from the definitions.
inline bool sees(const FullCase& c, std::size_t b, std::size_t i, std::size_t j) {
  const std::int64_t len = c.key_lengths.empty() ? std::int64_t(c.nk) : c.key_lengths[b];
  if (std::int64_t(j) >= len) return false;
  const std::size_t mk = c.mask_shape[3];
  if ((c.mask || c.keep) && mk > 1 && j >= mk) return false;  // a mask shorter than nk
  const std::int64_t d = c.causal == 2 ? std::int64_t(i) : std::int64_t(i) + len - std::int64_t(c.nq);
  const std::int64_t jj = std::int64_t(j);
  if (c.causal && jj > d) return false;
  if (c.window_left >= 0 && jj < d - c.window_left) return false;
  if (c.window_right >= 0 && jj > d + c.window_right) return false;
  return true;
}

inline std::size_t mask_index(const FullCase& c, std::size_t b, std::size_t h, std::size_t i, std::size_t j) {
  const auto& m = c.mask_shape;
  const std::size_t coord[4] = {m[0] == 1 ? 0 : b, m[1] == 1 ? 0 : h, m[2] == 1 ? 0 : i, m[3] == 1 ? 0 : j};
  return ((coord[0] * m[1] + coord[1]) * m[2] + coord[2]) * m[3] + coord[3];
}

inline FullRef attention_full(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                              const FullCase& c) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::size_t B = c.batch, H = c.heads, G = c.kv_heads, nq = c.nq, nk = c.nk, dk = c.dk, dv = c.dv;
  const std::size_t nn = nq * nk;
  FullRef r;
  r.out = {std::vector<double>(B * H * nq * dv), std::vector<double>(B * H * nq * dv)};
  r.raw = r.scores = {std::vector<double>(B * H * nn), std::vector<double>(B * H * nn)};
  r.lse = {std::vector<double>(B * H * nq), std::vector<double>(B * H * nq)};
  std::vector<double> all_w(B * H * nn), all_wb(B * H * nn);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t g = h * G / H, base = (b * H + h) * nn;
      std::vector<double> sv(nn), sb(nn);
      std::vector<double> abs_score(nn);
      for (std::size_t i = 0; i < nq; ++i)
        for (std::size_t j = 0; j < nk; ++j) {
          double s = 0, sa = 0, ksum = 0;
          for (std::size_t d = 0; d < dk; ++d) {
            const double qv = q[at_layout(c.bshd, b, h, i, d, H, nq, dk)], kv = k[at_layout(c.bshd, b, g, j, d, G, nk, dk)];
            s += qv * kv, sa += std::fabs(qv * kv), ksum += std::fabs(kv);
          }
          const std::size_t at = i * nk + j;
          r.raw.value[base + at] = s;
          r.raw.bound[base + at] = gamma(double(dk)) * sa + double(dk) * underflow;
          double add = 0;
          bool hidden = !sees(c, b, i, j);
          if (!hidden && c.mask) {
            add = (*c.mask)[mask_index(c, b, h, i, j)];
            hidden = add == -inf;
          }
          if (!hidden && c.keep) hidden = (*c.keep)[mask_index(c, b, h, i, j)] == 0;
          if (hidden) {
            sv[at] = -inf, sb[at] = 0;
            continue;
          }
          const double materialized_err = c.scale * (gamma(double(dk)) * sa + double(dk) * underflow);
          const double e_s = c.streaming ? std::fmax(materialized_err, c.scale * gamma(double(dk + 1)) * sa + underflow * (double(dk) + ksum))
                                         : materialized_err;
          const double s0 = s * c.scale;
          double s1 = s0, err = e_s;
          if (c.softcap > 0) {
            s1 = c.softcap * std::tanh(s0 / c.softcap);
            err += 2 * u * std::fabs(s0) + (tanh_rel_error + u) * std::fabs(s1);
          }
          double s2 = s1;
          if (!c.alibi.empty()) {
            const std::int64_t len = c.key_lengths.empty() ? std::int64_t(nk) : c.key_lengths[b];
            const std::int64_t diag = c.causal == 2 ? std::int64_t(i) : std::int64_t(i) + len - std::int64_t(nq);
            const double bias = -double(c.alibi[h]) * double(std::llabs(diag - std::int64_t(j)));
            s2 = s1 + bias;
            err += 2 * u * std::fabs(bias) + u * std::fabs(s2);
          }
          const double sc = s2 + add;
          sv[at] = sc;
          sb[at] = err + 2 * u * (std::fabs(s0) + std::fabs(sc)) + 2 * underflow;
        }
      for (std::size_t t = 0; t < nn; ++t) r.scores.value[base + t] = sv[t], r.scores.bound[base + t] = sb[t];
      const double tiles = std::ceil(double(nk) / 64.0);
      const double extra = c.streaming ? tiles * 6 * u : 0.0;
      const Bounded w = softmax_rows(sv, sb, nk, 1.0, false, extra);
      for (std::size_t i = 0; i < nq; ++i) {
        // lse of the row
        double m = -inf;
        for (std::size_t j = 0; j < nk; ++j) m = std::fmax(m, sv[i * nk + j]);
        const std::size_t li = (b * H + h) * nq + i;
        if (m == -inf) {
          r.lse.value[li] = -inf, r.lse.bound[li] = 0;
        } else {
          double sum = 0, spread = 0, mean_exp_err = 0, n_seen = 0;
          for (std::size_t j = 0; j < nk; ++j)
            if (sv[i * nk + j] != -inf) sum += std::exp(sv[i * nk + j] - m), n_seen += 1;
          for (std::size_t j = 0; j < nk; ++j)
            if (sv[i * nk + j] != -inf) {
              const double p = std::exp(sv[i * nk + j] - m) / sum;
              spread += p * sb[i * nk + j];
              mean_exp_err += p * (2 * u * std::fabs(sv[i * nk + j] - m) + exp_rel_error);
            }
          const double value = m + std::log(sum);
          r.lse.value[li] = value;
          r.lse.bound[li] = spread + mean_exp_err + gamma(n_seen) + extra + 2 * u * (std::fabs(m) + 2 * std::fabs(std::log(sum)) + std::fabs(value));
        }
        for (std::size_t cc = 0; cc < dv; ++cc) {
          double o = 0, err = 0;
          for (std::size_t j = 0; j < nk; ++j) {
            const double wv = w.value[i * nk + j], vv = v[at_layout(c.bshd, b, g, j, cc, G, nk, dv)];
            o += wv * vv;
            err += w.bound[i * nk + j] * std::fabs(vv) + wv * std::fabs(vv) * gamma(double(nk + 2));
          }
          const std::size_t oi = at_layout(c.bshd, b, h, i, cc, H, nq, dv);
          r.out.value[oi] = o, r.out.bound[oi] = err + double(nk + 1) * underflow;
        }
      }
      for (std::size_t t = 0; t < nn; ++t) all_w[base + t] = w.value[t], all_wb[base + t] = w.bound[t];
    }
  r.weights = {std::move(all_w), std::move(all_wb)};
  return r;
}

}  // namespace ref
