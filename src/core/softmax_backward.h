// The gradient of row-wise softmax (or log-softmax) with respect to its logits, from the forward's output.
#pragma once
#include <cstddef>
#include <span>

#include "status.h"

namespace attnlab {

struct SoftmaxBackwardArgs {
  std::span<const float> y;   // the forward's output, rows·cols: probabilities in [0, 1] (log: ≤ 0 or −inf)
  std::span<const float> dy;  // dL/dy, same length; finite
  std::size_t cols = 0;       // row length ≥ 1
  float temperature = 1.0f;   // as the forward: y = softmax(x / temperature)
  bool log = false;           // y is log-softmax
};

// dx = (y∘(dy − Σ y∘dy)) / temperature, or for log-softmax (dy − exp(y)·Σ dy) / temperature, row by row.
// A row the forward saw entirely masked (all 0, or all −inf for log) gets dx = 0. dx may alias dy.
// On error nothing is written.
Status softmax_backward(const SoftmaxBackwardArgs& args, std::span<float> dx);
// Every check softmax_backward() makes that reads no value of y or dy: cols, the lengths, temperature, dx's length.
Status check_softmax_backward(const SoftmaxBackwardArgs& args, std::size_t dx_size);

}  // namespace attnlab
