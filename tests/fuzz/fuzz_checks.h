// The checks the attention harnesses share: output buffers left untouched on error (filled with kUntouched before
// the call), and results within the bounded double reference (tests/native/reference.h, bounded.h).
#pragma once
#include <cmath>
#include <cstdio>
#include <vector>

#include "../native/bounded.h"
#include "fuzz_input.h"

namespace fuzz {

constexpr float kUntouched = 4242.0f;

inline bool untouched(const std::vector<float>& b) {
  for (float x : b)
    if (x != kUntouched) return false;
  return true;
}

// Every element within the reference's bound (infinities must match).
inline void check_bounded(const char* name, const std::vector<float>& got, const ref::Bounded& r) {
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!ref::within(got[i], r.value[i], r.bound[i])) {
      std::fprintf(stderr, "%s[%zu] = %.9g, want %.9g ± %.3g\n", name, i, double(got[i]), r.value[i], r.bound[i]);
      fail("result outside the reference bound");
    }
}

// A gradient against the bounds of both orders the kernel may use (q pre-scaled, or the tile scaled when that
// could overflow): finite, and within the larger bound wherever the double formula itself is finite.
inline void check_gradient(const char* name, const std::vector<float>& got, const std::vector<bnd::B>& w1,
                           const std::vector<bnd::B>& w2) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    FUZZ_REQUIRE(std::isfinite(got[i]));  // a success holds finite gradients only
    if (!std::isfinite(w1[i].v)) continue;  // the double formula itself overflows (inputs near 1e30)
    const double e = std::fmax(w1[i].e, w2[i].e);
    if (!(std::fabs(double(got[i]) - w1[i].v) <= e)) {
      std::fprintf(stderr, "%s[%zu] = %.9g, want %.9g ± %.3g\n", name, i, double(got[i]), w1[i].v, e);
      fail("gradient outside the reference bound");
    }
  }
}

}  // namespace fuzz
