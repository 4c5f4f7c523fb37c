// The attention kernels: one head (or one group of query heads over a shared K/V head) on strided views.
// attention_batch.cpp validates the public arguments and cuts whole tensors into these problems.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <utility>

#include "attention_impl.h"
#include "kernels/kernels.h"
#include "rows.h"
#include "validate.h"

namespace attnlab {
namespace detail {
namespace {

namespace kern = kernels::active;

// Everything a row needs to finish its scores, found once per query block instead of once per key tile.
struct RowInfo {
  std::size_t i, h;            // query index and folded head
  std::size_t lo, hi;          // visible keys [lo, hi)
  std::int64_t diag;           // i', the diagonal key the window and ALiBi are measured from
  float slope;                 // ALiBi slope, 0 = none
  const float* add;            // the row's additive mask at key 0 (null: none)
  const std::uint8_t* keep;    // the row's boolean mask at key 0 (null: none)
};

// The mask as a view; the dense [nq×nk] mask of the original single-head problem is a view too.
MaskView mask_of(const AttentionProblem& p) noexcept {
  if (p.mask) return MaskView{p.mask, nullptr, p.nk, 1, SIZE_MAX, 0};
  return p.mask_view;
}

Visibility visibility(const AttentionProblem& p) noexcept {
  return {p.seq_q ? p.seq_q : p.nq, p.nk, p.kv_len, p.mask ? SIZE_MAX : p.mask_view.keys, p.causal, p.top_left, p.window};
}

// Of the problem's row i (query position row0 + i).
std::int64_t diagonal(const AttentionProblem& p, std::size_t i) noexcept { return row_diagonal(visibility(p), p.row0 + i); }

RowInfo row_info(const AttentionProblem& p, const MaskView& m, std::size_t r) noexcept {
  const std::size_t f = p.fold.heads, i = r / f, h = r % f;
  const KeySpan range = row_key_span(p, i);
  RowInfo info{i, h, range.lo, range.hi, diagonal(p, i), p.alibi ? p.alibi[h] : 0.0f, nullptr, nullptr};
  const std::size_t at = h * m.head_stride + i * m.row_stride;
  if (m.add) info.add = m.add + at;
  if (m.keep) info.keep = m.keep + at;
  return info;
}

// Keys j0 … j0+n−1 of a row, from scale·(q·k) (times `s`, 1 when the scale is already in) to the final
// logits: softcap, ALiBi, then the mask. Only visible keys come here.
void finish_scores(const AttentionProblem& p, const MaskView& m, const RowInfo& r, float s, std::size_t j0,
                   std::size_t n, float* x) noexcept {
  if (p.softcap > 0.0f) {
    kern::soft_cap(x, n, s, p.softcap);
    s = 1.0f;
  }
  if (r.slope != 0.0f) {
    if (s != 1.0f) kern::scale(x, n, s), s = 1.0f;
    kern::distance_bias(x, n, float(r.diag - std::int64_t(j0)), r.slope);
  }
  if (r.add && m.col_stride) {
    kern::scale_add(x, n, s, r.add + j0);
  } else if (r.add) {  // one value for every key of the row
    kern::scale_add(x, n, s, nullptr);
    const float c = *r.add;
    if (c != 0.0f)
      for (std::size_t j = 0; j < n; ++j) x[j] = std::fmin(x[j] + c, FLT_MAX);
  } else if (s != 1.0f) {
    kern::scale_add(x, n, s, nullptr);
  }
  if (r.keep && m.col_stride) {
    kern::mask_bool(x, n, r.keep + j0);
  } else if (r.keep && !*r.keep) {
    for (std::size_t j = 0; j < n; ++j) x[j] = -INFINITY;
  }
}

void fill(float* x, std::size_t n, float value) noexcept {
  for (std::size_t j = 0; j < n; ++j) x[j] = value;
}

// Reads one float of every 64-byte line of x[0..n), in order, with independent loads: memory streams in at full
// speed, where the GEMMs' strided first reads of a cold tile (lines 512 bytes apart, 8 passes) stall on misses
// one after another. Used before the tiles of a problem too small to reuse them (a decode step). Returns a value
// the caller keeps, so that the loads are not dropped.
float touch(const float* x, std::size_t n) noexcept {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) s0 += x[i], s1 += x[i + 16], s2 += x[i + 32], s3 += x[i + 48];
  for (; i < n; i += 16) s0 += x[i];
  return (s0 + s1) + (s2 + s3);
}

}  // namespace

std::int64_t row_diagonal(const Visibility& v, std::size_t i) noexcept {
  const std::size_t keys = v.nk < v.kv_len ? v.nk : v.kv_len;
  return std::int64_t(i) + (v.top_left ? 0 : std::int64_t(keys) - std::int64_t(v.nq));
}

KeySpan key_span(const Visibility& v, std::size_t i) noexcept {
  const std::size_t keys = v.nk < v.kv_len ? v.nk : v.kv_len;
  const std::size_t end = keys < v.mask_keys ? keys : v.mask_keys;
  if (!v.causal && v.window.left < 0 && v.window.right < 0) return {0, end};
  const std::int64_t d = row_diagonal(v, i);
  std::int64_t lo = 0, hi = std::int64_t(end);
  if (v.causal && d + 1 < hi) hi = d + 1;
  if (v.window.right >= 0 && d + v.window.right + 1 < hi) hi = d + v.window.right + 1;
  if (v.window.left >= 0 && d - v.window.left > lo) lo = d - v.window.left;
  return hi <= lo ? KeySpan{0, 0} : KeySpan{std::size_t(lo), std::size_t(hi)};
}

KeySpan row_key_span(const AttentionProblem& p, std::size_t i) noexcept { return key_span(visibility(p), p.row0 + i); }

std::size_t packed_keys_size(std::size_t nk, std::size_t dk) noexcept {
  return sat_mul(sat_mul(nk / kKeyTile + (nk % kKeyTile != 0), kKeyTile), dk);
}

void pack_keys(const float* k, std::size_t ldk, std::size_t first, std::size_t count, std::size_t dk,
               float* kt) noexcept {
  for (std::size_t t = 0; t < count; ++t) {
    const std::size_t j = first + t;
    float* tile = kt + (j / kKeyTile) * kKeyTile * dk + j % kKeyTile;
    const float* row = k + t * ldk;
    for (std::size_t d = 0; d < dk; ++d) tile[d * kKeyTile] = row[d];
  }
}

// Largest row norm, for the overflow checks. The vector sum of squares in float32 is exact enough there: its
// relative error is at most cols·2⁻²⁴ ≤ 1/16 for rows up to 2²⁰, against a limit 34× below FLT_MAX. Longer
// rows, and rows whose float sum overflows, are summed in double.
double max_row_norm(const float* x, std::size_t rows, std::size_t cols, std::size_t ld) noexcept {
  const bool short_rows = cols <= (std::size_t{1} << 20);
  double best = 0.0;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = x + r * ld;
    double s = short_rows ? kern::sum_squares(row, cols) : INFINITY;
    if (!std::isfinite(s)) {
      s = 0.0;
      for (std::size_t c = 0; c < cols; ++c) s += double(row[c]) * double(row[c]);
    }
    best = s > best ? s : best;
  }
  return std::sqrt(best);
}

