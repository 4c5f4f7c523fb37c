// attention(): validates the whole descriptor in one place (messages in the JS API's words), then cuts the
// tensors into per-head problems by strides — no copies — and runs them (attention.cpp).
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>

#include "attention_impl.h"
#include "kv_cache.h"
#include "format.h"
#include "validate.h"

namespace attnlab {
namespace detail {
namespace {

// "[2, 1, 1, 8]"
std::string list(const std::size_t* values, std::size_t n) {
  std::string s = "[";
  for (std::size_t i = 0; i < n; ++i) s += format(i ? ", %zu" : "%zu", values[i]);
  return s + "]";
}

}  // namespace

TensorView tensor_view(const float* data, Layout layout, std::size_t heads, std::size_t seq, std::size_t d) noexcept {
  if (layout == Layout::bhsd) return {data, heads * seq * d, seq * d, d};
  return {data, seq * heads * d, d, heads * d};
}

std::string AttentionPlan::shape(const char* short_form, const char* heads_name, std::size_t count, std::size_t seq,
                                 std::size_t d) const {
  return single ? format("%s = %zu·%zu", short_form, seq, d)
                : format("batch·%s·%s = %zu·%zu·%zu·%zu", heads_name, short_form, batch.batch, count, seq, d);
}

Status run_attention(const AttentionBatch& a) {
  const std::size_t group = a.heads / a.kv_heads, nn = a.nq * a.nk;
  Workspace ws;
  for (std::size_t b = 0; b < a.batch; ++b) {
    const std::size_t kv_len = a.key_lengths ? std::size_t(a.key_lengths[b]) : a.cache ? a.cache->length(b) : a.nk;
    for (std::size_t g = 0; g < a.kv_heads; ++g) {
      if (const std::size_t item = b * a.kv_heads + g; item < a.item_begin || item >= a.item_end) continue;
      AttentionProblem p{};
      if (a.cache) {
        p.k = nullptr, p.ldk = a.dk, p.k_packed = a.cache->packed_keys(b, g);
        p.v = a.cache->values(b, g), p.ldv = a.dv;
      } else {
        p.k = a.k.data + b * a.k.batch_stride + g * a.k.head_stride, p.ldk = a.k.row_stride;
        p.v = a.v.data + b * a.v.batch_stride + g * a.v.head_stride, p.ldv = a.v.row_stride;
      }
      p.ldq = a.q.row_stride, p.ldo = a.out_row_stride;
      p.nq = a.nq, p.nk = a.nk, p.dk = a.dk, p.dv = a.dv;
      p.scale = a.scale;
      p.causal = bool(a.causal);
      p.top_left = a.causal.align == Causal::top_left;
      p.window = a.window;
      p.kv_len = kv_len;
      p.softcap = a.softcap;
      p.mask_view = a.mask;
      p.q_norm = a.q_norm;
      p.row0 = a.row0, p.seq_q = a.seq_q;
      // Head h of item b: the first head of the group for a folded problem.
      auto place = [&](std::size_t h) {
        p.q = a.q.data + b * a.q.batch_stride + h * a.q.head_stride;
        p.out = a.out + b * a.out_batch_stride + h * a.out_head_stride;
        const std::size_t bh = b * a.heads + h;
        if (a.raw_scores) p.raw_scores = a.raw_scores + bh * nn;
        if (a.scores) p.scores = a.scores + bh * nn;
        if (a.weights) p.weights = a.weights + bh * nn;
        if (a.lse) p.lse = a.lse + bh * a.nq;
        if (a.alibi) p.alibi = a.alibi + h;
        if (a.mask.add) p.mask_view.add = a.mask.add + b * a.mask_batch_stride + h * a.mask.head_stride;
        if (a.mask.keep) p.mask_view.keep = a.mask.keep + b * a.mask_batch_stride + h * a.mask.head_stride;
      };
      if (a.materialize) {  // per head: the matrices it returns are per head
        for (std::size_t hh = 0; hh < group; ++hh) {
          place(g * group + hh);
          if (auto s = attend_materialized(p, ws); !s.ok()) return s;
        }
      } else {  // the group's query heads together, over their one K/V head
        place(g * group);
        p.fold = Fold{group, a.q.head_stride, a.out_head_stride};
        if (auto s = attend_streaming(p, ws); !s.ok()) return s;
      }
    }
  }
  return Status::success();
}

Status plan_attention(const AttentionArgs& a, bool wants_matrix, AttentionPlan& plan) {
  const KvCache* cache = a.cache;
  for (auto [name, value] : {std::pair{"batch", a.batch}, {"heads", a.heads}, {"nq", a.nq}})
    if (!value) return check_size(name, value);
  const std::size_t heads = a.heads;
  const std::size_t kv_heads = a.kv_heads ? a.kv_heads : cache ? cache->config().kv_heads : heads;
  if (kv_heads > heads || heads % kv_heads != 0)
    return range_errorf("kvHeads", "kvHeads must divide heads = %zu, got %zu", heads, kv_heads);
  std::size_t nk = a.nk, dk = a.dk, dv = a.dv;
  if (cache) {
    const KvCacheConfig& c = cache->config();
    if (!a.k.empty() || !a.v.empty())
      return range_errorf(a.k.empty() ? "v" : "k", "%s must be left out when attending to a cache (its keys and values are used)",
                          a.k.empty() ? "v" : "k");
    for (auto [name, given, has] : {std::tuple{"batch", a.batch, c.batch}, {"kvHeads", kv_heads, c.kv_heads},
                                    {"dk", dk ? dk : c.dk, c.dk}, {"dv", dv ? dv : c.dv, c.dv}})
      if (given != has)
        return range_errorf(name, "%s = %zu does not match the cache's %s = %zu", name, given, name, has);
    dk = c.dk, dv = c.dv;
    const std::size_t held = cache->max_length();
    if (held == 0) return Status::range_error("cache", "the cache is empty: append keys and values before attending to it");
    if (nk && nk != held)
      return range_errorf("nk", "nk = %zu does not match the cache's length %zu", nk, held);
    nk = held;
  }
  for (auto [name, value] : {std::pair{"nk", nk}, {"dk", dk}, {"dv", dv}})
    if (!value) return check_size(name, value);

  // A query range: the call holds rows [q_begin, q_end) of the nq (`rows` of them); nq stays the positions' count.
  const bool ranged = a.q_end != 0 || a.q_begin != 0;
  if (ranged && (a.q_begin >= a.q_end || a.q_end > a.nq))
    return range_errorf("nq", "the query range [%zu, %zu) must be a non-empty part of the nq = %zu rows", a.q_begin, a.q_end, a.nq);
  const std::size_t rows = ranged ? a.q_end - a.q_begin : a.nq;

  // Lengths. Every product must fit in size_t (32 bits in wasm): the factors are checked one by one.
  const bool single = a.batch == 1 && heads == 1 && kv_heads == 1;
  std::size_t bh, bg, q_len, k_len, v_len, out_len, lse_len, nn = 0, bhn = 0;
  // (a product past size_t is named by the sizes the caller gave, not only the tensor they make)
  auto too_large = [&](const char* seq_name, const char* tensor, const char* heads_name, std::size_t count, std::size_t seq,
                       const char* d_name, std::size_t d) {
    return range_errorf(tensor, "%s is too large: batch·%s·%s·%s = %zu·%zu·%zu·%zu elements would not fit in memory", tensor,
                        heads_name, seq_name, d_name, a.batch, count, seq, d);
  };
  {
    std::size_t t;
    if (!checked_mul(a.batch, heads, bh) || !checked_mul(bh, rows, t) || !checked_mul(t, dk, q_len))
      return too_large("nq", "q", "heads", heads, rows, "dk", dk);
    if (!checked_mul(t, dv, out_len)) return too_large("nq", "out", "heads", heads, rows, "dv", dv);
    lse_len = t;
    if (!checked_mul(a.batch, kv_heads, bg) || !checked_mul(bg, nk, t) || !checked_mul(t, dk, k_len))
      return too_large("nk", "k", "kvHeads", kv_heads, nk, "dk", dk);
    if (!checked_mul(t, dv, v_len)) return too_large("nk", "v", "kvHeads", kv_heads, nk, "dv", dv);
  }
  // nq·nk only has to fit when something of that size exists; streaming alone never builds it.
  if (wants_matrix || a.path == AttentionPath::materialized) {
    if (!checked_mul(rows, nk, nn) || !checked_mul(bh, nn, bhn))
      return range_errorf("nq", "nq·nk = %zu·%zu (for batch·heads = %zu) is too large for the score and weight matrices "
                          "(rawScores, scores, weights): they would not fit in memory", rows, nk, bh);
  }
  plan.single = single;
  plan.batch.batch = a.batch, plan.batch.heads = heads, plan.batch.kv_heads = kv_heads;
  plan.q_len = q_len, plan.k_len = k_len, plan.v_len = v_len, plan.out_len = out_len, plan.lse_len = lse_len, plan.bhn = bhn;
  // The shape named in messages: the short single-head form when there is one head.
  auto shape = [&](const char* short_form, const char* heads_name, std::size_t count, std::size_t seq, std::size_t d) {
    return plan.shape(short_form, heads_name, count, seq, d);
  };
  // (Messages are built only on failure: a call's fixed cost matters for decode steps.)
  if (a.q.size() != q_len) return check_length("q", a.q.size(), q_len, shape("nq·dk", "heads", heads, rows, dk));
  if (!cache) {
    if (a.k.size() != k_len) return check_length("k", a.k.size(), k_len, shape("nk·dk", "kvHeads", kv_heads, nk, dk));
    if (a.v.size() != v_len) return check_length("v", a.v.size(), v_len, shape("nk·dv", "kvHeads", kv_heads, nk, dv));
  }

  // The mask: its shape right-aligned against [batch, heads, nq, nk], each dimension 1 or the full size; the key
  // dimension may also be shorter than nk (the keys past it are masked).
  const bool has_mask = !a.mask.empty() || !a.bool_mask.empty();
  if (!a.mask.empty() && !a.bool_mask.empty()) return Status::range_error("mask", "give one mask, additive or boolean, not both");
  if (!has_mask && !a.mask_shape.empty()) return Status::range_error("maskShape", "maskShape was given without a mask");
  MaskView mask{};
  std::size_t mask_batch_stride = 0;
  if (has_mask) {
    const std::size_t target[4] = {a.batch, heads, rows, nk};
    const char* names[4] = {"batch", "heads", "nq", "nk"};
    std::size_t m[4] = {1, 1, rows, nk};
    const std::size_t given = a.mask_shape.size();
    if (given > 4) return range_errorf("maskShape", "maskShape must have at most 4 dimensions ([batch, heads, nq, nk]), got %zu", given);
    if (given) {
      for (std::size_t d = 0; d < 4; ++d) m[d] = 1;
      for (std::size_t d = 0; d < given; ++d) {
        if (auto s = check_count(format("maskShape[%zu]", d), double(a.mask_shape[d]), m[4 - given + d]); !s.ok()) {
          s.arg = "maskShape";
          return s;
        }
      }
      for (std::size_t d = 0; d < 4; ++d) {
        const bool fits = m[d] == 1 || m[d] == target[d] || (d == 3 && m[d] < target[d]);
        if (!fits)
          return range_errorf("maskShape", "maskShape %s does not broadcast to [batch, heads, nq, nk] = %s: %s",
                              list(m + 4 - given, given).c_str(), list(target, 4).c_str(),
                              (d == 3 ? format("its last dimension %zu exceeds nk = %zu", m[3], nk)
                                      : format("dimension %zu must be 1 or %s = %zu", m[d], names[d], target[d])).c_str());
      }
    }
    std::size_t count = 1;
    for (std::size_t d = 0; d < 4; ++d)
      if (!checked_mul(count, m[d], count)) return check_product("mask", count, m[d], count);
    const std::size_t got = a.mask.empty() ? a.bool_mask.size() : a.mask.size();
    if (got != count)
      return given ? range_errorf("mask", "mask must have the product of maskShape %s = %zu elements, got %zu",
                                  list(m + 4 - given, given).c_str(), count, got)
                   : range_errorf("mask", "mask must have nq·nk = %zu·%zu = %zu elements (or give maskShape), got %zu", rows, nk,
                                  count, got);
    const std::size_t st_k = 1, st_q = m[3], st_h = m[2] * m[3], st_b = m[1] * m[2] * m[3];
    mask.add = a.mask.empty() ? nullptr : a.mask.data();
    mask.keep = a.bool_mask.empty() ? nullptr : a.bool_mask.data();
    mask.col_stride = m[3] == 1 ? 0 : st_k;
    mask.row_stride = m[2] == 1 ? 0 : st_q;
    mask.head_stride = m[1] == 1 ? 0 : st_h;
    mask.keys = m[3] == 1 ? SIZE_MAX : m[3];
    mask_batch_stride = m[0] == 1 ? 0 : st_b;
    for (std::size_t d = 0; d < 4; ++d) plan.mask_shape[d] = m[d];
  }

  if (!a.key_lengths.empty() && a.key_lengths.size() != a.batch)
    return range_errorf("keyLengths", "keyLengths must have batch = %zu entries, got %zu", a.batch, a.key_lengths.size());
  if (!a.alibi_slopes.empty() && a.alibi_slopes.size() != heads)
    return range_errorf("alibiSlopes", "alibiSlopes must have heads = %zu entries, got %zu", heads, a.alibi_slopes.size());
  for (auto [i, value] : {std::pair{0, a.window.left}, {1, a.window.right}}) {
    std::int64_t bound;
    if (!is_window_bound(double(value))) return check_window_bound(i, double(value), bound);
  }
  float scale = 1.0f / std::sqrt(static_cast<float>(dk)), softcap = 0.0f;
  if (a.scale)
    if (auto s = check_float32_positive("scale", *a.scale, scale); !s.ok()) return s;
  if (a.softcap) {
    if (auto s = check_float32_positive("softcap", *a.softcap, softcap); !s.ok()) return s;
    // s/softcap is computed as s·(1/softcap): the reciprocal must exist in float32.
    if (!std::isfinite(1.0f / softcap))
      return range_errorf("softcap", "softcap must be at least 3e-39 (1/softcap must be finite in float32), got %s", fmt(*a.softcap).c_str());
  }

  AttentionBatch& batch = plan.batch;
  batch.nq = rows, batch.nk = nk, batch.dk = dk, batch.dv = dv;
  batch.row0 = a.q_begin, batch.seq_q = ranged ? a.nq : 0;
  batch.q = tensor_view(a.q.data(), a.layout, heads, rows, dk);
  batch.k = tensor_view(a.k.data(), a.layout, kv_heads, nk, dk), batch.v = tensor_view(a.v.data(), a.layout, kv_heads, nk, dv);
  const TensorView out = tensor_view(nullptr, a.layout, heads, rows, dv);
  batch.out_batch_stride = out.batch_stride, batch.out_head_stride = out.head_stride, batch.out_row_stride = out.row_stride;
  batch.scale = scale;
  batch.causal = a.causal;
  // Beyond 2^40 a window is unlimited in practice; clamping keeps the diagonal arithmetic in 64 bits.
  batch.window = {a.window.left > (std::int64_t(1) << 40) ? std::int64_t(1) << 40 : a.window.left,
                  a.window.right > (std::int64_t(1) << 40) ? std::int64_t(1) << 40 : a.window.right};
  batch.softcap = softcap;
  batch.alibi = a.alibi_slopes.empty() ? nullptr : a.alibi_slopes.data();
  batch.key_lengths = a.key_lengths.empty() ? nullptr : a.key_lengths.data();
  batch.mask = mask, batch.mask_batch_stride = mask_batch_stride;
  batch.cache = cache;
  return Status::success();
}

Status check_attention_values(const AttentionArgs& a, const AttentionPlan& plan) {
  const KvCache* cache = a.cache;
  const AttentionBatch& b = plan.batch;
  if (auto s = check_values("q", a.q, false); !s.ok()) return s;
  if (auto s = check_values("k", a.k, false); !s.ok()) return s;
  if (auto s = check_values("v", a.v, false); !s.ok()) return s;
  if (auto s = check_values("mask", a.mask, true); !s.ok()) return s;
  for (std::size_t i = 0; i < a.key_lengths.size(); ++i) {
    const std::int64_t len = a.key_lengths[i];
    if (len < 0)
      return range_errorf("keyLengths", "keyLengths[%zu] must be an integer >= 0, got %lld", i, static_cast<long long>(len));
    if (std::size_t(len) > b.nk)
      return range_errorf("keyLengths", "keyLengths[%zu] = %lld exceeds nk = %zu%s", i, static_cast<long long>(len), b.nk,
                          cache ? " (the cache's length)" : "");
  }
  if (!a.alibi_slopes.empty()) {
    if (auto s = check_values("alibiSlopes", a.alibi_slopes, false); !s.ok()) return s;
    // |slope|·distance stays far inside float32: distances are below nq + nk.
    for (std::size_t h = 0; h < b.heads; ++h)
      if (std::fabs(double(a.alibi_slopes[h])) * double(a.nq + b.nk) > 1e37)
        return range_errorf("alibiSlopes", "alibiSlopes[%zu] = %s is too large: slope·(nq + nk) could overflow float32 scores; the limit is 1e37",
                            h, fmt(a.alibi_slopes[h]).c_str());
  }

  // Scores that could overflow float32 are refused: per head, max ‖q‖·‖k‖ (and its scaled value) ≤ 1e37.
  const TensorView &q = b.q, &k = b.k;
  const std::size_t group = b.heads / b.kv_heads;
  for (std::size_t bi = 0; bi < b.batch; ++bi)
    for (std::size_t g = 0; g < b.kv_heads; ++g) {
      const double kn = cache ? cache->max_key_norm() : max_row_norm(k.data + bi * k.batch_stride + g * k.head_stride, b.nk, b.dk, k.row_stride);
      for (std::size_t h = g * group; h < (g + 1) * group; ++h) {
        const double bound = max_row_norm(q.data + bi * q.batch_stride + h * q.head_stride, b.nq, b.dk, q.row_stride) * kn;
        if (bound > 1e37 || bound * b.scale > 1e37)
          return range_errorf("q", "q and %s are too large: max ‖q‖·‖k‖ = %s (× scale %s) could overflow float32 scores; the limit is 1e37",
                              cache ? "the cache's keys" : "k", fmt(bound).c_str(), fmt(b.scale).c_str());
      }
    }
  return Status::success();
}

}  // namespace detail

namespace {

// Everything attention() checks before reading a value: the plan, and the lengths of the outputs given (an empty
// one is checked only when `required`: attention()'s out).
Status plan_call(const AttentionArgs& a, const AttentionOutputs& o, bool wants_matrix, bool required, detail::AttentionPlan& plan) {
  using namespace detail;
  if (auto s = plan_attention(a, wants_matrix, plan); !s.ok()) return s;
  const AttentionBatch& batch = plan.batch;
  const std::size_t heads = batch.heads, nk = batch.nk, dv = batch.dv, nq = batch.nq;
  if ((required || !o.out.empty()) && o.out.size() != plan.out_len)
    return check_length("out", o.out.size(), plan.out_len, plan.shape("nq·dv", "heads", heads, nq, dv));
  for (auto [name, span] : {std::pair{"rawScores", o.raw_scores}, {"scores", o.scores}, {"weights", o.weights}})
    if (!span.empty() && span.size() != plan.bhn)
      return check_length(name, span.size(), plan.bhn, plan.single ? format("nq·nk = %zu·%zu", nq, nk)
                                                                   : format("batch·heads·nq·nk = %zu·%zu·%zu·%zu", a.batch, heads, nq, nk));
  if (!o.lse.empty() && o.lse.size() != plan.lse_len)
    return check_length("lse", o.lse.size(), plan.lse_len,
                        plan.single ? format("nq = %zu", nq) : format("batch·heads·nq = %zu·%zu·%zu", a.batch, heads, nq));
  if (a.path == AttentionPath::streaming && wants_matrix)
    return Status::range_error("path", "path 'streaming' never builds the score matrix, so it cannot return scores or weights");
  return Status::success();
}

}  // namespace

namespace detail {

void shape_of(const AttentionArgs& a, const AttentionPlan& plan, AttentionShape& shape) {
  const AttentionBatch& b = plan.batch;
  shape.batch = b.batch, shape.heads = b.heads, shape.kv_heads = b.kv_heads;
  shape.nq = a.nq, shape.nk = b.nk, shape.dk = b.dk, shape.dv = b.dv;
  for (std::size_t d = 0; d < 4; ++d) shape.mask[d] = plan.mask_shape[d];
  shape.out = plan.out_len, shape.matrix = plan.bhn, shape.lse = plan.lse_len;
  shape.q = plan.q_len, shape.k = a.cache ? 0 : plan.k_len, shape.v = a.cache ? 0 : plan.v_len;
}

}  // namespace detail

Status check_attention(const AttentionArgs& a, const AttentionOutputs& o, bool wants_matrix, AttentionShape& shape) {
  detail::AttentionPlan plan;
  if (auto s = plan_call(a, o, wants_matrix, false, plan); !s.ok()) return s;
  detail::shape_of(a, plan, shape);
  return Status::success();
}

Status attention(const AttentionArgs& a, const AttentionOutputs& o) {
  using namespace detail;
  AttentionPlan plan;
  const bool wants_matrix = !o.raw_scores.empty() || !o.scores.empty() || !o.weights.empty();
  if (auto s = plan_call(a, o, wants_matrix, true, plan); !s.ok()) return s;
  AttentionBatch& batch = plan.batch;
  if (auto s = check_attention_values(a, plan); !s.ok()) return s;

  batch.out = o.out.data();
  auto data = [](std::span<float> s) { return s.empty() ? nullptr : s.data(); };
  batch.raw_scores = data(o.raw_scores), batch.scores = data(o.scores), batch.weights = data(o.weights), batch.lse = data(o.lse);
  batch.materialize = a.path == AttentionPath::materialized || (a.path == AttentionPath::automatic && wants_matrix);
  batch.item_begin = a.item_begin, batch.item_end = a.item_end;
  return run_attention(batch);
}

}  // namespace attnlab
