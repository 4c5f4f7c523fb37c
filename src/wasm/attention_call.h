// The call descriptor lab.attention and lab.attentionBackward share: the wrapper writes one array of float64 into
// wasm memory — one per field below, JS numbers exactly as given — and passes its address: one number crosses the
// boundary however many options there are, and the engine sees every value before any conversion could change it
// (1e-50 is not 0, 2.5 is not 2). Sizes go through the core's check_count; everything else is validated by the
// core itself. The field order comes from here (attentionCallFields), so the two sides cannot disagree.
#pragma once
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <tuple>

#include "attention.h"
#include "marshal.h"
#include "validate.h"

namespace attnlab::wasm {

// Addresses are byte addresses (0 = none), lengths are element counts.
#define ATTNLAB_ATTENTION_CALL(X)                                                               \
  X(q) X(q_len) X(k) X(k_len) X(v) X(v_len)                                                     \
  X(mask) X(mask_len) X(mask_kind) /* 0 none, 1 additive float32, 2 boolean uint8 */            \
  X(mask_dims) X(mask_shape0) X(mask_shape1) X(mask_shape2) X(mask_shape3)                      \
  X(key_lengths) X(key_lengths_len) /* int32 */ X(alibi) X(alibi_len)                           \
  X(out) X(out_len) X(raw_scores) X(scores) X(weights) X(matrix_len) X(lse) X(lse_len)          \
  X(batch) X(heads) X(kv_heads) X(nq) X(nk) X(dk) X(dv)                                         \
  X(layout) /* 0 bhsd, 1 bshd */ X(causal) /* 0 none, 1 bottom-right, 2 top-left */             \
  X(window_left) X(window_right) X(has_scale) X(scale) X(has_softcap) X(softcap) X(cache)       \
  X(item_begin) X(item_end) /* work items b·kvHeads + g to compute; end 0 = all (a part of a split call) */ \
  X(q_begin) X(q_end) /* the query rows the call holds; end 0 = all (a part of a split call) */     \
  /* attentionBackward: the forward's output and lse (above) come in, dL/d output too */        \
  X(output) X(output_len) X(d_output) X(d_output_len) X(dq) X(dq_len) X(dk_out) X(dk_len) X(dv_out) X(dv_len)

struct AttentionCall {
#define ATTNLAB_FIELD(name) double name;
  ATTNLAB_ATTENTION_CALL(ATTNLAB_FIELD)
#undef ATTNLAB_FIELD
};

// "q,q_len,…,": one string literal, the field names in order.
inline std::string attention_call_fields() {
#define ATTNLAB_NAME(name) #name ","
  return ATTNLAB_ATTENTION_CALL(ATTNLAB_NAME);
#undef ATTNLAB_NAME
}

inline std::size_t whole(double x) { return static_cast<std::size_t>(x); }  // addresses and lengths the wrapper computed

template <class T>
std::span<const T> in_as(double ptr, double len) {
  return ptr ? std::span<const T>(reinterpret_cast<const T*>(whole(ptr)), whole(len)) : std::span<const T>();
}

// The inputs and options of a call as AttentionArgs; `shape` holds maskShape (a.mask_shape points into it).
inline Status read_attention_call(const AttentionCall& c, AttentionArgs& a, std::int64_t (&shape)[4]) {
  using detail::check_count;
  for (auto [name, value, field] : {std::tuple{"batch", c.batch, &a.batch}, {"heads", c.heads, &a.heads},
                                    {"kvHeads", c.kv_heads, &a.kv_heads}, {"nq", c.nq, &a.nq}, {"nk", c.nk, &a.nk},
                                    {"dk", c.dk, &a.dk}, {"dv", c.dv, &a.dv}})
    if (!(c.cache && field == &a.nk && value == 0))  // with a cache, nk 0 = the cache's length
      if (auto s = check_count(name, value, *field); !s.ok()) return s;
  a.q = in_as<float>(c.q, c.q_len);
  a.k = in_as<float>(c.k, c.k_len);
  a.v = in_as<float>(c.v, c.v_len);
  if (c.mask_kind == 1) a.mask = in_as<float>(c.mask, c.mask_len);
  if (c.mask_kind == 2) a.bool_mask = in_as<std::uint8_t>(c.mask, c.mask_len);
  const std::size_t dims = whole(c.mask_dims);
  if (dims > 4) return Status::range_error("maskShape", "maskShape must have at most 4 dimensions ([batch, heads, nq, nk]), got " + std::to_string(dims));
  const double given[4] = {c.mask_shape0, c.mask_shape1, c.mask_shape2, c.mask_shape3};
  for (std::size_t d = 0; d < dims; ++d) {
    std::size_t m;
    if (auto s = check_count("maskShape[" + std::to_string(d) + "]", given[d], m); !s.ok()) {
      s.arg = "maskShape";
      return s;
    }
    shape[d] = std::int64_t(m);
  }
  a.mask_shape = std::span<const std::int64_t>(shape, dims);
  a.key_lengths = in_as<std::int32_t>(c.key_lengths, c.key_lengths_len);
  a.alibi_slopes = in_as<float>(c.alibi, c.alibi_len);
  a.layout = c.layout == 1 ? Layout::bshd : Layout::bhsd;
  a.causal = c.causal == 1 ? Causal(Causal::bottom_right) : c.causal == 2 ? Causal(Causal::top_left) : Causal();
  if (auto s = detail::check_window_bound(0, c.window_left, a.window.left); !s.ok()) return s;
  if (auto s = detail::check_window_bound(1, c.window_right, a.window.right); !s.ok()) return s;
  if (c.has_scale) a.scale = c.scale;
  if (c.has_softcap) a.softcap = c.softcap;
  a.cache = reinterpret_cast<const KvCache*>(whole(c.cache));
  // The internal ranges of a split call: whole numbers within int32 before any cast (a cast of NaN or −1 to size_t
  // is undefined); the engine checks them against the call's sizes.
  for (double r : {c.item_begin, c.item_end, c.q_begin, c.q_end})
    if (!(r >= 0 && r <= 2147483647.0 && r == std::floor(r)))
      return Status::range_error("nq", "a query or item range must be whole numbers from 0 to 2^31 - 1");
  if (c.item_end > c.item_begin) a.item_begin = whole(c.item_begin), a.item_end = whole(c.item_end);
  a.q_begin = whole(c.q_begin), a.q_end = whole(c.q_end);
  return Status::success();
}

}  // namespace attnlab::wasm
