// Double-precision references for the whole operator's gradients (batch, heads, GQA, layouts, causal alignments,
// windows, softcap, broadcast masks, key lengths, ALiBi), on attention_reference.h's definitions (sees,
// mask_index, at_layout) and in bounded arithmetic (bounded.h), in the order the kernel computes it:
//   s0 = Σ (qᵢ·scale)·kⱼ;  s1 = c·tanh(s0/c) (softcap c), t = s1/c;  s2 = s1 − slope·|i' − j|;  s = s2 + maskᵢⱼ
//   Pᵢⱼ = exp(s − lseᵢ),  dPᵢⱼ = Σ dOᵢ·vⱼ,  Dᵢ = Σ dOᵢ·oᵢ,  dSᵢⱼ = Pᵢⱼ·(dPᵢⱼ − Dᵢ)·(1 − t²)  (the chain rule through
//   tanh: d/dx c·tanh(x/c) = 1 − tanh²; the factor is 1 without softcap)
//   dqᵢ = Σⱼ (scale·dSᵢⱼ)·kⱼ,  dkⱼ = Σ_{heads of its group} Σᵢ (scale·dSᵢⱼ)·qᵢ,  dvⱼ = Σ_{heads} Σᵢ Pᵢⱼ·dOᵢ
// Hidden keys (by position, a −inf or false mask, or a row whose lse is −inf) give P = dS = 0 exactly.
// `attention_full_f64` is the forward in plain double (o and lse), for finite differences: given its o and lse as
// exact inputs, the formula above is the true gradient of Σ dO∘O (attention_backward_full_test.cpp checks it).
#pragma once
#include <cmath>
#include <cstdlib>
#include <vector>

#include "attention_reference.h"
#include "bounded.h"

namespace ref {

struct FullForward64 {
  std::vector<double> o, lse;  // o in the case's layout, lse [batch, heads, nq]
};

// The visible logit of (b, h, i, j) in double, or −inf.
inline double full_logit(const std::vector<double>& q, const std::vector<double>& k, const FullCase& c, std::size_t b,
                         std::size_t h, std::size_t i, std::size_t j) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::size_t g = h * c.kv_heads / c.heads;
  if (!sees(c, b, i, j)) return -inf;
  double add = 0;
  if (c.mask) add = (*c.mask)[mask_index(c, b, h, i, j)];
  if (c.keep && (*c.keep)[mask_index(c, b, h, i, j)] == 0) return -inf;
  if (add == -inf) return -inf;
  double s = 0;
  for (std::size_t d = 0; d < c.dk; ++d)
    s += q[at_layout(c.bshd, b, h, i, d, c.heads, c.nq, c.dk)] * k[at_layout(c.bshd, b, g, j, d, c.kv_heads, c.nk, c.dk)];
  s *= c.scale;
  if (c.softcap > 0) s = c.softcap * std::tanh(s / c.softcap);
  if (!c.alibi.empty()) {
    const std::int64_t len = c.key_lengths.empty() ? std::int64_t(c.nk) : c.key_lengths[b];
    const std::int64_t diag = c.causal == 2 ? std::int64_t(i) : std::int64_t(i) + len - std::int64_t(c.nq);
    s -= double(c.alibi[h]) * double(std::llabs(diag - std::int64_t(j)));
  }
  return s + add;
}

inline FullForward64 attention_full_f64(const std::vector<double>& q, const std::vector<double>& k,
                                        const std::vector<double>& v, const FullCase& c) {
  const double inf = std::numeric_limits<double>::infinity();
  FullForward64 r{std::vector<double>(c.batch * c.heads * c.nq * c.dv), std::vector<double>(c.batch * c.heads * c.nq)};
  std::vector<double> s(c.nk);
  for (std::size_t b = 0; b < c.batch; ++b)
    for (std::size_t h = 0; h < c.heads; ++h) {
      const std::size_t g = h * c.kv_heads / c.heads;
      for (std::size_t i = 0; i < c.nq; ++i) {
        double m = -inf;
        for (std::size_t j = 0; j < c.nk; ++j) s[j] = full_logit(q, k, c, b, h, i, j), m = std::fmax(m, s[j]);
        double& lse = r.lse[(b * c.heads + h) * c.nq + i];
        if (m == -inf) {
          lse = -inf;
          continue;
        }
        double z = 0;
        for (std::size_t j = 0; j < c.nk; ++j) z += std::exp(s[j] - m);
        lse = m + std::log(z);
        for (std::size_t j = 0; j < c.nk; ++j) {
          const double p = std::exp(s[j] - lse);
          for (std::size_t d = 0; d < c.dv; ++d)
            r.o[at_layout(c.bshd, b, h, i, d, c.heads, c.nq, c.dv)] += p * v[at_layout(c.bshd, b, g, j, d, c.kv_heads, c.nk, c.dv)];
        }
      }
    }
  return r;
}

struct FullGrad {
  std::vector<bnd::B> dq, dk, dv;  // shaped as q, k, v
};

