// attention_backward() over the whole operator: against the bounded double reference of the gradient
// (attention_full_grad_reference.h) for every option family and random combinations, sizes below/at/above the SIMD
// width (4), the panels (4 rows) and the tiles (32 rows × 64 keys here, the forward's 128); that reference against
// finite differences of a double forward; GQA sums; rows that see nothing; equality with the single-head entry
// point the GPT's path shares; and the checks (names, nothing written on error).
#include <cmath>
#include <memory>
#include <random>
#include <sstream>
#include <vector>

#include "attention.h"
#include "attention_backward.h"
#include "attention_cases.h"
#include "attention_full_grad_reference.h"
#include "kv_cache.h"
#include "testing.h"

using attnlab::AttentionArgs;
using attnlab::Causal;
using bnd::B;

namespace {

struct Data : attncase::Inputs {
  std::vector<float> o, lse, d_o;  // the forward's output and lse, and a random dL/d output
};

using attncase::args_of;

// Inputs (and a mask of `kind` over c.mask_shape's trailing `dims`), then the engine's forward (streaming, with
// lse). Points c.mask / c.keep at d's mask.
void make(ref::FullCase& c, Data& d, unsigned seed, attncase::MaskKind kind = attncase::no_mask, std::size_t dims = 4) {
  const std::size_t nq_all = c.batch * c.heads * c.nq;
  attncase::fill_qkv(c, d, seed);
  d.d_o = testing::normal(nq_all * c.dv, seed + 3);
  attncase::fill_mask(c, d, kind, dims, seed + 4);
  d.o.assign(nq_all * c.dv, 0.0f), d.lse.assign(nq_all, 0.0f);
  AttentionArgs a = args_of(c, d);
  a.path = attnlab::AttentionPath::streaming;
  const auto st = attnlab::attention(a, {d.o, {}, {}, {}, d.lse});
  INFO(st.message);
  REQUIRE(st.ok());
}

struct Grads {
  std::vector<float> dq, dk, dv;
};

Grads run(const ref::FullCase& c, const Data& d) {
  Grads g{std::vector<float>(d.q.size(), 5.0f), std::vector<float>(d.k.size(), 5.0f), std::vector<float>(d.v.size(), 5.0f)};
  const auto st = attnlab::attention_backward(args_of(c, d), {d.o, d.lse, d.d_o}, {g.dq, g.dk, g.dv});
  INFO(st.message);
  REQUIRE(st.ok());
  return g;
}

// Largest |got − want| over a tensor, for the report.
double max_error(const std::vector<float>& got, const std::vector<B>& want) {
  double m = 0;
  for (std::size_t i = 0; i < got.size(); ++i) m = std::fmax(m, std::fabs(double(got[i]) - want[i].v));
  return m;
}

double worst_error = 0;  // over every case of the run (printed by the sweep)

void check_case(const ref::FullCase& c, const Data& d) {
  INFO(attncase::describe(c));
  const auto want = ref::attention_full_grad(bnd::inputs(d.q), bnd::inputs(d.k), bnd::inputs(d.v), bnd::inputs(d.o),
                                             bnd::inputs(d.lse), bnd::inputs(d.d_o), c);
  const Grads got = run(c, d);
  CHECK_WITHIN(got.dq, want.dq);
  CHECK_WITHIN(got.dk, want.dk);
  CHECK_WITHIN(got.dv, want.dv);
  worst_error = std::fmax(worst_error, std::fmax(max_error(got.dq, want.dq), std::fmax(max_error(got.dk, want.dk), max_error(got.dv, want.dv))));
}

// A random case (attention_cases.h, the forward's draws): every option drawn independently; its mask from seed + 4.
ref::FullCase random_case(std::mt19937& rng, Data& d, unsigned seed, std::size_t max_nq, std::size_t max_nk) {
  attncase::Draw draw = attncase::random_draw(rng, max_nq, max_nk);
  make(draw.c, d, seed, draw.mask, draw.mask_dims);
  return draw.c;
}

}  // namespace

