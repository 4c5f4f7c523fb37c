// The small GPT's layers, each a forward and a backward over row-major float32 activations of `rows` tokens.
// Backward functions add into parameter gradients (they accumulate over a batch) and write or add the input's
// gradient as documented. Every hot loop is a SIMD kernel (kernels/) or the blocked GEMM (gemm_blocked.h);
// `scratch` is kGemmScratch floats. Sizes are validated by the model; these only compute.
#pragma once
#include <cstddef>
#include <cstdint>

#include "../status.h"

namespace attnlab::model {

inline constexpr float kLayerNormEps = 1e-5f;  // PyTorch's LayerNorm default, as nanoGPT

// Token plus position embedding: x[b·seq + t] = wte[tokens[b·seq + t]] + wpe[t] (no wpe: the token's row alone).
void embedding_forward(const std::int32_t* tokens, std::size_t batch, std::size_t seq, const float* wte, const float* wpe,
                       std::size_t d, float* x) noexcept;
// dwte[token] += dx, dwpe[t] += dx (dwpe may be null).
void embedding_backward(const std::int32_t* tokens, std::size_t batch, std::size_t seq, const float* dx, std::size_t d,
                        float* dwte, float* dwpe) noexcept;

// LayerNorm of each row (biased variance, eps 1e-5); keeps each row's mean and 1/σ for the backward. b may be null.
void layernorm_forward(const float* x, std::size_t rows, std::size_t d, const float* w, const float* b, float* y,
                       float* mean, float* rstd) noexcept;
// dx += ∂L/∂x; dw += Σ dy∘x̂; db += Σ dy (db may be null).
void layernorm_backward(const float* x, std::size_t rows, std::size_t d, const float* mean, const float* rstd,
                        const float* w, const float* dy, float* dx, float* dw, float* db) noexcept;

// y = x·W + b with W stored [in × out] (nn.Linear's weight transposed), b may be null; y += … when accumulate.
void linear_forward(const float* x, std::size_t rows, std::size_t in, std::size_t out, const float* w, const float* b,
                    float* y, bool accumulate, float* scratch) noexcept;
// dx = dy·Wᵀ (or += when accumulate_dx; dx may be null: not needed), dw += xᵀ·dy, db += Σ dy (db may be null).
void linear_backward(const float* x, const float* dy, std::size_t rows, std::size_t in, std::size_t out,
                     const float* w, float* dx, bool accumulate_dx, float* dw, float* db, float* scratch) noexcept;

// The exact GELU, x·Φ(x) (PyTorch's nn.GELU() default, as nanoGPT), and its backward dx = dy·GELU′(x).
void gelu_forward(const float* x, std::size_t n, float* y) noexcept;
void gelu_backward(const float* x, const float* dy, std::size_t n, float* dx) noexcept;

// nanoGPT's MLP: y = GELU(x·W_fc + b_fc)·W_proj + b_proj, hidden width 4·d. Keeps the pre- and post-GELU hidden
// activations [rows × 4d] for the backward.
struct MlpWeights {
  const float *fc_w, *fc_b, *proj_w, *proj_b;  // [d × 4d], [4d], [4d × d], [d]; biases may be null
};
struct MlpGrads {
  float *fc_w, *fc_b, *proj_w, *proj_b;
};
void mlp_forward(const float* x, std::size_t rows, std::size_t d, const MlpWeights& w, float* pre, float* act, float* y,
                 bool accumulate, float* scratch) noexcept;
// dx += ∂L/∂x (or = when !accumulate_dx); `hidden` is [rows × 4d] scratch.
void mlp_backward(const float* x, const float* pre, const float* act, const float* dy, std::size_t rows, std::size_t d,
                  const MlpWeights& w, const MlpGrads& g, float* dx, bool accumulate_dx, float* hidden,
                  float* scratch) noexcept;

// Causal multi-head self-attention over c_attn's output. qkv is [batch·seq × (heads + 2·kvHeads)·headDim]: each
// token's query heads, then its key heads, then its value heads (nanoGPT's split of c_attn); query head h reads
// key/value head h / (heads / kvHeads). out is [batch·seq × heads·headDim] (the heads side by side, before c_proj).
struct AttentionShape {
  std::size_t batch, seq, heads, kv_heads, head_dim;
  std::size_t width() const noexcept { return (heads + 2 * kv_heads) * head_dim; }
};
// lse [batch × heads × seq] is kept for the backward (may be null); weights [batch × heads × seq × seq], when not
// null, receives every head's attention weights (computed materialized).
Status attention_forward(const AttentionShape& s, const float* qkv, float* out, float* lse, float* weights);
// dqkv [batch·seq × width] is overwritten: a shared key/value head gets the sum over its query heads.
Status attention_backward(const AttentionShape& s, const float* qkv, const float* out, const float* lse,
                          const float* dout, float* dqkv);

// Cross-entropy of each row's softmax(logits) against its target (a target of −1 is ignored, as nanoGPT's
// ignore_index=-1). Returns the mean over counted rows (as a double) and their count; with `grad`, the logits
// are replaced in place by dL/dlogits of that mean (ignored rows: 0). row_loss, when not null, gets each
// row's loss (NaN for ignored rows). `normalizer` > 0 divides by that count instead of the rows' own (one part
// of a larger batch: dL/dlogits of the whole batch's mean); `sum` is the rows' losses summed, in double.
struct CrossEntropy {
  double mean;
  std::size_t count;
  double sum;
};
CrossEntropy cross_entropy(float* logits, const std::int32_t* targets, std::size_t rows, std::size_t vocab, bool grad,
                           float* row_loss, std::size_t normalizer = 0) noexcept;

}  // namespace attnlab::model
