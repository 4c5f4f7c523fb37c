// The attention backward kernel, on the same strided per-head views as attention_impl.h, so that the GPT can
// run it straight on its projected Q/K/V and its per-head gradient buffers. Arguments are validated by the callers.
#pragma once
#include <cstddef>
#include <cstdint>

#include "attention_impl.h"

#include "status.h"

namespace attnlab::detail {

struct AttentionGradProblem {
  const float* q; std::size_t ldq;      // [nq×dk]
  const float* k; std::size_t ldk;      // [nk×dk]
  const float* v; std::size_t ldv;      // [nk×dv]
  const float* o; std::size_t ldo;      // [nq×dv] the forward's output
  const float* d_o; std::size_t ld_do;  // [nq×dv] the loss's gradient with respect to it
  const float* lse;                     // [nq] the forward's log-sum-exp of each row (−inf: the row sees no key)
  std::size_t nq, nk, dk, dv;
  float scale;
  bool causal;                          // bottom-right aligned, as the forward
  const float* mask;                    // [nq×nk] additive, or null
  float* dq; std::size_t lddq;          // [nq×dk], overwritten
  float* dk_out; std::size_t lddk;      // [nk×dk]
  float* dv_out; std::size_t lddv;      // [nk×dv]
  bool accumulate_kv;                   // add into dk/dv instead of overwriting: the query heads of a GQA group
  // Optional [nq]: Σⱼ Pᵢⱼ of each row as recomputed (1 up to rounding when lse belongs to q and k; 0 for a row
  // that sees nothing), +inf for a row where lse lies below a logit (P would exceed 1). Lets a public entry point
  // reject an lse that does not match its inputs; rows flagged +inf contribute nothing.
  float* row_sums = nullptr;

  // The rest of the forward operator, with the meanings of AttentionProblem's fields (attention_impl.h); every
  // default keeps the meaning above.
  bool top_left = false;          // diagonal i' = i instead of i + kv_len − nq
  Window window{};                // keys i' − left … i' + right; −1 = unlimited
  std::size_t kv_len = SIZE_MAX;  // keys past this are not seen (keyLengths)
  float softcap = 0.0f;           // > 0: s = softcap·tanh(s/softcap) after the scale; dS gets the factor 1 − tanh²
  float alibi = 0.0f;             // this head's ALiBi slope: s −= slope·|i' − j| (0 = none)
  MaskView mask_view{};           // this head's broadcast mask (when `mask` is null)
};

// FlashAttention-2's backward: for each tile of keys and each block of query rows, recompute
// P = exp(S − lse) from the saved log-sum-exp, then dV += Pᵀ·dO, dP = dO·Vᵀ, dS = P∘(dP − D)(∘ softcap′) with
// D = rowsum(dO∘O), dQ += scale·dS·K, dK += scale·dSᵀ·Q. Scratch is O(tile·d) plus D [nq]; never nq×nk.
// A row whose lse is −inf gets dq = 0. Fails only when scratch cannot be allocated (nothing written then).
Status attend_backward(const AttentionGradProblem& p);

}  // namespace attnlab::detail
