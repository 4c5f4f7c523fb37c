// Row-level softmax shared by softmax() and attention: one place defines -inf and all-masked handling.
#pragma once
#include <cstddef>

namespace attnlab::detail {

// out = softmax(x · mul) over n entries (or log-softmax). x may equal out.
// Entries of -inf get exactly 0 (log: -inf); a row that is all -inf gives all 0 (log: all -inf).
void softmax_row(const float* x, std::size_t n, float mul, bool log, float* out) noexcept;
// The same with the row's max m already known.
void softmax_row_shifted(const float* x, std::size_t n, float m, float mul, bool log, float* out) noexcept;

}  // namespace attnlab::detail
