// Scalar reference for the training kernels (training.h): the plainest correct loops, and the whole engine in
// ATTNLAB_FORCE_SCALAR builds.
#include <cmath>

#include "training.h"

namespace attnlab::kernels::scalar {

void pack_cols(std::size_t m, std::size_t k, const float* a, std::size_t lda, float s, float* packed) noexcept {
  for (std::size_t i0 = 0; i0 < m; i0 += kPanelRows)
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t r = 0; r < kPanelRows; ++r) *packed++ = i0 + r < m ? a[p * lda + i0 + r] * s : 0.0f;
}

void transpose(std::size_t rows, std::size_t cols, const float* a, std::size_t lda, float* b, std::size_t ldb) noexcept {
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) b[j * ldb + i] = a[i * lda + j];
}

namespace {
constexpr float kInvSqrt2 = 0.70710678118654752f, kInvSqrt2Pi = 0.39894228040143268f;
// Φ(x) through erfc, accurate in relative terms on both tails (1 + erf(x/√2) would lose the left tail).
inline float phi_cdf(float x) noexcept { return 0.5f * std::erfc(-x * kInvSqrt2); }
}  // namespace

void gelu(const float* x, std::size_t n, float* y) noexcept {
  for (std::size_t i = 0; i < n; ++i) y[i] = x[i] * phi_cdf(x[i]);
}

void gelu_backward(const float* x, const float* dy, std::size_t n, float* dx) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[i];
    dx[i] = dy[i] * (phi_cdf(v) + v * kInvSqrt2Pi * std::exp(-0.5f * v * v));
  }
}

void layernorm_row(const float* x, std::size_t n, const float* w, const float* b, float eps, float* y, float* mean,
                   float* rstd) noexcept {
  float s = 0.0f;
  for (std::size_t i = 0; i < n; ++i) s += x[i];
  const float mu = s / static_cast<float>(n);
  float ss = 0.0f;
  for (std::size_t i = 0; i < n; ++i) ss += (x[i] - mu) * (x[i] - mu);
  const float r = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  for (std::size_t i = 0; i < n; ++i) {
    const float h = (x[i] - mu) * r;
    y[i] = (w ? h * w[i] : h) + (b ? b[i] : 0.0f);
  }
  *mean = mu, *rstd = r;
}

void layernorm_backward_row(const float* x, std::size_t n, float mean, float rstd, const float* w, const float* dy,
                            float* dx, float* dw, float* db) noexcept {
  float g_mean = 0.0f, gx_mean = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    const float h = (x[i] - mean) * rstd, g = w ? dy[i] * w[i] : dy[i];
    g_mean += g, gx_mean += g * h;
  }
  g_mean /= static_cast<float>(n), gx_mean /= static_cast<float>(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float h = (x[i] - mean) * rstd, g = w ? dy[i] * w[i] : dy[i];
    dx[i] += (g - g_mean - h * gx_mean) * rstd;
    if (dw) dw[i] += dy[i] * h;
    if (db) db[i] += dy[i];
  }
}

float dot(const float* a, const float* b, std::size_t n) noexcept {
  float s = 0.0f;
  for (std::size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

float sum(const float* x, std::size_t n) noexcept {
  float s = 0.0f;
  for (std::size_t i = 0; i < n; ++i) s += x[i];
  return s;
}

void mul_diff(const float* y, const float* g, std::size_t n, float s, float mul, float* out) noexcept {
  for (std::size_t i = 0; i < n; ++i) out[i] = mul * y[i] * (g[i] - s);
}

void log_softmax_grad(const float* y, const float* g, std::size_t n, float s, float mul, float* out) noexcept {
  for (std::size_t i = 0; i < n; ++i) out[i] = mul * (g[i] - s * std::exp(y[i]));
}

void axpy(std::size_t n, float a, const float* x, float* y) noexcept {
  for (std::size_t i = 0; i < n; ++i) y[i] += a * x[i];
}

void col_sum(std::size_t rows, std::size_t cols, const float* x, std::size_t ldx, float* out) noexcept {
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < cols; ++j) out[j] += x[r * ldx + j];
}

void adamw(std::size_t n, float* p, const float* g, float* m, float* v, float gscale, float lr, float beta1, float beta2,
           float bc1, float bc2, float eps, float wd) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const float gi = g[i] * gscale;
    m[i] = beta1 * m[i] + (1.0f - beta1) * gi;
    v[i] = beta2 * v[i] + (1.0f - beta2) * gi * gi;
    p[i] -= lr * (wd * p[i] + (m[i] / bc1) / (std::sqrt(v[i] / bc2) + eps));
  }
}

}  // namespace attnlab::kernels::scalar
