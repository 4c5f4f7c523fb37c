// The whole attention operator against the double reference (attention_reference.h): batch, heads, GQA, both
// layouts, causal alignments, windows, softcap, additive/boolean/broadcast masks, key lengths, ALiBi and lse,
// on both paths; plus the identities that pin the batching down exactly: a batched call equals its single-head
// calls bit for bit, a boolean mask equals its additive 0/−inf form, a broadcast mask its expanded form.
#include <cmath>
#include <random>
#include <vector>

#include "attention.h"
#include "attention_cases.h"
#include "attention_reference.h"
#include "testing.h"

using attnlab::AttentionArgs;
using attnlab::AttentionOutputs;
using attnlab::AttentionPath;

namespace {

using attncase::Inputs;

Inputs make_inputs(const ref::FullCase& c, unsigned seed) {
  Inputs in;
  attncase::fill_qkv(c, in, seed);
  return in;
}

struct Got {
  std::vector<float> out, raw, scores, weights, lse;
};

Got run(const ref::FullCase& c, const Inputs& in, AttentionPath path, bool matrices) {
  const std::size_t rows = c.batch * c.heads * c.nq;
  Got g{std::vector<float>(rows * c.dv, 777.0f), {}, {}, {}, std::vector<float>(rows, 777.0f)};
  if (matrices) g.raw = g.scores = g.weights = std::vector<float>(rows * c.nk, 777.0f);
  AttentionArgs a = attncase::args_of(c, in);
  a.path = path;
  const auto st = attnlab::attention(a, AttentionOutputs{g.out, g.raw, g.scores, g.weights, g.lse});
  INFO(st.message);
  REQUIRE(st.ok());
  return g;
}

// Both paths against the reference: materialized with every matrix and lse, streaming with lse.
void check_case(ref::FullCase c, const Inputs& in) {
  INFO(attncase::describe(c));
  c.streaming = false;
  const auto want = ref::attention_full(in.q, in.k, in.v, c);
  const auto m = run(c, in, AttentionPath::materialized, true);
  CHECK_BOUNDED(m.out, want.out);
  CHECK_BOUNDED(m.raw, want.raw);
  CHECK_BOUNDED(m.scores, want.scores);
  CHECK_BOUNDED(m.weights, want.weights);
  CHECK_BOUNDED(m.lse, want.lse);
  c.streaming = true;
  const auto want_s = ref::attention_full(in.q, in.k, in.v, c);
  const auto s = run(c, in, AttentionPath::streaming, false);
  CHECK_BOUNDED(s.out, want_s.out);
  CHECK_BOUNDED(s.lse, want_s.lse);
}

// A random case (attention_cases.h): every option drawn independently; its mask from seed + 7.
ref::FullCase random_case(std::mt19937& rng, Inputs& in, unsigned seed, std::size_t max_nq, std::size_t max_nk) {
  attncase::Draw d = attncase::random_draw(rng, max_nq, max_nk);
  attncase::fill_qkv(d.c, in, seed);
  attncase::fill_mask(d.c, in, d.mask, d.mask_dims, seed + 7);
  return d.c;
}

}  // namespace

TEST_CASE("attention (whole operator): random combinations of every option, both paths", "[attention][full]") {
  std::mt19937 rng(2024);
  for (unsigned i = 0; i < 160; ++i) {
    Inputs in;
    const ref::FullCase c = random_case(rng, in, 100 + i * 10, i % 5 == 0 ? 70 : 12, i % 4 == 0 ? 300 : 40);
    check_case(c, in);
  }
}

TEST_CASE("attention (whole operator): sizes around 4, 32 and 128 with batch, GQA and bshd", "[attention][full]") {
  unsigned seed = 5000;
  for (std::size_t nq : {1u, 3u, 4u, 5u, 31u, 33u})
    for (std::size_t nk : {1u, 4u, 5u, 32u, 127u, 128u, 129u}) {
      ref::FullCase c;
      c.batch = 2, c.heads = 4, c.kv_heads = 2, c.nq = nq, c.nk = nk, c.dk = 9, c.dv = 5, c.bshd = (nq + nk) % 2;
      c.causal = int((nq + nk) % 3), c.scale = double(1.0f / 3.0f);
      Inputs in = make_inputs(c, seed++);
      check_case(c, in);
      c.window_left = 3, c.window_right = 1, c.softcap = 5.0;
      check_case(c, in);
    }
}

