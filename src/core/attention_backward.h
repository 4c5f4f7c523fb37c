// The gradients of scaled dot-product attention, for one head: given the forward's inputs, its output and the
// log-sum-exp of each row (attention with `lse`), and dL/d output, returns dL/dq, dL/dk and dL/dv.
// The weights are recomputed tile by tile from lse (FlashAttention-2's backward): never an nq×nk matrix.
// Two entry points: one head with a causal flag and a dense mask (below), and the whole operator (further below).
#pragma once
#include <cstddef>
#include <optional>
#include <span>

#include "attention.h"
#include "status.h"

namespace attnlab {

struct AttentionBackwardArgs {
  std::span<const float> q, k, v;   // the forward's inputs: [nq×dk], [nk×dk], [nk×dv]; finite
  std::span<const float> output;    // [nq×dv] the forward's output; finite
  std::span<const float> lse;       // [nq] the forward's log Σⱼ exp(logitᵢⱼ); −inf for a row that sees no key
  std::span<const float> d_output;  // [nq×dv] dL/d output; finite
  std::size_t nq = 0, nk = 0, dk = 0, dv = 0;
  std::optional<float> scale;       // as the forward: finite, > 0; default 1/sqrt(dk)
  bool causal = false;              // as the forward (bottom-right aligned)
  std::span<const float> mask;      // as the forward: optional additive [nq×nk], −inf allowed
};

struct AttentionGradients {
  std::span<float> dq;  // [nq×dk]; a row that sees no key gets 0
  std::span<float> dk;  // [nk×dk]
  std::span<float> dv;  // [nk×dv]
};

// An lse that does not belong to q and k (a row's recomputed weights do not sum to 1), or gradients that
// overflow float32, are range errors. On error nothing is written.
Status attention_backward(const AttentionBackwardArgs& args, const AttentionGradients& grads);

// The whole operator's gradients (attention.h): what the forward saved, and the loss's gradient.
struct AttentionSaved {
  std::span<const float> output;    // the forward's output, [batch, heads, nq, dv] in the layout; finite
  std::span<const float> lse;       // [batch, heads, nq], the forward's log-sum-exp (returnLse); −inf: the row sees no key
  std::span<const float> d_output;  // dL/d output, shaped as output; finite
};

// `args` exactly as given to attention() — every option, validated by the same code with the same messages —
// except a cache: the backward takes explicit k and v. dq is shaped as q, dk as k, dv as v (in the layout); the
// gradient of a K/V head shared by several query heads is the sum over them. A row whose lse is −inf gets dq = 0
// and contributes nothing. The weights are recomputed tile by tile from lse: never an nq×nk matrix. An lse that
// does not belong to q and k, or gradients that overflow float32, are range errors; on error nothing is written.
Status attention_backward(const AttentionArgs& args, const AttentionSaved& saved, const AttentionGradients& grads);
// Every check the whole operator's attention_backward() makes that reads no tensor's values (sizes, lengths,
// options), as check_attention(): the tensors may be spans that carry their lengths alone, and an empty gradient is
// one the caller sizes afterwards from `shape` (dq as q, dk as k, dv as v).
Status check_attention_backward(const AttentionArgs& args, const AttentionSaved& saved, const AttentionGradients& grads,
                                AttentionShape& shape);

}  // namespace attnlab
