#include "softmax_backward.h"

#include <cmath>
#include <string>

#include "kernels/kernels.h"
#include "kernels/training.h"
#include "format.h"
#include "validate.h"

namespace attnlab {

Status check_softmax_backward(const SoftmaxBackwardArgs& a, std::size_t dx_size) {
  using namespace detail;
  if (!a.cols) return check_size("cols", a.cols);
  if (a.y.empty()) return range_errorf("y", "y must hold at least one row of cols = %zu elements, got 0", a.cols);
  if (a.y.size() % a.cols != 0)
    return range_errorf("y", "y.length must be a multiple of cols = %zu, got %zu", a.cols, a.y.size());
  if (a.dy.size() != a.y.size()) return check_length("dy", a.dy.size(), a.y.size(), "y.length");
  if (!(std::isfinite(a.temperature) && a.temperature > 0)) return check_positive_finite("temperature", a.temperature);
  if (!std::isfinite(1.0f / a.temperature))
    return range_errorf("temperature", "temperature must be at least 3e-39 (1/temperature must be finite), got %s",
                        fmt(a.temperature).c_str());
  return dx_size == a.y.size() ? Status::success() : check_length("dx", dx_size, a.y.size(), "y.length");
}

Status softmax_backward(const SoftmaxBackwardArgs& a, std::span<float> dx) {
  using namespace detail;
  namespace kern = kernels::active;
  if (auto s = check_softmax_backward(a, dx.size()); !s.ok()) return s;
  if (auto s = check_values("y", a.y, a.log); !s.ok()) return s;
  if (auto s = check_values("dy", a.dy, false); !s.ok()) return s;
  // The output of a softmax lies in [0, 1], of a log-softmax in [−inf, 0]: anything else is not y (logits?).
  for (std::size_t i = 0; i < a.y.size(); ++i) {
    const float y = a.y[i];
    if (a.log ? y > 0.0f : (y < 0.0f || y > 1.0f))
      return range_errorf("y", "y[%zu] is %s; y must be the forward's output, %s", i, fmt(y).c_str(),
                          a.log ? "log-probabilities ≤ 0" : "probabilities in [0, 1]");
  }

  const float mul = 1.0f / a.temperature;
  const std::size_t rows = a.y.size() / a.cols;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* y = a.y.data() + r * a.cols;
    const float* g = a.dy.data() + r * a.cols;
    float* out = dx.data() + r * a.cols;
    if (a.log) {
      if (kern::row_max(y, a.cols) == -INFINITY) {  // all masked: no logit moves any output
        for (std::size_t j = 0; j < a.cols; ++j) out[j] = 0.0f;
        continue;
      }
      kern::log_softmax_grad(y, g, a.cols, kern::sum(g, a.cols), mul, out);
    } else {
      kern::mul_diff(y, g, a.cols, kern::dot(y, g, a.cols), mul, out);
    }
  }
  return Status::success();
}

}  // namespace attnlab
