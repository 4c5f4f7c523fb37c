#include "matmul.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "kernels/kernels.h"
#include "scratch.h"
#include "validate.h"

namespace attnlab {
namespace {

using namespace detail;
namespace kern = kernels::active;

// C is computed in blocks of kColumns output columns × kDepth terms of k, so that the slice of B a block reads
// (kDepth × kColumns floats, 128 KiB) stays in cache while every 4-row panel of A streams past it.
constexpr std::size_t kColumns = 128, kDepth = 256;

// Largest Euclidean norm among `count` vectors of `len` floats, vector v at x + v·stride_v, element t at
// + t·stride_t. Summed in double: a float sum of squares overflows from |x| ≈ 1.8e19, well inside float32.
double max_norm(const float* x, std::size_t count, std::size_t len, std::size_t stride_v, std::size_t stride_t) noexcept {
  double best = 0.0;
  for (std::size_t v = 0; v < count; ++v) {
    const float* p = x + v * stride_v;
    double s = 0.0;
    for (std::size_t t = 0; t < len; ++t) s += double(p[t * stride_t]) * double(p[t * stride_t]);
    best = s > best ? s : best;
  }
  return std::sqrt(best);
}

// Column norms of a row-major [k×n] B read row by row (unit stride), into one running sum per column.
Status max_column_norm(const float* b, std::size_t k, std::size_t n, double& out) {
  std::unique_ptr<double[]> sums(new (std::nothrow) double[n]());
  if (!sums) return Status::no_memory("the column norms of b");
  for (std::size_t p = 0; p < k; ++p)
    for (std::size_t j = 0; j < n; ++j) sums[j] += double(b[p * n + j]) * double(b[p * n + j]);
  double best = 0.0;
  for (std::size_t j = 0; j < n; ++j) best = sums[j] > best ? sums[j] : best;
  out = std::sqrt(best);
  return Status::success();
}

bool overlaps(std::span<const float> x, std::span<float> y) noexcept {
  const auto x0 = reinterpret_cast<std::uintptr_t>(x.data()), y0 = reinterpret_cast<std::uintptr_t>(y.data());
  return !x.empty() && !y.empty() && x0 < y0 + y.size_bytes() && y0 < x0 + x.size_bytes();
}

}  // namespace

Status matmul(const MatmulArgs& a, std::span<float> out) {
  for (auto [name, value] : {std::pair{"m", a.m}, {"k", a.k}, {"n", a.n}})
    if (auto s = check_size(name, value); !s.ok()) return s;
  std::size_t a_len, b_len, out_len;
  if (auto s = check_product("a", a.m, a.k, a_len); !s.ok()) return s;
  if (auto s = check_product("b", a.k, a.n, b_len); !s.ok()) return s;
  if (auto s = check_product("out", a.m, a.n, out_len); !s.ok()) return s;
  const std::string m_s = std::to_string(a.m), k_s = std::to_string(a.k), n_s = std::to_string(a.n);
  if (auto s = check_length("a", a.a.size(), a_len, "m·k = " + m_s + "·" + k_s); !s.ok()) return s;
  if (auto s = check_length("b", a.b.size(), b_len, a.transpose_b ? "n·k = " + n_s + "·" + k_s : "k·n = " + k_s + "·" + n_s);
      !s.ok())
    return s;
  if (auto s = check_length("out", out.size(), out_len, "m·n = " + m_s + "·" + n_s); !s.ok()) return s;
  if (overlaps(a.a, out) || overlaps(a.b, out))
    return Status::range_error("out", "out must not overlap a or b (the product is written while they are read)");
  if (auto s = check_values("a", a.a, false); !s.ok()) return s;
  if (auto s = check_values("b", a.b, false); !s.ok()) return s;

  // |cᵢⱼ| and every partial sum of it are ≤ ‖row i of A‖·‖column j of B‖: keep that well inside float32.
  double b_norm = 0.0;
  if (a.transpose_b) {
    b_norm = max_norm(a.b.data(), a.n, a.k, a.k, 1);
  } else if (auto s = max_column_norm(a.b.data(), a.k, a.n, b_norm); !s.ok()) {
    return s;
  }
  const double bound = max_norm(a.a.data(), a.m, a.k, a.k, 1) * b_norm;
  if (!(bound <= 1e37))
    return Status::range_error("a", "a and b are too large: max ‖row of a‖·‖column of b‖ = " + fmt(bound) +
                                        " could overflow float32; the limit is 1e37");

  // A in 4-row panels (the micro-kernel's broadcast operand). The micro-kernel reads B rows as vectors along
  // the output columns, so Bᵀ cannot be read in place: with transposeB each block of kColumns columns is
  // copied transposed into a [k × kColumns] tile first (k·kColumns floats, reused by every row of A).
  const std::size_t ap_size = kernels::packed_size(a.m, a.k);
  const std::size_t tile_size = a.transpose_b ? sat_mul(a.k, a.n < kColumns ? a.n : kColumns) : 0;
  Scratch ap(ap_size), tile(tile_size);
  if (!ap.ok_for(ap_size) || !tile.ok_for(tile_size)) return Status::no_memory("the matrix product");
  kern::pack_rows(a.m, a.k, a.a.data(), a.k, 1.0f, ap.data());

  for (std::size_t j0 = 0; j0 < a.n; j0 += kColumns) {
    const std::size_t cols = a.n - j0 < kColumns ? a.n - j0 : kColumns;
    const float* bb = a.b.data() + j0;
    std::size_t ldb = a.n;
    if (a.transpose_b) {
      float* t = tile.data();
      for (std::size_t j = 0; j < cols; ++j) {
        const float* row = a.b.data() + (j0 + j) * a.k;
        for (std::size_t p = 0; p < a.k; ++p) t[p * cols + j] = row[p];
      }
      bb = t, ldb = cols;
    }
    for (std::size_t p0 = 0; p0 < a.k; p0 += kDepth) {
      const std::size_t depth = a.k - p0 < kDepth ? a.k - p0 : kDepth;
      // Panel i0/4 of the packed A starts at i0·k; its terms from p0 on at + p0·4 (layout [k][4]).
      for (std::size_t i0 = 0; i0 < a.m; i0 += kernels::kPanelRows) {
        const std::size_t rows = a.m - i0 < kernels::kPanelRows ? a.m - i0 : kernels::kPanelRows;
        kern::gemm_packed(rows, cols, depth, ap.data() + i0 * a.k + p0 * kernels::kPanelRows, bb + p0 * ldb, ldb,
                          out.data() + i0 * a.n + j0, a.n, p0 > 0);
      }
    }
  }
  return Status::success();
}

}  // namespace attnlab
