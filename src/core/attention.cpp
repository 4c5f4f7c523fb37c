#include "attention.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <utility>

#include "attention_impl.h"
#include "kernels/kernels.h"
#include "rows.h"
#include "scratch.h"
#include "validate.h"

namespace attnlab {
namespace detail {
namespace {

namespace kern = kernels::active;

// Keys are visited in tiles of kKeyTile. Kᵀ is packed tile by tile — tile t holds [dk × kKeyTile] with
// row stride kKeyTile — so Q·Kᵀ is a row-major GEMM with unit-stride loads along the keys, and the rows a
// tile touches are 512 bytes apart instead of nk·4 (which, at nk = 1024, aliases onto the same cache sets).
// 128 keys rather than 64: half the per-row softmax bookkeeping and GEMM calls per key, 2–3 % faster.
constexpr std::size_t kKeyTile = 128;

std::size_t packed_keys_size(const AttentionProblem& p) noexcept {
  return sat_mul(sat_mul(p.nk / kKeyTile + (p.nk % kKeyTile != 0), kKeyTile), p.dk);
}

void pack_keys(const AttentionProblem& p, float* kt) noexcept {
  for (std::size_t j = 0; j < p.nk; ++j) {
    float* tile = kt + (j / kKeyTile) * kKeyTile * p.dk + j % kKeyTile;
    for (std::size_t d = 0; d < p.dk; ++d) tile[d * kKeyTile] = p.k[j * p.ldk + d];
  }
}

// Keys j0 … j0+count−1 of row i that the causal mask leaves visible (all of them without the mask).
std::size_t visible_in(const AttentionProblem& p, std::size_t i, std::size_t j0, std::size_t count) noexcept {
  if (!p.causal) return count;
  const std::size_t visible = causal_keys(i, p.nq, p.nk);
  return visible <= j0 ? 0 : visible - j0 < count ? visible - j0 : count;
}

// Row i of the logits, in place: -inf past the causal limit, and the visible part times `scale` (1 when Q
// came pre-scaled) plus the additive mask. Entries past the limit are only written, never read: the
// streaming path leaves them uncomputed.
void mask_row(const AttentionProblem& p, float scale, std::size_t i, std::size_t j0, std::size_t count,
              float* row) noexcept {
  const std::size_t live = visible_in(p, i, j0, count);
  for (std::size_t j = live; j < count; ++j) row[j] = -INFINITY;
  if ((p.mask || scale != 1.0f) && live) kern::scale_add(row, live, scale, p.mask ? p.mask + i * p.nk + j0 : nullptr);
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

}  // namespace

Status check_score_range(const AttentionProblem& p, const char* q_name, const char* k_name) {
  // |q·k| and every partial sum of it are ≤ ‖q‖·‖k‖; keep that (and its scaled value) well inside float32.
  const double bound = max_row_norm(p.q, p.nq, p.dk, p.ldq) * max_row_norm(p.k, p.nk, p.dk, p.ldk);
  const double limit = 1e37;
  if (bound <= limit && bound * p.scale <= limit) return Status::success();
  return Status::range_error(q_name, std::string(q_name) + " and " + k_name +
                                         " are too large: max ‖q‖·‖k‖ = " + fmt(bound) + " (× scale " + fmt(p.scale) +
                                         ") could overflow float32 scores; the limit is 1e37");
}

Status attend_materialized(const AttentionProblem& p) {
  // Same packed GEMM as the streaming path: Q packed once, then each 4-row panel of the weights is
  // packed just before weights·V (rows of nk floats are too far apart to read as broadcasts).
  const std::size_t nn = p.nq * p.nk;  // callers checked that this fits
  const std::size_t kt_size = packed_keys_size(p), q_size = kernels::packed_size(p.nq, p.dk),
                    panel_size = kernels::packed_size(kernels::kPanelRows, p.nk);
  Scratch kt(kt_size), qp(q_size), panel(panel_size);
  // Logits go into the caller's scores buffer when there is one; weights likewise, else scratch.
  Scratch logits_tmp(p.scores ? 0 : nn);
  Scratch weights_tmp(p.weights ? 0 : nn);
  if (!kt.ok_for(kt_size) || !qp.ok_for(q_size) || !panel.ok_for(panel_size) ||
      !logits_tmp.ok_for(p.scores ? 0 : nn) || !weights_tmp.ok_for(p.weights ? 0 : nn))
    return Status::no_memory("the attention score matrix");
  float* logits = p.scores ? p.scores : logits_tmp.data();
  float* weights = p.weights ? p.weights : weights_tmp.data();

  pack_keys(p, kt.data());
  kern::pack_rows(p.nq, p.dk, p.q, p.ldq, 1.0f, qp.data());  // unscaled: raw scores are QKᵀ itself
  for (std::size_t j0 = 0; j0 < p.nk; j0 += kKeyTile)
    kern::gemm_packed(p.nq, p.nk - j0 < kKeyTile ? p.nk - j0 : kKeyTile, p.dk, qp.data(), kt.data() + j0 * p.dk,
                      kKeyTile, logits + j0, p.nk, false);
  if (p.raw_scores) std::memcpy(p.raw_scores, logits, nn * sizeof(float));
  for (std::size_t i = 0; i < p.nq; ++i) {
    float* row = logits + i * p.nk;
    mask_row(p, p.scale, i, 0, p.nk, row);
    softmax_row(row, p.nk, 1.0f, false, weights + i * p.nk);
  }
  for (std::size_t i0 = 0; i0 < p.nq; i0 += kernels::kPanelRows) {
    const std::size_t rows = p.nq - i0 < kernels::kPanelRows ? p.nq - i0 : kernels::kPanelRows;
    kern::pack_rows(rows, p.nk, weights + i0 * p.nk, p.nk, 1.0f, panel.data());
    kern::gemm_packed(rows, p.dv, p.nk, panel.data(), p.v, p.ldv, p.out + i0 * p.ldo, p.ldo, false);
  }
  return Status::success();
}

Status attend_streaming(const AttentionProblem& p) {
  // Flash-attention style: a block of query rows walks the keys in tiles, keeping a running max m,
  // running sum l and an unnormalized output per row; earlier partial results are rescaled by
  // exp(m_old − m_new) whenever the max grows. Memory: Kᵀ plus one tile, never nq×nk.
  // Each query block is copied pre-multiplied by the scale, so the tiles need no scaling pass.
  constexpr std::size_t kRows = 32, kKeys = kKeyTile, kPanel = kernels::kPanelRows;
  // Both GEMMs read their left operand packed (kernels::pack_rows): the query block once per block,
  // the probabilities once per tile.
  const std::size_t kt_size = packed_keys_size(p), tile_floats = kRows * kKeys, acc_floats = sat_mul(kRows, p.dv),
                    qblock_floats = kernels::packed_size(kRows, p.dk), ptile_floats = kernels::packed_size(kRows, kKeys);
  Scratch kt(kt_size), tile(tile_floats), acc(acc_floats), stats(2 * kRows), qblock(qblock_floats),
      ptile(ptile_floats);
  if (!kt.ok_for(kt_size) || !tile.ok_for(tile_floats) || !acc.ok_for(acc_floats) || !stats.ok_for(2 * kRows) ||
      !qblock.ok_for(qblock_floats) || !ptile.ok_for(ptile_floats))
    return Status::no_memory("the attention tiles");
  float* const run_max = stats.data();
  float* const run_sum = stats.data() + kRows;
  pack_keys(p, kt.data());
  // q·scale is the cheaper place to apply the scale, unless it could overflow where q·k·scale does not
  // (huge q against zero keys): then the tiles are scaled instead.
  const bool prescale = max_row_norm(p.q, p.nq, p.dk, p.ldq) * p.scale <= 1e37;
  const float q_scale = prescale ? p.scale : 1.0f, tile_scale = prescale ? 1.0f : p.scale;

  for (std::size_t i0 = 0; i0 < p.nq; i0 += kRows) {
    const std::size_t rows = p.nq - i0 < kRows ? p.nq - i0 : kRows;
    // Keys beyond what the block's last row may see are masked for every row: skip those tiles.
    const std::size_t key_end = p.causal ? causal_keys(i0 + rows - 1, p.nq, p.nk) : p.nk;
    std::memset(acc.data(), 0, rows * p.dv * sizeof(float));
    for (std::size_t r = 0; r < rows; ++r) run_max[r] = -INFINITY, run_sum[r] = 0.0f;
    kern::pack_rows(rows, p.dk, p.q + i0 * p.ldq, p.ldq, q_scale, qblock.data());

    for (std::size_t j0 = 0; j0 < key_end; j0 += kKeys) {
      const std::size_t cols = key_end - j0 < kKeys ? key_end - j0 : kKeys;
      float* s = tile.data();
      // A tile across the causal diagonal goes panel by panel (4 rows), each up to the keys its last row
      // sees: the scores past that are masked anyway, and their probabilities are 0 in P·V. Any other tile
      // is one call over all rows and keys. Both GEMMs go through by_panel: gemm(first row, rows, keys) per part.
      const bool diagonal = p.causal && visible_in(p, i0, j0, cols) < cols;
      auto by_panel = [&](auto&& gemm) {
        if (!diagonal) return gemm(std::size_t{0}, rows, cols);
        for (std::size_t r0 = 0; r0 < rows; r0 += kPanel) {
          const std::size_t pr = rows - r0 < kPanel ? rows - r0 : kPanel;
          if (const std::size_t seen = visible_in(p, i0 + r0 + pr - 1, j0, cols)) gemm(r0, pr, seen);
        }
      };
      by_panel([&](std::size_t r0, std::size_t pr, std::size_t keys) {
        kern::gemm_packed(pr, keys, p.dk, qblock.data() + r0 * p.dk, kt.data() + j0 * p.dk, kKeyTile, s + r0 * kKeys, kKeys,
                          false);
      });
      for (std::size_t r = 0; r < rows; ++r) {
        float* row = s + r * kKeys;
        mask_row(p, tile_scale, i0 + r, j0, cols, row);
        const float tile_max = kern::row_max(row, cols);
        const float new_max = tile_max > run_max[r] ? tile_max : run_max[r];
        if (new_max == -INFINITY) {  // nothing visible yet in this row: contributes nothing
          std::memset(row, 0, cols * sizeof(float));
          continue;
        }
        const float rescale = run_max[r] == -INFINITY ? 0.0f : std::exp(run_max[r] - new_max);
        run_sum[r] = run_sum[r] * rescale + kern::exp_shifted(row, cols, new_max, 1.0f, row);
        if (rescale != 1.0f) kern::scale(acc.data() + r * p.dv, p.dv, rescale);
        run_max[r] = new_max;
      }
      kern::pack_rows(rows, cols, s, kKeys, 1.0f, ptile.data());
      by_panel([&](std::size_t r0, std::size_t pr, std::size_t keys) {  // a panel's packed rows start at r0·cols
        kern::gemm_packed(pr, p.dv, keys, ptile.data() + r0 * cols, p.v + j0 * p.ldv, p.ldv, acc.data() + r0 * p.dv, p.dv,
                          true);
      });
    }
    for (std::size_t r = 0; r < rows; ++r) {
      float* dst = p.out + (i0 + r) * p.ldo;
      const float* src = acc.data() + r * p.dv;
      const float inv = run_sum[r] > 0.0f ? 1.0f / run_sum[r] : 0.0f;  // all-masked row → zeros
      for (std::size_t c = 0; c < p.dv; ++c) dst[c] = src[c] * inv;
      if (p.lse) p.lse[i0 + r] = run_sum[r] > 0.0f ? run_max[r] + std::log(run_sum[r]) : -INFINITY;
    }
  }
  return Status::success();
}

}  // namespace detail

Status attention(const AttentionArgs& a, const AttentionOutputs& o) {
  using namespace detail;
  for (auto [name, value] : {std::pair{"nq", a.nq}, {"nk", a.nk}, {"dk", a.dk}, {"dv", a.dv}})
    if (auto s = check_size(name, value); !s.ok()) return s;
  std::size_t q_len, k_len, v_len, out_len;
  if (auto s = check_product("q", a.nq, a.dk, q_len); !s.ok()) return s;
  if (auto s = check_product("k", a.nk, a.dk, k_len); !s.ok()) return s;
  if (auto s = check_product("v", a.nk, a.dv, v_len); !s.ok()) return s;
  if (auto s = check_product("out", a.nq, a.dv, out_len); !s.ok()) return s;
  const bool wants_matrix = !o.raw_scores.empty() || !o.scores.empty() || !o.weights.empty();
  // nq·nk only has to fit when something of that size exists; streaming alone never builds it.
  std::size_t nn = 0;
  if (wants_matrix || !a.mask.empty() || a.path == AttentionPath::materialized)
    if (auto s = check_product("nq·nk", a.nq, a.nk, nn); !s.ok()) return s;
  const std::string nq_s = std::to_string(a.nq), nk_s = std::to_string(a.nk);
  const std::string dk_s = std::to_string(a.dk), dv_s = std::to_string(a.dv);
  if (auto s = check_length("q", a.q.size(), q_len, "nq·dk = " + nq_s + "·" + dk_s); !s.ok()) return s;
  if (auto s = check_length("k", a.k.size(), k_len, "nk·dk = " + nk_s + "·" + dk_s); !s.ok()) return s;
  if (auto s = check_length("v", a.v.size(), v_len, "nk·dv = " + nk_s + "·" + dv_s); !s.ok()) return s;
  if (!a.mask.empty())
    if (auto s = check_length("mask", a.mask.size(), nn, "nq·nk = " + nq_s + "·" + nk_s); !s.ok()) return s;
  if (auto s = check_length("out", o.out.size(), out_len, "nq·dv = " + nq_s + "·" + dv_s); !s.ok()) return s;
  for (auto [name, span] : {std::pair{"rawScores", o.raw_scores}, {"scores", o.scores}, {"weights", o.weights}})
    if (!span.empty())
      if (auto s = check_length(name, span.size(), nn, "nq·nk = " + nq_s + "·" + nk_s); !s.ok()) return s;
  const float scale = a.scale ? *a.scale : 1.0f / std::sqrt(static_cast<float>(a.dk));
  if (a.scale)
    if (auto s = check_positive_finite("scale", *a.scale); !s.ok()) return s;
  if (a.path == AttentionPath::streaming && wants_matrix)
    return Status::range_error("path", "path 'streaming' never builds the score matrix, so it cannot return scores or weights");
  if (auto s = check_values("q", a.q, false); !s.ok()) return s;
  if (auto s = check_values("k", a.k, false); !s.ok()) return s;
  if (auto s = check_values("v", a.v, false); !s.ok()) return s;
  if (auto s = check_values("mask", a.mask, true); !s.ok()) return s;

  const AttentionProblem p{a.q.data(), a.dk, a.k.data(), a.dk, a.v.data(), a.dv, a.nq, a.nk, a.dk, a.dv, scale,
                           a.causal, a.mask.empty() ? nullptr : a.mask.data(), o.out.data(), a.dv,
                           o.raw_scores.empty() ? nullptr : o.raw_scores.data(),
                           o.scores.empty() ? nullptr : o.scores.data(),
                           o.weights.empty() ? nullptr : o.weights.data()};
  if (auto s = check_score_range(p, "q", "k"); !s.ok()) return s;
  const bool materialize = a.path == AttentionPath::materialized || (a.path == AttentionPath::automatic && wants_matrix);
  return materialize ? attend_materialized(p) : attend_streaming(p);
}

}  // namespace attnlab
