// Attention's backward: the FlashAttention-2-style kernel against the bounded double reference of the same formula
// (attention_grad_reference.h) over size sweeps around the SIMD width (4), the panels (4 rows) and the tiles
// (32 query rows × 64 keys, the forward's 128 keys); that formula against finite differences of the double forward;
// the forward's log-sum-exp; GQA sums; rows that see nothing; and the public entry point's checks.
#include <cmath>
#include <limits>
#include <vector>

#include "attention.h"
#include "attention_backward.h"
#include "attention_backward_impl.h"
#include "attention_grad_reference.h"
#include "attention_impl.h"
#include "testing.h"

using bnd::B;

namespace {

struct Case {
  std::size_t nq, nk, dk, dv;
  bool causal = false, masked = false;
  float scale = 0;  // 0: 1/√dk
  unsigned seed = 1;
};

struct Data {
  std::vector<float> q, k, v, mask, o, lse, d_o;
  float scale;
};

// Inputs, and the forward's own output and lse (the streaming path, as the backward expects).
Data make(const Case& c) {
  Data d{testing::normal(c.nq * c.dk, c.seed), testing::normal(c.nk * c.dk, c.seed + 1), testing::normal(c.nk * c.dv, c.seed + 2),
         {}, std::vector<float>(c.nq * c.dv), std::vector<float>(c.nq), testing::normal(c.nq * c.dv, c.seed + 3),
         c.scale ? c.scale : 1.0f / std::sqrt(float(c.dk))};
  if (c.masked) {
    d.mask = testing::uniform(c.nq * c.nk, c.seed + 4, -2.0f, 2.0f);
    for (std::size_t i = 0; i < d.mask.size(); i += 3) d.mask[i] = -INFINITY;
  }
  attnlab::detail::AttentionProblem p{d.q.data(), c.dk, d.k.data(), c.dk, d.v.data(), c.dv, c.nq, c.nk, c.dk, c.dv,
                                      d.scale, c.causal, c.masked ? d.mask.data() : nullptr, d.o.data(), c.dv,
                                      nullptr, nullptr, nullptr};
  p.lse = d.lse.data();
  REQUIRE(attnlab::detail::attend_streaming(p).ok());
  return d;
}

ref::AttentionGrad reference(const Case& c, const Data& d) {
  return ref::attention_grad(bnd::inputs(d.q), bnd::inputs(d.k), bnd::inputs(d.v), bnd::inputs(d.o), bnd::inputs(d.lse),
                             bnd::inputs(d.d_o), c.nq, c.nk, c.dk, c.dv, bnd::in(d.scale), c.causal,
                             c.masked ? &d.mask : nullptr);
}

struct Grads {
  std::vector<float> dq, dk, dv;
};

Grads run_kernel(const Case& c, const Data& d) {
  Grads g{std::vector<float>(c.nq * c.dk, 5.0f), std::vector<float>(c.nk * c.dk, 5.0f), std::vector<float>(c.nk * c.dv, 5.0f)};
  attnlab::detail::AttentionGradProblem p{d.q.data(), c.dk, d.k.data(), c.dk, d.v.data(), c.dv, d.o.data(), c.dv,
                                          d.d_o.data(), c.dv, d.lse.data(), c.nq, c.nk, c.dk, c.dv, d.scale, c.causal,
                                          c.masked ? d.mask.data() : nullptr, g.dq.data(), c.dk, g.dk.data(), c.dk,
                                          g.dv.data(), c.dv, false};
  REQUIRE(attnlab::detail::attend_backward(p).ok());
  return g;
}

void check_case(const Case& c) {
  INFO("nq=" << c.nq << " nk=" << c.nk << " dk=" << c.dk << " dv=" << c.dv << " causal=" << c.causal << " masked=" << c.masked);
  const Data d = make(c);
  const auto want = reference(c, d);
  const Grads got = run_kernel(c, d);
  CHECK_WITHIN(got.dq, want.dq);
  CHECK_WITHIN(got.dk, want.dk);
  CHECK_WITHIN(got.dv, want.dv);
  // The public entry point (staged, checked) gives the same numbers.
  Grads pub{std::vector<float>(got.dq.size()), std::vector<float>(got.dk.size()), std::vector<float>(got.dv.size())};
  attnlab::AttentionBackwardArgs a{d.q, d.k, d.v, d.o, d.lse, d.d_o, c.nq, c.nk, c.dk, c.dv};
  a.scale = d.scale, a.causal = c.causal, a.mask = d.mask;
  const auto st = attnlab::attention_backward(a, {pub.dq, pub.dk, pub.dv});
  INFO(st.message);
  REQUIRE(st.ok());
  CHECK(pub.dq == got.dq);
  CHECK(pub.dk == got.dk);
  CHECK(pub.dv == got.dv);
}

std::vector<std::size_t> sweep() {
  std::vector<std::size_t> s{1, 2, 3, 4, 5, 7, 8, 9};
  for (std::size_t base : {32u, 64u, 128u}) for (int dd : {-1, 0, 1}) s.push_back(std::size_t(int(base) + dd));
  return s;
}

}  // namespace