TEST_CASE("attention (whole operator): a batched call equals its single-head calls bit for bit", "[attention][full]") {
  // Every option that differs by item or head, in both layouts: the engine cuts the tensors by strides, and the
  // folded GQA problem computes each row exactly as a lone head would.
  for (bool bshd : {false, true})
    for (auto path : {AttentionPath::streaming, AttentionPath::materialized}) {
      ref::FullCase c;
      c.batch = 2, c.heads = 6, c.kv_heads = 2, c.nq = 37, c.nk = 150, c.dk = 16, c.dv = 12, c.bshd = bshd, c.causal = 1;
      c.window_left = 70, c.softcap = 20.0, c.scale = double(0.25f);
      c.key_lengths = {150, 101};
      c.alibi = {0.5f, 0.25f, 0.125f, 0.0625f, 0.03125f, 0.015625f};
      c.mask_shape = {2, 1, 1, 150};  // key padding per item
      Inputs in = make_inputs(c, 77);
      attncase::fill_mask(c, in, attncase::boolean, 4, 78);
      const bool matrices = path == AttentionPath::materialized;
      const Got all = run(c, in, path, matrices);
      for (std::size_t b = 0; b < c.batch; ++b)
        for (std::size_t h = 0; h < c.heads; ++h) {
          const std::size_t g = h * c.kv_heads / c.heads;
          ref::FullCase one = c;
          one.batch = one.heads = one.kv_heads = 1, one.bshd = false;
          one.key_lengths = {c.key_lengths[b]}, one.alibi = {c.alibi[h]}, one.mask_shape = {1, 1, 1, c.nk};
          Inputs single{std::vector<float>(c.nq * c.dk), std::vector<float>(c.nk * c.dk), std::vector<float>(c.nk * c.dv), {},
                        std::vector<std::uint8_t>(in.keep.begin() + long(b * c.nk), in.keep.begin() + long((b + 1) * c.nk)), {1, std::int64_t(c.nk)}};
          one.keep = &single.keep;
          for (std::size_t i = 0; i < c.nq; ++i)
            for (std::size_t d = 0; d < c.dk; ++d) single.q[i * c.dk + d] = in.q[ref::at_layout(bshd, b, h, i, d, c.heads, c.nq, c.dk)];
          for (std::size_t j = 0; j < c.nk; ++j) {
            for (std::size_t d = 0; d < c.dk; ++d) single.k[j * c.dk + d] = in.k[ref::at_layout(bshd, b, g, j, d, c.kv_heads, c.nk, c.dk)];
            for (std::size_t d = 0; d < c.dv; ++d) single.v[j * c.dv + d] = in.v[ref::at_layout(bshd, b, g, j, d, c.kv_heads, c.nk, c.dv)];
          }
          const Got got = run(one, single, path, matrices);
          INFO("item " << b << " head " << h << (bshd ? " bshd" : " bhsd"));
          bool same = true;
          for (std::size_t i = 0; i < c.nq; ++i) {
            for (std::size_t d = 0; d < c.dv; ++d)
              same &= got.out[i * c.dv + d] == all.out[ref::at_layout(bshd, b, h, i, d, c.heads, c.nq, c.dv)];
            same &= got.lse[i] == all.lse[(b * c.heads + h) * c.nq + i];
          }
          if (matrices)
            for (std::size_t t = 0; t < c.nq * c.nk; ++t)
              same &= got.weights[t] == all.weights[(b * c.heads + h) * c.nq * c.nk + t] &&
                      got.scores[t] == all.scores[(b * c.heads + h) * c.nq * c.nk + t];
          CHECK(same);
        }
    }
}

TEST_CASE("attention (whole operator): boolean mask = additive 0/−inf mask, broadcast = expanded, bit for bit",
          "[attention][full]") {
  ref::FullCase c;
  c.batch = 2, c.heads = 3, c.kv_heads = 3, c.nq = 9, c.nk = 140, c.dk = 8, c.dv = 8, c.scale = double(0.5f);
  c.mask_shape = {2, 1, 9, 140};
  Inputs in = make_inputs(c, 9);
  attncase::fill_mask(c, in, attncase::boolean, 4, 10);
  for (auto path : {AttentionPath::streaming, AttentionPath::materialized}) {
    const Got boolean = run(c, in, path, false);
    // additive form, and the fully expanded [batch, heads, nq, nk] form of either
    Inputs additive = in, expanded = in;
    ref::FullCase ca = c, ce = c;
    additive.mask.resize(in.keep.size());
    for (std::size_t t = 0; t < in.keep.size(); ++t) additive.mask[t] = in.keep[t] ? 0.0f : -INFINITY;
    additive.keep.clear();
    ca.keep = nullptr, ca.mask = &additive.mask;
    ce.mask_shape = {2, 3, 9, 140};
    expanded.keep.resize(2 * 3 * 9 * 140);
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t h = 0; h < 3; ++h)
        for (std::size_t t = 0; t < 9 * 140; ++t) expanded.keep[((b * 3 + h) * 9 * 140) + t] = in.keep[b * 9 * 140 + t];
    expanded.shape = {2, 3, 9, 140};
    ce.keep = &expanded.keep;
    CHECK(run(ca, additive, path, false).out == boolean.out);
    CHECK(run(ce, expanded, path, false).out == boolean.out);
    CHECK(run(ca, additive, path, false).lse == boolean.lse);
  }
}

