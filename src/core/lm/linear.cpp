#include "linear.h"

#include "../kernels/kernels.h"
#include "../kernels/lm_kernels.h"
#include "../kernels/rope_kernels.h"
#include "../kernels/training.h"

namespace attnlab::lm {

namespace kern = kernels::active;
namespace lmk = kernels::lm_active;

std::size_t linear_scratch(std::size_t n, std::size_t max_cols) noexcept {
  const std::size_t mc = n < kLinearMc ? n : kLinearMc;
  const std::size_t gemm = kernels::packed_size(mc, kLinearKc) + kLinearKc * kernels::kLmPanel;
  return gemm > max_cols ? gemm : max_cols;
}

namespace {

void matvec(const Matrix& w, const float* x, float* y, bool accumulate, float* scratch) noexcept {
  switch (w.dtype) {
    case DType::f32: lmk::matvec_f32(static_cast<const float*>(w.data), w.rows, w.cols, x, y, accumulate); break;
    case DType::f16: {
      const auto* h = static_cast<const std::uint16_t*>(w.data);
      // x·2¹⁰² spares every weight a multiply; the same bits either way (lm_kernels.h).
      if (kernels::rope_active::max_abs(x, w.cols) < kernels::kF16ScaleXLimit) {
        for (std::size_t c = 0; c < w.cols; ++c) scratch[c] = x[c] * kernels::kF16ScaleX;
        lmk::matvec_f16_scaled(h, w.rows, w.cols, scratch, y, accumulate);
      } else {
        lmk::matvec_f16(h, w.rows, w.cols, x, y, accumulate);
      }
      break;
    }
    case DType::bf16: lmk::matvec_bf16(static_cast<const std::uint16_t*>(w.data), w.rows, w.cols, x, y, accumulate); break;
  }
}

}  // namespace

void linear(const Matrix& w, const float* x, std::size_t n, float* y, std::size_t ldy, const float* bias, bool accumulate,
            float* scratch) noexcept {
  const std::size_t rows = w.rows, cols = w.cols, P = kernels::kLmPanel;
  if (n < kernels::kPanelRows) {
    for (std::size_t i = 0; i < n; ++i) matvec(w, x + i * cols, y + i * ldy, accumulate, scratch);
  } else {
    float* packed = scratch;
    float* wide = scratch + kernels::packed_size(n < kLinearMc ? n : kLinearMc, kLinearKc);
    for (std::size_t k0 = 0; k0 < cols; k0 += kLinearKc) {
      const std::size_t kb = cols - k0 < kLinearKc ? cols - k0 : kLinearKc;
      const bool acc = accumulate || k0 > 0;
      for (std::size_t m0 = 0; m0 < n; m0 += kLinearMc) {
        const std::size_t mb = n - m0 < kLinearMc ? n - m0 : kLinearMc;
        kern::pack_rows(mb, kb, x + m0 * cols + k0, cols, 1.0f, packed);
        for (std::size_t p = 0; p * P < rows; ++p) {
          const float* b;
          if (w.dtype == DType::f32) {
            b = static_cast<const float*>(w.data) + (p * cols + k0) * P;
          } else {
            const std::uint16_t* h = static_cast<const std::uint16_t*>(w.data) + (p * cols + k0) * P;
            if (w.dtype == DType::bf16) lmk::widen_panel_bf16(h, kb, wide);
            else lmk::widen_panel_f16(h, kb, wide);
            b = wide;
          }
          const std::size_t nb = rows - p * P < P ? rows - p * P : P;
          kern::gemm_packed(mb, nb, kb, packed, b, P, y + m0 * ldy + p * P, ldy, acc);
        }
      }
    }
  }
  // F16 weights of magnitude 64 or more, kept beside the panels (lm_kernels.h).
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < w.outlier_count; ++j) {
      const Outlier& s = w.outliers[j];
      y[i * ldy + s.row] += s.value * x[i * cols + s.col];
    }
  if (bias)
    for (std::size_t i = 0; i < n; ++i) kern::axpy(rows, 1.0f, bias, y + i * ldy);
}

}  // namespace attnlab::lm
