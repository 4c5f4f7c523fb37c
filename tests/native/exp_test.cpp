// Accuracy of the exp that softmax uses, measured against double exp over the whole range softmax feeds it.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "testing.h"

namespace kern = attnlab::kernels::active;

TEST_CASE("exp: relative error against double exp over [-87.3, 88.72]", "[exp]") {
  // Every 97th float bit pattern between the limits (≈ 20 million values), plus both limits.
  std::vector<float> x;
  auto add_range = [&](float lo, float hi) {
    std::uint32_t a, b;
    std::memcpy(&a, &lo, 4), std::memcpy(&b, &hi, 4);
    for (std::uint32_t bits = a; bits <= b; bits += 97) {
      float f;
      std::memcpy(&f, &bits, 4);
      x.push_back(f);
    }
  };
  add_range(0.0f, 88.72283172607421875f);         // positive floats ascend with their bit patterns
  const std::size_t positives = x.size();
  add_range(0.0f, 87.33f);         // magnitudes of the negatives
  for (std::size_t i = positives; i < x.size(); ++i) x[i] = -x[i];
  x.push_back(88.72283172607421875f), x.push_back(-87.3365f);
  std::vector<float> y(x.size());
  kern::exp(x.data(), y.data(), x.size());
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

TEST_CASE("exp: limits — -inf and deep negatives give 0, overflow gives +inf", "[exp]") {
  const std::vector<float> x = {-INFINITY, -1e30f, -104.0f, -88.0f, 0.0f, 88.7229f, 1e30f, 88.7f, INFINITY};
  std::vector<float> y(x.size());
  kern::exp(x.data(), y.data(), x.size());
  CHECK(y[0] == 0.0f);
  CHECK(y[1] == 0.0f);
  CHECK(y[2] == 0.0f);
  CHECK(y[3] < 1e-37f);  // true value 6.05e-39: flushed or denormal, never large
  CHECK(y[4] == 1.0f);
  CHECK(std::isinf(y[5]));
  CHECK(std::isinf(y[6]));
  CHECK(y[7] == Approx(std::exp(double(88.7f))).epsilon(2 * ref::exp_rel_error));  // n = 128 after range reduction: still finite
  CHECK(std::isinf(y[8]));
}

TEST_CASE("exp_shifted: every tail length gets the same values as the vector body", "[exp]") {
  for (std::size_t n = 1; n <= 19; ++n) {
    auto x = testing::uniform(n, 7u + unsigned(n), -20.0f, 0.0f);
    std::vector<float> out(n), elementwise(n);
    const float sum = kern::exp_shifted(x.data(), n, 0.0f, 1.0f, out.data());
    kern::exp(x.data(), elementwise.data(), n);
    double want = 0;
    for (std::size_t i = 0; i < n; ++i) {
      CHECK(out[i] == elementwise[i]);
      want += std::exp(double(x[i]));
    }
    CHECK(std::fabs(sum - want) <= want * (ref::exp_rel_error + ref::gamma(double(n))));
    CHECK(kern::exp_shifted(x.data(), n, 0.0f, 1.0f, nullptr) == sum);  // sum-only mode agrees
  }
}
