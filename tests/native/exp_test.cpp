// Accuracy of the exp that softmax uses, measured against double exp over the whole range softmax feeds it.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "testing.h"

namespace kern = attnlab::kernels::active;

// The engine's exp is exp_shifted: softmax subtracts the row max first, so every argument is ≤ 0 or -inf.
TEST_CASE("exp: relative error against double exp over [-87.3, 0], the range softmax uses", "[exp]") {
  // Every 23rd float bit pattern between -87.33 and 0 (≈ 47 million values).
  std::vector<float> x;
  std::uint32_t top;
  const float lo = 87.33f;
  std::memcpy(&top, &lo, 4);
  for (std::uint32_t bits = 0; bits <= top; bits += 23) {
    float f;
    std::memcpy(&f, &bits, 4);
    x.push_back(-f);  // magnitudes ascend with their bit patterns
  }
  x.push_back(-87.3365f);
  std::vector<float> y(x.size());
  kern::exp_shifted(x.data(), x.size(), 0.0f, 1.0f, y.data());
  double worst = 0;
  float worst_x = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = std::exp(double(x[i]));
    const double rel = std::fabs(double(y[i]) - want) / want;
    if (rel > worst) worst = rel, worst_x = x[i];
  }
  std::printf("exp: %zu samples, max relative error %.3g = %.2f ulp (u = 2^-24) at x = %.9g\n", x.size(), worst,
              worst / (2 * ref::u), double(worst_x));
  INFO("max relative error " << worst << " at x = " << worst_x);
  CHECK(worst <= ref::exp_rel_error);
}

TEST_CASE("exp: -inf and far-negative arguments give exactly 0, the denormal range stays within 2^-126, 0 gives 1",
          "[exp]") {
  const std::vector<float> x = {-INFINITY, -1e30f, -104.0f, 0.0f, -0.0f};
  std::vector<float> y(x.size());
  kern::exp_shifted(x.data(), x.size(), 0.0f, 1.0f, y.data());
  for (std::size_t i = 0; i < 3; ++i) CHECK(y[i] == 0.0f);  // e^-104 < 2^-150: rounds to 0 in float too
  CHECK(y[3] == 1.0f);
  CHECK(y[4] == 1.0f);

  // Where e^x < 2^-126 the kernels may round to a denormal (libm; the vector exp while n = -126) or give 0
  // (the vector exp from n = -127 on): either way never negative and never off by more than 2^-126.
  const std::vector<float> tiny = {-87.34f, -87.4f, -87.6f, -87.7f, -88.0f, -88.03f, -88.1f, -90.0f, -100.0f};
  std::vector<float> z(tiny.size());
  kern::exp_shifted(tiny.data(), tiny.size(), 0.0f, 1.0f, z.data());
  for (std::size_t i = 0; i < tiny.size(); ++i) {
    INFO("x = " << tiny[i] << ", exp = " << z[i]);
    CHECK(z[i] >= 0.0f);
    CHECK(std::fabs(double(z[i]) - std::exp(double(tiny[i]))) <= 0x1p-126);
  }
}

TEST_CASE("exp_shifted: every tail length gets the same values as one element alone", "[exp]") {
  for (std::size_t n = 1; n <= 19; ++n) {
    auto x = testing::uniform(n, 7u + unsigned(n), -20.0f, 0.0f);
    std::vector<float> out(n), elementwise(n);
    const float sum = kern::exp_shifted(x.data(), n, 0.0f, 1.0f, out.data());
    for (std::size_t i = 0; i < n; ++i) kern::exp_shifted(&x[i], 1, 0.0f, 1.0f, &elementwise[i]);
    double want = 0;
    for (std::size_t i = 0; i < n; ++i) {
      CHECK(out[i] == elementwise[i]);
      want += std::exp(double(x[i]));
    }
    CHECK(std::fabs(sum - want) <= want * (ref::exp_rel_error + ref::gamma(double(n))));
    CHECK(kern::exp_shifted(x.data(), n, 0.0f, 1.0f, nullptr) == sum);  // sum-only mode agrees
  }
}

// The softcap's tanh (soft_cap with mul = cap = 1): relative error against double tanh over every 97th float from
// 0 to 20 and their negatives (tanh rounds to ±1 beyond 9.01), and the odd symmetry exactly.
TEST_CASE("tanh: relative error against double tanh, the softcap's accuracy spec", "[exp][tanh]") {
  std::vector<float> x;
  std::uint32_t top;
  const float hi = 20.0f;
  std::memcpy(&top, &hi, 4);
  for (std::uint32_t bits = 0; bits <= top; bits += 97) {
    float f;
    std::memcpy(&f, &bits, 4);
    x.push_back(f);
    x.push_back(-f);
  }
  std::vector<float> y = x;
  kern::soft_cap(y.data(), y.size(), 1.0f, 1.0f);
  double worst = 0;
  float worst_x = 0;
  std::size_t asymmetric = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = std::tanh(double(x[i]));
    const double rel = want == 0 ? std::fabs(double(y[i])) : std::fabs(double(y[i]) - want) / std::fabs(want);
    if (rel > worst) worst = rel, worst_x = x[i];
    asymmetric += i % 2 && y[i] != -y[i - 1];
  }
  CHECK(asymmetric == 0);
  std::printf("tanh: %zu samples, max relative error %.3g = %.2f ulp (u = 2^-24) at x = %.9g\n", x.size(), worst,
              worst / (2 * ref::u), double(worst_x));
  CHECK(worst <= 4 * ref::u);  // ref::tanh_rel_error (attention_reference.h)
  // Infinity and the largest scores saturate to exactly ±cap; tails of every length match one element alone.
  std::vector<float> big = {INFINITY, -INFINITY, 3e38f, -3e38f, 0.0f};
  kern::soft_cap(big.data(), big.size(), 1.0f, 50.0f);
  CHECK(big == std::vector<float>{50.0f, -50.0f, 50.0f, -50.0f, 0.0f});
  for (std::size_t n = 1; n <= 9; ++n) {
    auto v = testing::uniform(n, unsigned(n), -3.0f, 3.0f), one = v;
    kern::soft_cap(v.data(), n, 0.5f, 2.0f);  // 2·tanh(x·0.5/2)
    for (std::size_t i = 0; i < n; ++i) kern::soft_cap(&one[i], 1, 0.5f, 2.0f);
    CHECK(v == one);
  }
}