TEST_CASE("attention backward: size sweep around 4 / 32 / 64 / 128, causal or not", "[attention_backward]") {
  unsigned seed = 10;
  for (std::size_t nq : sweep())
    for (std::size_t nk : {1u, 4u, 5u, 31u, 33u, 64u, 65u, 129u})
      for (bool causal : {false, true}) {
        const std::size_t dk = 1 + (seed % 9), dv = 1 + ((seed * 7) % 9);
        check_case({nq, nk, dk, dv, causal, false, 0, seed++});
      }
}

TEST_CASE("attention backward: head widths 1…40 and 64, masks, explicit scales", "[attention_backward]") {
  unsigned seed = 500;
  for (std::size_t dk : {1u, 3u, 4u, 5u, 8u, 16u, 31u, 32u, 33u, 40u, 64u}) {
    check_case({37, 70, dk, dk, true, true, 0, seed++});
    check_case({12, 9, dk, (dk % 5) + 1, false, true, 0.3f, seed++});
    check_case({70, 70, dk, 8, true, false, 1.7f, seed++});
  }
}

TEST_CASE("attention backward: rows that see no key get dq = 0, their lse is -inf", "[attention_backward]") {
  // causal with nq > nk (bottom-right): the first nq − nk queries see nothing; a fully masked row likewise.
  Case c{9, 4, 6, 5, true, true, 0, 77};
  Data d = make(c);
  for (std::size_t j = 0; j < c.nk; ++j) d.mask[8 * c.nk + j] = -INFINITY;  // row 8: every key masked
  attnlab::detail::AttentionProblem p{d.q.data(), c.dk, d.k.data(), c.dk, d.v.data(), c.dv, c.nq, c.nk, c.dk, c.dv,
                                      d.scale, true, d.mask.data(), d.o.data(), c.dv, nullptr, nullptr, nullptr};
  p.lse = d.lse.data();
  REQUIRE(attnlab::detail::attend_streaming(p).ok());
  for (std::size_t i : {0u, 1u, 2u, 3u, 4u, 8u}) CHECK(d.lse[i] == -INFINITY);
  const Grads g = run_kernel(c, d);
  for (std::size_t i : {0u, 1u, 2u, 3u, 4u, 8u})
    for (std::size_t x = 0; x < c.dk; ++x) CHECK(g.dq[i * c.dk + x] == 0.0f);
  const auto want = reference(c, d);
  CHECK_WITHIN(g.dq, want.dq);
  CHECK_WITHIN(g.dk, want.dk);
  CHECK_WITHIN(g.dv, want.dv);
}

