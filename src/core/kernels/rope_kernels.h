// RoPE's rotation of one head vector, in the two kernel sets (scalar reference, wasm SIMD128), like kernels.h.
// For pair i (i < half): (a, b) → (a·c[i] − b·s[i], b·c[i] + a·s[i]), s negated when `inverse`.
//   rotate_half:        a = x[i],  b = x[i + half]   (half-split pairing)
//   rotate_interleaved: a = x[2i], b = x[2i + 1]     (interleaved pairing)
// Only the first 2·half entries are read and written. out may alias x. Each output is two products and a sum,
// each rounded once: |error| ≤ 2u·(|a·c| + |b·s|)(1 + u) in either set (rope_test.cpp checks both).
#pragma once
#include <cstddef>

#include "dispatch.h"

namespace attnlab::kernels {

#define ATTNLAB_ROPE_KERNEL_SET                                                                          \
  void rotate_half(const float* x, float* out, const float* c, const float* s, std::size_t half,       \
                   bool inverse) noexcept;                                                              \
  void rotate_interleaved(const float* x, float* out, const float* c, const float* s, std::size_t half, \
                          bool inverse) noexcept;                                                     \
  /* max |x[i]| over x[0..n): NaN when x holds a NaN, +inf when it holds ±inf; 0 when n = 0. */       \
  float max_abs(const float* x, std::size_t n) noexcept;

namespace scalar {
ATTNLAB_ROPE_KERNEL_SET
}
#ifndef ATTNLAB_FORCE_SCALAR
namespace simd {
ATTNLAB_ROPE_KERNEL_SET
}
#endif
#undef ATTNLAB_ROPE_KERNEL_SET

// The set rope.cpp calls, chosen as kernels.h chooses `active`.
ATTNLAB_KERNEL_DISPATCH(rope_active, rotate_half, rotate_interleaved, max_abs)

}  // namespace attnlab::kernels
