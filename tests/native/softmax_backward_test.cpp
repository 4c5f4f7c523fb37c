// softmax_backward: against the formula in bounded double arithmetic (from the engine's own forward output),
// the formula against finite differences of the double forward, masked entries and rows, in-place, errors.
#include <cmath>
#include <vector>

#include "bounded.h"
#include "softmax.h"
#include "softmax_backward.h"
#include "testing.h"

using bnd::B;

namespace {

std::vector<float> forward(const std::vector<float>& x, std::size_t cols, float t, bool log) {
  std::vector<float> y(x.size());
  REQUIRE(attnlab::softmax({x, cols, t, log}, y).ok());
  return y;
}

// The kernel's formula on float inputs y, dy: softmax mul·yᵢ·(dyᵢ − Σ y∘dy), log mul·(dyᵢ − Σdy·exp(yᵢ)).
std::vector<B> reference(const std::vector<float>& y, const std::vector<float>& dy, std::size_t cols, float t, bool log) {
  std::vector<B> r(y.size());
  const B mul = B{1, 0} / bnd::in(t);
  for (std::size_t o = 0; o < y.size(); o += cols) {
    const std::vector<B> Y = bnd::inputs({y.begin() + std::ptrdiff_t(o), y.begin() + std::ptrdiff_t(o + cols)}),
                         G = bnd::inputs({dy.begin() + std::ptrdiff_t(o), dy.begin() + std::ptrdiff_t(o + cols)});
    bool all_masked = true;
    for (const B& v : Y) all_masked = all_masked && v.v == -INFINITY;
    if (log && all_masked) continue;  // zeros
    const B s = log ? bnd::sum(G) : bnd::dot(Y, G);
    for (std::size_t j = 0; j < cols; ++j)
      r[o + j] = log ? mul * (G[j] - s * (Y[j].v == -INFINITY ? B{0, 0} : bnd::exp(Y[j]))) : (mul * Y[j]) * (G[j] - s);
  }
  return r;
}

}  // namespace

TEST_CASE("softmax_backward: rows of every length 1…70 and around 128, temperatures, log", "[softmax_backward]") {
  unsigned seed = 1;
  std::vector<std::size_t> lengths;
  for (std::size_t n = 1; n <= 70; ++n) lengths.push_back(n);
  for (std::size_t n : {127u, 128u, 129u, 1000u}) lengths.push_back(n);
  for (std::size_t cols : lengths)
    for (float t : {1.0f, 0.5f, 3.0f})
      for (bool log : {false, true}) {
        const std::size_t rows = 1 + seed % 4;
        auto x = testing::uniform(rows * cols, seed++, -6.0f, 6.0f);
        for (std::size_t i = 0; i < x.size(); i += 5) x[i] = -INFINITY;
        const auto y = forward(x, cols, t, log);
        const auto dy = testing::normal(x.size(), seed++);
        std::vector<float> dx(x.size(), 3.0f);
        const auto st = attnlab::softmax_backward({y, dy, cols, t, log}, dx);
        REQUIRE(st.ok());
        INFO("cols=" << cols << " T=" << t << " log=" << log);
        CHECK_WITHIN(dx, reference(y, dy, cols, t, log));
        for (std::size_t i = 0; i < x.size(); i += 5)
          if (!log) CHECK(dx[i] == 0.0f);  // a masked logit gets no gradient
      }
}