TEST_CASE("attention forward: the streaming path's lse is log Σ exp(scaled logits) within its bound", "[attention_backward]") {
  for (const Case& c : {Case{1, 1, 3, 2}, Case{33, 129, 8, 4, true, true}, Case{70, 300, 16, 16}, Case{5, 260, 64, 8, false, true}}) {
    const Data d = make(c);
    const auto exact = ref::attention_forward(ref::widen(d.q), ref::widen(d.k), ref::widen(d.v), c.nq, c.nk, c.dk, c.dv,
                                              d.scale, c.causal, c.masked ? &d.mask : nullptr);
    for (std::size_t i = 0; i < c.nq; ++i) {
      // |Δ logit| ≤ scale·γ(dk + 1)·Σ|q||k| + u·(|logit| + |mask|); the running sum is off by that plus E per term,
      // γ(nk) for the sum and E + 2u per rescale (one per later key tile of 128); log and the final add round twice.
      double worst_s = 0, qn = 0;
      for (std::size_t x = 0; x < c.dk; ++x) qn += std::fabs(d.q[i * c.dk + x]);
      for (std::size_t j = 0; j < c.nk; ++j) {
        double kn = 0;
        for (std::size_t x = 0; x < c.dk; ++x) kn = std::fmax(kn, std::fabs(d.k[j * c.dk + x]));
        worst_s = std::fmax(worst_s, d.scale * ref::gamma(double(c.dk + 1)) * qn * kn + 4 * ref::u * 10.0);
      }
      const double tiles = std::ceil(double(c.nk) / 128.0);
      const double bound = 2 * worst_s + ref::gamma(double(c.nk)) + tiles * (ref::exp_rel_error + 2 * ref::u) +
                           ref::exp_rel_error + 2 * ref::u * (std::fabs(exact.lse[i]) + 1);
      INFO("row " << i);
      if (std::isinf(exact.lse[i])) CHECK(d.lse[i] == -INFINITY);
      else CHECK(std::fabs(d.lse[i] - exact.lse[i]) <= bound);
    }
  }
}

TEST_CASE("attention backward: the reference formula is the gradient (finite differences of the double forward)",
          "[attention_backward]") {
  for (const Case& c : {Case{3, 4, 2, 3}, Case{5, 5, 3, 2, true}, Case{4, 6, 2, 2, false, true}, Case{6, 3, 3, 3, true, true}}) {
    const Data d = make(c);
    auto q = ref::widen(d.q), k = ref::widen(d.k), v = ref::widen(d.v);
    const double scale = d.scale;
    const std::vector<float>* mask = c.masked ? &d.mask : nullptr;
    auto loss = [&]() {  // L = Σ dO ∘ O
      const auto f = ref::attention_forward(q, k, v, c.nq, c.nk, c.dk, c.dv, scale, c.causal, mask);
      double s = 0;
      for (std::size_t i = 0; i < f.o.size(); ++i) s += double(d.d_o[i]) * f.o[i];
      return s;
    };
    const auto f = ref::attention_forward(q, k, v, c.nq, c.nk, c.dk, c.dv, scale, c.causal, mask);
    auto exact = [](const std::vector<double>& x) {
      std::vector<B> r(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) r[i] = {x[i], 0};
      return r;
    };
    const auto g = ref::attention_grad(exact(q), exact(k), exact(v), exact(f.o), exact(f.lse), bnd::inputs(d.d_o), c.nq, c.nk,
                                       c.dk, c.dv, B{scale, 0}, c.causal, mask);
    // Central differences with h = 1e-5: truncation h²/6·|L‴| ≲ 1e-10 here, rounding ≈ 1e-16·|L|/h ≈ 1e-10.
    auto fd_check = [&](std::vector<double>& x, const std::vector<B>& want, const char* name) {
      for (std::size_t i = 0; i < x.size(); ++i) {
        INFO(name << "[" << i << "]");
        CHECK(std::fabs(testing::central_difference(x, i, loss) - want[i].v) <= 1e-8 * (1 + std::fabs(want[i].v)));
      }
    };
    fd_check(q, g.dq, "dq");
    fd_check(k, g.dk, "dk");
    fd_check(v, g.dv, "dv");
  }
}

