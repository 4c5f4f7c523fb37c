// The async step's optimizer by slices: reduce_slice sums parts of one slice of the gradient into the model's
// gradient buffer and gives that slice's sum of squares; update_slice applies AdamW to the slice with the global
// norm. Slices that cover the parameters make train_step's update: bit for bit with slices at multiples of
// kNormChunk (the same float chunk sums; only the double sum of the slices' sums is regrouped, which here leaves the
// norm's float clip scale as it is), and bit for bit at any cut without clipping (each weight's update is
// element-wise). Bad slices, steps and norms are refused, naming them, with nothing changed.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gpt_testing.h"
#include "model/gpt.h"
#include "testing.h"

namespace m = attnlab::model;

namespace {

// 13 vocabulary, d 21, 3 layers: 15 330 parameters (no multiple of 4), four norm chunks.
m::GPTConfig config() {
  m::GPTConfig c;
  c.vocab_size = 13, c.context = 8, c.d_model = 21, c.heads = 3, c.kv_heads = 1, c.layers = 3, c.seed = 7;
  return c;
}

std::vector<float> params(const m::GPT& g) { return {g.parameters().begin(), g.parameters().end()}; }
bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

const std::vector<std::int32_t> kTokens{1, 4, 1, 6, 0, 2, 2, 8, 5, 1, 12, 3, 7, 7, 0, 9};
const std::vector<std::int32_t> kTargets{4, 1, 6, 0, 3, 2, -1, 8, -1, 1, -1, 9, 7, 0, 9, 10};
constexpr std::size_t kSeq = 8;

// One step of b by slices cut at `cuts` (0 … P): the gradient as `parts` parts (the first the gradient, the others
// zeros, so the sum is the gradient exactly), each slice reduced, the norm from the slices' sums, each slice updated.
void step_by_slices(m::GPT& b, const std::vector<std::size_t>& cuts, std::size_t parts, const m::TrainOptions& o,
                    float& loss) {
  REQUIRE(b.compute_gradients(kTokens, kTargets, kSeq, loss).ok());
  const std::vector<float> g(b.gradients().begin(), b.gradients().end());
  double sq = 0.0;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    const std::size_t off = cuts[k], len = cuts[k + 1] - cuts[k];
    std::vector<float> laid(len * parts, 0.0f);
    std::copy(g.begin() + off, g.begin() + off + len, laid.begin());
    double part_sq = -1;
    REQUIRE(b.reduce_slice(off, len, laid, part_sq).ok());
    sq += part_sq;
  }
  const std::uint64_t t = b.steps() + 1;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k)
    REQUIRE(b.update_slice(cuts[k], cuts[k + 1] - cuts[k], o, t, std::sqrt(sq)).ok());
}

}  // namespace

TEST_CASE("gpt update by slices: train_step bit for bit (chunk-aligned cuts; any cut without clipping)", "[gpt][parallel]") {
  const std::size_t P = gpt_testing::make_gpt(config())->parameter_count();
  REQUIRE(P == 15330);
  REQUIRE(P > 3 * m::GPT::kNormChunk);
  const std::size_t C = m::GPT::kNormChunk;
  struct Case {
    std::vector<std::size_t> cuts;
    float clip;
  };
  for (const Case& c : {Case{{0, C, 3 * C, P}, 0.05f}, Case{{0, 2 * C, P}, 0.05f}, Case{{0, P}, 0.05f},
                        Case{{0, 1001, 1002, 7777, P}, 0.0f}, Case{{0, 3, P - 5, P}, 0.0f}}) {
    for (const std::size_t parts : {std::size_t(1), std::size_t(3)}) {
      auto a = gpt_testing::make_gpt(config()), b = gpt_testing::make_gpt(config());
      m::TrainOptions o;
      o.lr = 1e-2f, o.weight_decay = 0.1f, o.grad_clip = c.clip;
      for (int step = 0; step < 3; ++step) {
        float la = 0, lb = 0;
        REQUIRE(a->train_step(kTokens, kTargets, kSeq, o, la).ok());
        step_by_slices(*b, c.cuts, parts, o, lb);
        CHECK(la == lb);
        CHECK(same_bits(a->parameters(), b->parameters()));
        CHECK(same_bits(a->moments(1), b->moments(1)));
        CHECK(same_bits(a->moments(2), b->moments(2)));
      }
      CHECK(b->steps() == 3);
    }
  }
}

TEST_CASE("gpt update by slices: bad slices, steps and norms are refused and change nothing", "[gpt][parallel]") {
  auto b = gpt_testing::make_gpt(config());
  const std::size_t P = b->parameter_count();
  float loss = 0;
  REQUIRE(b->compute_gradients(kTokens, kTargets, kSeq, loss).ok());
  const auto before = params(*b);
  const std::vector<float> g(b->gradients().begin(), b->gradients().end());
  double sq = 0;
  auto st = b->reduce_slice(P - 10, 11, std::vector<float>(11), sq);
  CHECK(st.kind == attnlab::ErrorKind::range);
  CHECK(st.arg == "offset");
  st = b->reduce_slice(0, 10, std::vector<float>(15), sq);
  CHECK(st.kind == attnlab::ErrorKind::range);
  CHECK(st.arg == "gradients");
  CHECK(same_bits(g, b->gradients()));
  m::TrainOptions o;
  st = b->update_slice(0, P, o, 0, 1.0);
  CHECK(st.arg == "step");
  st = b->update_slice(5, P, o, 1, 1.0);
  CHECK(st.arg == "offset");
  for (const double norm : {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    st = b->update_slice(0, P, o, 1, norm);
    CHECK(st.kind == attnlab::ErrorKind::numerical);
    CHECK(st.message.find("the gradient is not finite") != std::string::npos);
  }
  o.lr = -1;
  st = b->update_slice(0, P, o, 1, 1.0);
  CHECK(st.arg == "lr");
  CHECK(same_bits(before, b->parameters()));
  CHECK(b->steps() == 0);
}
