// Scalar reference kernels: the plainest correct loops. They define what the SIMD kernels must match
// and are the whole engine in ATTNLAB_FORCE_SCALAR builds (the fallback wasm module).
#include <cfloat>
#include <cmath>

#include "kernels.h"

namespace attnlab::kernels {

#ifdef ATTNLAB_FORCE_SCALAR
const char* simd_kernel_name() noexcept { return "scalar"; }
#endif

namespace scalar {

void gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
          std::size_t ldb, float* c, std::size_t ldc, bool accumulate) noexcept {
  for (std::size_t i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    if (!accumulate)
      for (std::size_t j = 0; j < n; ++j) ci[j] = 0.0f;
    for (std::size_t p = 0; p < k; ++p) {
      const float aip = a[i * lda + p];
      const float* bp = b + p * ldb;
      for (std::size_t j = 0; j < n; ++j) ci[j] += aip * bp[j];
    }
  }
}

void pack_rows(std::size_t m, std::size_t k, const float* a, std::size_t lda, float s, float* packed) noexcept {
  for (std::size_t i0 = 0; i0 < m; i0 += kPanelRows)
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t r = 0; r < kPanelRows; ++r)
        *packed++ = i0 + r < m ? a[(i0 + r) * lda + p] * s : 0.0f;
}

void gemm_packed(std::size_t m, std::size_t n, std::size_t k, const float* a_packed, const float* b, std::size_t ldb,
                 float* c, std::size_t ldc, bool accumulate) noexcept {
  for (std::size_t i = 0; i < m; ++i) {
    const float* panel = a_packed + (i / kPanelRows) * kPanelRows * k + i % kPanelRows;
    float* ci = c + i * ldc;
    if (!accumulate)
      for (std::size_t j = 0; j < n; ++j) ci[j] = 0.0f;
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t j = 0; j < n; ++j) ci[j] += panel[p * kPanelRows] * b[p * ldb + j];
  }
}

float row_max(const float* x, std::size_t n) noexcept {
  float m = -INFINITY;
  for (std::size_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

float row_max_checked(const float* x, std::size_t n, bool* invalid) noexcept {
  *invalid = first_invalid(x, n, true) < n;
  return row_max(x, n);
}

float exp_shifted(const float* x, std::size_t n, float shift, float mul, float* out) noexcept {
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    const float e = std::exp((x[i] - shift) * mul);
    if (out) out[i] = e;
    sum += e;
  }
  return sum;
}

void scale_add(float* x, std::size_t n, float s, const float* add) noexcept {
  for (std::size_t i = 0; i < n; ++i) x[i] = std::fmin(x[i] * s + (add ? add[i] : 0.0f), FLT_MAX);
}

void scale(float* x, std::size_t n, float s) noexcept {
  for (std::size_t i = 0; i < n; ++i) x[i] *= s;
}

void soft_cap(float* x, std::size_t n, float s, float cap) noexcept {
  const float inv = 1.0f / cap;
  for (std::size_t i = 0; i < n; ++i) {
    const float y = x[i] * s, z = y * inv;
    // Below 1e-4, tanh z = z·(1 − z²/3 + …) is z to 3e-9 relative: y itself, which z·cap might have lost to underflow.
    x[i] = std::fabs(z) < 1e-4f ? y : cap * std::tanh(z);
  }
}

void distance_bias(float* x, std::size_t n, float center, float slope) noexcept {
  for (std::size_t i = 0; i < n; ++i) x[i] -= slope * std::fabs(center - float(i));
}

void mask_bool(float* x, std::size_t n, const std::uint8_t* keep) noexcept {
  for (std::size_t i = 0; i < n; ++i)
    if (!keep[i]) x[i] = -INFINITY;
}

float sum_squares(const float* x, std::size_t n) noexcept {
  float s = 0.0f;
  for (std::size_t i = 0; i < n; ++i) s += x[i] * x[i];
  return s;
}

std::size_t first_invalid(const float* x, std::size_t n, bool allow_neg_inf) noexcept {
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i]) && !(allow_neg_inf && x[i] == -INFINITY)) return i;
  return n;
}

}  // namespace scalar
}  // namespace attnlab::kernels
