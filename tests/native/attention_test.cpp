// Scaled dot-product attention: both paths against the double reference, the seed-004 lookup,
// causal ≡ additive mask, streaming ≡ materialized, intermediates, all-masked rows.
#include <cmath>
#include <limits>
#include <vector>

#include "attention.h"
#include "testing.h"

using attnlab::AttentionArgs;
using attnlab::AttentionOutputs;
using attnlab::AttentionPath;

namespace {

struct Case {
  std::size_t nq, nk, dk, dv;
  bool causal = false;
  bool masked = false;
  unsigned seed = 1;
};

struct Result {
  std::vector<float> out, raw, scores, weights;
};

struct Inputs {
  std::vector<float> q, k, v, mask;
};

Inputs make_inputs(const Case& c) {
  Inputs in{testing::normal(c.nq * c.dk, c.seed), testing::normal(c.nk * c.dk, c.seed + 1000),
            testing::normal(c.nk * c.dv, c.seed + 2000), {}};
  if (c.masked) {
    in.mask = testing::uniform(c.nq * c.nk, c.seed + 3000, -2.0f, 2.0f);
    for (std::size_t i = 0; i < in.mask.size(); i += 3) in.mask[i] = -INFINITY;
  }
  return in;
}

Result run(const Case& c, const Inputs& in, AttentionPath path, bool intermediates) {
  Result r{std::vector<float>(c.nq * c.dv, 777.0f), {}, {}, {}};
  if (intermediates) r.raw = r.scores = r.weights = std::vector<float>(c.nq * c.nk, 777.0f);
  AttentionArgs a{in.q, in.k, in.v, c.nq, c.nk, c.dk, c.dv, std::nullopt, c.causal, in.mask, path};
  const auto st = attnlab::attention(a, AttentionOutputs{r.out, r.raw, r.scores, r.weights});
  INFO(st.message);
  REQUIRE(st.ok());
  return r;
}

ref::AttentionRef reference(const Case& c, const Inputs& in, bool streaming) {
  const double scale = double(1.0f / std::sqrt(float(c.dk)));  // the engine's float32 default
  return ref::attention(ref::widen(in.q), ref::zeros(in.q.size()), ref::widen(in.k), ref::zeros(in.k.size()),
                        ref::widen(in.v), ref::zeros(in.v.size()), c.nq, c.nk, c.dk, c.dv, scale, c.causal,
                        c.masked ? &in.mask : nullptr, streaming);
}

void check_case(const Case& c) {
  INFO("nq=" << c.nq << " nk=" << c.nk << " dk=" << c.dk << " dv=" << c.dv << " causal=" << c.causal
             << " masked=" << c.masked);
  const auto in = make_inputs(c);
  const auto want = reference(c, in, false);
  const auto m = run(c, in, AttentionPath::materialized, true);
  CHECK_BOUNDED(m.out, want.out);
  CHECK_BOUNDED(m.raw, want.raw);
  CHECK_BOUNDED(m.scores, want.scores);
  CHECK_BOUNDED(m.weights, want.weights);
  const auto s = run(c, in, AttentionPath::streaming, false);
  CHECK_BOUNDED(s.out, reference(c, in, true).out);
}

std::vector<std::size_t> sweep() {
  std::vector<std::size_t> s;
  for (std::size_t n = 1; n <= 17; ++n) s.push_back(n);
  // Around the query block (32 rows) and the key tile (128 keys), and 64 in between.
  for (std::size_t base : {32u, 64u, 128u}) for (int d : {-3, -1, 1, 2, 3}) s.push_back(std::size_t(int(base) + d));
  return s;
}

}  // namespace

TEST_CASE("attention: seed 004's soft lookup — fruit over apple/banana/chair", "[attention][seeds]") {
  // q·kᵢ = [-3, 0, 3] exactly; with scale 1 the weights are softmax([-3, 0, 3]).
  const std::vector<float> q = {2, 1, 3}, k = {-1, 2, -1, 1.5f, 0, -1, 4, -2, -1}, v = {10, 5, 2};
  std::vector<float> out(1), raw(3), w(3);
  AttentionArgs a{q, k, v, 1, 3, 3, 1, 1.0f};
  REQUIRE(attnlab::attention(a, AttentionOutputs{out, raw, {}, w}).ok());
  CHECK(raw == std::vector<float>{-3, 0, 3});
  CHECK(w[2] == Approx(0.950330).margin(1e-6));
  const double e = std::exp(-3.0) + 1 + std::exp(3.0);
  CHECK(out[0] == Approx((10 * std::exp(-3.0) + 5 + 2 * std::exp(3.0)) / e).epsilon(1e-6));
}

TEST_CASE("attention: shape sweep, both paths, against the double reference", "[attention]") {
  unsigned seed = 1;
  for (std::size_t n : sweep()) {
    check_case({n, n, 8, 8, false, false, seed++});
    check_case({n, n + 5, 5, 3, true, false, seed++});        // nq ≠ nk, odd dk/dv, causal
    check_case({n + 7, n, 16, 17, true, true, seed++});       // more queries than keys: leading rows masked
  }
  for (std::size_t d : {1u, 3u, 4u, 5u, 15u, 16u, 17u, 63u, 64u, 65u, 128u})
    check_case({9, 70, d, d, false, true, seed++});
}

TEST_CASE("attention: long sequences cross many key tiles (n up to 2048)", "[attention][long]") {
  check_case({129, 1000, 32, 24, true, false, 11});
  check_case({64, 2048, 16, 16, false, false, 12});
  Case c{2048, 2048, 8, 8, true, false, 13};
  const auto in = make_inputs(c);
  const auto s = run(c, in, AttentionPath::streaming, false);
  CHECK_BOUNDED(s.out, reference(c, in, true).out);
}