// Inputs as bounded values (bnd::inputs for float tensors; {value, 0} for exact double ones). The mask values,
// slopes, softcap and scale are the float32 ones the engine uses (exact in double). `prescaled` false: the scale is
// applied to q·k instead of to q (the kernel's order when q·scale could overflow).
inline FullGrad attention_full_grad(const std::vector<bnd::B>& q, const std::vector<bnd::B>& k, const std::vector<bnd::B>& v,
                                    const std::vector<bnd::B>& o, const std::vector<bnd::B>& lse,
                                    const std::vector<bnd::B>& d_o, const FullCase& c, bool prescaled = true) {
  using bnd::B;
  const double inf = std::numeric_limits<double>::infinity();
  const std::size_t H = c.heads, G = c.kv_heads, nq = c.nq, nk = c.nk, dk = c.dk, dv = c.dv;
  FullGrad g{std::vector<B>(q.size()), std::vector<B>(k.size()), std::vector<B>(v.size())};
  const B scale{c.scale, 0};
  for (std::size_t b = 0; b < c.batch; ++b)
    for (std::size_t kg = 0; kg < G; ++kg) {
      // dS and P of every head of the group, [heads of group][nq × nk]; 0 where hidden.
      const std::size_t group = H / G;
      std::vector<B> P(group * nq * nk), dS(group * nq * nk);
      for (std::size_t hh = 0; hh < group; ++hh) {
        const std::size_t h = kg * group + hh;
        for (std::size_t i = 0; i < nq; ++i) {
          const B l = lse[(b * H + h) * nq + i];
          if (l.v == -inf) continue;
          std::vector<B> qs(dk), dOi(dv), oi(dv);
          for (std::size_t d = 0; d < dk; ++d) {
            const B qd = q[at_layout(c.bshd, b, h, i, d, H, nq, dk)];
            qs[d] = prescaled ? qd * scale : qd;
          }
          for (std::size_t d = 0; d < dv; ++d)
            dOi[d] = d_o[at_layout(c.bshd, b, h, i, d, H, nq, dv)], oi[d] = o[at_layout(c.bshd, b, h, i, d, H, nq, dv)];
          const B D = bnd::dot(dOi, oi);
          for (std::size_t j = 0; j < nk; ++j) {
            if (!sees(c, b, i, j)) continue;
            double add = 0;
            if (c.mask) add = (*c.mask)[mask_index(c, b, h, i, j)];
            if (add == -inf || (c.keep && (*c.keep)[mask_index(c, b, h, i, j)] == 0)) continue;
            std::vector<B> kj(dk), vj(dv);
            for (std::size_t d = 0; d < dk; ++d) kj[d] = k[at_layout(c.bshd, b, kg, j, d, G, nk, dk)];
            for (std::size_t d = 0; d < dv; ++d) vj[d] = v[at_layout(c.bshd, b, kg, j, d, G, nk, dv)];
            B s = bnd::dot(qs, kj), factor{1.0, 0.0};
            if (!prescaled) s = s * scale;  // the kernel's order when q·scale could overflow
            if (c.softcap > 0) {
              // s0·(1/c) rounds twice (2u|s0|), tanh within its relative spec, the product by c once; tanh is
              // 1-Lipschitz, so s0's error passes through at most unchanged.
              const double s1 = c.softcap * std::tanh(s.v / c.softcap);
              s = bnd::bounded(s1, s.e + 2 * u * std::fabs(s.v) + (tanh_rel_error + u) * std::fabs(s1) + bnd::tiny);
              const B t = s / B{c.softcap, 0};
              factor = B{1.0, 0.0} - t * t;
            }
            if (!c.alibi.empty()) {
              const std::int64_t len = c.key_lengths.empty() ? std::int64_t(nk) : c.key_lengths[b];
              const std::int64_t diag = c.causal == 2 ? std::int64_t(i) : std::int64_t(i) + len - std::int64_t(nq);
              const double bias = double(c.alibi[h]) * double(std::llabs(diag - std::int64_t(j)));
              s = s - B{bias, u * std::fabs(bias)};
            }
            if (c.mask) s = s + B{add, 0};
            const B p = bnd::exp(s - l);
            const B dp = bnd::dot(dOi, vj);
            const std::size_t at = (hh * nq + i) * nk + j;
            P[at] = p;
            dS[at] = c.softcap > 0 ? p * (dp - D) * factor : p * (dp - D);
          }
        }
      }
      std::vector<B> x, y;
      for (std::size_t hh = 0; hh < group; ++hh) {
        const std::size_t h = kg * group + hh;
        for (std::size_t i = 0; i < nq; ++i)
          for (std::size_t d = 0; d < dk; ++d) {
            x.clear(), y.clear();
            for (std::size_t j = 0; j < nk; ++j)
              x.push_back(scale * dS[(hh * nq + i) * nk + j]), y.push_back(k[at_layout(c.bshd, b, kg, j, d, G, nk, dk)]);
            g.dq[at_layout(c.bshd, b, h, i, d, H, nq, dk)] = bnd::dot(x, y);
          }
      }
      for (std::size_t j = 0; j < nk; ++j) {
        for (std::size_t d = 0; d < dk; ++d) {
          x.clear(), y.clear();
          for (std::size_t hh = 0; hh < group; ++hh)
            for (std::size_t i = 0; i < nq; ++i)
              x.push_back(scale * dS[(hh * nq + i) * nk + j]), y.push_back(q[at_layout(c.bshd, b, kg * group + hh, i, d, H, nq, dk)]);
          g.dk[at_layout(c.bshd, b, kg, j, d, G, nk, dk)] = bnd::dot(x, y);
        }
        for (std::size_t d = 0; d < dv; ++d) {
          x.clear(), y.clear();
          for (std::size_t hh = 0; hh < group; ++hh)
            for (std::size_t i = 0; i < nq; ++i)
              x.push_back(P[(hh * nq + i) * nk + j]), y.push_back(d_o[at_layout(c.bshd, b, kg * group + hh, i, d, H, nq, dv)]);
          g.dv[at_layout(c.bshd, b, kg, j, d, G, nk, dv)] = bnd::dot(x, y);
        }
      }
    }
  return g;
}

}  // namespace ref
