// Vectorized float32 exp: range reduction x = n·ln2 + r with |r| ≤ ln2/2 (ln2 split in two so n·ln2_hi
// is exact), a degree-6 polynomial for e^r (Cephes expf's form, refitted), and 2^n built in the exponent bits.
// Only adds, multiplies, one max and one shift: every op maps to a single SSE/NEON instruction in V8.
// Accuracy against double exp is measured by tests/native/exp_test.cpp.
#pragma once
#include "exp_constants.h"
#include "simd128.h"

namespace attnlab::kernels::simd {

// The constants as vectors: build once per kernel call, outside the loops (see exp_constants.h).
struct ExpVectors {
  v128_t log2e, magic, ln2_hi, ln2_lo, lo_limit, one, p[5];
};

inline ExpVectors load_exp_vectors() noexcept {
  const ExpConstants& c = kExpConstants;
  ExpVectors v{wasm_f32x4_splat(c.log2e),    wasm_f32x4_splat(c.magic),    wasm_f32x4_splat(c.ln2_hi),
               wasm_f32x4_splat(c.ln2_lo),   wasm_f32x4_splat(c.lo_limit), wasm_f32x4_splat(1.0f),
               {}};
  for (int i = 0; i < 5; ++i) v.p[i] = wasm_f32x4_splat(c.p[i]);
  return v;
}

// For x ≤ 0 or -inf, the only inputs softmax produces once the row max is subtracted: no overflow case.
inline v128_t exp_f32x4(v128_t x, const ExpVectors& k) noexcept {
  // Clamp at -127·ln2 (f32x4.pmax: one instruction, and -inf becomes the limit too). There x·log2e rounds
  // to n = -127, whose biased exponent 0 makes 2^n the bit pattern of +0: the result is exactly 0, with no
  // compare and select. So is every x up to -126.5·ln2 ≈ -87.68; above that, n = -126 gives e^x as a denormal.
  x = wasm_f32x4_pmax(x, k.lo_limit);

  // Round x·log2e to an integer n by adding 1.5·2²³ (+127, the exponent bias): the float addition does
  // the rounding, and n + 127 lands in the low mantissa bits, ready to shift into the exponent field.
  // Cheaper in wasm engines than f32x4.nearest plus i32x4.trunc_sat.
  const v128_t biased = wasm_f32x4_add(wasm_f32x4_mul(x, k.log2e), k.magic);
  const v128_t n = wasm_f32x4_sub(biased, k.magic);
  v128_t r = wasm_f32x4_sub(x, wasm_f32x4_mul(n, k.ln2_hi));
  r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, k.ln2_lo));

  // p0·r⁴ + p1·r³ + p2·r² + p3·r + p4 by Estrin's scheme: five dependent steps instead of Horner's eight.
  // The loop is latency-bound (one exp is a chain of ~17 dependent ops), so a shorter chain is faster.
  const v128_t r2 = wasm_f32x4_mul(r, r);
  const v128_t hi = wasm_f32x4_add(wasm_f32x4_mul(k.p[0], r2), wasm_f32x4_add(wasm_f32x4_mul(k.p[1], r), k.p[2]));
  const v128_t p = wasm_f32x4_add(wasm_f32x4_mul(hi, r2), wasm_f32x4_add(wasm_f32x4_mul(k.p[3], r), k.p[4]));
  const v128_t y = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(p, r2), r), k.one);

  // 2^n = (n + 127) << 23 as float; n ∈ [-127, 0] here, already in biased's low mantissa bits.
  return wasm_f32x4_mul(y, wasm_i32x4_shl(biased, 23));
}

}  // namespace attnlab::kernels::simd