TEST_CASE("attention backward (whole operator): each option family against the double reference", "[attention_backward][full]") {
  auto base = [] {
    ref::FullCase c;
    c.batch = 2, c.heads = 4, c.kv_heads = 2, c.nq = 37, c.nk = 70, c.dk = 9, c.dv = 6, c.scale = double(1.0f / 3.0f);
    return c;
  };
  unsigned seed = 300;
  SECTION("layouts and GQA / MQA") {
    for (bool bshd : {false, true})
      for (std::size_t kv : {1u, 2u, 4u}) {
        ref::FullCase c = base();
        c.bshd = bshd, c.kv_heads = kv;
        Data d;
        make(c, d, seed++);
        check_case(c, d);
      }
  }
  SECTION("causal alignments and windows") {
    for (int causal : {0, 1, 2})
      for (auto w : {std::pair<std::int64_t, std::int64_t>{-1, -1}, {5, 0}, {0, 3}, {12, 7}}) {
        ref::FullCase c = base();
        c.causal = causal, c.window_left = w.first, c.window_right = w.second, c.nq = 50, c.nk = 40;
        Data d;
        make(c, d, seed++);
        check_case(c, d);
      }
  }
  SECTION("softcap: the chain rule through tanh") {
    for (double cap : {0.5, 2.0, 30.0}) {
      ref::FullCase c = base();
      c.softcap = cap, c.scale = 1.5;  // large logits: tanh saturates, 1 − tanh² far from 1
      Data d;
      make(c, d, seed++);
      check_case(c, d);
    }
  }
  SECTION("additive and boolean masks, broadcast") {
    for (auto kind : {attncase::additive, attncase::boolean})
      for (std::array<std::size_t, 4> shape : {std::array<std::size_t, 4>{1, 1, 37, 70}, {2, 1, 1, 70}, {1, 4, 37, 1},
                                              {2, 4, 37, 70}, {1, 1, 1, 33}}) {
        ref::FullCase c = base();
        c.mask_shape = shape;
        Data d;
        make(c, d, seed++, kind, 4);
        check_case(c, d);
      }
  }
  SECTION("key lengths (one of them 0) and ALiBi") {
    ref::FullCase c = base();
    c.key_lengths = {0, 45};
    Data d;
    make(c, d, seed++);
    check_case(c, d);
    c.key_lengths.clear();
    c.alibi = {0.5f, 0.25f, 0.125f, 0.0625f};
    make(c, d, seed++);
    check_case(c, d);
    c.causal = 1, c.key_lengths = {70, 21};
    make(c, d, seed++);
    check_case(c, d);
  }
}

TEST_CASE("attention backward (whole operator): random combinations of every option", "[attention_backward][full]") {
  std::mt19937 rng(4242);
  worst_error = 0;
  for (unsigned i = 0; i < 80; ++i) {
    Data d;
    const ref::FullCase c = random_case(rng, d, 7000 + i * 10, i % 5 == 0 ? 70 : 12, i % 4 == 0 ? 300 : 40);
    check_case(c, d);
  }
  WARN("largest |gradient − double reference| over the random cases: " << worst_error);
}

TEST_CASE("attention backward (whole operator): sizes around 4, 32, 64 and 128", "[attention_backward][full]") {
  unsigned seed = 9000;
  for (std::size_t nq : {1u, 3u, 4u, 5u, 31u, 32u, 33u})
    for (std::size_t nk : {1u, 4u, 5u, 63u, 64u, 65u, 127u, 128u, 129u}) {
      ref::FullCase c;
      c.batch = 2, c.heads = 4, c.kv_heads = 2, c.nq = nq, c.nk = nk, c.dk = 5, c.dv = 4, c.bshd = (nq + nk) % 2;
      c.causal = int((nq + nk) % 3), c.scale = double(1.0f / 3.0f);
      if ((nq * nk) % 2) c.window_left = 9, c.window_right = 2, c.softcap = 4.0;
      Data d;
      make(c, d, seed++);
      check_case(c, d);
    }
}

