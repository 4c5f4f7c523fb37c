// AttentionArgs::item_begin / item_end, which lets one call be split across workers (init({ threads })): a call
// restricted to work items [begin, end) writes exactly those items' outputs — bit for bit what the whole call
// writes there — and leaves every other element as it was; validation still covers the whole call.
#include <cmath>
#include <cstring>
#include <vector>

#include "attention.h"
#include "attention_backward.h"
#include "testing.h"

using attnlab::AttentionArgs;
using attnlab::AttentionOutputs;
using attnlab::Layout;

namespace {

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("attention: an item range computes exactly its (batch, K/V head) items, the rest untouched", "[attention][items]") {
  const std::size_t batch = 2, heads = 6, kv = 3, nq = 37, nk = 45, dk = 8, dv = 5, group = heads / kv;
  const auto q = testing::normal(batch * heads * nq * dk, 11), k = testing::normal(batch * kv * nk * dk, 12), v = testing::normal(batch * kv * nk * dv, 13);
  for (const bool bshd : {false, true}) {
    for (const bool matrices : {false, true}) {
      AttentionArgs a{q, k, v, nq, nk, dk, dv};
      a.batch = batch, a.heads = heads, a.kv_heads = kv, a.causal = true, a.layout = bshd ? Layout::bshd : Layout::bhsd;
      const std::size_t rows = batch * heads * nq;
      std::vector<float> out(rows * dv), w(matrices ? rows * nk : 0), lse(rows);
      REQUIRE(attnlab::attention(a, {out, {}, {}, w, lse}).ok());
      for (const auto [begin, end] : {std::pair<std::size_t, std::size_t>{0, 1}, {1, 4}, {4, 6}, {2, 3}}) {
        const float sentinel = -12345.0f;
        std::vector<float> o2(out.size(), sentinel), w2(w.size(), sentinel), l2(lse.size(), sentinel);
        AttentionArgs part = a;
        part.item_begin = begin, part.item_end = end;
        REQUIRE(attnlab::attention(part, {o2, {}, {}, w2, l2}).ok());
        for (std::size_t b = 0; b < batch; ++b)
          for (std::size_t h = 0; h < heads; ++h) {
            const std::size_t item = b * kv + h / group;
            const bool in = item >= begin && item < end;
            for (std::size_t i = 0; i < nq; ++i) {
              const std::size_t row = (b * heads + h) * nq + i;
              const std::size_t at = bshd ? ((b * nq + i) * heads + h) * dv : row * dv;
              for (std::size_t t = 0; t < dv; ++t) REQUIRE(same_bits(o2[at + t], in ? out[at + t] : sentinel));
              REQUIRE(same_bits(l2[row], in ? lse[row] : sentinel));
              for (std::size_t j = 0; j < w.size() / rows; ++j) REQUIRE(same_bits(w2[row * nk + j], in ? w[row * nk + j] : sentinel));
            }
          }
      }
    }
  }
}

TEST_CASE("attention: a call restricted to some items still validates all of them", "[attention][items]") {
  const std::size_t nq = 4, nk = 4, d = 4;
  auto q = testing::normal(2 * nq * d, 1), k = testing::normal(2 * nk * d, 2), v = testing::normal(2 * nk * d, 3);
  k[2 * nk * d - 1] = NAN;  // in the second batch item's keys
  AttentionArgs a{q, k, v, nq, nk, d, d};
  a.batch = 2, a.item_begin = 0, a.item_end = 1;
  std::vector<float> out(2 * nq * d, 7.0f);
  const auto s = attnlab::attention(a, {out, {}, {}, {}, {}});
  REQUIRE_FALSE(s.ok());
  REQUIRE(s.arg == "k");
  for (float x : out) REQUIRE(x == 7.0f);  // nothing written
}

// AttentionArgs::q_begin / q_end: a call holding only query rows [q_begin, q_end) — its q, out, lse, weights and
// mask rows — computes exactly those rows of the whole call, bit for bit, wherever the rows are cut (inside a
// 4-row panel, a 32-row block, a 128-key tile's diagonal): causal of both alignments, windows, key lengths, masks
// broadcast or not, ALiBi, softcap, GQA and MQA folds, both layouts, the streaming and the materialized paths.
namespace {

struct RangeCase {
  const char* name;
  std::size_t batch, heads, kv, nq, nk, dk, dv;
  attnlab::Causal causal = false;
  attnlab::Window window{};
  int mask = 0;  // 0 none, 1 additive [nq, nk], 2 boolean [batch, 1, nq, nk], 3 additive [1, 1, 1, nk - 3]
  bool key_lengths = false, alibi = false, softcap = false;
};

// Rows [r0, r1) of a [batch, heads, rows, d] tensor in a layout.
std::vector<float> rows_of(const std::vector<float>& x, bool bshd, std::size_t batch, std::size_t heads, std::size_t rows,
                           std::size_t d, std::size_t r0, std::size_t r1) {
  std::vector<float> part;
  for (std::size_t b = 0; b < batch; ++b)
    if (bshd) {
      part.insert(part.end(), x.begin() + std::ptrdiff_t((b * rows + r0) * heads * d), x.begin() + std::ptrdiff_t((b * rows + r1) * heads * d));
    } else {
      for (std::size_t h = 0; h < heads; ++h)
        part.insert(part.end(), x.begin() + std::ptrdiff_t(((b * heads + h) * rows + r0) * d), x.begin() + std::ptrdiff_t(((b * heads + h) * rows + r1) * d));
    }
  return part;
}

void check_cuts(const RangeCase& c, bool bshd, bool weights, std::vector<float> q, float scale = 0.0f, float k_sd = 1.0f) {
  const std::size_t rows = c.batch * c.heads * c.nq;
  if (q.empty()) q = testing::normal(rows * c.dk, 21);
  const auto k = testing::normal(c.batch * c.kv * c.nk * c.dk, 22, k_sd), v = testing::normal(c.batch * c.kv * c.nk * c.dv, 23);
  std::vector<float> add;
  std::vector<std::uint8_t> keep;
  std::vector<std::int64_t> shape;
  if (c.mask == 1) add = testing::normal(c.nq * c.nk, 24), shape = {std::int64_t(c.nq), std::int64_t(c.nk)};
  if (c.mask == 2) {
    keep.resize(c.batch * c.nq * c.nk);
    for (std::size_t i = 0; i < keep.size(); ++i) keep[i] = (i * 7 + i / 13) % 5 != 0;
    shape = {std::int64_t(c.batch), 1, std::int64_t(c.nq), std::int64_t(c.nk)};
  }
  if (c.mask == 3) add = testing::normal(c.nk - 3, 25), shape = {1, 1, 1, std::int64_t(c.nk - 3)};
  std::vector<std::int32_t> lengths;
  for (std::size_t b = 0; c.key_lengths && b < c.batch; ++b) lengths.push_back(std::int32_t(c.nk - (b * 37) % c.nk));
  std::vector<float> slopes;
  for (std::size_t h = 0; c.alibi && h < c.heads; ++h) slopes.push_back(0.5f / float(h + 1));

  AttentionArgs a{q, k, v, c.nq, c.nk, c.dk, c.dv};
  a.batch = c.batch, a.heads = c.heads, a.kv_heads = c.kv, a.causal = c.causal, a.window = c.window;
  a.layout = bshd ? Layout::bshd : Layout::bhsd;
  a.mask = add, a.bool_mask = keep, a.key_lengths = lengths, a.alibi_slopes = slopes;
  if (!shape.empty()) a.mask_shape = shape;
  if (c.softcap) a.softcap = 3.0;
  if (scale > 0) a.scale = scale;
  std::vector<float> out(rows * c.dv), w(weights ? rows * c.nk : 0), lse(rows);
  REQUIRE(attnlab::attention(a, {out, {}, {}, w, lse}).ok());

  std::vector<std::vector<std::size_t>> cuts;
  for (std::size_t at : {1, 3, 4, 5, 8, 31, 32, 33, 64, 127, 128, 129})
    if (at < c.nq) cuts.push_back({0, at, c.nq});
  cuts.push_back({0, c.nq / 3, c.nq / 3 + 1, (2 * c.nq) / 3, c.nq});
  for (const auto& cut : cuts) {
    for (std::size_t p = 0; p + 1 < cut.size(); ++p) {
      const std::size_t r0 = cut[p], r1 = cut[p + 1], n = r1 - r0;
      if (n == 0) continue;
      CAPTURE(c.name, bshd, weights, r0, r1);
      const auto qp = rows_of(q, bshd, c.batch, c.heads, c.nq, c.dk, r0, r1);
      std::vector<float> addp = add;
      std::vector<std::uint8_t> keepp;
      std::vector<std::int64_t> shapep = shape;
      if (c.mask == 1) addp.assign(add.begin() + std::ptrdiff_t(r0 * c.nk), add.begin() + std::ptrdiff_t(r1 * c.nk)), shapep[0] = std::int64_t(n);
      if (c.mask == 2) {
        for (std::size_t b = 0; b < c.batch; ++b)
          keepp.insert(keepp.end(), keep.begin() + std::ptrdiff_t((b * c.nq + r0) * c.nk), keep.begin() + std::ptrdiff_t((b * c.nq + r1) * c.nk));
        shapep[2] = std::int64_t(n);
      }
      AttentionArgs part = a;
      part.q = qp, part.mask = addp, part.bool_mask = keepp;
      if (!shapep.empty()) part.mask_shape = shapep;
      part.q_begin = r0, part.q_end = r1;
      const std::size_t prow = c.batch * c.heads * n;
      std::vector<float> o2(prow * c.dv), w2(weights ? prow * c.nk : 0), l2(prow);
      const auto s = attnlab::attention(part, {o2, {}, {}, w2, l2});
      INFO(s.message);
      REQUIRE(s.ok());
      const auto want_o = rows_of(out, bshd, c.batch, c.heads, c.nq, c.dv, r0, r1);
      const auto want_l = rows_of(lse, false, c.batch, c.heads, c.nq, 1, r0, r1);
      const auto want_w = weights ? rows_of(w, false, c.batch, c.heads, c.nq, c.nk, r0, r1) : std::vector<float>();
      bool same = true;
      for (std::size_t i = 0; i < o2.size(); ++i) same = same && same_bits(o2[i], want_o[i]);
      for (std::size_t i = 0; i < l2.size(); ++i) same = same && same_bits(l2[i], want_l[i]);
      for (std::size_t i = 0; i < w2.size(); ++i) same = same && same_bits(w2[i], want_w[i]);
      REQUIRE(same);
    }
  }
}

}  // namespace

TEST_CASE("attention: a query range computes exactly those rows, bit for bit, wherever the call is cut", "[attention][items][qrange]") {
  using attnlab::Causal;
  const RangeCase cases[] = {
      {"GQA, bottom-right causal", 2, 6, 3, 37, 45, 8, 5, Causal::bottom_right},
      {"MQA, top-left causal, window, key lengths, past a key tile", 2, 4, 1, 70, 140, 8, 4, Causal::top_left, {20, 3}, 0, true},
      {"one head, additive mask, ALiBi, softcap, 131 rows", 1, 1, 1, 131, 129, 5, 3, false, {}, 1, false, true, true},
      {"boolean mask broadcast over heads, window only", 2, 2, 2, 33, 20, 4, 4, false, {2, 2}, 2},
      {"a short mask over keys, more queries than keys (rows that see nothing)", 1, 3, 3, 40, 9, 4, 4, Causal::bottom_right, {}, 3},
  };
  for (const auto& c : cases)
    for (const bool bshd : {false, true})
      for (const bool weights : {false, true}) check_cuts(c, bshd, weights, {});
}

TEST_CASE("attention: rows too large to prescale are decided row by row, so a cut changes nothing", "[attention][items][qrange]") {
  // scale 0.3 (not a power of two: where it is applied shows in the bits): a q row of norm 4e37 cannot take the
  // scale first (its scores do), its neighbours can; ‖q‖·‖k‖ stays below the limit because the keys are small.
  const RangeCase c{"huge rows among ordinary ones", 1, 2, 1, 45, 30, 4, 4, attnlab::Causal::bottom_right};
  auto q = testing::normal(2 * 45 * 4, 31);
  for (std::size_t i : {3, 40, 77})
    for (std::size_t d = 0; d < 4; ++d) q[i * 4 + d] = 2e37f;
  check_cuts(c, false, false, q, 0.3f, 1e-3f);
}

TEST_CASE("attention: a query range must be a non-empty part of nq; the backward refuses a query or item range", "[attention][items][qrange]") {
  const std::size_t nq = 6, nk = 5, d = 4;
  const auto q = testing::normal(nq * d, 1), k = testing::normal(nk * d, 2), v = testing::normal(nk * d, 3);
  std::vector<float> out(nq * d);
  for (const auto [b, e] : {std::pair<std::size_t, std::size_t>{2, 2}, {4, 7}, {3, 0}}) {
    AttentionArgs a{std::span<const float>(q).first((e > b ? e - b : 1) * d), k, v, nq, nk, d, d};
    a.q_begin = b, a.q_end = e;
    const auto s = attnlab::attention(a, {std::span<float>(out).first((e > b ? e - b : 1) * d), {}, {}, {}, {}});
    REQUIRE_FALSE(s.ok());
    REQUIRE(s.arg == "nq");
  }
  AttentionArgs a{q, k, v, nq, nk, d, d};
  a.q_begin = 0, a.q_end = nq;
  std::vector<float> lse(nq), dq(nq * d), dk(nk * d), dv(nk * d);
  REQUIRE(attnlab::attention(a, {out, {}, {}, {}, lse}).ok());
  const auto s = attnlab::attention_backward(a, {out, lse, out}, {dq, dk, dv});
  REQUIRE_FALSE(s.ok());
  REQUIRE(s.arg == "nq");
  a.q_begin = 0, a.q_end = 0, a.item_begin = 0, a.item_end = 1;  // an item range is the forward's alone too
  const auto s2 = attnlab::attention_backward(a, {out, lse, out}, {dq, dk, dv});
  REQUIRE_FALSE(s2.ok());
  REQUIRE(s2.arg == "batch");
  a.item_end = SIZE_MAX;
  REQUIRE(attnlab::attention_backward(a, {out, lse, out}, {dq, dk, dv}).ok());
}
