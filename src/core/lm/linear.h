// y = x·Wᵀ (+ bias) for n rows of activations against one panel matrix (weights.h), in whichever form is fastest:
//   n < 4 (a decode step): one matrix–vector product per row, the weights streamed once per row (lm_kernels.h;
//                           F16 through matvec_f16_scaled, x scaled by 2¹⁰² into scratch, when every |x| < 2²⁶);
//   n ≥ 4 (a prompt):       the packed GEMM micro-kernel of attention and training (kernels.h: gemm_packed), rows of
//                           x packed in blocks of kLinearKc columns, each panel of W its B operand as stored (F32) or
//                           widened into scratch first (F16, BF16: once per block of rows, ≤ 1/4 of the GEMM's reads).
#pragma once
#include <cstddef>

#include "weights.h"

namespace attnlab::lm {

inline constexpr std::size_t kLinearKc = 256, kLinearMc = 128;

// Floats of scratch linear() needs for n rows of at most max_cols columns.
std::size_t linear_scratch(std::size_t n, std::size_t max_cols) noexcept;

// y[i][r] = Σ_c W[r][c]·x[i][c] (+ bias[r]) for i < n, r < W.rows; row i of y at y + i·ldy, of x at x + i·W.cols.
// accumulate: y += … instead. Each entry is within γ(cols + 2)·(Σ_c |W[r][c]·x[i][c]| + |bias[r]| + |y|) of exact.
void linear(const Matrix& w, const float* x, std::size_t n, float* y, std::size_t ldy, const float* bias, bool accumulate,
            float* scratch) noexcept;

}  // namespace attnlab::lm
