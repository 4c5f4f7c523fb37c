// Double-precision references for attention's gradients. `attention_grad` evaluates FlashAttention-2's backward
// formula in bounded arithmetic (bounded.h), in the order the kernel computes it, so each value comes with a
// bound on the float32 kernel's error:
//   Sᵢⱼ = Σ (qᵢ·scale)·kⱼ (+ maskᵢⱼ)  — or (Σ qᵢ·kⱼ)·scale when q·scale could overflow (`prescaled` false)
//   Pᵢⱼ = exp(Sᵢⱼ − lseᵢ),  dPᵢⱼ = Σ dOᵢ·vⱼ,  Dᵢ = Σ dOᵢ·oᵢ,  dSᵢⱼ = Pᵢⱼ·(dPᵢⱼ − Dᵢ)
//   dqᵢ = Σⱼ (scale·dSᵢⱼ)·kⱼ,  dkⱼ = Σᵢ (scale·dSᵢⱼ)·qᵢ,  dvⱼ = Σᵢ Pᵢⱼ·dOᵢ
// Keys a row may not see (causal, −inf mask, or a row whose lse is −inf) give P = dS = 0 exactly.
// Given exact o and lse (from `attention_forward`), the values are the true gradient of Σ dO∘O, which
// attention_backward_test.cpp checks against finite differences.
#pragma once
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "bounded.h"

namespace ref {

struct AttentionForward {
  std::vector<double> o, lse;
};

// softmax(mask(scale·Q·Kᵀ))·V and each row's log-sum-exp, in double.
inline AttentionForward attention_forward(const std::vector<double>& q, const std::vector<double>& k,
                                          const std::vector<double>& v, std::size_t nq, std::size_t nk, std::size_t dk,
                                          std::size_t dv, double scale, bool causal, const std::vector<float>* mask) {
  const double inf = std::numeric_limits<double>::infinity();
  AttentionForward r{std::vector<double>(nq * dv), std::vector<double>(nq)};
  std::vector<double> s(nk);
  for (std::size_t i = 0; i < nq; ++i) {
    double m = -inf;
    for (std::size_t j = 0; j < nk; ++j) {
      const bool hidden = causal && (i + nk < nq || j > i + nk - nq);
      double x = 0;
      for (std::size_t c = 0; c < dk; ++c) x += q[i * dk + c] * k[j * dk + c];
      s[j] = hidden ? -inf : x * scale + (mask ? double((*mask)[i * nk + j]) : 0.0);
      m = std::fmax(m, s[j]);
    }
    if (m == -inf) {
      r.lse[i] = -inf;
      continue;
    }
    double z = 0;
    for (std::size_t j = 0; j < nk; ++j) z += std::exp(s[j] - m);
    r.lse[i] = m + std::log(z);
    for (std::size_t j = 0; j < nk; ++j) {
      const double p = std::exp(s[j] - r.lse[i]);
      for (std::size_t c = 0; c < dv; ++c) r.o[i * dv + c] += p * v[j * dv + c];
    }
  }
  return r;
}

struct AttentionGrad {
  std::vector<bnd::B> dq, dk, dv;
};

// Inputs as bounded values (bnd::in(x) for a float input; {value, 0} for an exact double one).
inline AttentionGrad attention_grad(const std::vector<bnd::B>& q, const std::vector<bnd::B>& k,
                                    const std::vector<bnd::B>& v, const std::vector<bnd::B>& o,
                                    const std::vector<bnd::B>& lse, const std::vector<bnd::B>& d_o, std::size_t nq,
                                    std::size_t nk, std::size_t dk, std::size_t dv, bnd::B scale, bool causal,
                                    const std::vector<float>* mask, bool prescaled = true) {
  using bnd::B;
  const double inf = std::numeric_limits<double>::infinity();
  AttentionGrad g{std::vector<B>(nq * dk), std::vector<B>(nk * dk), std::vector<B>(nk * dv)};
  std::vector<B> P(nq * nk), dS(nq * nk);
  std::vector<B> a(dk > dv ? dk : dv), b(dk > dv ? dk : dv);
  for (std::size_t i = 0; i < nq; ++i) {
    std::vector<B> dO_i(d_o.begin() + std::ptrdiff_t(i * dv), d_o.begin() + std::ptrdiff_t((i + 1) * dv));
    std::vector<B> o_i(o.begin() + std::ptrdiff_t(i * dv), o.begin() + std::ptrdiff_t((i + 1) * dv));
    const B D = bnd::dot(dO_i, o_i);
    std::vector<B> qs(dk), qi(q.begin() + std::ptrdiff_t(i * dk), q.begin() + std::ptrdiff_t((i + 1) * dk));
    for (std::size_t c = 0; c < dk; ++c) qs[c] = prescaled ? qi[c] * scale : qi[c];
    for (std::size_t j = 0; j < nk; ++j) {
      const bool hidden = (causal && (i + nk < nq || j > i + nk - nq)) || lse[i].v == -inf ||
                          (mask && (*mask)[i * nk + j] == -INFINITY);
      if (hidden) continue;  // P = dS = 0 exactly
      std::vector<B> kj(k.begin() + std::ptrdiff_t(j * dk), k.begin() + std::ptrdiff_t((j + 1) * dk));
      B s = bnd::dot(qs, kj);
      if (!prescaled) s = s * scale;
      if (mask) s = s + bnd::in((*mask)[i * nk + j]);
      const B p = bnd::exp(s - lse[i]);
      std::vector<B> vj(v.begin() + std::ptrdiff_t(j * dv), v.begin() + std::ptrdiff_t((j + 1) * dv));
      const B dp = bnd::dot(dO_i, vj);
      P[i * nk + j] = p;
      dS[i * nk + j] = p * (dp - D);
    }
  }
  std::vector<B> x, y;
  for (std::size_t i = 0; i < nq; ++i)
    for (std::size_t c = 0; c < dk; ++c) {
      x.clear(), y.clear();
      for (std::size_t j = 0; j < nk; ++j) x.push_back(scale * dS[i * nk + j]), y.push_back(k[j * dk + c]);
      g.dq[i * dk + c] = bnd::dot(x, y);
    }
  for (std::size_t j = 0; j < nk; ++j) {
    for (std::size_t c = 0; c < dk; ++c) {
      x.clear(), y.clear();
      for (std::size_t i = 0; i < nq; ++i) x.push_back(scale * dS[i * nk + j]), y.push_back(q[i * dk + c]);
      g.dk[j * dk + c] = bnd::dot(x, y);
    }
    for (std::size_t c = 0; c < dv; ++c) {
      x.clear(), y.clear();
      for (std::size_t i = 0; i < nq; ++i) x.push_back(P[i * nk + j]), y.push_back(d_o[i * dv + c]);
      g.dv[j * dv + c] = bnd::dot(x, y);
    }
  }
  return g;
}

}  // namespace ref