TEST_CASE("attention backward (whole operator): the reference is the gradient (finite differences of the double forward)",
          "[attention_backward][full]") {
  // One small case per option family; L = Σ dO ∘ O through attention_full_f64, central differences with h = 1e-5:
  // truncation h²/6·|L‴| ≲ 1e-10 and rounding ≈ 1e-16·|L|/h ≈ 1e-10 here, against 1e-8·(1 + |g|).
  std::vector<ref::FullCase> cases;
  auto add = [&](auto&& edit) {
    ref::FullCase c;
    c.batch = 2, c.heads = 2, c.kv_heads = 1, c.nq = 4, c.nk = 5, c.dk = 3, c.dv = 2, c.scale = 0.7;
    edit(c);
    cases.push_back(c);
  };
  add([](ref::FullCase& c) { c.bshd = true, c.causal = 1; });
  add([](ref::FullCase& c) { c.causal = 2, c.window_left = 1, c.window_right = 1; });
  add([](ref::FullCase& c) { c.softcap = 0.8, c.scale = 1.5; });
  add([](ref::FullCase& c) { c.alibi = {0.5f, 0.25f}, c.key_lengths = {3, 5}; });
  add([](ref::FullCase& c) { c.mask_shape = {2, 1, 4, 5}; });   // additive
  add([](ref::FullCase& c) { c.mask_shape = {1, 2, 1, 5}; });   // boolean
  add([](ref::FullCase& c) { c.heads = c.kv_heads = 2, c.softcap = 2.0, c.alibi = {0.3f, 0.1f}, c.causal = 1, c.mask_shape = {1, 1, 4, 5}; });
  for (std::size_t n = 0; n < cases.size(); ++n) {
    ref::FullCase c = cases[n];
    Data d;
    make(c, d, 500 + unsigned(n) * 10, n == 4 || n == 6 ? attncase::additive : n == 5 ? attncase::boolean : attncase::no_mask, 4);
    INFO(attncase::describe(c));
    auto q = ref::widen(d.q), k = ref::widen(d.k), v = ref::widen(d.v);
    auto loss = [&]() {
      const auto f = ref::attention_full_f64(q, k, v, c);
      double s = 0;
      for (std::size_t i = 0; i < f.o.size(); ++i) s += double(d.d_o[i]) * f.o[i];
      return s;
    };
    const auto f = ref::attention_full_f64(q, k, v, c);
    auto exact = [](const std::vector<double>& x) {
      std::vector<B> r(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) r[i] = {x[i], 0};
      return r;
    };
    const auto g = ref::attention_full_grad(exact(q), exact(k), exact(v), exact(f.o), exact(f.lse), bnd::inputs(d.d_o), c);
    std::size_t nonzero = 0;
    auto fd_check = [&](std::vector<double>& x, const std::vector<B>& want, const char* name) {
      for (std::size_t i = 0; i < x.size(); ++i) {
        INFO(name << "[" << i << "]");
        CHECK(std::fabs(testing::central_difference(x, i, loss) - want[i].v) <= 1e-8 * (1 + std::fabs(want[i].v)));
        nonzero += want[i].v != 0;
      }
    };
    fd_check(q, g.dq, "dq");
    fd_check(k, g.dk, "dk");
    fd_check(v, g.dv, "dv");
    CHECK(nonzero > (g.dq.size() + g.dk.size() + g.dv.size()) / 2);  // the check compared real gradients
  }
}

TEST_CASE("attention backward (whole operator): rows that see no key get dq = 0 and give nothing to dk, dv",
          "[attention_backward][full]") {
  ref::FullCase c;
  c.batch = 2, c.heads = 2, c.kv_heads = 1, c.nq = 6, c.nk = 5, c.dk = 4, c.dv = 3, c.scale = 0.5, c.causal = 2;
  c.key_lengths = {0, 5};  // item 0 sees nothing; top-left causal with a window: item 1's rows see 1…2 keys
  c.window_left = 1;
  Data d;
  make(c, d, 77);
  for (std::size_t h = 0; h < 2; ++h)
    for (std::size_t i = 0; i < c.nq; ++i) CHECK(d.lse[h * c.nq + i] == -INFINITY);
  check_case(c, d);
  const Grads g = run(c, d);
  for (std::size_t i = 0; i < c.heads * c.nq * c.dk; ++i) CHECK(g.dq[i] == 0.0f);  // item 0 (bhsd: first half)
  for (std::size_t i = 0; i < c.nk * c.dk; ++i) CHECK(g.dk[i] == 0.0f);
  for (std::size_t i = 0; i < c.nk * c.dv; ++i) CHECK(g.dv[i] == 0.0f);
  for (float x : g.dq) CHECK(std::isfinite(x));
}

