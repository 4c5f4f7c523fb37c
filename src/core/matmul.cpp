#include "matmul.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <utility>

#include "format.h"
#include "gemm_blocked.h"
#include "scratch.h"
#include "validate.h"

namespace attnlab {
namespace {

using namespace detail;

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

Status check_matmul(const MatmulArgs& a, std::size_t out_size) {
  for (auto [name, value] : {std::pair{"m", a.m}, {"k", a.k}, {"n", a.n}})
    if (!value) return check_size(name, value);
  // (messages only on failure: every call is checked twice in the package)
  auto dims = [](std::size_t x, std::size_t y, const char* names) { return format("%s = %zu·%zu", names, x, y); };
  std::size_t a_len, b_len, out_len;
  for (auto [tensor, x, y, names, len] : {std::tuple{"a", a.m, a.k, "m·k", &a_len}, {"b", a.k, a.n, "k·n", &b_len},
                                          {"out", a.m, a.n, "m·n", &out_len}})
    if (!checked_mul(x, y, *len))
      return range_errorf(tensor, "%s is too large: %s elements would not fit in memory", tensor, dims(x, y, names).c_str());
  if (a.a.size() != a_len) return check_length("a", a.a.size(), a_len, dims(a.m, a.k, "m·k"));
  if (a.b.size() != b_len)
    return check_length("b", a.b.size(), b_len, a.transpose_b ? dims(a.n, a.k, "n·k") : dims(a.k, a.n, "k·n"));
  if (out_size != out_len) return check_length("out", out_size, out_len, dims(a.m, a.n, "m·n"));
  return Status::success();
}

Status matmul(const MatmulArgs& a, std::span<float> out) {
  if (auto s = check_matmul(a, out.size()); !s.ok()) return s;
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

  // The blocked GEMM the model's layers use: fixed scratch (A's blocks packed, Bᵀ's blocks transposed into it).
  Scratch scratch(kGemmScratch);
  if (!scratch.ok_for(kGemmScratch)) return Status::no_memory("the matrix product");
  gemm_blocked(Op::n, a.transpose_b ? Op::t : Op::n, a.m, a.n, a.k, a.a.data(), a.k, a.b.data(), a.transpose_b ? a.k : a.n,
               out.data(), a.n, false, scratch.data());
  return Status::success();
}

}  // namespace attnlab
