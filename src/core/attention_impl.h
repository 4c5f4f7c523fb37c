// The attention kernels behind attention() and multi_head_attention(), on strided views so that a head
// can be read straight out of the projected Q/K/V and written straight into the concatenated output.
// Arguments are validated by the callers; these only compute.
#pragma once
#include <cstddef>

#include "status.h"

namespace attnlab::detail {

struct AttentionProblem {
  const float* q; std::size_t ldq;  // [nq×dk]
  const float* k; std::size_t ldk;  // [nk×dk]
  const float* v; std::size_t ldv;  // [nk×dv]
  std::size_t nq, nk, dk, dv;
  float scale;
  bool causal;
  const float* mask;                // [nq×nk] or null
  float* out; std::size_t ldo;      // [nq×dv]
  float* raw_scores;                // [nq×nk] or null
  float* scores;                    // [nq×nk] or null
  float* weights;                   // [nq×nk] or null
  float* lse = nullptr;             // [nq] log Σⱼ exp(scaled logit): the backward's saved statistic (−inf for a
                                    // row that sees no key); streaming path only, null = not wanted
};

// Last key index query i may see under the causal mask, plus one (0: the row sees nothing).
inline std::size_t causal_keys(std::size_t i, std::size_t nq, std::size_t nk) noexcept {
  // keys j ≤ i + nk − nq, computed without going negative
  return i + nk >= nq ? (i + nk - nq + 1 < nk ? i + nk - nq + 1 : nk) : 0;
}

Status attend_materialized(const AttentionProblem& p);
Status attend_streaming(const AttentionProblem& p);

// Rejects q/k whose scores could overflow float32 (Cauchy–Schwarz on row norms), before anything is written.
Status check_score_range(const AttentionProblem& p, const char* q_name, const char* k_name);

}  // namespace attnlab::detail