TEST_CASE("attention backward: GQA — a shared key/value head accumulates its query heads' gradients", "[attention_backward]") {
  // Two query heads over one K/V: the second call adds into dk/dv.
  const Case c{40, 40, 8, 8, true, false, 0, 900};
  const Data a = make(c), b = make({40, 40, 8, 8, true, false, 0, 901});
  Data b2 = b;  // query head 2 reads head 1's K and V: recompute its forward over a's K/V
  b2.k = a.k, b2.v = a.v;
  attnlab::detail::AttentionProblem p{b2.q.data(), 8, b2.k.data(), 8, b2.v.data(), 8, 40, 40, 8, 8, b2.scale, true, nullptr,
                                      b2.o.data(), 8, nullptr, nullptr, nullptr};
  p.lse = b2.lse.data();
  REQUIRE(attnlab::detail::attend_streaming(p).ok());
  Grads g{std::vector<float>(320), std::vector<float>(320), std::vector<float>(320)};
  std::vector<float> dq2(320);
  for (int head = 0; head < 2; ++head) {
    const Data& d = head ? b2 : a;
    attnlab::detail::AttentionGradProblem gp{d.q.data(), 8, a.k.data(), 8, a.v.data(), 8, d.o.data(), 8, d.d_o.data(), 8,
                                             d.lse.data(), 40, 40, 8, 8, d.scale, true, nullptr,
                                             head ? dq2.data() : g.dq.data(), 8, g.dk.data(), 8, g.dv.data(), 8, head == 1};
    REQUIRE(attnlab::detail::attend_backward(gp).ok());
  }
  const auto ra = reference(c, a), rb = reference(c, b2);
  std::vector<B> dk(320), dv(320);
  for (std::size_t i = 0; i < 320; ++i) dk[i] = ra.dk[i] + rb.dk[i], dv[i] = ra.dv[i] + rb.dv[i];
  CHECK_WITHIN(g.dq, ra.dq);
  CHECK_WITHIN(dq2, rb.dq);
  CHECK_WITHIN(g.dk, dk);
  CHECK_WITHIN(g.dv, dv);
}

TEST_CASE("attention_backward: argument errors name the argument and write nothing", "[attention_backward]") {
  const Case c{6, 5, 4, 3, true, false, 0, 31};
  Data d = make(c);
  auto call = [&](attnlab::AttentionBackwardArgs a) {
    std::vector<float> dq(24, 8.0f), dk(20, 8.0f), dv(15, 8.0f);
    const auto st = attnlab::attention_backward(a, {dq, dk, dv});
    bool untouched = true;
    for (auto* buf : {&dq, &dk, &dv})
      for (float x : *buf) untouched = untouched && x == 8.0f;
    CHECK(untouched != st.ok());  // an error writes nothing; success writes every gradient
    return st;
  };
  auto args = [&] {
    attnlab::AttentionBackwardArgs a{d.q, d.k, d.v, d.o, d.lse, d.d_o, 6, 5, 4, 3};
    a.causal = true;
    return a;
  };
  REQUIRE(call(args()).kind == attnlab::ErrorKind::none);  // the good call writes…
  {
    auto a = args();
    a.lse = std::span<const float>(d.lse).first(5);
    const auto st = call(a);
    CHECK(st.arg == "lse");
    CHECK(st.message.find("lse must have nq = 6 elements, got 5") != std::string::npos);
  }
  {
    std::vector<float> bad = d.lse;
    bad[3] -= 2.0f;  // weights e² times too large
    auto a = args();
    a.lse = bad;
    const auto st = call(a);
    CHECK(st.arg == "lse");
    CHECK(st.message.find("does not match q and k") != std::string::npos);
    bad = d.lse, bad[2] = -INFINITY;  // row 2 sees keys 0…1
    a.lse = bad;
    CHECK(call(a).arg == "lse");
  }
  {
    std::vector<float> nan_do = d.d_o;
    nan_do[4] = NAN;
    auto a = args();
    a.d_output = nan_do;
    const auto st = call(a);
    CHECK(st.arg == "dOutput");
    CHECK(st.message.find("dOutput[4] is NaN") != std::string::npos);
  }
  {
    auto a = args();
    a.scale = -1.0f;
    CHECK(call(a).arg == "scale");
    a = args();
    a.nk = 0;
    CHECK(call(a).arg == "nk");
  }
  {
    std::vector<float> huge = d.d_o;
    for (float& x : huge) x = 3e38f;
    auto a = args();
    a.d_output = huge;
    std::vector<float> o_big = d.o;
    a.output = o_big;
    const auto st = call(a);
    CHECK(st.kind == attnlab::ErrorKind::range);
    CHECK(st.arg == "dOutput");
  }
}
