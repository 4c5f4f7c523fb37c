#include "layers.h"

#include <cmath>
#include <cstring>

#include "../attention_backward_impl.h"
#include "../attention_impl.h"
#include "../kernels/kernels.h"
#include "../kernels/training.h"
#include "../gemm_blocked.h"

namespace attnlab::model {

namespace kern = kernels::active;

void embedding_forward(const std::int32_t* tokens, std::size_t batch, std::size_t seq, const float* wte, const float* wpe,
                       std::size_t d, float* x) noexcept {
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t t = 0; t < seq; ++t) {
      float* row = x + (b * seq + t) * d;
      std::memcpy(row, wte + std::size_t(tokens[b * seq + t]) * d, d * sizeof(float));
      if (wpe) kern::axpy(d, 1.0f, wpe + t * d, row);
    }
}

void embedding_backward(const std::int32_t* tokens, std::size_t batch, std::size_t seq, const float* dx, std::size_t d,
                        float* dwte, float* dwpe) noexcept {
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t t = 0; t < seq; ++t) {
      const float* g = dx + (b * seq + t) * d;
      kern::axpy(d, 1.0f, g, dwte + std::size_t(tokens[b * seq + t]) * d);
      if (dwpe) kern::axpy(d, 1.0f, g, dwpe + t * d);
    }
}

void layernorm_forward(const float* x, std::size_t rows, std::size_t d, const float* w, const float* b, float* y,
                       float* mean, float* rstd) noexcept {
  for (std::size_t r = 0; r < rows; ++r) kern::layernorm_row(x + r * d, d, w, b, kLayerNormEps, y + r * d, mean + r, rstd + r);
}

void layernorm_backward(const float* x, std::size_t rows, std::size_t d, const float* mean, const float* rstd,
                        const float* w, const float* dy, float* dx, float* dw, float* db) noexcept {
  for (std::size_t r = 0; r < rows; ++r)
    kern::layernorm_backward_row(x + r * d, d, mean[r], rstd[r], w, dy + r * d, dx + r * d, dw, db);
}

void linear_forward(const float* x, std::size_t rows, std::size_t in, std::size_t out, const float* w, const float* b,
                    float* y, bool accumulate, float* scratch) noexcept {
  gemm_blocked(Op::n, Op::n, rows, out, in, x, in, w, out, y, out, accumulate, scratch);
  if (b)
    for (std::size_t r = 0; r < rows; ++r) kern::axpy(out, 1.0f, b, y + r * out);
}

void linear_backward(const float* x, const float* dy, std::size_t rows, std::size_t in, std::size_t out,
                     const float* w, float* dx, bool accumulate_dx, float* dw, float* db, float* scratch) noexcept {
  // W is [in × out]: as the right operand of dy·Wᵀ it is stored [n × k], so Op::t.
  if (dx) gemm_blocked(Op::n, Op::t, rows, in, out, dy, out, w, out, dx, in, accumulate_dx, scratch);
  gemm_blocked(Op::t, Op::n, in, out, rows, x, in, dy, out, dw, out, true, scratch);  // xᵀ·dy, x stored [rows × in]
  if (db) kern::col_sum(rows, out, dy, out, db);
}

void gelu_forward(const float* x, std::size_t n, float* y) noexcept { kern::gelu(x, n, y); }
void gelu_backward(const float* x, const float* dy, std::size_t n, float* dx) noexcept { kern::gelu_backward(x, dy, n, dx); }

void mlp_forward(const float* x, std::size_t rows, std::size_t d, const MlpWeights& w, float* pre, float* act, float* y,
                 bool accumulate, float* scratch) noexcept {
  linear_forward(x, rows, d, 4 * d, w.fc_w, w.fc_b, pre, false, scratch);
  gelu_forward(pre, rows * 4 * d, act);
  linear_forward(act, rows, 4 * d, d, w.proj_w, w.proj_b, y, accumulate, scratch);
}

