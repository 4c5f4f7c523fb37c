// The call descriptor lab.attention and lab.attentionBackward share (call.h): the options, the forward's outputs and
// the backward's tensors (each call leaves the other's absent), and its reader: sizes as given or inferred from the
// tensors' lengths, then everything else as the core takes it. The core validates; this reader only converts, and
// infers the sizes left out (a size rule of the JS API, stated here once).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>

#include "attention.h"
#include "call.h"
#include "format.h"
#include "kv_cache.h"
#include "validate.h"

namespace attnlab::wasm {

// Sizes: optional (inferred, see read_sizes). layout 0 bhsd, 1 bshd; causal 0 none, 1 bottom-right, 2 top-left;
// a window bound of -1 (or Infinity) is unlimited. maskShape: mask_dims numbers (≤ 4). The mask is additive (mask)
// or boolean (boolMask), not both. cache: a KV cache's handle, or 0. The work items b·kvHeads + g to compute
// (item_end 0 = all) and the query rows the call holds (q_end 0 = all) are those of a part of a split call.
// Written back by a check: every size, resolved, and mask_broadcast0…3, the mask's shape broadcast to
// [batch, heads, nq, nk] (0s without a mask).
#define ATTNLAB_ATTENTION_OPTIONS(N, O, T)                                                                    \
  O(batch) O(heads) O(kv_heads) O(nq) O(nk) O(dk) O(dv) N(layout) N(causal) N(window_left) N(window_right)    \
  O(scale) O(softcap) N(mask_dims) N(mask_shape0) N(mask_shape1) N(mask_shape2) N(mask_shape3)                \
  N(mask_broadcast0) N(mask_broadcast1) N(mask_broadcast2) N(mask_broadcast3)                                 \
  N(cache) N(item_begin) N(item_end) N(q_begin) N(q_end)                                                      \
  T(q, f32, in) T(k, f32, in) T(v, f32, in) T(mask, f32, in) T(boolMask, u8, in) T(keyLengths, i32, in)       \
  T(alibiSlopes, f32, in)

// The forward: the outputs wanted and their buffers. The backward: the forward's output and lse (savedLse) with
// dL/d output, and the gradients dL/dq, dL/dk, dL/dv, shaped as q, k, v.
#define ATTNLAB_ATTENTION_CALL(N, O, T)                                                                     \
  ATTNLAB_ATTENTION_OPTIONS(N, O, T)                                                                        \
  N(return_raw_scores) N(return_scores) N(return_weights) N(return_lse)                                     \
  T(out, f32, out) T(rawScores, f32, out) T(scores, f32, out) T(weights, f32, out) T(lse, f32, out)         \
  T(output, f32, in) T(savedLse, f32, in) T(dOutput, f32, in) T(gradQ, f32, out) T(gradK, f32, out) T(gradV, f32, out)
ATTNLAB_CALL_STRUCT(AttentionCall, ATTNLAB_ATTENTION_CALL);

namespace attention_detail {

// `total` elements in rows of batch·heads·d (named by `names`): the row count, or the error naming the tensor.
inline Status rows_of(const char* tensor, std::size_t total, std::size_t batch, std::size_t heads, std::size_t d,
                      const char* names, bool single, std::size_t& rows) {
  const double per = double(batch) * double(heads) * double(d);  // exact below 2^53; anything larger exceeds total
  if (per <= double(total) && total % std::size_t(per) == 0) return rows = total / std::size_t(per), Status::success();
  const char* last = names + std::string(names).rfind("·") + 2;  // "nq" of "batch·heads·nq"
  return single ? detail::range_errorf(tensor, "%s.length must be a multiple of %s = %.0f, got %zu", tensor, last, per, total)
                : detail::range_errorf(tensor, "%s.length must be a multiple of %s = %zu·%zu·%zu = %.0f, got %zu", tensor, names,
                                       batch, heads, d, per, total);
}

}  // namespace attention_detail

// The sizes: given ones checked first (a bad one is named before anything is inferred from it), then the rest.
// Without a cache: batch and heads default to 1, kvHeads to heads; dk from q.length (nq given) or k.length (nk
// given); then nq, nk from q.length, k.length and dv from v.length. With a cache, batch and heads default to its
// batch and kvHeads, kvHeads, dk and dv to its own, nk to its length (0 here: the core reads it), nq from q.length.
inline Status read_sizes(AttentionCall& c, AttentionArgs& a) {
  using attention_detail::rows_of;
  const KvCacheConfig* cc = a.cache ? &a.cache->config() : nullptr;
  if (!size_of(c.batch, cc ? cc->batch : 1, a.batch)) return size_error("batch", c.batch);
  if (!size_of(c.heads, cc ? cc->kv_heads : 1, a.heads)) return size_error("heads", c.heads);
  if (!size_of(c.kv_heads, cc ? cc->kv_heads : a.heads, a.kv_heads)) return size_error("kvHeads", c.kv_heads);
  std::size_t nq = 0, nk = 0, dk = 0, dv = 0;
  for (auto [name, field, out] : {std::tuple{"nq", &c.nq, &nq}, {"nk", &c.nk, &nk}, {"dk", &c.dk, &dk}, {"dv", &c.dv, &dv}})
    if (!size_of(*field, 0, *out)) return size_error(name, *field);
  const bool single = a.batch == 1 && a.heads == 1 && a.kv_heads == 1;
  const std::size_t q_len = a.q.size(), k_len = a.k.size(), v_len = a.v.size();
  if (cc) {
    dk = dk ? dk : cc->dk, dv = dv ? dv : cc->dv;
  } else if (!dk) {
    if (nq) {
      if (auto s = rows_of("q", q_len, a.batch, a.heads, nq, "batch·heads·nq", single, dk); !s.ok()) return s;
    } else if (nk) {
      if (auto s = rows_of("k", k_len, a.batch, a.kv_heads, nk, "batch·kvHeads·nk", single, dk); !s.ok()) return s;
    } else {
      return Status::range_error("dk", "dk is required (or nq or nk, to infer it from q.length or k.length)");
    }
  }
  if (!nq)
    if (auto s = rows_of("q", q_len, a.batch, a.heads, dk, "batch·heads·dk", single, nq); !s.ok()) return s;
  if (!cc && !nk)
    if (auto s = rows_of("k", k_len, a.batch, a.kv_heads, dk, "batch·kvHeads·dk", single, nk); !s.ok()) return s;
  if (!cc && !dv)
    if (auto s = rows_of("v", v_len, a.batch, a.kv_heads, nk, "batch·kvHeads·nk", single, dv); !s.ok()) return s;
  a.nq = nq, a.nk = nk, a.dk = dk, a.dv = dv;
  return Status::success();
}

// A descriptor's options as AttentionArgs; `shape` holds maskShape (a.mask_shape points into it).
inline Status read_attention_call(AttentionCall& c, AttentionArgs& a, std::int64_t (&shape)[4]) {
  a.q = in<float>(c.q), a.k = in<float>(c.k), a.v = in<float>(c.v);
  a.mask = in<float>(c.mask);
  a.bool_mask = in<std::uint8_t>(c.boolMask);
  a.key_lengths = in<std::int32_t>(c.keyLengths);
  a.alibi_slopes = in<float>(c.alibiSlopes);
  a.cache = handle<const KvCache>(c.cache);
  if (auto s = read_sizes(c, a); !s.ok()) return s;
  const std::size_t dims = whole(c.mask_dims);
  if (dims > 4) return detail::range_errorf("maskShape", "maskShape must have at most 4 dimensions ([batch, heads, nq, nk]), got %zu", dims);
  const double given[4] = {c.mask_shape0, c.mask_shape1, c.mask_shape2, c.mask_shape3};
  for (std::size_t d = 0; d < dims; ++d) {
    std::size_t m;
    if (!size_of(given[d], m)) {
      Status s = size_error(detail::format("maskShape[%zu]", d).c_str(), given[d]);
      s.arg = "maskShape";
      return s;
    }
    shape[d] = std::int64_t(m);
  }
  a.mask_shape = std::span<const std::int64_t>(shape, dims);
  a.layout = c.layout == 1 ? Layout::bshd : Layout::bhsd;
  a.causal = c.causal == 1 ? Causal(Causal::bottom_right) : c.causal == 2 ? Causal(Causal::top_left) : Causal();
  for (auto [i, given, bound] : {std::tuple{0, c.window_left, &a.window.left}, {1, c.window_right, &a.window.right}}) {
    if (!detail::is_window_bound(given)) return detail::check_window_bound(i, given, *bound);
    *bound = given == INFINITY || given == -1 ? -1 : std::int64_t(given);
  }
  a.scale = c.scale.get();
  a.softcap = c.softcap.get();
  // The internal ranges of a split call: whole numbers within int32 before any cast (a cast of NaN or −1 to size_t
  // is undefined); the engine checks them against the call's sizes.
  for (double r : {c.item_begin, c.item_end, c.q_begin, c.q_end})
    if (!(r >= 0 && r <= 2147483647.0 && r == std::floor(r)))
      return Status::range_error("nq", "a query or item range must be whole numbers from 0 to 2^31 - 1");
  if (c.item_end > c.item_begin) a.item_begin = whole(c.item_begin), a.item_end = whole(c.item_end);
  a.q_begin = whole(c.q_begin), a.q_end = whole(c.q_end);
  return Status::success();
}

// A check's write-back: the sizes resolved and the mask's broadcast shape.
inline void write_shape(AttentionCall& c, const AttentionShape& s) {
  c.batch.set(double(s.batch)), c.heads.set(double(s.heads)), c.kv_heads.set(double(s.kv_heads));
  c.nq.set(double(s.nq)), c.nk.set(double(s.nk)), c.dk.set(double(s.dk)), c.dv.set(double(s.dv));
  c.mask_broadcast0 = double(s.mask[0]), c.mask_broadcast1 = double(s.mask[1]);
  c.mask_broadcast2 = double(s.mask[2]), c.mask_broadcast3 = double(s.mask[3]);
}

}  // namespace attnlab::wasm
