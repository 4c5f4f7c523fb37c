// RoPE rotation, scalar reference (rope_kernels.h).
#include "rope_kernels.h"

#include <cmath>

namespace attnlab::kernels::scalar {

void rotate_half(const float* x, float* out, const float* c, const float* s, std::size_t half, bool inverse) noexcept {
  const float sign = inverse ? -1.0f : 1.0f;
  for (std::size_t i = 0; i < half; ++i) {
    const float a = x[i], b = x[i + half], si = sign * s[i];
    out[i] = a * c[i] - b * si;
    out[i + half] = b * c[i] + a * si;
  }
}

void rotate_interleaved(const float* x, float* out, const float* c, const float* s, std::size_t half,
                        bool inverse) noexcept {
  const float sign = inverse ? -1.0f : 1.0f;
  for (std::size_t i = 0; i < half; ++i) {
    const float a = x[2 * i], b = x[2 * i + 1], si = sign * s[i];
    out[2 * i] = a * c[i] - b * si;
    out[2 * i + 1] = b * c[i] + a * si;
  }
}

float max_abs(const float* x, std::size_t n) noexcept {
  float m = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    const float a = std::fabs(x[i]);
    m = a > m || a != a ? a : m;  // a NaN wins and stays (nothing compares greater than it)
  }
  return m;
}

}  // namespace attnlab::kernels::scalar