void mlp_backward(const float* x, const float* pre, const float* act, const float* dy, std::size_t rows, std::size_t d,
                  const MlpWeights& w, const MlpGrads& g, float* dx, bool accumulate_dx, float* hidden,
                  float* scratch) noexcept {
  linear_backward(act, dy, rows, 4 * d, d, w.proj_w, hidden, false, g.proj_w, g.proj_b, scratch);
  gelu_backward(pre, hidden, rows * 4 * d, hidden);
  linear_backward(x, hidden, rows, d, 4 * d, w.fc_w, dx, accumulate_dx, g.fc_w, g.fc_b, scratch);
}

Status attention_forward(const AttentionShape& s, const float* qkv, float* out, float* lse, float* weights) {
  const std::size_t w = s.width(), dh = s.head_dim, group = s.heads / s.kv_heads, od = s.heads * dh;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  for (std::size_t b = 0; b < s.batch; ++b) {
    const float* base = qkv + b * s.seq * w;
    for (std::size_t h = 0; h < s.heads; ++h) {
      const std::size_t g = h / group;
      detail::AttentionProblem p{base + h * dh, w, base + (s.heads + g) * dh, w, base + (s.heads + s.kv_heads + g) * dh,
                                 w, s.seq, s.seq, dh, dh, scale, true, nullptr, out + b * s.seq * od + h * dh, od,
                                 nullptr, nullptr, weights ? weights + (b * s.heads + h) * s.seq * s.seq : nullptr};
      p.lse = lse ? lse + (b * s.heads + h) * s.seq : nullptr;
      if (auto st = weights ? detail::attend_materialized(p) : detail::attend_streaming(p); !st.ok()) return st;
    }
  }
  return Status::success();
}

Status attention_backward(const AttentionShape& s, const float* qkv, const float* out, const float* lse,
                          const float* dout, float* dqkv) {
  const std::size_t w = s.width(), dh = s.head_dim, group = s.heads / s.kv_heads, od = s.heads * dh;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  for (std::size_t b = 0; b < s.batch; ++b) {
    const float* base = qkv + b * s.seq * w;
    float* dbase = dqkv + b * s.seq * w;
    for (std::size_t h = 0; h < s.heads; ++h) {
      const std::size_t g = h / group;
      const std::size_t ko = (s.heads + g) * dh, vo = (s.heads + s.kv_heads + g) * dh;
      detail::AttentionGradProblem p{base + h * dh, w, base + ko, w, base + vo, w,
                                     out + b * s.seq * od + h * dh, od, dout + b * s.seq * od + h * dh, od,
                                     lse + (b * s.heads + h) * s.seq, s.seq, s.seq, dh, dh, scale, true, nullptr,
                                     dbase + h * dh, w, dbase + ko, w, dbase + vo, w, h % group != 0};
      if (auto st = detail::attend_backward(p); !st.ok()) return st;
    }
  }
  return Status::success();
}

CrossEntropy cross_entropy(float* logits, const std::int32_t* targets, std::size_t rows, std::size_t vocab, bool grad,
                           float* row_loss, std::size_t normalizer) noexcept {
  std::size_t count = 0;
  for (std::size_t r = 0; r < rows; ++r) count += targets[r] >= 0;
  const std::size_t divisor = normalizer ? normalizer : count;
  const float inv_count = divisor ? 1.0f / static_cast<float>(divisor) : 0.0f;
  double total = 0.0;
  for (std::size_t r = 0; r < rows; ++r) {
    float* row = logits + r * vocab;
    const std::int32_t t = targets[r];
    if (t < 0) {
      if (grad) std::memset(row, 0, vocab * sizeof(float));
      if (row_loss) row_loss[r] = NAN;
      continue;
    }
    const float m = kern::row_max(row, vocab), target_logit = row[t];
    const float sum = kern::exp_shifted(row, vocab, m, 1.0f, grad ? row : nullptr);
    const double loss = (double(m) - double(target_logit)) + std::log(double(sum));  // lse − logit[target]
    total += loss;
    if (row_loss) row_loss[r] = static_cast<float>(loss);
    if (grad) {  // (softmax − one-hot) / count
      kern::scale(row, vocab, inv_count / sum);
      row[t] -= inv_count;
    }
  }
  return {count ? total / double(count) : NAN, count, total};
}

}  // namespace attnlab::model
