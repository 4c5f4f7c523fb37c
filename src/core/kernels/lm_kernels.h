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
// four weights (BF16), or a multiply-add of 16-bit halves or a shift, and a mask (F16, then a multiply by 2¹⁰²
// unless x carries it), and no shuffle.
//
// An F16 panel holds each weight times 2¹⁰, as the F16 pattern of that exact value (f16_to_panel). Every F16
// subnormal (m·2⁻²⁴, m < 2¹⁰) times 2¹⁰ is a normal F16, so no weight in a panel widens to a float32 subnormal, whose
// multiply costs x86 cores a microcode assist (measured in Node on AMD EPYC: F16 panels of N(0, 0.02) weights,
// 0.24 % of them subnormal, ran at 14 GB/s per CPU-second instead of 17.5). A weight of magnitude 64 or more would
// pass F16's largest value (65504) and is kept beside the panel instead (lm/weights.h: Matrix::outliers).
#pragma once
#include <cstddef>
#include <cstdint>

#include "dispatch.h"
#include "half.h"

namespace attnlab::kernels {

inline constexpr std::size_t kLmPanel = 8;

inline constexpr int kF16PanelExponent = 10;  // an F16 panel holds w·2¹⁰
// The F16 kernels move a pattern's exponent and mantissa into float32's fields, which reads as its value times
// 2⁻¹¹² (half.h), so a panel weight widens to w·2⁻¹⁰²: x·2¹⁰² (finite while every |x| < 2²⁶) restores w·x.
inline constexpr float kF16ScaleX = 0x1p102f, kF16ScaleXLimit = 0x1p26f;

// The panel pattern of F16 weight h (finite), exactly h·2¹⁰; false when |h| ≥ 64 (exponent field above 20).
inline bool f16_to_panel(std::uint16_t h, std::uint16_t& out) noexcept {
  static_assert(kF16PanelExponent >= 10, "every F16 subnormal must become normal");
  const unsigned e = (h >> 10) & 31u, m = h & 0x3ffu, sign = h & 0x8000u;
  if (e > 30u - kF16PanelExponent) return false;
  if (e > 0) {  // normal: the exponent field grows by 10
    out = std::uint16_t(h + (kF16PanelExponent << 10));
    return true;
  }
  if (m == 0) {  // ±0
    out = h;
    return true;
  }
  // m·2⁻²⁴·2¹⁰ = 2^(b − 14)·(m/2^b) with b the highest set bit of m (0 … 9): the exponent field b − 14 + 15, the
  // bits below b the fraction.
  const unsigned b = 31u - unsigned(__builtin_clz(m));
  out = std::uint16_t(sign | ((b + kF16PanelExponent - 9u) << 10) | ((m << (10u - b)) & 0x3ffu));
  return true;
}
// The weight an F16 panel pattern holds (exact: every F16 value times 2⁻¹⁰ is a normal float32).
inline float f16_panel_to_float(std::uint16_t p) noexcept { return f16_to_float(p) * 0x1p-10f; }
// Where row r of a panel sits among its eight 16-bit weights (the interleaved order above); F32 panels are in
// natural order.
inline constexpr std::size_t half_lane(std::size_t r) noexcept { return r < 4 ? 2 * r : 2 * (r - 4) + 1; }

#define ATTNLAB_LM_KERNEL_SET                                                                                   \
  /* y[r] = Σ_c W[r][c]·x[c] for r < rows (y[r] += … when accumulate), W in panels as above (F16: the values \
     f16_panel_to_float of the patterns held). Any summation                                                  \
     order: each y[r] is within γ(cols)·Σ_c |W[r][c]·x[c]| of exact (plus the one rounding of an accumulate). */ \
  void matvec_f32(const float* w, std::size_t rows, std::size_t cols, const float* x, float* y, bool accumulate) noexcept; \
  void matvec_f16(const std::uint16_t* w, std::size_t rows, std::size_t cols, const float* x, float* y,        \
                  bool accumulate) noexcept;                                                                   \
  void matvec_bf16(const std::uint16_t* w, std::size_t rows, std::size_t cols, const float* x, float* y,       \
                   bool accumulate) noexcept;                                                                  \
  /* matvec_f16 with x given times 2¹⁰² (xs = x·kF16ScaleX, every |x| < 2²⁶ so that it is finite): each weight  \
     then widens without its multiply by 2¹⁰² (w·2⁻¹⁰² · x·2¹⁰² is w·x exactly), for the same results bit for bit. */ \
  void matvec_f16_scaled(const std::uint16_t* w, std::size_t rows, std::size_t cols, const float* xs, float* y, \
                         bool accumulate) noexcept;                                                            \
  /* k columns of one 16-bit panel as its weights in float32 [k][8], natural row order (exact: every F16 and \
     BF16 value is a float32; F16 as f16_panel_to_float). Finite inputs only (the loader refuses the others). */ \
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
