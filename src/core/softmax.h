// Row-wise softmax and log-softmax over a row-major [rows × cols] float32 matrix.
#pragma once
#include <cstddef>
#include <span>

#include "status.h"

namespace attnlab {

struct SoftmaxArgs {
  std::span<const float> x;  // rows·cols logits; -inf allowed (probability exactly 0); NaN/+inf rejected
  std::size_t cols = 0;      // row length ≥ 1; rows = x.size() / cols
  double temperature = 1.0;  // finite, > 0, ≥ 3e-39 (1/temperature finite in float32): softmax(x / temperature)
  bool log = false;          // log-softmax instead (an all -inf row gives all -inf)
  std::size_t first_index = 0;  // index of x[0] in the caller's array, for error messages (a chunk of a larger x)
};

// out.size() must equal x.size(). out may alias x (in place). On error nothing is written.
// A row that is all -inf yields all zeros (softmax) — never NaN.
Status softmax(const SoftmaxArgs& args, std::span<float> out);
// Every check softmax() makes that reads no value of x: cols, the length, temperature, out's length (out_size).
Status check_softmax(const SoftmaxArgs& args, std::size_t out_size);

}  // namespace attnlab
