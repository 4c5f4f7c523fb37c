// AttentionArgs::item_begin / item_end, which lets one call be split across workers (init({ threads })): a call
// restricted to work items [begin, end) writes exactly those items' outputs — bit for bit what the whole call
// writes there — and leaves every other element as it was; validation still covers the whole call.
#include <cmath>
#include <cstring>
#include <vector>

#include "attention.h"
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
