// Rotary position embedding (RoPE) of query/key heads, as ONNX's RotaryEmbedding (opset 23) and Hugging Face's
// apply_rotary_pos_emb compute it. Each head vector's first rotary_dim entries form rotary_dim/2 pairs; pair i at
// position p is rotated by θ = p·base^(−2i/rotary_dim):
//   (a, b) → (a·cos θ − b·sin θ,  b·cos θ + a·sin θ)
// The pairs are (i, i + rotary_dim/2) by default (half-split: HF's rotate_half, GPT-NeoX, LLaMA) or (2i, 2i+1)
// with `interleaved` (GPT-J, the RoFormer paper). Entries past rotary_dim pass through unchanged.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "status.h"

namespace attnlab {

enum class RopeLayout : unsigned char {
  bhsd = 0,  // x is [batch, heads, seq, dk]
  bshd = 1,  // x is [batch, seq, heads, dk] (also the packed [batch, seq, heads·dk] of model code and ONNX's 3-D input)
};

struct RopeArgs {
  // Finite, and max|x|·(|cos| + |sin|) ≤ 1e38 so that no rotated value overflows (|cos| + |sin| ≤ √2 for
  // computed angles: max|x| ≤ 7e37). seq = x.size() / (batch·heads·dk).
  std::span<const float> x;
  std::size_t batch = 1, heads = 1, dk = 0;  // each ≥ 1
  RopeLayout layout = RopeLayout::bhsd;
  // Positions, integers ≥ 0: `positions` is [batch·seq] (row b = item b) or [seq] (shared by every item);
  // `offset` holds 1 value (every item) or `batch` values, item b then at offset[b] … offset[b] + seq − 1.
  // At most one of the two; both empty means positions 0 … seq − 1.
  std::span<const std::int32_t> positions;
  std::span<const std::int32_t> offset;
  std::optional<double> base;  // finite, ≥ 1; default 10000; only without cos/sin (which replace the angles)
  std::size_t rotary_dim = 0;  // even, 2 … dk; 0 means dk
  bool interleaved = false;    // pairs (2i, 2i+1) instead of (i, i + rotary_dim/2)
  // Optional tables, both or neither, each [max_position × rotary_dim/2] (ONNX's cos_cache / sin_cache): row p
  // holds cos/sin of pair i's angle at position p. They replace the computed angles (YaRN-style scaled tables
  // work as given); every position must then be < max_position. Finite values.
  std::span<const float> cos, sin;
  bool inverse = false;  // rotate by −θ: the transpose of the rotation, which undoes it and is its backward
};

// out.size() must equal x.size(); out may alias x (in place). On error nothing is written.
//
// Computed angles: θ = p·fᵢ with fᵢ = base^(−2i/rotary_dim), then cos θ and sin θ, all in double (rope_math.h),
// each rounded once to float. Every table entry is within float32 rounding (0.5 ulp) plus
// η = (4·ln base + 5)·2⁻⁵³·θ + 16·2⁻⁵³ of the exact cos/sin (the double roundings of ln base, the exponent,
// exp, p·fᵢ, the reduction by π/2, the polynomials and the angle-sum formula rope.cpp uses); at p = 100 000
// and base 10 000, η = 4.6e−10, under 1/60 of the float32 rounding (≤ 3e−8): the entries are the exact values
// rounded once but for near-ties; up to position 10⁶ every entry is within 2⁻²⁴ of exact (rope_test.cpp checks
// both). θ computed in float32, as HF does, is off by up to p·2⁻²⁴ ≈ 6e−3 rad at p = 100 000.
// A position's entries do not depend on the call: a decode step sees the bits a prefill saw.
Status rope(const RopeArgs& args, std::span<float> out);
// Every check rope() makes that reads no value of x, the positions or the tables: sizes, lengths, options.
Status check_rope(const RopeArgs& args, std::size_t out_size);

}  // namespace attnlab
