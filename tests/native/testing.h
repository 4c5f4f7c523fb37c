// Helpers shared by the native tests: seeded inputs and the bounded comparison against a reference.
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "reference.h"

namespace testing {

// The kernel set main.cpp was asked to test (--kernels), empty when none was named.
inline std::string requested_kernels;

// Seeded inputs. uniform: the very numbers std::uniform_real_distribution<float> draws from std::mt19937 in
// libstdc++, bit for bit (one 32-bit draw over 2³², rounded to float; what rounds to 1 moves just below it), without
// its generate_canonical, which takes a long-double logarithm per number (most of some tests' time under ASan).
inline std::vector<float> uniform(std::size_t n, std::uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) {
    const float u = float(rng()) * 0x1p-32f;
    x = (u < 1.0f ? u : std::nextafter(1.0f, 0.0f)) * (hi - lo) + lo;
  }
  return v;
}

inline std::vector<float> normal(std::size_t n, std::uint32_t seed, float sd = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// ∂L/∂x[i] by central differences with step h: `loss` (which reads x) at x[i] + h and x[i] − h; x[i] restored.
template <class Loss>
double central_difference(std::vector<double>& x, std::size_t i, Loss&& loss, double h = 1e-5) {
  const double keep = x[i];
  x[i] = keep + h;
  const double up = loss();
  x[i] = keep - h;
  const double down = loss();
  x[i] = keep;
  return (up - down) / (2 * h);
}

struct Comparison {
  std::size_t violations = 0, first_bad = 0;
  double worst_ratio = 0;  // max |got − ref| / bound
  double nmse = 0;         // Σ(got − ref)² / Σ ref²
  double nmse_bound = 0;   // Σ bound² / Σ ref²: what the elementwise bounds allow
};

// Elementwise |got − ref| ≤ bound (infinities must match exactly), plus whole-tensor NMSE.
inline Comparison compare(std::span<const float> got, const ref::Bounded& r) {
  Comparison c;
  double num = 0, den = 0, allowed = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], want = r.value[i];
    if (std::isinf(want) || std::isinf(g) || std::isnan(g)) {
      if (!ref::within(got[i], want, r.bound[i])) c.violations += (c.violations == 0 ? (c.first_bad = i, 1) : 1);
      continue;
    }
    const double err = std::fabs(g - want);
    num += err * err, den += want * want, allowed += r.bound[i] * r.bound[i];
    const double ratio = r.bound[i] > 0 ? err / r.bound[i] : (err == 0 ? 0 : INFINITY);
    if (ratio > c.worst_ratio) c.worst_ratio = ratio;
    if (err > r.bound[i] && c.violations++ == 0) c.first_bad = i;
  }
  c.nmse = den > 0 ? num / den : num;
  c.nmse_bound = den > 0 ? allowed / den : allowed;
  return c;
}

inline std::string describe(std::span<const float> got, const ref::Bounded& r, const Comparison& c) {
  std::ostringstream s;
  s.precision(9);
  s << c.violations << " element(s) beyond bound; worst err/bound = " << c.worst_ratio << ", NMSE = " << c.nmse
    << " (bound " << c.nmse_bound << ")";
  if (c.violations)
    s << "; first at " << c.first_bad << ": got " << got[c.first_bad] << ", want " << r.value[c.first_bad] << " ± "
      << r.bound[c.first_bad];
  return s.str();
}

}  // namespace testing

// Asserts got matches the bounded reference; on failure prints where and by how much.
#define CHECK_BOUNDED(got, reference)                                              \
  do {                                                                             \
    const auto& got_ = (got);                                                      \
    const auto& ref_ = (reference);                                                \
    REQUIRE(std::size(got_) == ref_.value.size());                                 \
    const auto cmp_ = testing::compare(std::span<const float>(got_), ref_);        \
    INFO(testing::describe(std::span<const float>(got_), ref_, cmp_));             \
    CHECK(cmp_.violations == 0);                                                 \
    CHECK(cmp_.nmse <= cmp_.nmse_bound);                                           \
  } while (0)