Status check_score_range(const AttentionProblem& p, const char* q_name, const char* k_name) {
  // |q·k| and every partial sum of it are ≤ ‖q‖·‖k‖; keep that (and its scaled value) well inside float32.
  const double bound = max_row_norm(p.q, p.nq, p.dk, p.ldq) * max_row_norm(p.k, p.nk, p.dk, p.ldk);
  const double limit = 1e37;
  if (bound <= limit && bound * p.scale <= limit) return Status::success();
  return Status::range_error(q_name, std::string(q_name) + " and " + k_name +
                                         " are too large: max ‖q‖·‖k‖ = " + fmt(bound) + " (× scale " + fmt(p.scale) +
                                         ") could overflow float32 scores; the limit is 1e37");
}

Status attend_materialized(const AttentionProblem& p, Workspace& ws) {
  // Same packed GEMM as the streaming path: Q packed once, then each 4-row panel of the weights is
  // packed just before weights·V (rows of nk floats are too far apart to read as broadcasts).
  // One head only (fold.heads = 1): the matrices it returns are per head.
  const std::size_t nn = p.nq * p.nk;  // callers checked that this fits
  const std::size_t kt_size = p.k_packed ? 0 : packed_keys_size(p.nk, p.dk), q_size = kernels::packed_size(p.nq, p.dk),
                    panel_size = kernels::packed_size(kernels::kPanelRows, p.nk);
  // Logits go into the caller's scores buffer when there is one; weights likewise, else scratch.
  float* const kt_buf = ws.get(0, kt_size);
  float* const qp = ws.get(1, q_size);
  float* const panel = ws.get(2, panel_size);
  float* const logits_tmp = ws.get(3, p.scores ? 0 : nn);
  float* const weights_tmp = ws.get(4, p.weights ? 0 : nn);
  if ((kt_size && !kt_buf) || !qp || !panel || (!p.scores && !logits_tmp) || (!p.weights && !weights_tmp))
    return Status::no_memory("the attention score matrix");
  float* logits = p.scores ? p.scores : logits_tmp;
  float* weights = p.weights ? p.weights : weights_tmp;
  const MaskView mask = mask_of(p);

  const float* kt = p.k_packed;
  if (!kt) pack_keys(p.k, p.ldk, 0, p.nk, p.dk, kt_buf), kt = kt_buf;
  kern::pack_rows(p.nq, p.dk, p.q, p.ldq, 1.0f, qp);  // unscaled: raw scores are QKᵀ itself
  for (std::size_t j0 = 0; j0 < p.nk; j0 += kKeyTile)
    kern::gemm_packed(p.nq, p.nk - j0 < kKeyTile ? p.nk - j0 : kKeyTile, p.dk, qp, kt + j0 * p.dk, kKeyTile,
                      logits + j0, p.nk, false);
  if (p.raw_scores) std::memcpy(p.raw_scores, logits, nn * sizeof(float));
  for (std::size_t i = 0; i < p.nq; ++i) {
    float* row = logits + i * p.nk;
    const RowInfo r = row_info(p, mask, i);
    fill(row, r.lo, -INFINITY);
    fill(row + r.hi, p.nk - r.hi, -INFINITY);
    if (r.hi > r.lo) finish_scores(p, mask, r, p.scale, r.lo, r.hi - r.lo, row + r.lo);
    const float m = r.hi > r.lo ? kern::row_max(row + r.lo, r.hi - r.lo) : -INFINITY;
    softmax_row_shifted(row, p.nk, m, 1.0f, false, weights + i * p.nk);
    if (p.lse) p.lse[i] = m == -INFINITY ? -INFINITY : m + std::log(kern::exp_shifted(row + r.lo, r.hi - r.lo, m, 1.0f, nullptr));
  }
  for (std::size_t i0 = 0; i0 < p.nq; i0 += kernels::kPanelRows) {
    const std::size_t rows = p.nq - i0 < kernels::kPanelRows ? p.nq - i0 : kernels::kPanelRows;
    kern::pack_rows(rows, p.nk, weights + i0 * p.nk, p.nk, 1.0f, panel);
    kern::gemm_packed(rows, p.dv, p.nk, panel, p.v, p.ldv, p.out + i0 * p.ldo, p.ldo, false);
  }
  return Status::success();
}

