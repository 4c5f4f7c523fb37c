// The attention kernels behind attention() and multi_head_attention(), on strided views so that a head
// can be read straight out of the projected Q/K/V and written straight into the concatenated output.
// Arguments are validated by the callers; these only compute.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "attention.h"
#include "scratch.h"
#include "status.h"

namespace attnlab::detail {

// A mask broadcast over one head's [nq × nk] scores: entry (i, j) at data + i·row_stride + j·col_stride
// (strides 0 where a dimension is broadcast), keys j ≥ keys are masked. Exactly one of add / keep is set.
struct MaskView {
  const float* add = nullptr;          // additive
  const std::uint8_t* keep = nullptr;  // boolean: 0 = masked
  std::size_t row_stride = 0, col_stride = 0;
  std::size_t keys = SIZE_MAX;         // keys past this are masked (a mask shorter than nk)
  std::size_t head_stride = 0;         // from one folded head to the next (see Fold)
  explicit operator bool() const noexcept { return add || keep; }
};

// Several query heads over the same K/V head, as one problem (grouped-query attention): rows
// r = i·heads + h, so the rows of one query position are adjacent and share one visible key range, and a
// 4-row panel of the GEMMs holds the queries of up to four heads. q row r is at q + i·ldq + h·q_stride, its
// output at out + i·ldo + h·o_stride, its lse at lse + h·nq + i. heads = 1 is an ordinary head.
struct Fold {
  std::size_t heads = 1;
  std::size_t q_stride = 0, o_stride = 0;
};

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
  float* lse = nullptr;             // [nq] log Σⱼ exp(final logit) of each row: the backward's saved statistic (−inf
                                    // for a row that sees no key); null = not wanted

  // The whole operator; every default keeps the meaning above.
  bool top_left = false;            // diagonal i' = i instead of i + kv_len − nq
  Window window{};                  // keys i' − left … i' + right; −1 = unlimited
  std::size_t kv_len = SIZE_MAX;    // keys past this are not seen (keyLengths); the bottom-right diagonal uses it
  float softcap = 0.0f;             // > 0: s = softcap·tanh(s/softcap) after the scale
  const float* alibi = nullptr;     // slope per folded head: s −= slope·|i' − j|
  MaskView mask_view{};             // a broadcast mask (when `mask` is null)
  const float* k_packed = nullptr;  // K already packed by key tile (pack_keys' layout: a KV cache); k unused
  double q_norm = -1.0;             // largest ‖q row‖ when the caller knows it (else computed)
  Fold fold{};                      // query heads sharing this K/V head (streaming only)
  // Part of a longer query sequence (a call cut by query rows): row i is query position row0 + i of seq_q
  // positions (0 = nq), which is what the causal and window diagonals and ALiBi measure from.
  std::size_t row0 = 0, seq_q = 0;
};

// Keys j ∈ [lo, hi) of the problem's query row i (position row0 + i) are seen: causal, window, key length and a short mask together.
struct KeySpan {
  std::size_t lo, hi;
};
KeySpan row_key_span(const AttentionProblem& p, std::size_t i) noexcept;

// The rules that hide keys by position, as the forward and the backward both read them.
struct Visibility {
  std::size_t nq, nk;
  std::size_t kv_len = SIZE_MAX;     // keys past this are not seen
  std::size_t mask_keys = SIZE_MAX;  // a mask shorter than nk hides the keys past it
  bool causal = false, top_left = false;
  Window window{};
};
// i', the diagonal key of query i (causal, the window and ALiBi are measured from it).
std::int64_t row_diagonal(const Visibility& v, std::size_t i) noexcept;
KeySpan key_span(const Visibility& v, std::size_t i) noexcept;

// Last key index query i may see under the bottom-right causal mask, plus one (0: the row sees nothing).
inline std::size_t causal_keys(std::size_t i, std::size_t nq, std::size_t nk) noexcept {
  // keys j ≤ i + nk − nq, computed without going negative
  return i + nk >= nq ? (i + nk - nq + 1 < nk ? i + nk - nq + 1 : nk) : 0;
}

// Keys are visited in tiles of kKeyTile. Kᵀ is packed tile by tile — tile t holds [dk × kKeyTile] with
// row stride kKeyTile — so Q·Kᵀ is a row-major GEMM with unit-stride loads along the keys. A KV cache keeps its
// keys in this layout (k_packed), so that attending to it packs nothing.
inline constexpr std::size_t kKeyTile = 128;
std::size_t packed_keys_size(std::size_t nk, std::size_t dk) noexcept;
// Keys first … first+count−1 of k (row stride ldk) into their places of a packed buffer.
void pack_keys(const float* k, std::size_t ldk, std::size_t first, std::size_t count, std::size_t dk, float* kt) noexcept;

