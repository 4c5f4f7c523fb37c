// The hot loops of the backward passes and of the small GPT, in the same two interchangeable sets as
// kernels.h (scalar:: the reference, simd:: wasm SIMD128, same signatures; `active::` calls the build's set).
// Kept apart from kernels.h so that the forward operator's kernels and these grow independently.
#pragma once
#include <cstddef>

#include "kernels.h"

namespace attnlab::kernels {

#define ATTNLAB_TRAINING_KERNEL_SET                                                                          \
  /* Aᵀ in panels for gemm_packed, where A is [k×m] (row stride lda): the same layout pack_rows gives for a   \
     row-major [m×k] matrix, times s. Columns i…i+3 of A become a panel: 4 adjacent floats per row of A. */   \
  void pack_cols(std::size_t m, std::size_t k, const float* a, std::size_t lda, float s, float* packed) noexcept; \
  /* b[j·ldb + i] = a[i·lda + j] for a [rows×cols]. */                                                     \
  void transpose(std::size_t rows, std::size_t cols, const float* a, std::size_t lda, float* b, std::size_t ldb) noexcept; \
  /* y = x·Φ(x), the exact GELU (Φ the standard normal CDF, through erfc). y may be x. */                   \
  void gelu(const float* x, std::size_t n, float* y) noexcept;                                           \
  /* dx = dy·(Φ(x) + x·φ(x)), GELU's derivative at x times dy. dx may be dy. */                           \
  void gelu_backward(const float* x, const float* dy, std::size_t n, float* dx) noexcept;                \
  /* LayerNorm of one row: y = (x − mean)·rstd·w + b (w, b may be null: 1 and 0), rstd = 1/√(var + eps)   \
     with the biased variance; writes *mean and *rstd for the backward. y may be x. */                      \
  void layernorm_row(const float* x, std::size_t n, const float* w, const float* b, float eps, float* y,    \
                     float* mean, float* rstd) noexcept;                                                  \
  /* Its backward for one row: with x̂ = (x − mean)·rstd and g = dy·w, dx += rstd·(g − mean(g) − x̂·mean(g·x̂));\
     dw += dy·x̂ and db += dy (each may be null). */                                                        \
  void layernorm_backward_row(const float* x, std::size_t n, float mean, float rstd, const float* w,        \
                              const float* dy, float* dx, float* dw, float* db) noexcept;                  \
  /* Σ a[i]·b[i] */                                                                                         \
  float dot(const float* a, const float* b, std::size_t n) noexcept;                                     \
  /* Σ x[i] */                                                                                              \
  float sum(const float* x, std::size_t n) noexcept;                                                     \
  /* out[i] = mul·y[i]·(g[i] − s): softmax's backward, dS = P∘(dP − D). out may be y or g. */               \
  void mul_diff(const float* y, const float* g, std::size_t n, float s, float mul, float* out) noexcept;   \
  /* out[i] = mul·(g[i] − s·exp(y[i])): log-softmax's backward from its output y ≤ 0. out may be g. */     \
  void log_softmax_grad(const float* y, const float* g, std::size_t n, float s, float mul, float* out) noexcept; \
  /* y[i] += a·x[i] */                                                                                      \
  void axpy(std::size_t n, float a, const float* x, float* y) noexcept;                                  \
  /* out[j] += Σ_r x[r·ldx + j] over rows r < rows: a bias's gradient. */                                   \
  void col_sum(std::size_t rows, std::size_t cols, const float* x, std::size_t ldx, float* out) noexcept; \
  /* AdamW (decoupled weight decay) on n parameters, with the gradient times gscale (clipping):            \
     m = β1·m + (1−β1)·g; v = β2·v + (1−β2)·g²; p −= lr·(wd·p + (m/bc1) / (√(v/bc2) + eps)). */           \
  void adamw(std::size_t n, float* p, const float* g, float* m, float* v, float gscale, float lr, float beta1, \
             float beta2, float bc1, float bc2, float eps, float wd) noexcept;

namespace scalar {
ATTNLAB_TRAINING_KERNEL_SET
}
#ifndef ATTNLAB_FORCE_SCALAR
namespace simd {
ATTNLAB_TRAINING_KERNEL_SET
}
#endif
#undef ATTNLAB_TRAINING_KERNEL_SET

ATTNLAB_KERNEL_DISPATCH(active, pack_cols, transpose, gelu, gelu_backward, layernorm_row, layernorm_backward_row, dot,
                        sum, mul_diff, log_softmax_grad, axpy, col_sum, adamw)

}  // namespace attnlab::kernels
