// Argument checks shared by the ops. Each returns a Status whose message names the argument and
// states the expected and the actual value, in the words of the JS API. The checks every call makes (sizes, their
// products, window bounds) also have a predicate, for the code on every call's path: a Status and its strings are
// built only for an error, by the check_* function then.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "status.h"

namespace attnlab::detail {

// a·b into out; false when it does not fit in size_t (wasm32: 32 bits).
inline bool checked_mul(std::size_t a, std::size_t b, std::size_t& out) noexcept {
  if (a != 0 && b > SIZE_MAX / a) return false;
  out = a * b;
  return true;
}
// What check_count accepts: an integer from 1 to 2^31 − 1.
inline bool is_count(double v) noexcept { return v >= 1 && v <= 2147483647.0 && v == std::floor(v); }
// What check_window_bound accepts.
inline bool is_window_bound(double v) noexcept {
  return v == INFINITY || v == -1 || (v >= 0 && v == std::floor(v) && v < 9.007199254740992e15);
}

Status check_size(const char* name, std::size_t value);  // ≥ 1
// `want` elements, described as `shape` (e.g. "nq·dk = 3·4"); a null pointer with nonzero size is rejected.
Status check_length(const char* name, std::size_t got, std::size_t want, const std::string& shape);
Status check_positive_finite(const char* name, double value);
// A float option given as a JS number: finite, > 0, and still finite and > 0 as the float32 the engine computes with.
Status check_float32_positive(const char* name, double value, float& out);
// Every element finite; -inf additionally allowed when allow_neg_inf (logits and masks). A bad element is named
// by first_index plus its index in values.
Status check_values(const char* name, std::span<const float> values, bool allow_neg_inf, std::size_t first_index = 0);
// Product of sizes that must fit, for scratch and output lengths.
Status check_product(const char* what, std::size_t a, std::size_t b, std::size_t& out);

std::string fmt(double v);  // short, JS-like rendering of a number for messages


// A size given as a JS number (the package passes numbers as they are): an integer from 1 to 2^31 − 1.
Status check_count(std::string_view name, double value, std::size_t& out);
// One bound of a sliding window: an integer ≥ 0, or -1 / +Infinity for unlimited (→ -1).
Status check_window_bound(int index, double value, std::int64_t& out);

}  // namespace attnlab::detail
