#include "matmul.h"

#include "kernels/kernels.h"
#include "kernels/training.h"

namespace attnlab {

void matmul(Op op_a, Op op_b, std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
            const float* b, std::size_t ldb, float* c, std::size_t ldc, bool accumulate, float* scratch) noexcept {
  namespace kern = kernels::active;
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: C = 0, or unchanged when accumulating
    if (!accumulate)
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) c[i * ldc + j] = 0.0f;
    return;
  }
  if (m < kernels::kPanelRows && op_a == Op::n) {  // a row or three (decoding one token): a packed panel would be mostly padding
    for (std::size_t i = 0; i < m; ++i) {
      const float* ai = a + i * lda;
      float* ci = c + i * ldc;
      if (op_b == Op::n) {
        kern::gemm(1, n, k, ai, lda, b, ldb, ci, ldc, accumulate);
      } else {
        for (std::size_t j = 0; j < n; ++j) {
          const float s = kern::dot(ai, b + j * ldb, k);
          ci[j] = accumulate ? ci[j] + s : s;
        }
      }
    }
    return;
  }
  float* const packed_a = scratch;
  float* const block_b = scratch + kMatmulMc * kMatmulKc;
  for (std::size_t k0 = 0; k0 < k; k0 += kMatmulKc) {
    const std::size_t kb = k - k0 < kMatmulKc ? k - k0 : kMatmulKc;
    const bool acc = accumulate || k0 > 0;
    for (std::size_t n0 = 0; n0 < n; n0 += kMatmulNc) {
      const std::size_t nb = n - n0 < kMatmulNc ? n - n0 : kMatmulNc;
      const float* bp;
      std::size_t ldbp;
      if (op_b == Op::n) {
        bp = b + k0 * ldb + n0, ldbp = ldb;
      } else {  // B is [n×k]: its block, transposed into [kb × nb]
        kern::transpose(nb, kb, b + n0 * ldb + k0, ldb, block_b, nb);
        bp = block_b, ldbp = nb;
      }
      for (std::size_t m0 = 0; m0 < m; m0 += kMatmulMc) {
        const std::size_t mb = m - m0 < kMatmulMc ? m - m0 : kMatmulMc;
        if (op_a == Op::n) kern::pack_rows(mb, kb, a + m0 * lda + k0, lda, 1.0f, packed_a);
        else kern::pack_cols(mb, kb, a + k0 * lda + m0, lda, 1.0f, packed_a);
        kern::gemm_packed(mb, nb, kb, packed_a, bp, ldbp, c + m0 * ldc + n0, ldc, acc);
      }
    }
  }
}

}  // namespace attnlab
