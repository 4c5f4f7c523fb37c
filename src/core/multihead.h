// Multi-head attention with optional grouped-query (kv_heads < heads) sharing of K/V heads.
#pragma once
#include <cstddef>
#include <optional>
#include <span>

#include "attention.h"
#include "status.h"

namespace attnlab {

struct MultiHeadArgs {
  std::span<const float> x;  // [n×d_model]
  std::size_t n = 0, d_model = 0;
  std::size_t heads = 0;
  std::size_t kv_heads = 0;  // 0 → heads; heads must be a multiple of kv_heads
  std::size_t dk = 0, dv = 0;  // 0 → d_model / heads (which must then divide evenly)
  std::span<const float> wq;   // [d_model × heads·dk]    head h = columns h·dk … h·dk+dk−1
  std::span<const float> wk;   // [d_model × kv_heads·dk]
  std::span<const float> wv;   // [d_model × kv_heads·dv]
  std::span<const float> wo;   // [heads·dv × d_model]
  std::optional<double> scale;  // finite, > 0, representable in float32; default 1/sqrt(dk)
  bool causal = false;
  std::span<const float> mask;  // optional additive [n×n], shared by every head
};

// Query head h reads K/V head h / (heads / kv_heads).
struct MultiHeadOutputs {
  std::span<float> out;      // [n×d_model], required
  // Intermediates, each optional (empty = not wanted):
  std::span<float> q;        // [n × heads·dk]     X·Wq
  std::span<float> k;        // [n × kv_heads·dk]  X·Wk
  std::span<float> v;        // [n × kv_heads·dv]  X·Wv
  std::span<float> scores;   // [heads × n × n]    scaled + masked logits per head
  std::span<float> weights;  // [heads × n × n]    softmax rows per head
  std::span<float> concat;   // [n × heads·dv]     head outputs side by side, before W_o
};

// Resolved sizes (defaults applied) so callers can size their outputs; fails like multi_head_attention.
struct MultiHeadDims {
  std::size_t heads, kv_heads, dk, dv;
};
Status multi_head_dims(const MultiHeadArgs& args, MultiHeadDims& dims);
// The lengths every tensor of a call must have (matrix: heads·n·n, when scores or weights are wanted or a mask is
// given, else 0; mask: n·n then). Fails like multi_head_attention on sizes; reads no tensor.
struct MultiHeadLengths {
  std::size_t x, wq, wk, wv, wo, mask, out, q, k, v, concat, matrix;
};
Status multi_head_lengths(const MultiHeadArgs& args, bool wants_matrix, MultiHeadDims& dims, MultiHeadLengths& lengths);
// Every check multi_head_attention() makes that reads no tensor's values: sizes, lengths, scale.

Status check_multi_head_attention(const MultiHeadArgs& args, const MultiHeadOutputs& outputs);
Status multi_head_attention(const MultiHeadArgs& args, const MultiHeadOutputs& outputs);

}  // namespace attnlab