Status attend_streaming(const AttentionProblem& p, Workspace& ws) {
  // Flash-attention style: a block of query rows walks the keys in tiles, keeping a running max m,
  // running sum l and an unnormalized output per row; earlier partial results are rescaled by
  // exp(m_old − m_new) whenever the max grows. Memory: Kᵀ plus one tile, never nq×nk.
  // Each query block is copied pre-multiplied by the scale, so the tiles need no scaling pass.
  // Only keys some row of the block sees are visited: tiles outside the block's key range are skipped, and a
  // tile that not every row sees whole (the causal diagonal, a window's edges, the end of a key length)
  // goes panel by panel (4 rows), each over the keys its rows see.
  constexpr std::size_t kRows = 32, kKeys = kKeyTile, kPanel = kernels::kPanelRows;
  const std::size_t heads = p.fold.heads, total = p.nq * heads;
  // Both GEMMs read their left operand packed (kernels::pack_rows): the query block once per block,
  // the probabilities once per tile.
  const std::size_t kt_size = p.k_packed ? 0 : packed_keys_size(p.nk, p.dk), acc_floats = sat_mul(kRows, p.dv),
                    qblock_floats = kernels::packed_size(kRows, p.dk), ptile_floats = kernels::packed_size(kRows, kKeys),
                    stage_floats = heads > 1 ? sat_mul(kRows, p.dk) : 0;
  float* const kt_buf = ws.get(0, kt_size);
  float* const s = ws.get(1, kRows * kKeys);
  float* const acc = ws.get(2, acc_floats);
  float* const stats = ws.get(3, 2 * kRows);
  float* const qblock = ws.get(4, qblock_floats);
  float* const ptile = ws.get(5, ptile_floats);
  float* const qstage = ws.get(6, stage_floats);
  if ((kt_size && !kt_buf) || !s || !acc || !stats || !qblock || !ptile || (stage_floats && !qstage))
    return Status::no_memory("the attention tiles");
  float* const run_max = stats;
  float* const run_sum = stats + kRows;
  const MaskView mask = mask_of(p);
  const float* kt = p.k_packed;
  if (!kt) pack_keys(p.k, p.ldk, 0, p.nk, p.dk, kt_buf), kt = kt_buf;
  // q·scale is the cheaper place to apply the scale, unless it could overflow where q·k·scale does not
  // (huge q against zero keys): then that row's scores are scaled instead. Decided row by row, from the row
  // alone, so that a row's result does not depend on which rows share its block (a call cut by query rows).
  const bool prescale_all = p.q_norm >= 0 && p.q_norm * p.scale <= 1e37;
  RowInfo info[kRows];
  bool prescaled[kRows];
  std::size_t panel_lo[kRows / kPanel], panel_hi[kRows / kPanel];
  // One block of rows (a decode step: a few query heads of one position) reads each key tile once, usually from
  // memory (a model's other layers ran since): each tile is first brought in by sequential reads, where the
  // GEMMs' strided first reads (lines 512 bytes apart) stalled on one miss after another; with the tiles already in
  // cache, no slower (measured: docs/performance.md#decode-step-and-prefill-the-whole-operator).
  const bool stream_tiles = total <= kRows;
  volatile float touched = 0.0f;
  static_cast<void>(touched);

  for (std::size_t r0 = 0; r0 < total; r0 += kRows) {
    const std::size_t rows = total - r0 < kRows ? total - r0 : kRows;
    std::size_t block_lo = SIZE_MAX, block_hi = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      info[r] = row_info(p, mask, r0 + r);
      if (info[r].hi > info[r].lo) {
        block_lo = info[r].lo < block_lo ? info[r].lo : block_lo;
        block_hi = info[r].hi > block_hi ? info[r].hi : block_hi;
      }
    }
    std::memset(acc, 0, rows * p.dv * sizeof(float));
    for (std::size_t r = 0; r < rows; ++r) run_max[r] = -INFINITY, run_sum[r] = 0.0f;
    bool block_prescaled = true;
    for (std::size_t r = 0; r < rows; ++r) {
      prescaled[r] = prescale_all || max_row_norm(p.q + info[r].i * p.ldq + info[r].h * p.fold.q_stride, 1, p.dk, p.ldq) * p.scale <= 1e37;
      block_prescaled = block_prescaled && prescaled[r];
    }
    if (block_hi > 0) {
      const float q_scale = block_prescaled ? p.scale : 1.0f;
      if (heads == 1) {
        kern::pack_rows(rows, p.dk, p.q + r0 * p.ldq, p.ldq, q_scale, qblock);
      } else {  // the rows of several heads: gathered first, then packed like one matrix
        for (std::size_t r = 0; r < rows; ++r)
          std::memcpy(qstage + r * p.dk, p.q + info[r].i * p.ldq + info[r].h * p.fold.q_stride, p.dk * sizeof(float));
        kern::pack_rows(rows, p.dk, qstage, p.dk, q_scale, qblock);
      }
      // Packed unscaled: the rows that may be prescaled get the scale now (q·1·scale rounds as q·scale).
      for (std::size_t r = 0; !block_prescaled && r < rows; ++r)
        if (prescaled[r])
          for (std::size_t d = 0; d < p.dk; ++d) qblock[(r / kPanel) * kPanel * p.dk + d * kPanel + r % kPanel] *= p.scale;
    }

    for (std::size_t j0 = block_hi > 0 ? block_lo - block_lo % kKeys : 0; j0 < block_hi; j0 += kKeys) {
      const std::size_t tile_end = block_hi - j0 < kKeys ? block_hi : j0 + kKeys, cols = tile_end - j0;
      // Whole tile for every row, or each panel over the union of its rows' keys in this tile.
      bool whole = true;
      for (std::size_t r = 0; r < rows && whole; ++r) whole = info[r].lo <= j0 && info[r].hi >= tile_end;
      const std::size_t panels = (rows + kPanel - 1) / kPanel;
      for (std::size_t pi = 0; pi < panels; ++pi) {
        std::size_t lo = cols, hi = 0;
        if (whole) lo = 0, hi = cols;
        for (std::size_t r = pi * kPanel; !whole && r < rows && r < pi * kPanel + kPanel; ++r) {
          const std::size_t a = info[r].lo > j0 ? info[r].lo - j0 : 0, b = info[r].hi < tile_end ? info[r].hi : tile_end;
          if (b > j0 + a) lo = a < lo ? a : lo, hi = b - j0 > hi ? b - j0 : hi;
        }
        panel_lo[pi] = lo, panel_hi[pi] = hi;
      }
      if (stream_tiles) {
        // The packed tile is [dk][kKeyTile]: of each of its rows, its first `cols` keys, which hold every key the GEMMs
        // below read (a panel's keys start at panel_lo ≥ 0), instead of all kKeyTile.
        float t = 0.0f;
        if (cols == kKeyTile) t += touch(kt + j0 * p.dk, p.dk * kKeyTile);  // a whole tile: one block of memory
        else
          for (std::size_t d = 0; d < p.dk; ++d) t += touch(kt + j0 * p.dk + d * kKeyTile, cols);
        if (p.ldv == p.dv) t += touch(p.v + j0 * p.ldv, cols * p.dv);  // rows side by side (a cache's): one block too
        else
          for (std::size_t c = 0; c < cols; ++c) t += touch(p.v + (j0 + c) * p.ldv, p.dv);
        touched = t;
      }
      // gemm(first row, row count, first key, key count) over the whole tile at once, or panel by panel.
      auto by_panel = [&](auto&& gemm) {
        if (whole) return gemm(std::size_t{0}, rows, std::size_t{0}, cols);
        for (std::size_t pi = 0; pi < panels; ++pi)
          if (panel_hi[pi] > panel_lo[pi])
            gemm(pi * kPanel, rows - pi * kPanel < kPanel ? rows - pi * kPanel : kPanel, panel_lo[pi], panel_hi[pi] - panel_lo[pi]);
      };
      by_panel([&](std::size_t pr0, std::size_t pr, std::size_t c0, std::size_t n) {
        kern::gemm_packed(pr, n, p.dk, qblock + pr0 * p.dk, kt + j0 * p.dk + c0, kKeyTile, s + pr0 * kKeys + c0, kKeys, false);
      });
      for (std::size_t r = 0; r < rows; ++r) {
        float* row = s + r * kKeys;
        const std::size_t plo = panel_lo[r / kPanel], phi = panel_hi[r / kPanel];
        const std::size_t a = info[r].lo > j0 ? info[r].lo - j0 : 0;
        const std::size_t b = info[r].hi < tile_end ? (info[r].hi > j0 ? info[r].hi - j0 : 0) : cols;
        if (b <= a) {  // nothing of this row in this tile; its panel still reads zeros here
          if (phi > plo) fill(row + plo, phi - plo, 0.0f);
          continue;
        }
        finish_scores(p, mask, info[r], prescaled[r] ? 1.0f : p.scale, j0 + a, b - a, row + a);
        const float tile_max = kern::row_max(row + a, b - a);
        const float new_max = tile_max > run_max[r] ? tile_max : run_max[r];
        if (new_max == -INFINITY) {  // nothing visible yet in this row: contributes nothing
          fill(row + plo, phi - plo, 0.0f);
          continue;
        }
        const float rescale = run_max[r] == -INFINITY ? 0.0f : std::exp(run_max[r] - new_max);
        run_sum[r] = run_sum[r] * rescale + kern::exp_shifted(row + a, b - a, new_max, 1.0f, row + a);
        if (rescale != 1.0f) kern::scale(acc + r * p.dv, p.dv, rescale);
        run_max[r] = new_max;
        fill(row + plo, a - plo, 0.0f);  // keys of the panel this row does not see
        fill(row + b, phi - b, 0.0f);
      }
      if (whole) {
        kern::pack_rows(rows, cols, s, kKeys, 1.0f, ptile);
        kern::gemm_packed(rows, p.dv, cols, ptile, p.v + j0 * p.ldv, p.ldv, acc, p.dv, true);
      } else {
        by_panel([&](std::size_t pr0, std::size_t pr, std::size_t c0, std::size_t n) {  // panel pr0/4 packed at pr0·kKeys
          kern::pack_rows(pr, n, s + pr0 * kKeys + c0, kKeys, 1.0f, ptile + pr0 * kKeys);
          kern::gemm_packed(pr, p.dv, n, ptile + pr0 * kKeys, p.v + (j0 + c0) * p.ldv, p.ldv, acc + pr0 * p.dv, p.dv, true);
        });
      }
    }
    for (std::size_t r = 0; r < rows; ++r) {
      float* dst = p.out + info[r].i * p.ldo + info[r].h * p.fold.o_stride;
      const float* src = acc + r * p.dv;
      const float inv = run_sum[r] > 0.0f ? 1.0f / run_sum[r] : 0.0f;  // a row that sees nothing → zeros
      for (std::size_t c = 0; c < p.dv; ++c) dst[c] = src[c] * inv;
      if (p.lse) p.lse[info[r].h * p.nq + info[r].i] = run_sum[r] > 0.0f ? run_max[r] + std::log(run_sum[r]) : -INFINITY;
    }
  }
  return Status::success();
}

}  // namespace detail
}  // namespace attnlab
