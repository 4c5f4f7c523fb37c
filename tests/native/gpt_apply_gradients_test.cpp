// Data-parallel training's engine half: check_step, partial_gradients and apply_gradients. apply_gradients given
// compute_gradients' gradient is train_step bit for bit (clipped or not); the parts of a batch (whole sequences,
// each divided by the whole batch's count of targets) sum to the whole batch's gradient; clipping acts on the
// gradient given; a non-finite gradient or loss, a bad option or length changes nothing.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "gpt_testing.h"
#include "model/gpt.h"
#include "testing.h"

namespace m = attnlab::model;

namespace {

constexpr auto make = gpt_testing::make_gpt;

m::GPTConfig small(std::uint32_t seed) {
  m::GPTConfig c;
  c.vocab_size = 13, c.context = 8, c.d_model = 8, c.heads = 2, c.kv_heads = 1, c.layers = 2, c.seed = seed;
  return c;
}

std::vector<float> params(const m::GPT& g) { return {g.parameters().begin(), g.parameters().end()}; }
std::vector<float> grads(const m::GPT& g) { return {g.gradients().begin(), g.gradients().end()}; }

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// 3 sequences of 6; the middle one mostly ignored, so the parts have unequal counts of targets.
const std::vector<std::int32_t> kTokens{1, 4, 1, 6, 0, 2, 2, 8, 5, 1, 12, 3, 7, 7, 0, 9, 10, 11};
const std::vector<std::int32_t> kTargets{4, 1, 6, 0, 3, 2, -1, -1, -1, 1, -1, 9, 7, 0, 9, 10, 11, 5};
constexpr std::size_t kSeq = 6;

}  // namespace

TEST_CASE("gpt apply_gradients: compute_gradients + apply_gradients is train_step, bit for bit", "[gpt][parallel]") {
  for (const float clip : {0.0f, 0.05f, 1e3f}) {  // no clipping, clipping every step, a bound never reached
    auto a = make(small(3)), b = make(small(3));
    m::TrainOptions o;
    o.lr = 1e-2f, o.weight_decay = 0.1f, o.grad_clip = clip;
    for (int step = 0; step < 4; ++step) {
      float la = 0, lb = 0;
      REQUIRE(a->train_step(kTokens, kTargets, kSeq, o, la).ok());
      REQUIRE(b->compute_gradients(kTokens, kTargets, kSeq, lb).ok());
      const auto g = grads(*b);
      REQUIRE(b->apply_gradients(g, o).ok());
      CHECK(std::memcmp(&la, &lb, sizeof la) == 0);
      CHECK(same_bits(params(*a), params(*b)));
      CHECK(a->steps() == b->steps());
    }
    CHECK(b->steps() == 4);
  }
}

TEST_CASE("gpt partial_gradients: whole-sequence parts sum to the batch's gradient; loss sums to its loss",
          "[gpt][parallel]") {
  auto whole = make(small(4)), part = make(small(4));
  float loss = 0;
  REQUIRE(whole->compute_gradients(kTokens, kTargets, kSeq, loss).ok());
  const auto want = grads(*whole);
  std::size_t count = 0;
  for (auto t : kTargets) count += t >= 0;
  std::vector<double> sum(want.size(), 0.0);
  double loss_sum = 0;
  const std::span<const std::int32_t> tok(kTokens), tgt(kTargets);
  for (auto [s0, s1] : {std::pair<std::size_t, std::size_t>{0, 1}, {1, 3}}) {
    double part_loss = -1;
    REQUIRE(part->partial_gradients(tok.subspan(s0 * kSeq, (s1 - s0) * kSeq), tgt.subspan(s0 * kSeq, (s1 - s0) * kSeq),
                                    kSeq, count, part_loss).ok());
    loss_sum += part_loss;
    const auto g = grads(*part);
    for (std::size_t i = 0; i < g.size(); ++i) sum[i] += g[i];
  }
  // Double sums of the same float per-token losses in another grouping: equal to far below a float's ulp.
  CHECK(static_cast<float>(loss_sum / double(count)) == loss);
  // Each float32 gradient is within 2⁻¹⁴ of (its tensor's largest gradient + the element) of the exact one (the
  // bound derived in gpt_test.cpp against finite differences); the two computations differ only in the order the
  // per-token terms are summed, so they are within twice that of each other. A part weighted by its own count
  // instead of the batch's would be off by 50 % and more here.
  for (const auto& t : whole->layout().tensors) {
    if (t.alias) continue;
    double scale = 0;
    for (std::size_t i = t.offset; i < t.offset + t.size(); ++i) scale = std::fmax(scale, std::fabs(double(want[i])));
    std::size_t bad = 0;
    for (std::size_t i = t.offset; i < t.offset + t.size(); ++i)
      bad += std::fabs(sum[i] - want[i]) > 2 * 0x1p-14 * (scale + std::fabs(double(want[i])));
    INFO(t.name);
    CHECK(bad == 0);
    CHECK(scale > 0);
  }
  // A part without a counted target: zero gradient, zero loss.
  const std::vector<std::int32_t> none(kSeq, -1);
  double zero = -1;
  REQUIRE(part->partial_gradients(tok.subspan(0, kSeq), none, kSeq, count, zero).ok());
  CHECK(zero == 0.0);
  for (float g : part->gradients()) REQUIRE(g == 0.0f);
  // A normalizer below the part's own count is refused.
  auto st = part->partial_gradients(tok, tgt, kSeq, 3, zero);
  CHECK(st.kind == attnlab::ErrorKind::range);
  CHECK(st.arg == "normalizer");
}

