// Vectorized float32 erf and erfc, and Φ (the standard normal CDF) built from them, for the exact GELU x·Φ(x).
// For z = |x|:
//   z < 1:  erf z = z + z·q(z²), q the Maclaurin series of erf(z)/z − 1 through degree 10 in z² (the first term
//           left out is 2/√π/(11!·23) < 0.03u; q(0) = 2/√π − 1, so the constant's rounding costs 0.06u, not the
//           0.87u of rounding 2/√π itself);
//   z ≥ 1:  erfc z = t·exp(P(t) − z²), t = 1/(1 + z/2), P the degree-9 Chebyshev fit of Numerical Recipes'
//           erfcc, and erf z = 1 − erfc z (erfc z ≤ 0.16 there, so the subtraction shrinks erfc's error).
// The exponent P(t) − z² is below 1e-8 for every z ≥ 0 (the range exp_f32x4 serves); past z ≈ 9.3 it is below
// −87 and erfc flushes to 0.
//
// Error bounds (u = 2⁻²⁴; every term is a rounding of the float32 evaluation, or the fit's own error, found by
// evaluating the float64 expressions densely: tests/native/lm_kernels_test.cpp checks the result, not these steps):
//   z < 1:  q within 0.03u (truncation) + 0.17u (coefficients rounded to float32) + 0.97u (Horner's roundings,
//           Σ over steps of |product| + |sum|) + 0.22u (z² rounded: |w·q′(w)| ≤ 0.22) = 1.4u absolute; z/erf z ≤ 1.19
//           and |z·q|/erf z ≤ 0.19 add the product's and the sum's roundings: erf within 3u·|erf z| (+ 2⁻¹⁴⁹ per
//           rounding of a subnormal).
//   z ≥ 1:  erfc within (13 + 2z²)u relative: the fit with its float32 constants 1.82u; t's two roundings (2u)
//           carried by |1 + t·P′(t)| ≤ 1.92; Horner 2.77u absolute in the exponent; z² and P − z² rounded
//           (u·z² + u·(z² + 1.27)); exp 2u; the product u. So erf = 1 − erfc within u·|erf z| + (13 + 2z²)u·erfc z:
//           at most 3 ulp (at z = 1, where erfc z = 0.157), fewer as z grows.
#pragma once
#include "exp_simd.h"
#include "simd128.h"

namespace attnlab::kernels::simd {

struct ErfcVectors {
  v128_t half, one, c[10];
};
inline ErfcVectors load_erfc_vectors() noexcept {
  static constexpr float c[10] = {-1.26551223f, 1.00002368f, 0.37409196f, 0.09678418f, -0.18628806f,
                                  0.27886807f,  -1.13520398f, 1.48851587f, -0.82215223f, 0.17087277f};
  ErfcVectors v{wasm_f32x4_splat(0.5f), wasm_f32x4_splat(1.0f), {}};
  for (int i = 0; i < 10; ++i) v.c[i] = wasm_f32x4_splat(c[i]);
  return v;
}
// erfc(z) for z ≥ 0 (and +inf); accurate as above for z ≥ 1 (below 1 the fit holds, 1.2e−7 in exact arithmetic,
// but erf's series is the better path).
inline v128_t erfc_nonneg(v128_t z, const ErfcVectors& e, const ExpVectors& k) noexcept {
  const v128_t t = wasm_f32x4_div(e.one, wasm_f32x4_add(e.one, wasm_f32x4_mul(e.half, z)));
  v128_t p = e.c[9];
  for (int i = 8; i >= 0; --i) p = wasm_f32x4_add(wasm_f32x4_mul(p, t), e.c[i]);
  return wasm_f32x4_mul(t, exp_f32x4(wasm_f32x4_sub(p, wasm_f32x4_mul(z, z)), k));
}

struct ErfVectors {
  ExpVectors exp;
  ErfcVectors erfc;
  v128_t q[11];
};
inline ErfVectors load_erf_vectors() noexcept {
  // q(w) = Σₙ (2/√π)·(−w)ⁿ/(n!·(2n + 1)) − 1, n = 0 … 10.
  static constexpr double two_over_sqrt_pi = 1.1283791670955126;
  ErfVectors v{load_exp_vectors(), load_erfc_vectors(), {}};
  double fact = 1;
  for (int n = 0; n <= 10; ++n) {
    if (n) fact *= n;
    const double a = two_over_sqrt_pi / (fact * (2 * n + 1)) * (n % 2 ? -1 : 1) - (n == 0 ? 1 : 0);
    v.q[n] = wasm_f32x4_splat(float(a));
  }
  return v;
}

// erf(z) for 0 ≤ z < 1 (the series branch).
inline v128_t erf_series(v128_t z, const ErfVectors& k) noexcept {
  const v128_t w = wasm_f32x4_mul(z, z);
  v128_t q = k.q[10];
  for (int i = 9; i >= 0; --i) q = wasm_f32x4_add(wasm_f32x4_mul(q, w), k.q[i]);
  return wasm_f32x4_add(z, wasm_f32x4_mul(z, q));
}

// erf(x) for any x (±inf → ±1, NaN stays NaN, −0 stays −0).
inline v128_t erf_f32x4(v128_t x, const ErfVectors& k) noexcept {
  const v128_t sign_bit = wasm_i32x4_splat(int(0x80000000u));
  const v128_t z = wasm_v128_andnot(x, sign_bit);
  const v128_t large = wasm_f32x4_sub(k.erfc.one, erfc_nonneg(z, k.erfc, k.exp));
  const v128_t r = wasm_v128_bitselect(erf_series(z, k), large, wasm_f32x4_lt(z, k.erfc.one));
  return wasm_v128_or(r, wasm_v128_and(x, sign_bit));
}

// Φ(x) = ½·erfc(−x/√2): with z = |x|/√2, erfc z = 1 − erf z below 1 (a cancellation of at most 5.4×) and the fit
// above; Φ = ½·erfc z for x ≤ 0 and 1 − ½·erfc z for x > 0, so the left tail keeps its relative accuracy instead of
// cancelling in 1 + erf(x/√2).
inline v128_t phi_f32x4(v128_t x, const ErfVectors& k) noexcept {
  const v128_t z = wasm_f32x4_mul(wasm_f32x4_abs(x), wasm_f32x4_splat(0.70710678118654752f));
  const v128_t c = wasm_v128_bitselect(wasm_f32x4_sub(k.erfc.one, erf_series(z, k)), erfc_nonneg(z, k.erfc, k.exp),
                                       wasm_f32x4_lt(z, k.erfc.one));
  const v128_t h = wasm_f32x4_mul(k.erfc.half, c);
  return wasm_v128_bitselect(wasm_f32x4_sub(k.erfc.one, h), h, wasm_f32x4_gt(x, wasm_f32x4_splat(0.0f)));
}

}  // namespace attnlab::kernels::simd
