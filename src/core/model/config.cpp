#include "config.h"

#include <string>
#include <utility>

#include "../format.h"
#include "../size_math.h"
#include "params.h"

namespace attnlab::model {

const char* position_name(Position p) noexcept { return p == Position::rope ? "rope" : "learned"; }

namespace {

// Floats of one sequence's training activations at full context, with batch 1 (see gpt.cpp's Activations):
// a generous count, so that a config whose first step cannot fit is refused up front.
std::size_t activation_floats(const GPTConfig& c) {
  const std::size_t t = c.context, d = c.d_model;
  const std::size_t per_layer = sat_mul(t, sat_mul(d, 16) + c.qkv_width() + 4 + 2 * c.heads);
  return sat_mul(per_layer, c.layers) + sat_mul(t, sat_mul(c.vocab_size, 2) + sat_mul(d, 8));
}

std::size_t model_bytes(const GPTConfig& c) {
  const std::size_t params = parameter_count(c);
  // parameters, gradients, two Adam moments, the activations, and the KV cache
  const std::size_t kv = sat_mul(sat_mul(2 * c.layers, c.context), c.kv() * c.head_dim());
  std::size_t floats = sat_mul(params, 4);
  for (std::size_t add : {activation_floats(c), kv}) floats = floats > SIZE_MAX - add ? SIZE_MAX : floats + add;
  return sat_mul(floats, sizeof(float));
}

}  // namespace

Status validate_config(const GPTConfig& c) {
  for (auto [name, value] : {std::pair{"vocabSize", c.vocab_size}, {"context", c.context}, {"dModel", c.d_model},
                             {"heads", c.heads}, {"layers", c.layers}})
    if (value < 1) return detail::range_errorf(name, "%s must be an integer >= 1, got 0", name);
  if (c.d_model % c.heads != 0)
    return detail::range_errorf("heads", "dModel = %zu must be a multiple of heads = %zu", c.d_model, c.heads);
  const std::size_t kv = c.kv();
  if (kv > c.heads || c.heads % kv != 0)
    return detail::range_errorf("kvHeads", "kvHeads must divide heads = %zu, got %zu", c.heads, kv);
  if (c.position == Position::rope && c.head_dim() % 2 != 0)
    return detail::range_errorf("position", "position 'rope' rotates pairs of channels: the head width dModel / heads = %zu must be even",
                                c.head_dim());
  // The module's memory grows to 2 GiB at most: refuse what cannot fit, naming the argument that makes it so —
  // the first of context, vocabSize, layers whose reduction to 1 alone would make it fit, else dModel.
  constexpr std::size_t kLimit = std::size_t{1} << 31;
  if (model_bytes(c) > kLimit) {
    struct Knob { const char* name; std::size_t GPTConfig::*field; };
    const char* culprit = "dModel";
    std::size_t value = c.d_model;
    for (Knob k : {Knob{"context", &GPTConfig::context}, {"vocabSize", &GPTConfig::vocab_size}, {"layers", &GPTConfig::layers}}) {
      GPTConfig smaller = c;
      smaller.*k.field = 1;
      if (model_bytes(smaller) <= kLimit) {
        culprit = k.name, value = c.*k.field;
        break;
      }
    }
    return detail::range_errorf(culprit, "%s = %zu makes the model too large: its parameters, gradients, optimizer state and "
                                         "one full-context training sequence need more than 2 GiB", culprit, value);
  }
  return Status::success();
}

}  // namespace attnlab::model
