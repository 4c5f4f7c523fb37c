// Vectorized float32 tanh for the softcap, built on the vector exp: for t = |z|,
//   t ≥ 0.4:  tanh t = (1 − e^(−2t)) / (1 + e^(−2t)), the exp's argument ≤ 0 as exp_f32x4 requires, and
//             1 − e^(−2t) ≥ 0.55 there, so the subtraction does not amplify the exp's error (≤ 2.2×);
//   t < 0.4:  the odd Taylor series through t¹³ (the next term is below 1e-9 relative), where
//             1 − e^(−2t) would cancel;
// then the sign of z is put back. Accuracy against double tanh: tests/native/exp_test.cpp.
#pragma once
#include "exp_simd.h"

namespace attnlab::kernels::simd {

struct TanhVectors {
  ExpVectors exp;
  v128_t two, threshold, c[6];
};

inline TanhVectors load_tanh_vectors() noexcept {
  // Taylor coefficients of tanh: −1/3, 2/15, −17/315, 62/2835, −1382/155925, 21844/6081075.
  return {load_exp_vectors(), wasm_f32x4_splat(2.0f), wasm_f32x4_splat(0.4f),
          {wasm_f32x4_splat(-1.0f / 3.0f), wasm_f32x4_splat(2.0f / 15.0f), wasm_f32x4_splat(-17.0f / 315.0f),
           wasm_f32x4_splat(62.0f / 2835.0f), wasm_f32x4_splat(-1382.0f / 155925.0f),
           wasm_f32x4_splat(21844.0f / 6081075.0f)}};
}

// c·tanh(z) given y = c·z (c > 0): the small branch scales y, not z, so a z that underflowed to 0 or to a
// denormal (a huge c) loses nothing: y·(1 + z²·P(z²)). Plain tanh z is the case y = z, c = 1.
inline v128_t scaled_tanh_f32x4(v128_t y, v128_t z, v128_t c, const TanhVectors& k) noexcept {
  const v128_t sign_bit = wasm_i32x4_splat(int(0x80000000u));
  const v128_t t = wasm_v128_andnot(z, sign_bit);
  // Large: e = e^(−2t) ∈ [0, 0.45]; t = inf gives e = 0 and exactly c.
  const v128_t e = exp_f32x4(wasm_f32x4_neg(wasm_f32x4_mul(t, k.two)), k.exp);
  const v128_t large = wasm_v128_or(wasm_f32x4_mul(c, wasm_f32x4_div(wasm_f32x4_sub(k.exp.one, e), wasm_f32x4_add(k.exp.one, e))),
                                    wasm_v128_and(z, sign_bit));
  // Small: y + y·t²·P(t²), P by Horner.
  const v128_t t2 = wasm_f32x4_mul(t, t);
  v128_t p = k.c[5];
  for (int i = 4; i >= 0; --i) p = wasm_f32x4_add(wasm_f32x4_mul(p, t2), k.c[i]);
  const v128_t small = wasm_f32x4_add(y, wasm_f32x4_mul(wasm_f32x4_mul(y, t2), p));
  return wasm_v128_bitselect(small, large, wasm_f32x4_lt(t, k.threshold));
}

}  // namespace attnlab::kernels::simd
