// Scaled dot-product attention: out = softmax(mask(scale · Q·Kᵀ)) · V, row-major float32.
#pragma once
#include <cstddef>
#include <optional>
#include <span>

#include "status.h"

namespace attnlab {

enum class AttentionPath {
  automatic,     // streaming unless scores or weights are requested
  materialized,  // builds the nq×nk score matrix
  streaming,     // online softmax over tiles of K/V: memory O(tile·d), never nq×nk
};

struct AttentionArgs {
  std::span<const float> q, k, v;  // [nq×dk], [nk×dk], [nk×dv]; finite
  std::size_t nq = 0, nk = 0, dk = 0, dv = 0;
  std::optional<float> scale;      // finite, > 0; default 1/sqrt(dk)
  bool causal = false;             // query i sees keys j ≤ i + nk − nq (bottom-right aligned)
  std::span<const float> mask;     // optional additive [nq×nk]; -inf allowed, NaN/+inf rejected
  AttentionPath path = AttentionPath::automatic;
};

struct AttentionOutputs {
  std::span<float> out;         // [nq×dv], required
  std::span<float> raw_scores;  // [nq×nk] Q·Kᵀ, optional (empty = not wanted)
  std::span<float> scores;      // [nq×nk] scale·Q·Kᵀ + mask, -inf where masked, optional
  std::span<float> weights;     // [nq×nk] softmax rows, optional
};

// A query row whose keys are all masked gets zero weights and a zero output row.
// On error nothing is written to any output.
Status attention(const AttentionArgs& args, const AttentionOutputs& outputs);

}  // namespace attnlab
