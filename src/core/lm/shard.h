// A model cut across workers in Megatron's style (tensor parallelism): each of `ranks` shards holds a slice of every
// weight matrix, and one step runs on all of them at once, exchanging activations twice per layer.
//   attention: whole K/V heads with their query heads (a GQA group is never cut): q/k/v's rows of those heads,
//              the KV cache of those heads, and the output projection's columns that read them;
//   MLP:       a range of the hidden width: c_fc / gate / up's rows, c_proj / down's columns;
//   vocabulary: a range of the token embedding's rows (and of lm_head's, tied or not); GPT-2's position table
//              by a range of positions.
// Each block's output projection then gives every shard a partial sum of the same d_model floats per token: the
// shards add them up in rank order (reduce()), so every shard holds the same residual stream, bit for bit.
// Vectors of d_model (the norms' weights, the output projections' biases) are kept whole by every shard: 6 per
// layer, a few kB against a layer's megabytes. Ranges of rows come in whole panels of 8 (lm_kernels.h).
#pragma once
#include <cstddef>

#include "config.h"

namespace attnlab::lm {

struct Span {
  std::size_t begin = 0, end = 0;
  std::size_t size() const noexcept { return end - begin; }
  bool contains(std::size_t i) const noexcept { return i >= begin && i < end; }
};

// Rank `rank` of `ranks`: the slices it holds (heads and kv_heads in heads, the others in rows / positions).
struct ShardPlan {
  std::size_t rank = 0, ranks = 1;
  Span kv_heads, heads, ffn, vocab, positions;
  bool whole() const noexcept { return ranks == 1; }
};

// Most shards a model is cut into (the package's most workers).
inline constexpr std::size_t kMaxRanks = 256;

// The slices of rank `rank` < `ranks` ≤ kMaxRanks for a validated config: contiguous, in rank order, together the
// whole model; as even as whole K/V heads and whole panels allow (a shard may hold no head when kv_heads < ranks).
ShardPlan plan_shard(const LmConfig& c, std::size_t rank, std::size_t ranks) noexcept;

}  // namespace attnlab::lm