TEST_CASE("attention backward (whole operator): one head per call equals the single-head entry point the GPT shares",
          "[attention_backward][full]") {
  // batch × heads in bshd with a causal mask and a dense additive mask broadcast over batch and heads: every head's
  // gradients equal attention_backward(AttentionBackwardArgs) on that head's contiguous copy, bit for bit.
  ref::FullCase c;
  c.batch = 2, c.heads = 3, c.kv_heads = 3, c.nq = 35, c.nk = 70, c.dk = 8, c.dv = 5, c.bshd = true, c.causal = 1;
  c.scale = double(1.0f / std::sqrt(8.0f));
  c.mask_shape = {1, 1, 35, 70};
  Data d;
  make(c, d, 123, attncase::additive, 2);
  const Grads all = run(c, d);
  for (std::size_t b = 0; b < c.batch; ++b)
    for (std::size_t h = 0; h < c.heads; ++h) {
      auto gather = [&](const std::vector<float>& x, std::size_t seq, std::size_t dim) {
        std::vector<float> r(seq * dim);
        for (std::size_t s = 0; s < seq; ++s)
          for (std::size_t e = 0; e < dim; ++e) r[s * dim + e] = x[ref::at_layout(true, b, h, s, e, c.heads, seq, dim)];
        return r;
      };
      const auto q = gather(d.q, c.nq, c.dk), k = gather(d.k, c.nk, c.dk), v = gather(d.v, c.nk, c.dv), o = gather(d.o, c.nq, c.dv),
                 d_o = gather(d.d_o, c.nq, c.dv);
      const std::vector<float> lse(d.lse.begin() + long((b * c.heads + h) * c.nq), d.lse.begin() + long((b * c.heads + h + 1) * c.nq));
      std::vector<float> dq(q.size()), dk(k.size()), dv(v.size());
      attnlab::AttentionBackwardArgs a{q, k, v, o, lse, d_o, c.nq, c.nk, c.dk, c.dv};
      a.scale = float(c.scale), a.causal = true, a.mask = d.mask;
      REQUIRE(attnlab::attention_backward(a, {dq, dk, dv}).ok());
      CHECK(dq == gather(all.dq, c.nq, c.dk));
      CHECK(dk == gather(all.dk, c.nk, c.dk));
      CHECK(dv == gather(all.dv, c.nk, c.dv));
    }
}

// Models pad with a large finite negative mask value (−1e9), not −inf: a padded row's lse is about −1e9, where float32
// cannot resolve it, but every other row's lse must still be checked as closely as without the padding.
TEST_CASE("attention backward (whole operator): a row's lse check does not depend on the mask values of other rows", "[attention_backward][full]") {
  ref::FullCase c;
  c.batch = 2, c.heads = 2, c.kv_heads = 1, c.nq = 5, c.nk = 6, c.dk = 4, c.dv = 3, c.scale = 0.5;
  c.mask_shape = {2, 1, 5, 6};
  Data d;
  make(c, d, 47, attncase::additive, 4);
  for (float pad : {-1e4f, -1e6f, -1e9f, -1e30f}) {
    INFO("padding " << pad);
    // Item 0: keys 4 and 5 padded on every row. Item 1: key 5 padded, and all of row 2 (a padding query).
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t j = 0; j < 6; ++j) d.mask[(b * 5 + i) * 6 + j] = (b == 0 ? j >= 4 : j == 5 || i == 2) ? pad : 0.0f;
    AttentionArgs fwd = args_of(c, d);
    fwd.path = attnlab::AttentionPath::streaming;
    REQUIRE(attnlab::attention(fwd, {d.o, {}, {}, {}, d.lse}).ok());
    run(c, d);  // the forward's own lse is accepted
    // Rows of both items that see unpadded keys: a shift of ±1 makes their weights sum to e^∓1.
    for (std::size_t row : {std::size_t(1), std::size_t(8), std::size_t(11), std::size_t(19)})
      for (float shift : {1.0f, -1.0f}) {
        INFO("lse[" << row << "] + " << shift);
        std::vector<float> lse = d.lse, dq(d.q.size(), 9.0f), dk(d.k.size(), 9.0f), dv(d.v.size(), 9.0f);
        lse[row] += shift;
        const auto st = attnlab::attention_backward(args_of(c, d), {d.o, lse, d.d_o}, {dq, dk, dv});
        CHECK(st.kind == attnlab::ErrorKind::range);
        CHECK(st.arg == "lse");
        CHECK(dq[0] == 9.0f);
      }
  }
}

