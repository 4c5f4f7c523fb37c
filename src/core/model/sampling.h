// Picking the next token from a row of logits: greedy, or sampled at a temperature among the top k and the top p.
#pragma once
#include <cstddef>
#include <cstdint>

#include "random.h"

namespace attnlab::model {

// temperature 0: the index of the first largest logit. Otherwise softmax(logits / temperature) restricted to the
// top_k largest logits (0 = all; ties with the k-th are kept, as nanoGPT's generate), then, when top_p < 1, to the
// most likely tokens whose probabilities before them sum to less than top_p (Hugging Face's nucleus: the smallest
// such set holding at least top_p; ties with the last one kept), sampled with rng.
// `scratch` holds 2·vocab floats, 3·vocab when top_p < 1. Logits must be finite.
std::int32_t sample_token(const float* logits, std::size_t vocab, float temperature, std::size_t top_k, Rng& rng,
                          float* scratch, float top_p = 1.0f) noexcept;

// The index of the first largest of x[0..n) (n ≥ 1, no NaN), as std::max_element gives it.
std::size_t first_max(const float* x, std::size_t n) noexcept;

// The k-th largest of x[0..n), duplicates counted (1 ≤ k ≤ n, no NaN): what nth_element would put at k − 1 of a
// copy sorted largest first. `heap` holds k floats of scratch.
float kth_largest(const float* x, std::size_t n, std::size_t k, float* heap) noexcept;

// The nucleus's smallest probability (0 when p has no positive entry): p's entries most likely first, kept while the
// sum before them is below top_p. `order` holds vocab entries of scratch, `heap` vocab floats.
float nucleus_floor(const float* p, std::size_t vocab, float top_p, std::uint32_t* order, float* heap) noexcept;

}  // namespace attnlab::model
