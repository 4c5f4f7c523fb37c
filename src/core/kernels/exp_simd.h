// Vectorized float32 exp: range reduction x = n·ln2 + r with |r| ≤ ln2/2 (ln2 split in two so n·ln2_hi
// is exact), a degree-6 polynomial for e^r (Cephes expf coefficients), and 2^n built in the exponent bits.
// Accuracy against double exp is measured by tests/native/exp_test.cpp.
#pragma once
#include "simd128.h"

namespace attnlab::kernels::simd {

// kNonPositive: the caller guarantees x ≤ 0 or -inf (softmax after the max is subtracted), which
// skips the overflow handling. Otherwise the whole float range: finite up to ln(FLT_MAX) ≈ 88.7228.
template <bool kNonPositive = false>
inline v128_t exp_f32x4(v128_t x) noexcept {
  const v128_t log2e = wasm_f32x4_splat(1.44269504088896341f);
  const v128_t ln2_hi = wasm_f32x4_splat(0.693359375f);      // 8 significant bits: n·ln2_hi is exact
  const v128_t ln2_lo = wasm_f32x4_splat(-2.12194440e-4f);
  const v128_t hi_limit = wasm_f32x4_splat(88.72283172607421875f);  // largest float whose exp is ≤ FLT_MAX
  const v128_t lo_limit = wasm_f32x4_splat(-87.336544750553f);   // below: result would be denormal → 0

  const v128_t too_small = wasm_f32x4_lt(x, lo_limit);   // also true for -inf
  v128_t xc = wasm_f32x4_pmax(x, lo_limit);
  if constexpr (!kNonPositive) xc = wasm_f32x4_pmin(xc, hi_limit);

  const v128_t n = wasm_f32x4_nearest(wasm_f32x4_mul(xc, log2e));
  v128_t r = wasm_f32x4_sub(xc, wasm_f32x4_mul(n, ln2_hi));
  r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, ln2_lo));

  v128_t p = wasm_f32x4_splat(1.9875691500e-4f);
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.3981999507e-3f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(8.3334519073e-3f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(4.1665795894e-2f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.6666665459e-1f));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(5.0000001201e-1f));
  const v128_t r2 = wasm_f32x4_mul(r, r);
  v128_t y = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(p, r2), r), wasm_f32x4_splat(1.0f));

  // 2^n as (n + 127) << 23 reinterpreted as float, valid for n in [-126, 127]. Near the top n reaches
  // 128: then scale by 2^127 and double y first (y·2 ≤ 2.9 cannot overflow on its own).
  v128_t ni = wasm_i32x4_trunc_sat_f32x4(n);
  if constexpr (!kNonPositive) {
    const v128_t top = wasm_i32x4_gt(ni, wasm_i32x4_splat(127));
    y = wasm_v128_bitselect(wasm_f32x4_add(y, y), y, top);
    ni = wasm_i32x4_min(ni, wasm_i32x4_splat(127));
  }
  const v128_t pow2n = wasm_i32x4_shl(wasm_i32x4_add(ni, wasm_i32x4_splat(127)), 23);
  v128_t result = wasm_v128_andnot(wasm_f32x4_mul(y, pow2n), too_small);
  if constexpr (!kNonPositive)
    result = wasm_v128_bitselect(wasm_f32x4_splat(__builtin_inff()), result, wasm_f32x4_gt(x, hi_limit));
  return result;
}

}  // namespace attnlab::kernels::simd
