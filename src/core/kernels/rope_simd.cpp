// RoPE rotation, wasm SIMD128 (rope_kernels.h): four pairs per step, the same operations as the scalar
// reference in the same order, then a scalar tail for the last half % 4 pairs.
#include <cmath>
#include <initializer_list>

#include "rope_kernels.h"
#include "simd128.h"

namespace attnlab::kernels::simd {

void rotate_half(const float* x, float* out, const float* c, const float* s, std::size_t half, bool inverse) noexcept {
  const float sign = inverse ? -1.0f : 1.0f;
  const v128_t vsign = wasm_f32x4_splat(sign);
  std::size_t i = 0;
  for (; i + 4 <= half; i += 4) {
    const v128_t a = wasm_v128_load(x + i), b = wasm_v128_load(x + i + half);
    const v128_t vc = wasm_v128_load(c + i), vs = wasm_f32x4_mul(vsign, wasm_v128_load(s + i));
    wasm_v128_store(out + i, wasm_f32x4_sub(wasm_f32x4_mul(a, vc), wasm_f32x4_mul(b, vs)));
    wasm_v128_store(out + i + half, wasm_f32x4_add(wasm_f32x4_mul(b, vc), wasm_f32x4_mul(a, vs)));
  }
  for (; i < half; ++i) {
    const float a = x[i], b = x[i + half], si = sign * s[i];
    out[i] = a * c[i] - b * si;
    out[i + half] = b * c[i] + a * si;
  }
}

void rotate_interleaved(const float* x, float* out, const float* c, const float* s, std::size_t half,
                        bool inverse) noexcept {
  const float sign = inverse ? -1.0f : 1.0f;
  const v128_t vsign = wasm_f32x4_splat(sign);
  std::size_t i = 0;
  for (; i + 4 <= half; i += 4) {
    // Eight entries hold four pairs: split into the pairs' first (a) and second (b) members, rotate, re-interleave.
    const v128_t lo = wasm_v128_load(x + 2 * i), hi = wasm_v128_load(x + 2 * i + 4);
    const v128_t a = wasm_i32x4_shuffle(lo, hi, 0, 2, 4, 6), b = wasm_i32x4_shuffle(lo, hi, 1, 3, 5, 7);
    const v128_t vc = wasm_v128_load(c + i), vs = wasm_f32x4_mul(vsign, wasm_v128_load(s + i));
    const v128_t ra = wasm_f32x4_sub(wasm_f32x4_mul(a, vc), wasm_f32x4_mul(b, vs));
    const v128_t rb = wasm_f32x4_add(wasm_f32x4_mul(b, vc), wasm_f32x4_mul(a, vs));
    wasm_v128_store(out + 2 * i, wasm_i32x4_shuffle(ra, rb, 0, 4, 1, 5));
    wasm_v128_store(out + 2 * i + 4, wasm_i32x4_shuffle(ra, rb, 2, 6, 3, 7));
  }
  for (; i < half; ++i) {
    const float a = x[2 * i], b = x[2 * i + 1], si = sign * s[i];
    out[2 * i] = a * c[i] - b * si;
    out[2 * i + 1] = b * c[i] + a * si;
  }
}

float max_abs(const float* x, std::size_t n) noexcept {
  // f32x4.max propagates NaN, as the scalar loop does.
  v128_t m0 = wasm_f32x4_splat(0.0f), m1 = m0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    m0 = wasm_f32x4_max(m0, wasm_f32x4_abs(wasm_v128_load(x + i)));
    m1 = wasm_f32x4_max(m1, wasm_f32x4_abs(wasm_v128_load(x + i + 4)));
  }
  for (; i + 4 <= n; i += 4) m0 = wasm_f32x4_max(m0, wasm_f32x4_abs(wasm_v128_load(x + i)));
  m0 = wasm_f32x4_max(m0, m1);
  float m = wasm_f32x4_extract_lane(m0, 0);
  for (const float l : {wasm_f32x4_extract_lane(m0, 1), wasm_f32x4_extract_lane(m0, 2), wasm_f32x4_extract_lane(m0, 3)})
    m = l > m || l != l ? l : m;
  for (; i < n; ++i) {
    const float a = std::fabs(x[i]);
    m = a > m || a != a ? a : m;
  }
  return m;
}

}  // namespace attnlab::kernels::simd
