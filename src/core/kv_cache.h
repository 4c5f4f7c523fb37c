// A key/value cache that stays in memory between calls (in the package: in wasm memory), so that a decode step
// moves only its new token and its queries. Keys are stored already packed by key tile, the layout the streaming
// attention kernel reads (attention_impl.h), so attending to 4096 cached keys packs nothing; values are stored
// as rows. Every batch item and K/V head has its own slot of `capacity` tokens.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "attention.h"
#include "rope.h"
#include "scratch.h"
#include "status.h"

namespace attnlab {

struct KvCacheConfig {
  std::size_t batch = 1, kv_heads = 1, dk = 0, dv = 0, capacity = 0;
  Layout layout = Layout::bhsd;  // the default layout of appended keys and values
};

// Rotary embedding of the keys on their way in (rope.h): each new key is rotated at its cache position (the
// item's length before the append, plus its index among the new tokens), unless `positions` says otherwise.
struct KvRope {
  std::optional<double> base;              // default 10000 (without cos/sin)
  std::size_t rotary_dim = 0;              // 0 = dk
  bool interleaved = false;
  std::span<const float> cos, sin;         // optional tables [maxPosition × rotaryDim/2]
  std::span<const std::int32_t> positions; // [batch·t] or [t]; empty = the cache positions
};

struct KvAppendArgs {
  // [batch, kvHeads, t, dk] and [batch, kvHeads, t, dv] in `layout`: t new tokens for every batch item.
  std::span<const float> k, v;
  std::optional<Layout> layout;  // default: the cache's
  const KvRope* rope = nullptr;
};

class KvCache {
 public:
  // Validates the sizes and allocates the zeroed storage; on failure `out` stays null.
  static Status create(const KvCacheConfig& config, std::unique_ptr<KvCache>& out);

  // Appends t tokens to every item: all or nothing (past capacity, a bad length or value leave it unchanged).
  Status append(const KvAppendArgs& args);
  // Every check append() makes that reads no value of k, v or the rope tables and positions.
  Status check_append(const KvAppendArgs& args) const;
  void reset() noexcept;

  const KvCacheConfig& config() const noexcept { return config_; }
  std::size_t length(std::size_t b) const noexcept { return lengths_[b]; }
  std::size_t max_length() const noexcept;
  // The length read_keys (values false) or read_values needs: batch·kvHeads·max_length·(dk or dv).
  std::size_t read_size(bool values) const noexcept;
  // [batch, kvHeads, max_length, dk] ('bhsd'), zeros past an item's length.
  Status read_keys(std::span<float> out) const;
  Status read_values(std::span<float> out) const;

  // For the attention kernels.
  const float* packed_keys(std::size_t b, std::size_t g) const noexcept { return keys_.data() + slot(b, g) * key_slot_; }
  const float* values(std::size_t b, std::size_t g) const noexcept { return values_.data() + slot(b, g) * value_slot_; }
  double max_key_norm() const noexcept { return max_key_norm_; }

 private:
  KvCache() = default;
  std::size_t slot(std::size_t b, std::size_t g) const noexcept { return b * config_.kv_heads + g; }
  RopeArgs rope_args(const KvAppendArgs& a, const std::int32_t& offset) const;

  KvCacheConfig config_{};
  std::size_t key_slot_ = 0, value_slot_ = 0;  // floats per (item, head)
  Scratch keys_, values_;
  std::unique_ptr<std::size_t[]> lengths_;
  double max_key_norm_ = 0.0;  // largest ‖k‖ ever appended since the last reset (for the overflow check)
};

}  // namespace attnlab