TEST_CASE("attention (whole operator): causal alignments, windows and key lengths hide exactly the keys they name",
          "[attention][full]") {
  // nq = 4 queries over nk = 7 keys, item 1 holding 5 keys: every combination's zero pattern, from the definitions.
  const std::size_t nq = 4, nk = 7;
  for (int causal : {0, 1, 2})
    for (auto [wl, wr] : {std::pair<std::int64_t, std::int64_t>{-1, -1}, {1, -1}, {-1, 0}, {2, 1}, {0, 0}}) {
      ref::FullCase c;
      c.batch = 2, c.nq = nq, c.nk = nk, c.dk = 3, c.dv = 2, c.causal = causal, c.window_left = wl, c.window_right = wr;
      c.key_lengths = {7, 5};
      c.scale = double(1.0f);
      const Inputs in = make_inputs(c, 3);
      const Got g = run(c, in, AttentionPath::materialized, true);
      for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t i = 0; i < nq; ++i) {
          const std::int64_t len = c.key_lengths[b];
          const std::int64_t d = causal == 2 ? std::int64_t(i) : std::int64_t(i) + len - std::int64_t(nq);
          bool any = false;
          for (std::size_t j = 0; j < nk; ++j) {
            const std::int64_t jj = std::int64_t(j);
            const bool seen = jj < len && (!causal || jj <= d) && (wl < 0 || jj >= d - wl) && (wr < 0 || jj <= d + wr);
            any |= seen;
            INFO("causal " << causal << " window [" << wl << ", " << wr << "] item " << b << " query " << i << " key " << j);
            CHECK((g.weights[(b * nq + i) * nk + j] > 0.0f) == seen);
            CHECK((g.scores[(b * nq + i) * nk + j] == -INFINITY) == !seen);
          }
          if (!any) CHECK(g.lse[b * nq + i] == -INFINITY);
        }
    }
}

TEST_CASE("attention (whole operator): rows that see no key are zeros with lse −inf on both paths, never NaN",
          "[attention][full]") {
  ref::FullCase c;
  c.batch = 2, c.heads = 2, c.kv_heads = 1, c.nq = 40, c.nk = 200, c.dk = 4, c.dv = 3, c.causal = 2;
  c.window_left = 0, c.window_right = 0;  // top-left diagonal only: queries ≥ keyLengths see nothing
  c.key_lengths = {0, 17};
  c.softcap = 3.0, c.scale = double(0.5f);
  c.alibi = {0.5f, 0.25f};
  const Inputs in = make_inputs(c, 4);
  for (auto path : {AttentionPath::streaming, AttentionPath::materialized}) {
    const Got g = run(c, in, path, path == AttentionPath::materialized);
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t h = 0; h < 2; ++h)
        for (std::size_t i = 0; i < 40; ++i) {
          const bool empty = b == 0 || i >= 17;
          const std::size_t row = (b * 2 + h) * 40 + i;
          CHECK((g.lse[row] == -INFINITY) == empty);
          for (std::size_t d = 0; d < 3; ++d) {
            CHECK(!std::isnan(g.out[row * 3 + d]));
            if (empty) CHECK(g.out[row * 3 + d] == 0.0f);
          }
        }
    ref::FullCase cs = c;
    cs.streaming = path == AttentionPath::streaming;
    CHECK_BOUNDED(g.out, ref::attention_full(in.q, in.k, in.v, cs).out);
  }
}

TEST_CASE("attention (whole operator): lse and the weights agree: weights = exp(scores − lse)", "[attention][full]") {
  ref::FullCase c;
  c.heads = 2, c.kv_heads = 2, c.nq = 6, c.nk = 11, c.dk = 5, c.dv = 4, c.causal = 1, c.softcap = 2.0, c.scale = double(0.7f);
  const Inputs in = make_inputs(c, 6);
  const Got g = run(c, in, AttentionPath::materialized, true);
  for (std::size_t r = 0; r < 12; ++r)
    for (std::size_t j = 0; j < 11; ++j) {
      const double s = g.scores[r * 11 + j];
      const double want = s == -INFINITY ? 0.0 : std::exp(s - double(g.lse[r]));
      CHECK(std::fabs(g.weights[r * 11 + j] - want) <= 1e-6 * want + 1e-12);
    }
}

TEST_CASE("attention (whole operator): a huge softcap leaves tiny scores intact (found by fuzzing)", "[attention][full]") {
  // score ≈ 3e-27 under softcap 2.6e30: score/softcap underflows float32, but softcap·tanh(score/softcap) is the score.
  ref::FullCase c;
  c.nq = 2, c.nk = 3, c.dk = 2, c.dv = 2, c.softcap = double(2.61109994e30f), c.scale = double(0.0311279297f);
  Inputs in{{2.5957e-26f, 2.5957e-26f, 1.0f, -1.0f}, {1.788f, 1.788f, 0.5f, 2.0f, 1.9137f, 1.9137f}, {1, 2, 3, 4, 5, 6}, {}, {}, {}};
  for (auto path : {AttentionPath::materialized, AttentionPath::streaming}) {
    c.streaming = path == AttentionPath::streaming;
    const Got g = run(c, in, path, path == AttentionPath::materialized);
    const auto want = ref::attention_full(in.q, in.k, in.v, c);
    CHECK_BOUNDED(g.out, want.out);
    if (!c.streaming) CHECK_BOUNDED(g.scores, want.scores);
  }
}
