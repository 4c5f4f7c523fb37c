// The hot loops, in two interchangeable sets with identical signatures:
//   scalar::  plain C++ — the reference, always compiled, and the only set when ATTNLAB_FORCE_SCALAR is on;
//   simd::    wasm SIMD128 intrinsics (native builds compile the same source through SIMDe).
// The ops call `active::`: simd:: in wasm builds, scalar:: in ATTNLAB_FORCE_SCALAR builds, and in native builds
// the set the process chose (dispatch.h).
#pragma once
#include <cstddef>
#include <cstdint>

#include "../size_math.h"
#include "dispatch.h"

namespace attnlab::kernels {

#define ATTNLAB_KERNEL_SET                                                                              \
  /* C[m×n] = A[m×k]·B[k×n] (or += when accumulate); row-major with leading dimensions. */             \
  void gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,             \
            const float* b, std::size_t ldb, float* c, std::size_t ldc, bool accumulate) noexcept;    \
  /* A in panels for gemm_packed: rows i…i+3 interleaved as [⌈m/4⌉][k][4], rows past m zero, times s. */ \
  void pack_rows(std::size_t m, std::size_t k, const float* a, std::size_t lda, float s, float* packed) noexcept; \
  /* C[m×n] = (or +=) A·B with A from pack_rows: the hot GEMM of the streaming attention. */           \
  void gemm_packed(std::size_t m, std::size_t n, std::size_t k, const float* a_packed, const float* b,  \
                   std::size_t ldb, float* c, std::size_t ldc, bool accumulate) noexcept;               \
  /* max of x[0..n); -inf when every entry is -inf. n ≥ 1. */                                           \
  float row_max(const float* x, std::size_t n) noexcept;                                              \
  /* row_max and a validity check in one pass: *invalid is set when x holds NaN or +inf (-inf is fine). */ \
  float row_max_checked(const float* x, std::size_t n, bool* invalid) noexcept;                       \
  /* out[i] = exp((x[i] − shift)·mul) and returns Σ out[i]; out may be x, or null to only sum.        \
     Requires (x[i] − shift)·mul ≤ 0 or -inf, as in softmax after the max is subtracted. */           \
  float exp_shifted(const float* x, std::size_t n, float shift, float mul, float* out) noexcept;     \
  /* x[i] = min(x[i]·s + add[i], FLT_MAX) (add may be null): scores scaled, masked, never +inf. */     \
  void scale_add(float* x, std::size_t n, float s, const float* add) noexcept;                        \
  /* x[i] *= s */                                                                                       \
  void scale(float* x, std::size_t n, float s) noexcept;                                              \
  /* x[i] = cap·tanh(x[i]·s/cap), the softcap of finite scores before any mask, as (x·s)·(1/cap) so that a tiny \
     quotient cannot underflow away the score (1/cap must be finite; tanh(z) = z·(1 + z²·…) for small z). */   \
  void soft_cap(float* x, std::size_t n, float s, float cap) noexcept;                                \
  /* x[i] −= slope·|center − i| (ALiBi: center is the query's diagonal key, relative to x[0]). */       \
  void distance_bias(float* x, std::size_t n, float center, float slope) noexcept;                   \
  /* x[i] = -inf where keep[i] == 0 (a boolean mask: 1 = may attend). */                               \
  void mask_bool(float* x, std::size_t n, const std::uint8_t* keep) noexcept;                         \
  /* Σ x[i]² in float32 (+inf when it overflows), for the score-range check's row norms. */            \
  float sum_squares(const float* x, std::size_t n) noexcept;                                          \
  /* Index of the first NaN or +inf (and -inf unless allow_neg_inf) in x[0..n), or n when there is none. */ \
  std::size_t first_invalid(const float* x, std::size_t n, bool allow_neg_inf) noexcept;

inline constexpr std::size_t kPanelRows = 4;  // rows per packed A panel
// Floats of pack_rows(m, k)'s output; saturates instead of wrapping (size_math.h).
inline constexpr std::size_t packed_size(std::size_t m, std::size_t k) {
  return sat_mul(sat_mul(m / kPanelRows + (m % kPanelRows != 0), kPanelRows), k);
}

namespace scalar {
ATTNLAB_KERNEL_SET
}
#ifndef ATTNLAB_FORCE_SCALAR
namespace simd {
ATTNLAB_KERNEL_SET
}
#endif
#undef ATTNLAB_KERNEL_SET

ATTNLAB_KERNEL_DISPATCH(active, gemm, pack_rows, gemm_packed, row_max, row_max_checked, exp_shifted, scale_add,
                        scale, soft_cap, distance_bias, mask_bool, sum_squares, first_invalid)

// Name of the compiled-in vector kernels ("scalar" when there are none); defined next to them so it reflects
// that file's own flags.
const char* simd_kernel_name() noexcept;

}  // namespace attnlab::kernels