TEST_CASE("softmax_backward: the formula is the gradient (finite differences of the double forward)", "[softmax_backward]") {
  for (bool log : {false, true})
    for (double t : {1.0, 0.7}) {
      const std::size_t cols = 6;
      const auto x = testing::uniform(2 * cols, 9, -3.0f, 3.0f), dy = testing::normal(2 * cols, 10);
      std::vector<double> xd = ref::widen(x);
      auto y_of = [&](const std::vector<double>& in) {
        std::vector<double> y(in.size());
        for (std::size_t o = 0; o < in.size(); o += cols) {
          double m = -INFINITY, z = 0;
          for (std::size_t j = 0; j < cols; ++j) m = std::fmax(m, in[o + j] / t);
          for (std::size_t j = 0; j < cols; ++j) z += std::exp(in[o + j] / t - m);
          for (std::size_t j = 0; j < cols; ++j) y[o + j] = log ? in[o + j] / t - m - std::log(z) : std::exp(in[o + j] / t - m) / z;
        }
        return y;
      };
      auto loss = [&]() {
        const auto y = y_of(xd);
        double s = 0;
        for (std::size_t i = 0; i < y.size(); ++i) s += double(dy[i]) * y[i];
        return s;
      };
      const auto y = y_of(xd);
      std::vector<double> g(y.size());
      for (std::size_t o = 0; o < y.size(); o += cols) {  // the formula, in exact double
        double s = 0;
        for (std::size_t j = 0; j < cols; ++j) s += log ? double(dy[o + j]) : y[o + j] * dy[o + j];
        for (std::size_t j = 0; j < cols; ++j)
          g[o + j] = (log ? dy[o + j] - s * std::exp(y[o + j]) : y[o + j] * (dy[o + j] - s)) / t;
      }
      for (std::size_t i = 0; i < xd.size(); ++i)
        CHECK(std::fabs(testing::central_difference(xd, i, loss) - g[i]) <= 1e-8 * (1 + std::fabs(g[i])));
    }
}

TEST_CASE("softmax_backward: all-masked rows, in place, and errors that write nothing", "[softmax_backward]") {
  std::vector<float> y{0, 0, 0, 0.25f, 0.75f, 0}, dy{1, 2, 3, 4, 5, 6};
  std::vector<float> dx(6, 9.0f);
  REQUIRE(attnlab::softmax_backward({y, dy, 3}, dx).ok());
  CHECK(dx[0] == 0.0f);
  CHECK(dx[1] == 0.0f);
  CHECK(dx[2] == 0.0f);  // all-zero row: no gradient
  std::vector<float> ly{-INFINITY, -INFINITY, -INFINITY, -1.0f, -0.5f, -INFINITY};
  REQUIRE(attnlab::softmax_backward({ly, dy, 3, 1.0f, true}, dx).ok());
  CHECK(dx[0] == 0.0f);  // all −inf row (log): 0, never NaN
  CHECK(dx[5] == 6.0f);  // a −inf entry of a live row: dy itself (its probability is 0)
  std::vector<float> inplace = dy;  // dx may alias dy
  REQUIRE(attnlab::softmax_backward({y, inplace, 3}, inplace).ok());
  std::vector<float> separate(6);
  REQUIRE(attnlab::softmax_backward({y, dy, 3}, separate).ok());
  CHECK(inplace == separate);

  auto expect_error = [&](attnlab::SoftmaxBackwardArgs a, const char* arg, const char* text) {
    std::vector<float> out(a.y.size(), 4.0f);
    const auto st = attnlab::softmax_backward(a, out);
    INFO(st.message);
    CHECK(st.kind == attnlab::ErrorKind::range);
    CHECK(st.arg == arg);
    CHECK(st.message.find(text) != std::string::npos);
    for (float x : out) CHECK(x == 4.0f);
  };
  expect_error({y, dy, 4}, "y", "multiple of cols = 4");
  expect_error({y, std::span<const float>(dy).first(5), 3}, "dy", "dy must have y.length = 6 elements, got 5");
  expect_error({y, dy, 3, 0.0f}, "temperature", "finite and > 0");
  std::vector<float> logits{2.0f, -1.0f, 0.5f, 0.1f, 0.2f, 0.7f};
  expect_error({logits, dy, 3}, "y", "y[0] is 2; y must be the forward's output, probabilities in [0, 1]");
  expect_error({y, dy, 3, 1.0f, true}, "y", "log-probabilities");
  std::vector<float> bad_dy = dy;
  bad_dy[2] = INFINITY;
  expect_error({y, bad_dy, 3}, "dy", "dy[2] is Infinity");
}
