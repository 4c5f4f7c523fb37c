// The language models' kernels, scalar reference (lm_kernels.h).
#include <cmath>

#include "half.h"
#include "lm_kernels.h"

namespace attnlab::kernels::scalar {

namespace {

// One panel's eight sums over its k columns, the weights read through `weight(c, r)`.
template <class Weight>
void panel_dot(std::size_t k, const float* x, Weight weight, float (&acc)[kLmPanel]) noexcept {
  for (std::size_t r = 0; r < kLmPanel; ++r) acc[r] = 0.0f;
  for (std::size_t c = 0; c < k; ++c)
    for (std::size_t r = 0; r < kLmPanel; ++r) acc[r] += weight(c, r) * x[c];
}

template <class Weight>
void matvec(std::size_t rows, std::size_t cols, const float* x, float* y, bool accumulate, Weight panel_weight) noexcept {
  for (std::size_t p = 0; p * kLmPanel < rows; ++p) {
    float acc[kLmPanel];
    panel_dot(cols, x, [&](std::size_t c, std::size_t r) { return panel_weight(p, c, r); }, acc);
    const std::size_t n = rows - p * kLmPanel < kLmPanel ? rows - p * kLmPanel : kLmPanel;
    for (std::size_t r = 0; r < n; ++r) y[p * kLmPanel + r] = accumulate ? y[p * kLmPanel + r] + acc[r] : acc[r];
  }
}

}  // namespace

void matvec_f32(const float* w, std::size_t rows, std::size_t cols, const float* x, float* y, bool accumulate) noexcept {
  matvec(rows, cols, x, y, accumulate,
         [&](std::size_t p, std::size_t c, std::size_t r) { return w[(p * cols + c) * kLmPanel + r]; });
}

void matvec_f16(const std::uint16_t* w, std::size_t rows, std::size_t cols, const float* x, float* y,
                bool accumulate) noexcept {
  matvec(rows, cols, x, y, accumulate, [&](std::size_t p, std::size_t c, std::size_t r) {
    return f16_panel_to_float(w[(p * cols + c) * kLmPanel + half_lane(r)]);
  });
}

void matvec_f16_scaled(const std::uint16_t* w, std::size_t rows, std::size_t cols, const float* xs, float* y,
                       bool accumulate) noexcept {
  matvec(rows, cols, xs, y, accumulate, [&](std::size_t p, std::size_t c, std::size_t r) {
    const std::uint16_t h = w[(p * cols + c) * kLmPanel + half_lane(r)];
    return bits_to_float((std::uint32_t(h & 0x8000u) << 16) | (std::uint32_t(h & 0x7fffu) << 13));  // w·2⁻¹⁰²
  });
}

void matvec_bf16(const std::uint16_t* w, std::size_t rows, std::size_t cols, const float* x, float* y,
                 bool accumulate) noexcept {
  matvec(rows, cols, x, y, accumulate, [&](std::size_t p, std::size_t c, std::size_t r) {
    return bf16_to_float(w[(p * cols + c) * kLmPanel + half_lane(r)]);
  });
}

void widen_panel_f16(const std::uint16_t* w, std::size_t k, float* out) noexcept {
  for (std::size_t c = 0; c < k; ++c)
    for (std::size_t r = 0; r < kLmPanel; ++r) out[c * kLmPanel + r] = f16_panel_to_float(w[c * kLmPanel + half_lane(r)]);
}

void widen_panel_bf16(const std::uint16_t* w, std::size_t k, float* out) noexcept {
  for (std::size_t c = 0; c < k; ++c)
    for (std::size_t r = 0; r < kLmPanel; ++r) out[c * kLmPanel + r] = bf16_to_float(w[c * kLmPanel + half_lane(r)]);
}

void rmsnorm_row(const float* x, std::size_t n, const float* w, float eps, float* y) noexcept {
  float ss = 0.0f;
  for (std::size_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const float r = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  for (std::size_t i = 0; i < n; ++i) y[i] = x[i] * r * w[i];
}

void gelu_tanh(const float* x, std::size_t n, float* y) noexcept {
  const float c = 0.7978845608028654f;  // √(2/π)
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::tanh(c * (v + 0.044715f * v * v * v)));
  }
}

void gelu_erf(const float* x, std::size_t n, float* y) noexcept {
  const float c = 0.70710678118654752f;  // 1/√2
  for (std::size_t i = 0; i < n; ++i) y[i] = x[i] * (0.5f * std::erfc(-x[i] * c));
}

void erf_f32(const float* x, std::size_t n, float* y) noexcept {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::erf(x[i]);
}

void silu_mul(const float* g, const float* u, std::size_t n, float* y) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    // e^(−|g|) ≤ 1 never overflows: silu(g) = g/(1 + e^(−g)) for g ≥ 0, g·e^g/(1 + e^g) below.
    const float e = std::exp(-std::fabs(g[i]));
    const float s = g[i] >= 0.0f ? g[i] / (1.0f + e) : g[i] * e / (1.0f + e);
    y[i] = s * u[i];
  }
}

std::uint32_t stream_sum(const void* p, std::size_t n) noexcept {
  const auto* w = static_cast<const std::uint32_t*>(p);
  std::uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (std::size_t i = 0; i + 4 <= n / 4; i += 4) s0 += w[i], s1 += w[i + 1], s2 += w[i + 2], s3 += w[i + 3];
  return s0 + s1 + s2 + s3;
}

}  // namespace attnlab::kernels::scalar