// Scratch kept across the problems of one call: every problem of a batch has the same sizes, so only the first
// allocates, and running out of memory can only happen before any output was written.
class Workspace {
 public:
  // A buffer of at least `count` floats in slot i (0 ≤ i < kSlots), or null when out of memory.
  float* get(std::size_t i, std::size_t count) noexcept {
    if (slots_[i].size() < count) slots_[i] = Scratch(count);
    return count == 0 || slots_[i].size() >= count ? slots_[i].data() : nullptr;
  }
  static constexpr std::size_t kSlots = 8;

 private:
  Scratch slots_[kSlots];
};

Status attend_materialized(const AttentionProblem& p, Workspace& ws);
Status attend_streaming(const AttentionProblem& p, Workspace& ws);
inline Status attend_materialized(const AttentionProblem& p) {
  Workspace ws;
  return attend_materialized(p, ws);
}
inline Status attend_streaming(const AttentionProblem& p) {
  Workspace ws;
  return attend_streaming(p, ws);
}

// Rejects q/k whose scores could overflow float32 (Cauchy–Schwarz on row norms), before anything is written.
Status check_score_range(const AttentionProblem& p, const char* q_name, const char* k_name);
// Largest row norm of a [rows × cols] matrix with row stride ld.
double max_row_norm(const float* x, std::size_t rows, std::size_t cols, std::size_t ld) noexcept;

// The whole operator once validated: tensors as strided [batch, heads, seq, d] views, run head by head (or
// group by group) on AttentionProblem. attention() and multi_head_attention() both end here.
struct TensorView {
  const float* data;
  std::size_t batch_stride, head_stride, row_stride;
};
struct AttentionBatch {
  std::size_t batch, heads, kv_heads, nq, nk, dk, dv;
  TensorView q, k, v;
  float* out; std::size_t out_batch_stride, out_head_stride, out_row_stride;
  float* raw_scores = nullptr;  // [batch, heads, nq, nk] dense, or null
  float* scores = nullptr;
  float* weights = nullptr;
  float* lse = nullptr;         // [batch, heads, nq]
  float scale = 1.0f;
  Causal causal{};
  Window window{};
  float softcap = 0.0f;
  const float* alibi = nullptr;           // [heads]
  const std::int32_t* key_lengths = nullptr;  // [batch]
  MaskView mask{};                        // head (b, h) at + b·mask_batch_stride + h·mask.head_stride
  std::size_t mask_batch_stride = 0;
  const KvCache* cache = nullptr;         // K/V from here (k, v unused)
  bool materialize = false;
  double q_norm = -1.0;
  std::size_t item_begin = 0, item_end = SIZE_MAX;  // items b·kv_heads + g to compute (AttentionArgs::item_begin)
  std::size_t row0 = 0, seq_q = 0;  // nq rows are positions row0… of seq_q (AttentionArgs::q_begin; 0 = nq)
};
Status run_attention(const AttentionBatch& b);

// attention()'s validation, shared with attention_backward(): `plan_attention` checks the sizes, the lengths of
// q/k/v, the mask and its shape, keyLengths, alibiSlopes, window, scale and softcap — everything that reads no
// tensor's values — and fills everything of the batch but its outputs; `check_attention_values` then checks the
// values of q/k/v/mask, keyLengths and alibiSlopes and that the scores cannot overflow. (attention() checks its
// outputs between the two, so that size errors come before value errors.)
struct AttentionPlan {
  AttentionBatch batch{};  // batch.nq: the rows held (q_end − q_begin of a call with a query range, else nq)
  std::size_t q_len = 0, k_len = 0, v_len = 0, out_len = 0, lse_len = 0, bhn = 0;  // bhn: batch·heads·nq·nk, when needed
  bool single = true;  // batch = heads = kvHeads = 1: messages use the short shapes ("nq·dk = 6·4")
  std::size_t mask_shape[4] = {0, 0, 0, 0};  // the mask's shape broadcast to [batch, heads, nq, nk]; 0s without one
  // "nq·dk = 6·4", or "batch·heads·nq·dk = 2·4·6·4".
  std::string shape(const char* short_form, const char* heads_name, std::size_t count, std::size_t seq, std::size_t d) const;
};
Status plan_attention(const AttentionArgs& a, bool wants_matrix, AttentionPlan& plan);
Status check_attention_values(const AttentionArgs& a, const AttentionPlan& plan);
// What a plan resolved, as check_attention() reports it.
void shape_of(const AttentionArgs& a, const AttentionPlan& plan, AttentionShape& shape);
// The strides of a [batch, heads, seq, d] tensor in a layout.
TensorView tensor_view(const float* data, Layout layout, std::size_t heads, std::size_t seq, std::size_t d) noexcept;

}  // namespace attnlab::detail
