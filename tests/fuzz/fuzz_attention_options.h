// The whole attention operator's options decoded from a fuzzer's bytes, shared by fuzz_attention_full (forward) and
// fuzz_attention_backward_full: each harness decodes the sizes and flags its own way, then the mask (shape, values),
// keyLengths and ALiBi slopes here, and gets from one place the engine's arguments and the reference's case.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "../native/attention_reference.h"
#include "attention.h"
#include "fuzz_input.h"

namespace fuzz {

struct AttentionOptions {
  std::size_t batch = 1, heads = 1, kv_heads = 1, nq = 1, nk = 1, dk = 1, dv = 1;
  bool bshd = false;
  int causal = 0;     // 0 none, 1 bottom-right, 2 top-left
  int mask_kind = 0;  // 0 none, 1 additive, 2 boolean
  bool windowed = false;
  std::int64_t window_left = -1, window_right = -1;
  std::optional<double> scale, softcap;
  std::vector<std::int64_t> mask_shape;  // as given: 1…4 dims right-aligned to [batch, heads, nq, nk]
  std::vector<float> mask;
  std::vector<std::uint8_t> keep;
  std::vector<std::int32_t> key_lengths;
  std::vector<float> slopes;

  // The mask of mask_kind: 1…4 dims, each 1 or full, the key dim sometimes shorter than nk; additive values with a
  // share of −inf, or booleans a quarter false. With `invalid`, now and then a leading dim that does not broadcast,
  // and the element count off by count_delta.
  void decode_mask(Input& in, bool invalid = false, long count_delta = 0) {
    if (!mask_kind) return;
    const std::size_t target[4] = {batch, heads, nq, nk};
    const std::size_t dims = 1 + in.byte() % 4;
    const std::uint8_t pick = in.byte();
    for (std::size_t d = 4 - dims; d < 4; ++d) {
      std::size_t m = (pick >> d) & 1 ? target[d] : 1;
      if (d == 3 && (pick & 0x80) && nk > 2) m = 2 + in.byte() % (nk - 2);        // shorter than nk
      if (invalid && d < 3 && (pick & 0x40) && d == 4 - dims) m = target[d] + 1;  // does not broadcast
      mask_shape.push_back(std::int64_t(m));
    }
    std::size_t count = 1;
    for (auto m : mask_shape) count *= std::size_t(m);
    count = adjust(count, count_delta);
    if (mask_kind == 1) {
      mask = in.values(count);
      for (auto& x : mask) x = in.flag() ? -INFINITY : x;
    } else {
      keep.resize(count);
      for (auto& x : keep) x = in.byte() % 4 != 0;
    }
  }

  // One length per item in 0 … nk; with `invalid`, now and then one too many, nk + 1 or −1.
  void decode_key_lengths(Input& in, bool invalid = false) {
    if (!invalid) {
      for (std::size_t b = 0; b < batch; ++b) key_lengths.push_back(std::int32_t(in.byte() % (nk + 1)));
      return;
    }
    const std::size_t count = batch + (in.byte() % 32 == 0);
    for (std::size_t b = 0; b < count; ++b) {
      const std::int32_t len = std::int32_t(in.byte() % (nk + 2));
      key_lengths.push_back(in.byte() % 64 == 0 ? -1 : len);
    }
  }

  // One slope per head (any value()); with `invalid`, now and then one too many.
  void decode_slopes(Input& in, bool invalid = false) { slopes = in.values(heads + (invalid && in.byte() % 32 == 0)); }

  // Every option into the engine's arguments: all but q, k, v, nk, dk, dv, the path and the cache.
  void apply(attnlab::AttentionArgs& a) const {
    using attnlab::Causal;
    a.nq = nq, a.batch = batch, a.heads = heads, a.kv_heads = kv_heads;
    a.scale = scale, a.softcap = softcap;
    a.causal = causal == 0 ? Causal() : causal == 1 ? Causal(Causal::bottom_right) : Causal(Causal::top_left);
    a.layout = bshd ? attnlab::Layout::bshd : attnlab::Layout::bhsd;
    if (windowed) a.window = {window_left, window_right};
    a.mask = mask, a.bool_mask = keep, a.mask_shape = mask_shape;
    a.key_lengths = key_lengths, a.alibi_slopes = slopes;
  }

  // The scale the engine uses: the given one in float32, or 1/√dk.
  float scale_used() const { return scale ? float(*scale) : 1.0f / std::sqrt(float(dk ? dk : 1)); }

  // The reference's case for options the engine accepted (its mask points into this object).
  ref::FullCase reference_case(bool streaming = true) const {
    ref::FullCase c;
    c.batch = batch, c.heads = heads, c.kv_heads = kv_heads, c.nq = nq, c.nk = nk, c.dk = dk, c.dv = dv;
    c.bshd = bshd, c.causal = causal;
    for (std::size_t d = 0; d < mask_shape.size(); ++d) c.mask_shape[4 - mask_shape.size() + d] = std::size_t(mask_shape[d]);
    c.scale = double(scale_used());
    c.softcap = softcap ? double(float(*softcap)) : 0.0;
    if (windowed) c.window_left = window_left, c.window_right = window_right;
    if (mask_kind == 1) c.mask = &mask;
    if (mask_kind == 2) c.keep = &keep;
    c.key_lengths = key_lengths, c.alibi = slopes;
    c.streaming = streaming;
    return c;
  }
};

}  // namespace fuzz
