// Running error bounds for the backward passes' references: a double value paired with a rigorous first-order
// bound on how far the engine's float32 evaluation of the same formula can be from it. Each operation adds the
// rounding of its own result (u·|result|) to the errors its operands carry, propagated to first order, plus the
// products of two errors where they are cheap to keep; sums and dot products are bounded for *any* summation
// order (γ(n)·Σ|terms|), so one reference covers the scalar loops, the SIMD lanes and the blocked GEMMs.
// Underflow adds at most 2⁻¹⁴⁹ absolute per rounding (the `tiny` term). Functions (exp, GELU) carry the relative
// error spec of the kernel that computes them, measured and enforced by training_kernels_test.cpp.
#pragma once
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "reference.h"

namespace bnd {

using ref::gamma;
using ref::u;
constexpr double tiny = 0x1p-149;
constexpr double flush = 0x1p-126;  // the vector exp (and erfc through it) flush results below 2⁻¹²⁶ to 0

struct B {
  double v = 0.0;  // the exact value of the formula
  double e = 0.0;  // |float32 evaluation − v| ≤ e
};

// An error term that came out NaN (0·∞ from an operand that may already be infinite) bounds nothing: +∞.
inline B bounded(double v, double e) { return {v, e == e ? e : INFINITY}; }

inline B in(float x) { return {double(x), 0.0}; }
inline B in(double x, double err) { return {x, err}; }

inline B operator+(B a, B b) {
  const double v = a.v + b.v;
  return bounded(v, a.e + b.e + u * std::fabs(v) + tiny);
}
inline B operator-(B a, B b) {
  const double v = a.v - b.v;
  return bounded(v, a.e + b.e + u * std::fabs(v) + tiny);
}
inline B operator-(B a) { return {-a.v, a.e}; }
inline B operator*(B a, B b) {
  const double v = a.v * b.v;
  return bounded(v, std::fabs(a.v) * b.e + std::fabs(b.v) * a.e + a.e * b.e + u * std::fabs(v) + tiny);
}
// a / b, valid while b's error is below |b| (else the bound is infinite: the test would fail loudly).
inline B operator/(B a, B b) {
  const double v = a.v / b.v, lo = std::fabs(b.v) - b.e;
  return bounded(v, lo > 0 ? (a.e + std::fabs(v) * b.e) / lo + u * std::fabs(v) + tiny : INFINITY);
}
inline B sqrt(B a) {
  const double v = std::sqrt(a.v), lo = a.v - a.e;
  return bounded(v, (lo > 0 ? a.e / (std::sqrt(lo) + v) : std::sqrt(a.e)) + u * v);
}
// exp with the kernel's relative error ≤ ref::exp_rel_error, and the flush to 0 below 2⁻¹²⁶.
inline B exp(B a) {
  const double v = std::exp(a.v);
  return bounded(v, v * std::expm1(a.e) + std::exp(a.v + a.e) * ref::exp_rel_error + flush);
}
// Σ terms in any order.
inline B sum(std::span<const B> t) {
  double v = 0, e = 0, abs = 0;
  for (const B& x : t) v += x.v, e += x.e, abs += std::fabs(x.v);
  return bounded(v, e + gamma(double(t.size())) * (abs + e) + double(t.size()) * tiny);
}
// Σ a[i]·b[i] in any order (each product rounded once, then summed).
inline B dot(std::span<const B> a, std::span<const B> b) {
  double v = 0, e = 0, abs = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    v += a[i].v * b[i].v;
    abs += std::fabs(a[i].v * b[i].v);
    e += std::fabs(a[i].v) * b[i].e + std::fabs(b[i].v) * a[i].e + a[i].e * b[i].e;
  }
  return bounded(v, e + gamma(double(a.size() + 1)) * (abs + e) + 2 * double(a.size()) * tiny);
}

// The GELU kernels' specs (training_kernels_test.cpp measures and enforces them; worst measured: 6.2 and 3.3):
// with z = |x|/√2, GELU(x) within 8u·(1 + z²)·|GELU(x)| + 2⁻¹²⁶|x|, and GELU′(x) within
// 4u·(1 + x²)·(Φ(−|x|) + |x|·φ(x)) + 2u·|GELU′(x)| + 2⁻¹²⁶(1 + |x|) (the 2u: rounding 1 − erfc/2 and the sum).
inline double phi_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
inline double phi_pdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI); }
inline double gelu(double x) { return x * phi_cdf(x); }
inline double gelu_grad(double x) { return phi_cdf(x) + x * phi_pdf(x); }
inline double gelu_spec(double x) {
  const double z2 = 0.5 * x * x;
  return 8 * u * (1 + z2) * std::fabs(gelu(x)) + flush * std::fabs(x);
}
inline double gelu_grad_spec(double x) {
  return 4 * u * (1 + x * x) * (phi_cdf(-std::fabs(x)) + std::fabs(x) * phi_pdf(x)) + 2 * u * std::fabs(gelu_grad(x)) +
         flush * (1 + std::fabs(x));
}
// GELU of an input that already carries an error: |GELU′| ≤ 1.13 bounds the propagation.
inline B gelu(B a) { return {gelu(a.v), 1.13 * a.e + gelu_spec(a.v)}; }
// GELU′(x)·dy: the derivative's own error, its change with x's error (|GELU″| ≤ 0.8), and the product.
inline B gelu_backward(B x, B dy) {
  const B g{gelu_grad(x.v), 0.8 * x.e + gelu_grad_spec(x.v)};
  return g * dy;
}

inline std::vector<B> inputs(const std::vector<float>& x) {
  std::vector<B> r(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r[i] = in(x[i]);
  return r;
}

// |got − want.v| ≤ want.e for every element; on failure, where and by how much.
struct Check {
  std::size_t bad = 0, first = 0;
  double worst = 0;  // max |err| / bound
};
inline Check check(std::span<const float> got, std::span<const B> want) {
  Check c;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - want[i].v);
    const double ratio = want[i].e > 0 ? err / want[i].e : (err == 0 ? 0 : INFINITY);
    if (ratio > c.worst) c.worst = ratio;
    if (!(err <= want[i].e) && c.bad++ == 0) c.first = i;
  }
  return c;
}

}  // namespace bnd

#define CHECK_WITHIN(got, want)                                                                                  \
  do {                                                                                                           \
    const auto& g_ = (got);                                                                                      \
    const auto& w_ = (want);                                                                                     \
    REQUIRE(std::size(g_) == std::size(w_));                                                                     \
    const auto c_ = bnd::check(std::span<const float>(g_), std::span<const bnd::B>(w_));                         \
    INFO(c_.bad << " element(s) beyond bound; worst err/bound = " << c_.worst                                   \
                << (c_.bad ? "; first at " + std::to_string(c_.first) + ": got " + std::to_string(g_[c_.first]) + \
                                 ", want " + std::to_string(w_[c_.first].v) + " ± " + std::to_string(w_[c_.first].e) \
                           : std::string()));                                                                    \
    CHECK(c_.bad == 0);                                                                                          \
  } while (0)
