// Scaled dot-product attention: out = softmax(mask(softcap(scale · Q·Kᵀ) + bias)) · V, row-major float32,
// over whole tensors: batch × heads in one call, grouped-query heads, two layouts read by strides, causal
// masks of either alignment, sliding windows, additive or boolean masks broadcast by NumPy's rules, per-item key
// lengths, ALiBi, the log-sum-exp out, and K/V from a cache resident in memory (kv_cache.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "status.h"

namespace attnlab {

class KvCache;

enum class AttentionPath {
  automatic,     // streaming unless scores or weights are requested
  materialized,  // builds the nq×nk score matrix
  streaming,     // online softmax over tiles of K/V: memory O(tile·d), never nq×nk
};

// How a tensor of [batch, heads, seq, d] lies in memory: 'bhsd' = [batch][heads][seq][d], 'bshd' =
// [batch][seq][heads][d] (the packed [batch, seq, heads·d] of model code).
enum class Layout : std::uint8_t { bhsd, bshd };

// The diagonal that `causal` and `window` are measured from. Query i's diagonal key is
//   i' = i + keys − nq  (bottom_right: the last query sees the last key; FlashAttention's rule), or
//   i' = i              (top_left: PyTorch's is_causal, ONNX without a cache),
// where `keys` is the item's key count (keyLengths[b], or the cache's length).
struct Causal {
  enum Align : std::uint8_t { none, bottom_right, top_left };
  Align align = none;
  constexpr Causal() noexcept = default;
  constexpr Causal(bool on) noexcept : align(on ? bottom_right : none) {}  // NOLINT: `causal = true` reads well
  constexpr Causal(Align a) noexcept : align(a) {}                         // NOLINT
  constexpr explicit operator bool() const noexcept { return align != none; }
};

// Keys i' − left … i' + right around the diagonal; −1 = unlimited on that side.
struct Window {
  std::int64_t left = -1, right = -1;
};

struct AttentionArgs {
  // [batch, heads, nq, dk], [batch, kvHeads, nk, dk], [batch, kvHeads, nk, dv] in `layout`; finite.
  // With batch = heads = 1 (the defaults) these are plain [nq×dk], [nk×dk], [nk×dv] matrices.
  std::span<const float> q, k, v;
  std::size_t nq = 0, nk = 0, dk = 0, dv = 0;  // per head; with a cache, nk/dk/dv come from it (0 or equal)
  std::optional<double> scale;     // finite, > 0, representable in float32; default 1/sqrt(dk)
  Causal causal = false;           // query i sees keys j ≤ i' (see Causal)
  std::span<const float> mask;     // additive, -inf allowed, NaN/+inf rejected; shape mask_shape
  AttentionPath path = AttentionPath::automatic;

  std::size_t batch = 1, heads = 1;
  std::size_t kv_heads = 0;        // 0 → heads; query head h reads K/V head ⌊h·kvHeads/heads⌋
  Layout layout = Layout::bhsd;
  Window window;                   // sliding window around the same diagonal as causal
  std::optional<double> softcap;   // > 0: s = softcap·tanh(s/softcap) after scale, before bias and mask
  std::span<const std::uint8_t> bool_mask;  // 1 = may attend, 0 = masked; shape mask_shape (instead of mask)
  std::span<const std::int64_t> mask_shape; // ≤ 4 dims broadcast to [batch, heads, nq, nk]; empty = [nq, nk].
                                            // A key dimension 1 < m < nk masks keys m … nk−1 (ONNX's padding).
  std::span<const std::int32_t> key_lengths;  // [batch]: item b sees keys < keyLengths[b]; empty = all
  std::span<const float> alibi_slopes;        // [heads]: adds −slope·|i' − j|
  const KvCache* cache = nullptr;  // attend to the cache's keys and values instead of k and v (then empty)
  // Work items b·kvHeads + g (batch item b, K/V head g with its query heads) in [item_begin, item_end) only; the
  // outputs of the other items are left as they are. Validation still covers the whole call, so the parts of
  // one call split across workers (each with its own module) fail alike. Default: every item. (The forward only.)
  std::size_t item_begin = 0, item_end = SIZE_MAX;
  // Query rows [q_begin, q_end) of a call of nq query rows, alone (q_end 0 = every row, the default): q, out,
  // lse, the score matrices and a mask's query dimension hold only those rows (q_end − q_begin per head), while
  // the causal and window diagonals and ALiBi still measure from the row's position in the nq rows. A row's
  // results are bit for bit the whole call's, wherever the rows are cut: the parts of one call split across
  // workers compute and move only their rows. (The forward only: attention_backward() refuses a range.)
  std::size_t q_begin = 0, q_end = 0;
};

struct AttentionOutputs {
  std::span<float> out;         // [batch, heads, nq, dv] in the layout, required
  std::span<float> raw_scores;  // [batch, heads, nq, nk] Q·Kᵀ, optional (empty = not wanted)
  std::span<float> scores;      // [batch, heads, nq, nk] final logits, -inf wherever a key is not seen, optional
  std::span<float> weights;     // [batch, heads, nq, nk] softmax rows (0 where not seen), optional
  std::span<float> lse;         // [batch, heads, nq] log Σ exp(scores) per row (-inf when none seen), optional
};

// A query row that sees no key gets zero weights, a zero output row and lse = -inf; never NaN.
// On error nothing is written to any output.
Status attention(const AttentionArgs& args, const AttentionOutputs& outputs);

// What a call's arguments resolve to before any tensor is read: the sizes (from the cache where it gives them), the
// mask's shape broadcast to [batch, heads, nq, nk] (each 1 or the full size; the key dimension may be shorter),
// and the lengths every tensor must have.
struct AttentionShape {
  std::size_t batch = 0, heads = 0, kv_heads = 0, nq = 0, nk = 0, dk = 0, dv = 0;
  std::size_t mask[4] = {0, 0, 0, 0};  // 0s without a mask
  std::size_t q = 0, k = 0, v = 0;     // k, v: 0 with a cache
  std::size_t out = 0, lse = 0;
  std::size_t matrix = 0;              // batch·heads·rows·nk, when wants_matrix (else 0)
};

// Every check attention() makes that reads no tensor's values (sizes, lengths, the mask's shape, options), for a
// caller that places the tensors only once the call is known to fit: the tensors may be spans that carry their
// lengths alone, and an empty output is one the caller sizes afterwards from `shape`. wants_matrix: whether
// rawScores, scores or weights will be asked for.
Status check_attention(const AttentionArgs& args, const AttentionOutputs& outputs, bool wants_matrix, AttentionShape& shape);

}  // namespace attnlab
