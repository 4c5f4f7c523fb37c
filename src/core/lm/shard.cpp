#include "shard.h"

namespace attnlab::lm {

namespace {

// Part `rank` of `units` units cut into `ranks` contiguous runs that differ by at most one unit.
Span cut(std::size_t units, std::size_t rank, std::size_t ranks) noexcept {
  return {units * rank / ranks, units * (rank + 1) / ranks};
}

// Rows [0, rows) in whole panels of 8 (the last one may be short).
Span panels(std::size_t rows, std::size_t rank, std::size_t ranks) noexcept {
  const Span p = cut((rows + 7) / 8, rank, ranks);
  const auto clip = [rows](std::size_t r) { return r < rows ? r : rows; };
  return {clip(p.begin * 8), clip(p.end * 8)};
}

}  // namespace

ShardPlan plan_shard(const LmConfig& c, std::size_t rank, std::size_t ranks) noexcept {
  ShardPlan p;
  p.rank = rank, p.ranks = ranks;
  p.kv_heads = cut(c.kv_heads, rank, ranks);
  const std::size_t group = c.heads / c.kv_heads;  // query heads per K/V head (the config checks it divides)
  p.heads = {p.kv_heads.begin * group, p.kv_heads.end * group};
  p.ffn = panels(c.ffn, rank, ranks);
  p.vocab = panels(c.vocab, rank, ranks);
  p.positions = c.family == Family::gpt2 ? cut(c.context, rank, ranks) : Span{0, 0};
  return p;
}

}  // namespace attnlab::lm
