#include "validate.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "kernels/kernels.h"

namespace attnlab::detail {

std::string fmt(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[32];
  // Integers as JS prints them (2147483648, not 2.14748365e+09), up to where JS switches to exponents.
  std::snprintf(buf, sizeof buf, v == std::floor(v) && std::fabs(v) < 1e21 ? "%.0f" : "%.9g", v);
  return buf;
}

Status check_size(const char* name, std::size_t value) {
  if (value >= 1) return Status::success();
  return Status::range_error(name, std::string(name) + " must be an integer >= 1, got 0");
}

Status check_length(const char* name, std::size_t got, std::size_t want, const std::string& shape) {
  if (got == want) return Status::success();
  return Status::range_error(name, std::string(name) + " must have " + shape + " = " + std::to_string(want) +
                                       " elements, got " + std::to_string(got));
}

Status check_positive_finite(const char* name, double value) {
  if (std::isfinite(value) && value > 0) return Status::success();
  return Status::range_error(name, std::string(name) + " must be finite and > 0, got " + fmt(value));
}

Status check_float32_positive(const char* name, double value, float& out) {
  if (auto s = check_positive_finite(name, value); !s.ok()) return s;
  out = static_cast<float>(value);
  if (out > 0.0f && std::isfinite(out)) return Status::success();
  return Status::range_error(name, std::string(name) + " must be within float32's range (1.4e-45 … 3.4e38), got " + fmt(value));
}

Status check_values(const char* name, std::span<const float> values, bool allow_neg_inf, std::size_t first_index) {
  const std::size_t i = kernels::active::first_invalid(values.data(), values.size(), allow_neg_inf);
  if (i < values.size()) {
    const float v = values[i];
    const char* allowed = allow_neg_inf ? "finite or -Infinity" : "finite";
    return Status::range_error(name, std::string(name) + "[" + std::to_string(first_index + i) + "] is " + fmt(v) + "; values must be " +
                                         allowed);
  }
  return Status::success();
}

Status check_count(std::string_view name, double value, std::size_t& out) {
  if (is_count(value)) {
    out = static_cast<std::size_t>(value);
    return Status::success();
  }
  // (the name becomes a string only for a message: sizes are checked on every call)
  const std::string n(name);
  if (!(value >= 1) || value != std::floor(value) || std::isinf(value))
    return Status::range_error(n, n + " must be an integer >= 1, got " + fmt(value));
  // Sizes from JS are int32-sized: nothing larger could fit wasm32 memory (2 GiB) anyway.
  return Status::range_error(n, n + " = " + fmt(value) + " is too large: sizes are at most 2^31 - 1");
}

Status check_window_bound(int index, double value, std::int64_t& out) {
  if (is_window_bound(value)) {
    out = value == INFINITY || value == -1 ? -1 : static_cast<std::int64_t>(value);
    return Status::success();
  }
  return Status::range_error("window", "window[" + std::to_string(index) +
                                           "] must be an integer >= 0, or -1 / Infinity for unlimited, got " + fmt(value));
}

Status check_product(const char* what, std::size_t a, std::size_t b, std::size_t& out) {
  if (checked_mul(a, b, out)) return Status::success();
  return Status::range_error(what, std::string(what) + " is too large: " + std::to_string(a) + " x " +
                                       std::to_string(b) + " elements do not fit in memory");
}

}  // namespace attnlab::detail