TEST_CASE("gpt apply_gradients: clipping scales the gradient given to grad_clip", "[gpt][parallel]") {
  // β₁ = β₂ = 0: the first step moves each weight by lr·ĝ/(|ĝ| + eps), ĝ = gscale·g. With eps = 1 that is a
  // smooth function of ĝ, so it reveals the scale: computed here in double from the same g.
  auto g = make(small(5));
  const auto before = params(*g);
  std::vector<float> grad(g->parameter_count());
  for (std::size_t i = 0; i < grad.size(); ++i) grad[i] = float(std::sin(0.37 * double(i))) * 0.25f;
  double sq = 0;
  for (float x : grad) sq += double(x) * x;
  const double norm = std::sqrt(sq), clip = norm / 8;
  m::TrainOptions o;
  o.lr = 0.5f, o.weight_decay = 0, o.beta1 = 0, o.beta2 = 0, o.eps = 1, o.grad_clip = float(clip);
  REQUIRE(g->apply_gradients(grad, o).ok());
  const double s = clip / (norm + 1e-6);
  const auto after = params(*g);
  for (std::size_t i = 0; i < grad.size(); ++i) {
    const double gh = s * grad[i], want = double(before[i]) - 0.5 * gh / (std::fabs(gh) + 1.0);
    // a handful of float roundings on values ≤ 0.5·|ĝ| plus the weight's own rounding
    REQUIRE(std::fabs(after[i] - want) <= 1e-6 * (std::fabs(want) + 0.5 * std::fabs(gh)) + 1e-9);
  }
}

TEST_CASE("gpt apply_gradients: a non-finite gradient, a bad option or length changes nothing", "[gpt][parallel]") {
  auto g = make(small(6)), twin = make(small(6));
  m::TrainOptions o;
  o.lr = 1e-2f;
  float l = 0;
  REQUIRE(g->compute_gradients(kTokens, kTargets, kSeq, l).ok());
  const auto good = grads(*g);
  REQUIRE(g->apply_gradients(good, o).ok());  // moments and step count in use before the refused calls
  REQUIRE(twin->apply_gradients(good, o).ok());
  const auto kept = params(*g);
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 3e38f}) {
    auto worse = good;
    worse[worse.size() / 2] = bad;
    if (bad == 3e38f) worse[0] = 3e38f;  // finite entries whose squares overflow the norm
    const auto st = g->apply_gradients(worse, o);
    CHECK(st.kind == attnlab::ErrorKind::numerical);
    CHECK(st.message.find("the gradient is not finite") != std::string::npos);
  }
  std::vector<float> shorter(good.begin(), good.end() - 1);
  auto st = g->apply_gradients(shorter, o);
  CHECK(st.kind == attnlab::ErrorKind::range);
  CHECK(st.arg == "gradients");
  m::TrainOptions bad = o;
  bad.beta2 = 1;
  st = g->apply_gradients(good, bad);
  CHECK(st.kind == attnlab::ErrorKind::range);
  CHECK(st.arg == "beta2");
  CHECK(same_bits(params(*g), kept));
  CHECK(g->steps() == 1);
  // The moments are untouched too: the next good step matches a twin that never saw the refused calls.
  REQUIRE(g->apply_gradients(good, o).ok());
  REQUIRE(twin->apply_gradients(good, o).ok());
  CHECK(same_bits(params(*g), params(*twin)));
  CHECK(g->steps() == 2);
  // check_loss: the message train_step gives for a non-finite loss.
  CHECK(m::GPT::check_loss(1.5).ok());
  st = m::GPT::check_loss(std::numeric_limits<double>::infinity());
  CHECK(st.kind == attnlab::ErrorKind::numerical);
  CHECK(st.message.find("the loss is") == 0);
}

TEST_CASE("gpt check_step: train_step's own errors, nothing computed", "[gpt][parallel]") {
  auto g = make(small(7));
  const auto kept = params(*g);
  m::TrainOptions o;
  auto same = [&](std::span<const std::int32_t> tok, std::span<const std::int32_t> tgt, std::size_t seq,
                  const m::TrainOptions& opt) {
    float l = 0;
    const auto want = g->train_step(tok, tgt, seq, opt, l);
    const auto got = g->check_step(tok, tgt, seq, opt);
    REQUIRE(!want.ok());
    CHECK(got.kind == want.kind);
    CHECK(got.arg == want.arg);
    CHECK(got.message == want.message);
  };
  m::TrainOptions bad_lr = o;
  bad_lr.lr = -1;
  same(kTokens, kTargets, kSeq, bad_lr);
  same(kTokens, kTargets, 9, o);  // longer than the context
  same(kTokens, kTargets, 4, o);  // 18 tokens are not sequences of 4
  same(kTokens, std::span<const std::int32_t>(kTargets).first(12), kSeq, o);
  auto big = kTokens;
  big[5] = 13;
  same(big, kTargets, kSeq, o);
  const std::vector<std::int32_t> none(kTokens.size(), -1);
  same(kTokens, none, kSeq, o);
  CHECK(g->check_step(kTokens, kTargets, kSeq, o).ok());
  CHECK(same_bits(params(*g), kept));
  CHECK(g->steps() == 0);
}
