// Matrix product C = A·B (or A·Bᵀ), row-major float32, on the same SIMD GEMM micro-kernel as attention.
#pragma once
#include <cstddef>
#include <span>

#include "status.h"

namespace attnlab {

struct MatmulArgs {
  std::span<const float> a;  // [m×k]; finite
  std::span<const float> b;  // [k×n], or [n×k] when transpose_b; finite
  std::size_t m = 0, k = 0, n = 0;
  bool transpose_b = false;  // C = A·Bᵀ: B holds one row of k per output column (e.g. keys for Q·Kᵀ)
};

// out.size() must be m·n; out must not overlap a or b. Rejects inputs whose product could overflow float32
// (max ‖row of A‖ · max ‖column of B‖ > 1e37, a Cauchy–Schwarz bound on every entry and partial sum).
// On error nothing is written.
Status matmul(const MatmulArgs& args, std::span<float> out);
// Every check matmul() makes that reads no value of a or b: the sizes and the lengths (out's: out_size).
Status check_matmul(const MatmulArgs& args, std::size_t out_size);

}  // namespace attnlab
