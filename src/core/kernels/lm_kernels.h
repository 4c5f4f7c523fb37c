// The language models' hot loops (src/core/lm/), in the two kernel sets of kernels.h (scalar:: the reference,
// simd:: wasm SIMD128; same signatures, `lm_active::` calls the build's set: dispatch.h).
//
// Weight matrices W [rows × cols] (y = W·x: a Hugging Face Linear's [out, in]) are stored in panels of
// kLmPanel = 8 rows: panel p holds rows 8p … 8p + 7 as [cols][8], column c's eight weights side by side, rows past
// `rows` zero. A decode step reads the whole matrix as one sequential stream (panel after panel), and a panel is
// the [k × 8] row-major B operand of the packed GEMM micro-kernel (kernels.h: gemm_packed with ldb = 8).
// F16 and BF16 matrices stay 16-bit in memory (half the bytes to stream per token) and are widened in registers.
// Their eight weights of a column are stored in the order of rows (0, 4, 1, 5, 2, 6, 3, 7): read as four 32-bit
// lanes, the low halves are rows 0–3 and the high halves rows 4–7, so widening takes one shift or one mask per
// four weights (BF16), or a multiply-add of 16-bit halves and a mask (F16, then a multiply by 2¹¹² unless x carries
// it), and no shuffle.
#pragma once
#include <cstddef>
#include <cstdint>

#include "dispatch.h"

namespace attnlab::kernels {

inline constexpr std::size_t kLmPanel = 8;
// Where row r of a panel sits among its eight 16-bit weights (the interleaved order above); F32 panels are in
// natural order.
inline constexpr std::size_t half_lane(std::size_t r) noexcept { return r < 4 ? 2 * r : 2 * (r - 4) + 1; }

#define ATTNLAB_LM_KERNEL_SET                                                                                   \
  /* y[r] = Σ_c W[r][c]·x[c] for r < rows (y[r] += … when accumulate), W in panels as above. Any summation   \
     order: each y[r] is within γ(cols)·Σ_c |W[r][c]·x[c]| of exact (plus the one rounding of an accumulate). */ \
  void matvec_f32(const float* w, std::size_t rows, std::size_t cols, const float* x, float* y, bool accumulate) noexcept; \
  void matvec_f16(const std::uint16_t* w, std::size_t rows, std::size_t cols, const float* x, float* y,        \
                  bool accumulate) noexcept;                                                                   \
  void matvec_bf16(const std::uint16_t* w, std::size_t rows, std::size_t cols, const float* x, float* y,       \
                   bool accumulate) noexcept;                                                                  \
  /* matvec_f16 with x given times 2¹¹² (xs, every |x| < 2¹⁶ so that it is finite): each weight then widens    \
     without its multiply by 2¹¹² (w·2⁻¹¹² · x·2¹¹² is w·x exactly), for the same results bit for bit. */       \
  void matvec_f16_scaled(const std::uint16_t* w, std::size_t rows, std::size_t cols, const float* xs, float* y, \
                         bool accumulate) noexcept;                                                            \
  /* k columns of one 16-bit panel as float32 [k][8] in natural row order (exact: every F16 and BF16 value is \
     a float32). Finite inputs only (the loader refuses the others). */                                        \
  void widen_panel_f16(const std::uint16_t* w, std::size_t k, float* out) noexcept;                           \
  void widen_panel_bf16(const std::uint16_t* w, std::size_t k, float* out) noexcept;                          \
  /* RMSNorm of one row: y = x·(1/√(mean(x²) + eps))·w (Llama's, all in float32). y may be x. */                \
  void rmsnorm_row(const float* x, std::size_t n, const float* w, float eps, float* y) noexcept;              \
  /* GELU's tanh form (GPT-2's gelu_new): y = ½x·(1 + tanh(√(2/π)·(x + 0.044715x³))). y may be x. */          \
  void gelu_tanh(const float* x, std::size_t n, float* y) noexcept;                                          \
  /* The exact GELU (transformers' "gelu", PyTorch's nn.GELU()): y = x·Φ(x) = ½x·(1 + erf(x/√2)), Φ taken as      \
     ½·erfc(−x/√2) so the left tail keeps its relative accuracy. y may be x. */                               \
  void gelu_erf(const float* x, std::size_t n, float* y) noexcept;                                            \
  /* y = erf(x), within 3 ulp (the SIMD set: erf_simd.h derives the bound). y may be x. */                      \
  void erf_f32(const float* x, std::size_t n, float* y) noexcept;                                             \
  /* SwiGLU's gate: y = silu(g)·u = g/(1 + e^(−g))·u. y may be g or u. */                                      \
  void silu_mul(const float* g, const float* u, std::size_t n, float* y) noexcept;                           \
  /* Σ of p's 32-bit words (mod 2³²), n bytes (a multiple of 16, p 16-byte aligned): the plainest read of       \
     memory, to measure the bandwidth a decode step can reach. */                                              \
  std::uint32_t stream_sum(const void* p, std::size_t n) noexcept;

namespace scalar {
ATTNLAB_LM_KERNEL_SET
}
#ifndef ATTNLAB_FORCE_SCALAR
namespace simd {
ATTNLAB_LM_KERNEL_SET
}
#endif
#undef ATTNLAB_LM_KERNEL_SET

// The set the models call, chosen as kernels.h chooses `active`.
ATTNLAB_KERNEL_DISPATCH(lm_active, matvec_f32, matvec_f16, matvec_bf16, matvec_f16_scaled, widen_panel_f16, widen_panel_bf16,
                        rmsnorm_row, gelu_tanh, gelu_erf, erf_f32, silu_mul, stream_sum)

}  // namespace attnlab::kernels