TEST_CASE("attention backward (whole operator): argument errors name the argument and write nothing", "[attention_backward][full]") {
  ref::FullCase c;
  c.batch = 2, c.heads = 2, c.kv_heads = 1, c.nq = 5, c.nk = 6, c.dk = 4, c.dv = 3, c.scale = 0.5, c.causal = 1;
  Data d;
  make(c, d, 31);
  auto expect = [&](const AttentionArgs& a, const attnlab::AttentionSaved& s, const char* arg, attnlab::ErrorKind kind) {
    std::vector<float> dq(d.q.size(), 9.0f), dk(d.k.size(), 9.0f), dv(d.v.size(), 9.0f);
    const auto st = attnlab::attention_backward(a, s, {dq, dk, dv});
    INFO(st.message);
    CHECK(st.kind == kind);
    CHECK(st.arg == arg);
    for (float x : dq) CHECK(x == 9.0f);
    for (float x : dk) CHECK(x == 9.0f);
    for (float x : dv) CHECK(x == 9.0f);
  };
  using K = attnlab::ErrorKind;
  const attnlab::AttentionSaved saved{d.o, d.lse, d.d_o};
  std::vector<float> short_o(d.o.begin(), d.o.end() - 1), short_lse(d.lse.begin(), d.lse.end() - 1);
  expect(args_of(c, d), {short_o, d.lse, d.d_o}, "output", K::range);
  expect(args_of(c, d), {d.o, short_lse, d.d_o}, "lse", K::range);
  expect(args_of(c, d), {d.o, d.lse, short_o}, "dOutput", K::range);
  AttentionArgs bad = args_of(c, d);
  bad.kv_heads = 3;
  expect(bad, saved, "kvHeads", K::range);
  bad = args_of(c, d);
  bad.softcap = -1.0;
  expect(bad, saved, "softcap", K::range);
  // A cache: the backward takes explicit k and v.
  std::unique_ptr<attnlab::KvCache> cache;
  REQUIRE(attnlab::KvCache::create({2, 1, 4, 3, 8}, cache).ok());
  bad = args_of(c, d);
  bad.cache = cache.get();
  expect(bad, saved, "cache", K::range);
  // A wrong lse: shifted by 1, the weights sum to e^±1.
  std::vector<float> lse = d.lse;
  lse[3] += 1.0f;
  expect(args_of(c, d), {d.o, lse, d.d_o}, "lse", K::range);
  // −inf for a row that sees keys.
  lse = d.lse;
  lse[7] = -INFINITY;
  expect(args_of(c, d), {d.o, lse, d.d_o}, "lse", K::range);
  // The lse of another option set: without causal the rows see more keys than the weights account for.
  AttentionArgs other = args_of(c, d);
  other.causal = Causal();
  expect(other, saved, "lse", K::range);
  std::vector<float> nan_do = d.d_o;
  nan_do[2] = NAN;
  expect(args_of(c, d), {d.o, d.lse, nan_do}, "dOutput", K::range);
  std::vector<float> big_do(d.d_o.size(), 3e38f);
  expect(args_of(c, d), {d.o, d.lse, big_do}, "dOutput", K::range);
  // Gradient buffers of the wrong size.
  std::vector<float> dq(d.q.size() + 1), dk(d.k.size()), dv(d.v.size());
  auto st = attnlab::attention_backward(args_of(c, d), saved, {dq, dk, dv});
  CHECK(st.arg == "out.dq");
  std::vector<float> dq2(d.q.size()), dk2(d.k.size() - 1);
  st = attnlab::attention_backward(args_of(c, d), saved, {dq2, dk2, dv});
  CHECK(st.arg == "out.dk");
  CHECK(st.message.find("batch·kvHeads·nk·dk = 2·1·6·4") != std::string::npos);
}