TEST_CASE("attention: causal equals the equivalent additive -inf mask", "[attention]") {
  for (auto [nq, nk] : {std::pair{5u, 5u}, {3u, 9u}, {9u, 3u}, {70u, 70u}, {33u, 100u}}) {
    Case c{nq, nk, 7, 5, true, false, unsigned(nq * 100 + nk)};
    const auto in = make_inputs(c);
    Inputs masked = in;
    masked.mask.assign(nq * nk, 0.0f);
    for (std::size_t i = 0; i < nq; ++i)
      for (std::size_t j = 0; j < nk; ++j)
        if (i + nk < nq || j > i + nk - nq) masked.mask[i * nk + j] = -INFINITY;
    Case cm = c;
    cm.causal = false, cm.masked = true;
    // Materialized: the same arithmetic on full rows, so bit for bit.
    const auto a = run(c, in, AttentionPath::materialized, true);
    const auto b = run(cm, masked, AttentionPath::materialized, true);
    CHECK(a.out == b.out);
    CHECK(a.weights == b.weights);
    CHECK(a.scores == b.scores);
    // Streaming skips masked tiles under causal but sums them under the mask: same value, other rounding.
    const auto sa = run(c, in, AttentionPath::streaming, false);
    const auto sb = run(cm, masked, AttentionPath::streaming, false);
    const auto want = reference(c, in, true);
    CHECK_BOUNDED(sa.out, want.out);
    CHECK_BOUNDED(sb.out, want.out);
  }
}

TEST_CASE("attention: causal zeroes exactly the upper triangle (bottom-right aligned)", "[attention]") {
  Case c{6, 9, 4, 4, true, false, 5};
  const auto in = make_inputs(c);
  const auto r = run(c, in, AttentionPath::materialized, true);
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = 0; j < 9; ++j) {
      const bool visible = j <= i + 3;  // i + nk − nq
      CHECK((r.weights[i * 9 + j] == 0.0f) == !visible);
      CHECK((r.scores[i * 9 + j] == -INFINITY) == !visible);
    }
}

TEST_CASE("attention: streaming agrees with materialized", "[attention]") {
  for (auto c : {Case{100, 300, 64, 64, false, false, 21}, Case{300, 100, 32, 16, true, true, 22},
                 Case{65, 65, 17, 9, true, false, 23}}) {
    const auto in = make_inputs(c);
    const auto m = run(c, in, AttentionPath::materialized, false);
    const auto s = run(c, in, AttentionPath::streaming, false);
    const auto rm = reference(c, in, false), rs = reference(c, in, true);
    for (std::size_t i = 0; i < m.out.size(); ++i)  // both within their bounds, so within the sum of them
      CHECK(std::fabs(m.out[i] - s.out[i]) <= rm.out.bound[i] + rs.out.bound[i]);
  }
}

TEST_CASE("attention: all-masked rows give zero weights and zero output", "[attention]") {
  Case c{4, 6, 3, 5, false, true, 31};
  auto in = make_inputs(c);
  for (std::size_t j = 0; j < 6; ++j) in.mask[2 * 6 + j] = -INFINITY;
  for (auto path : {AttentionPath::materialized, AttentionPath::streaming}) {
    const auto r = run(c, in, path, path == AttentionPath::materialized);
    for (std::size_t d = 0; d < 5; ++d) CHECK(r.out[2 * 5 + d] == 0.0f);
    if (path == AttentionPath::materialized)
      for (std::size_t j = 0; j < 6; ++j) CHECK(r.weights[2 * 6 + j] == 0.0f);
    for (float x : r.out) CHECK(!std::isnan(x));
  }
}

TEST_CASE("attention: overflow-prone scores are handled by the max subtraction", "[attention]") {
  // q·k ≈ ±2e4 scaled: e^(2e4) overflows float32 many times over without the max subtraction.
  Case c{5, 7, 4, 3, false, false, 41};
  auto in = make_inputs(c);
  for (auto& x : in.q) x *= 100.0f;
  for (auto& x : in.k) x *= 100.0f;
  const auto r = run(c, in, AttentionPath::materialized, true);
  CHECK_BOUNDED(r.out, reference(c, in, false).out);
  CHECK_BOUNDED(run(c, in, AttentionPath::streaming, false).out, reference(c, in, true).out);
}

TEST_CASE("attention: automatic path streams unless the matrix is wanted", "[attention]") {
  Case c{20, 20, 4, 4, false, false, 51};
  const auto in = make_inputs(c);
  std::vector<float> out_auto(80), out_stream(80);
  AttentionArgs a{in.q, in.k, in.v, 20, 20, 4, 4};
  REQUIRE(attnlab::attention(a, AttentionOutputs{out_auto}).ok());
  a.path = AttentionPath::streaming;
  REQUIRE(attnlab::attention(a, AttentionOutputs{out_stream}).ok());
  CHECK(out_auto == out_stream);
}

TEST_CASE("attention: a huge q with a huge scale against zero keys (found by fuzzing)", "[attention]") {
  // q·scale alone overflows float32 although every score q·k·scale is 0: the output is the mean of V.
  const std::vector<float> q = {1.7476e30f, 1.7476e30f}, k = {0.0f, 0.0f, 0.0f}, v = {1.0f, 2.0f, 6.0f};
  for (auto path : {AttentionPath::materialized, AttentionPath::streaming}) {
    std::vector<float> out(2, -1.0f);
    AttentionArgs a{q, k, v, 2, 3, 1, 1, 1.7476e30f};
    a.path = path;
    REQUIRE(attnlab::attention(a, AttentionOutputs{out}).ok());
    CHECK(out[0] == Approx(3.0).epsilon(1e-6));
    CHECK(out[1] == Approx(3.0).epsilon(1e-6));
  }
}
