// Matrix products with either operand transposed, cache-blocked over the packed GEMM micro-kernel
// (kernels::pack_rows / pack_cols + gemm_packed). The backward passes need all three forms:
//   Y  = X·W     (nn)   forward of a linear layer, W stored [in × out]
//   dX = dY·Wᵀ   (nt)   its input gradient
//   dW = Xᵀ·dY   (tn)   its weight gradient
// Scratch is fixed (kMatmulScratch floats, about 320 KiB) whatever the sizes: blocks of A are packed and,
// for a transposed B, blocks of B are transposed into it; nothing is allocated.
#pragma once
#include <cstddef>

namespace attnlab {

enum class Op : unsigned char { n, t };  // the operand as stored, or its transpose

// Block sizes: a kKc × kNc block of B (64 K floats) stays in L2 while every packed kMc-row block of A walks it.
inline constexpr std::size_t kMatmulMc = 64, kMatmulKc = 256, kMatmulNc = 256;
inline constexpr std::size_t kMatmulScratch = kMatmulMc * kMatmulKc + kMatmulKc * kMatmulNc;

// C[m×n] = op(A)·op(B) (or += when accumulate), row-major with leading dimensions. op(A) is [m×k]: A is
// stored [m×k] for Op::n, [k×m] for Op::t; op(B) is [k×n]: B stored [k×n] for Op::n, [n×k] for Op::t.
// `scratch` holds kMatmulScratch floats. Any summation order: each entry is within γ(k)·Σ|a·b| of exact.
void matmul(Op op_a, Op op_b, std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
            const float* b, std::size_t ldb, float* c, std::size_t ldc, bool accumulate, float* scratch) noexcept;

}  // namespace attnlab
