// softmax / log-softmax against the double reference: the articles' worked numbers, size sweeps,
// overflow-prone logits, -inf, all-masked rows and temperatures from 0.01 to 100.
#include <cmath>
#include <vector>

#include "softmax.h"
#include "testing.h"

using attnlab::softmax;
using attnlab::SoftmaxArgs;

namespace {

std::vector<float> run(const std::vector<float>& x, std::size_t cols, float temperature = 1.0f, bool log = false) {
  std::vector<float> out(x.size(), 12345.0f);
  const auto st = softmax(SoftmaxArgs{x, cols, temperature, log}, out);
  INFO(st.message);
  REQUIRE(st.ok());
  return out;
}

ref::Bounded reference(const std::vector<float>& x, std::size_t cols, float temperature = 1.0f, bool log = false) {
  // The engine multiplies by the float32 value of 1/T, so the reference does too.
  return ref::softmax_rows(ref::widen(x), ref::zeros(x.size()), cols, double(1.0f / temperature), log);
}

void check_both(const std::vector<float>& x, std::size_t cols, float temperature = 1.0f) {
  CHECK_BOUNDED(run(x, cols, temperature), reference(x, cols, temperature));
  CHECK_BOUNDED(run(x, cols, temperature, true), reference(x, cols, temperature, true));
}

}  // namespace

TEST_CASE("softmax: the articles' worked numbers", "[softmax][seeds]") {
  // "An Intuition for Attention": softmax([4.0, -1.0, 2.1]) = [0.8648, 0.0058, 0.1294]
  auto p = run({4.0f, -1.0f, 2.1f}, 3);
  CHECK(p[0] == Approx(0.8648).margin(5e-5));
  CHECK(p[1] == Approx(0.0058).margin(5e-5));
  CHECK(p[2] == Approx(0.1294).margin(5e-5));
  // "Self-attention": a 10% gap matters more at larger scale
  auto a = run({1.0f, 1.1f}, 2), b = run({10.0f, 11.0f}, 2), c = run({100.0f, 110.0f}, 2);
  CHECK(a[0] == Approx(0.475).margin(5e-4));
  CHECK(a[1] == Approx(0.525).margin(5e-4));
  CHECK(b[0] == Approx(0.269).margin(5e-4));
  CHECK(b[1] == Approx(0.731).margin(5e-4));
  CHECK(c[0] == Approx(0.0000454).margin(5e-7));
  CHECK(c[1] == Approx(0.999955).margin(5e-7));
  // [3, 2, 1] vs [30, 20, 10]: same order, far sharper
  auto small = run({3.0f, 2.0f, 1.0f}, 3), large = run({30.0f, 20.0f, 10.0f}, 3);
  CHECK(small[0] == Approx(0.665241).margin(1e-6));
  CHECK(small[2] == Approx(0.090031).margin(1e-6));
  CHECK(large[0] == Approx(0.9999546).margin(1e-7));
  CHECK(large[2] < 3e-9f);
  // the dot products [-3, 0, 3] of "An Intuition for Attention" (query [2,1,3] against three keys)
  auto d = run({-3.0f, 0.0f, 3.0f}, 3);
  CHECK(d[2] == Approx(0.950330).margin(1e-6));
  for (const auto* v : {&p, &a, &b, &c, &small, &large, &d}) check_both(std::vector<float>(*v), v->size());
}

TEST_CASE("softmax: size sweep against the double reference", "[softmax]") {
  std::vector<std::size_t> sizes;
  for (std::size_t n = 1; n <= 17; ++n) sizes.push_back(n);
  for (std::size_t base : {32u, 64u, 128u, 256u}) for (int d : {-3, -2, -1, 1, 2, 3}) sizes.push_back(std::size_t(int(base) + d));
  sizes.push_back(2048);
  for (std::size_t cols : sizes) {
    INFO("cols=" << cols);
    for (std::size_t rows : {1u, 3u}) check_both(testing::normal(rows * cols, unsigned(cols * 31 + rows), 4.0f), cols);
  }
}

TEST_CASE("softmax: overflow-prone logits stay finite and exact", "[softmax]") {
  // Without subtracting the max, e^90 … e^100 and e^1e30 overflow float32.
  check_both(testing::uniform(37, 5, 90.0f, 100.0f), 37);
  check_both({1e30f, -1e30f, 0.0f, 1e30f, 5.0f}, 5);
  check_both({-1e30f, -1e30f, -1e30f}, 3);
  auto p = run({1e30f, -1e30f, 0.0f, 1e30f, 5.0f}, 5);
  CHECK(p[0] == 0.5f);
  CHECK(p[3] == 0.5f);
  CHECK(p[1] == 0.0f);
}

TEST_CASE("softmax: -inf gets exactly 0, an all -inf row gives zeros (log: -inf), never NaN", "[softmax]") {
  for (std::size_t cols : {1u, 3u, 4u, 5u, 8u, 9u, 17u}) {
    auto x = testing::normal(2 * cols, unsigned(cols), 3.0f);
    for (std::size_t j = 0; j < cols; j += 2) x[j] = -INFINITY;  // row 0: every other entry masked
    for (std::size_t j = cols; j < 2 * cols; ++j) x[j] = -INFINITY;  // row 1: all masked
    INFO("cols=" << cols);
    auto p = run(x, cols), lp = run(x, cols, 1.0f, true);
    for (std::size_t j = 0; j < 2 * cols; ++j) {
      CHECK(!std::isnan(p[j]));
      if (x[j] == -INFINITY) CHECK(p[j] == 0.0f);
      if (x[j] == -INFINITY) CHECK(lp[j] == -INFINITY);
    }
    check_both(x, cols);
  }
}

TEST_CASE("softmax: temperature 0.01 … 100 equals softmax of logits / T", "[softmax]") {
  auto x = testing::normal(3 * 21, 77, 2.0f);
  for (float t : {0.01f, 0.1f, 0.5f, 1.0f, 2.0f, 10.0f, 100.0f}) {
    INFO("T=" << t);
    check_both(x, 21, t);
  }
  // T → large flattens toward uniform, T → small toward one-hot on the max.
  auto flat = run({1.0f, 2.0f, 3.0f}, 3, 100.0f), sharp = run({1.0f, 2.0f, 3.0f}, 3, 0.01f);
  CHECK(flat[0] == Approx(1.0 / 3).margin(0.01));
  CHECK(sharp[2] == 1.0f);
  CHECK(sharp[0] == 0.0f);
}

TEST_CASE("softmax: every row sums to 1 and in-place use is allowed", "[softmax]") {
  auto x = testing::normal(5 * 33, 9, 5.0f);
  auto copy = x;
  REQUIRE(softmax(SoftmaxArgs{x, 33, 1.0f, false}, x).ok());  // out aliases x
  CHECK(x == run(copy, 33));
  for (std::size_t r = 0; r < 5; ++r) {
    double s = 0;
    for (std::size_t j = 0; j < 33; ++j) s += x[r * 33 + j];
    // exp errors cancel between numerator and sum; left: the float sum (γ(n−1)) and two roundings.
    CHECK(std::fabs(s - 1.0) <= ref::gamma(33 + 1));
  }
}
