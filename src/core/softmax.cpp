#include "softmax.h"

#include <cmath>

#include "kernels/kernels.h"
#include "rows.h"
#include "scratch.h"
#include "validate.h"

namespace attnlab {
namespace detail {

void softmax_row(const float* x, std::size_t n, float mul, bool log, float* out) noexcept {
  softmax_row_shifted(x, n, kernels::active::row_max(x, n), mul, log, out);
}

void softmax_row_shifted(const float* x, std::size_t n, float m, float mul, bool log, float* out) noexcept {
  namespace k = kernels::active;
  // Three passes (max; exp and sum; normalize): subtracting the max keeps every exp argument ≤ 0,
  // so no term overflows and the largest term is exactly 1, which bounds the sum below by 1.
  if (m == -INFINITY) {
    for (std::size_t j = 0; j < n; ++j) out[j] = log ? -INFINITY : 0.0f;
    return;
  }
  if (log) {
    const float log_sum = std::log(k::exp_shifted(x, n, m, mul, nullptr));
    for (std::size_t j = 0; j < n; ++j) out[j] = (x[j] - m) * mul - log_sum;  // -inf stays -inf
    return;
  }
  const float sum = k::exp_shifted(x, n, m, mul, out);
  k::scale(out, n, 1.0f / sum);
}

}  // namespace detail

Status check_softmax(const SoftmaxArgs& a, std::size_t out_size) {
  using namespace detail;
  if (!a.cols) return check_size("cols", a.cols);
  if (a.x.empty()) return Status::range_error("x", "x must hold at least one row of cols = " + std::to_string(a.cols) + " elements, got 0");
  if (a.x.size() % a.cols != 0)
    return Status::range_error("x", "x.length must be a multiple of cols = " + std::to_string(a.cols) + ", got " +
                                        std::to_string(a.x.size()));
  if (!(std::isfinite(a.temperature) && a.temperature > 0)) return check_positive_finite("temperature", a.temperature);
  const float temperature = static_cast<float>(a.temperature);
  if (!std::isfinite(temperature))
    return Status::range_error("temperature", "temperature must be within float32's range (at most 3.4e38), got " + fmt(a.temperature));
  if (!(temperature > 0.0f) || !std::isfinite(1.0f / temperature))
    return Status::range_error("temperature", "temperature must be at least 3e-39 (1/temperature must be finite), got " +
                                                  fmt(a.temperature));
  return out_size == a.x.size() ? Status::success() : check_length("out", out_size, a.x.size(), "x.length");
}

Status softmax(const SoftmaxArgs& a, std::span<float> out) {
  using namespace detail;
  if (auto s = check_softmax(a, out.size()); !s.ok()) return s;
  const float temperature = static_cast<float>(a.temperature);

  // Pass 1 finds each row's max and checks the values in the same read; only when every row is valid
  // does pass 2 write (out may alias x, and an error must leave out untouched).
  const float mul = 1.0f / temperature;
  const std::size_t rows = a.x.size() / a.cols;
  Scratch maxes(rows);
  if (!maxes.ok_for(rows)) return Status::no_memory("softmax row maxima");
  bool invalid = false;
  for (std::size_t r = 0; r < rows && !invalid; ++r)
    maxes.data()[r] = kernels::active::row_max_checked(a.x.data() + r * a.cols, a.cols, &invalid);
  if (invalid) return check_values("x", a.x, /*allow_neg_inf=*/true, a.first_index);  // names the first bad element
  for (std::size_t r = 0; r < rows; ++r)
    softmax_row_shifted(a.x.data() + r * a.cols, a.cols, maxes.data()[r], mul, a.log, out.data() + r * a.cols);
  return Status::success();
}

}  // namespace attnlab
