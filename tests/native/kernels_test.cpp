// The SIMD kernels against the double reference, over sizes below, at and above multiples of the
// vector width (4) and the register block (4 rows × 8 columns).
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "scratch.h"
#include "testing.h"

namespace kern = attnlab::kernels::active;

namespace {
std::vector<std::size_t> sweep_sizes() {
  std::vector<std::size_t> s;
  for (std::size_t n = 1; n <= 17; ++n) s.push_back(n);
  for (std::size_t base : {32u, 48u, 64u}) for (int d : {-3, -1, 1, 3}) s.push_back(std::size_t(int(base) + d));
  return s;
}
}  // namespace

TEST_CASE("gemm: C = A·B over a size sweep, fresh and accumulating", "[kernels][gemm]") {
  const auto sizes = sweep_sizes();
  unsigned seed = 1;
  for (std::size_t m : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 9u, 13u}) {
    for (std::size_t n : sizes) {
      for (std::size_t k : {1u, 3u, 4u, 16u, 17u, 67u}) {
        auto a = testing::uniform(m * k, seed++), b = testing::uniform(k * n, seed++);
        std::vector<float> c(m * n);
        kern::gemm(m, n, k, a.data(), k, b.data(), n, c.data(), n, false);
        INFO("m=" << m << " n=" << n << " k=" << k);
        CHECK_BOUNDED(c, ref::gemm(a, b, m, n, k));
      }
    }
  }
}

TEST_CASE("gemm: leading dimensions wider than the block, accumulate adds", "[kernels][gemm]") {
  const std::size_t m = 6, n = 11, k = 9, lda = 13, ldb = 15, ldc = 17;
  auto a = testing::uniform(m * lda, 11), b = testing::uniform(k * ldb, 12);
  std::vector<float> c(m * ldc, 5.0f);
  kern::gemm(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc, true);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < ldc; ++j) {
      if (j >= n) {
        CHECK(c[i * ldc + j] == 5.0f);  // padding between rows is never touched
        continue;
      }
      double want = 5.0, bound = 0;
      for (std::size_t p = 0; p < k; ++p) {
        want += double(a[i * lda + p]) * b[p * ldb + j];
        bound += std::fabs(double(a[i * lda + p]) * b[p * ldb + j]);
      }
      CHECK(std::fabs(c[i * ldc + j] - want) <= ref::gamma(double(k + 1)) * (bound + 5.0));
    }
}

TEST_CASE("row_max: every length, -inf entries, all -inf", "[kernels]") {
  for (std::size_t n = 1; n <= 40; ++n) {
    auto x = testing::uniform(n, 100u + unsigned(n), -50.0f, 50.0f);
    for (std::size_t i = 0; i < n; i += 3) x[i] = -INFINITY;
    float want = -INFINITY;
    for (float v : x) want = std::fmax(want, v);
    CHECK(kern::row_max(x.data(), n) == want);
    std::vector<float> all(n, -INFINITY);
    CHECK(kern::row_max(all.data(), n) == -INFINITY);
    x[n - 1] = 1e30f;  // the maximum in the scalar tail is found too
    CHECK(kern::row_max(x.data(), n) == 1e30f);
  }
}

TEST_CASE("scale_add: scale, add mask, saturate at FLT_MAX, keep -inf", "[kernels]") {
  for (std::size_t n = 1; n <= 19; ++n) {
    auto x = testing::uniform(n, 200u + unsigned(n), -4.0f, 4.0f);
    auto mask = testing::uniform(n, 300u + unsigned(n), -1.0f, 1.0f);
    mask[0] = -INFINITY;
    if (n > 1) x[1] = FLT_MAX, mask[1] = FLT_MAX;  // would overflow to +inf
    auto y = x;
    kern::scale_add(y.data(), n, 0.5f, mask.data());
    CHECK(y[0] == -INFINITY);
    if (n > 1) CHECK(y[1] == FLT_MAX);
    for (std::size_t i = 2; i < n; ++i) CHECK(y[i] == x[i] * 0.5f + mask[i]);
    auto z = x;
    kern::scale_add(z.data(), n, 2.0f, nullptr);
    for (std::size_t i = 0; i < n; ++i) CHECK(z[i] == std::fmin(x[i] * 2.0f, FLT_MAX));
  }
}

TEST_CASE("first_invalid: finds the first NaN/+inf (and -inf unless allowed) at every position", "[kernels]") {
  for (std::size_t n = 1; n <= 40; ++n) {
    auto x = testing::uniform(n, 400u + unsigned(n), -1e30f, 1e30f);
    CHECK(kern::first_invalid(x.data(), n, false) == n);
    for (std::size_t at = 0; at < n; ++at) {
      for (float bad : {NAN, INFINITY, -INFINITY}) {
        auto y = x;
        y[at] = bad;
        if (at + 1 < n) y[n - 1] = NAN;  // a later bad value must not win
        INFO("n=" << n << " at=" << at << " bad=" << bad);
        CHECK(kern::first_invalid(y.data(), n, false) == at);
        const std::size_t expect_allowing = bad == -INFINITY ? (at + 1 < n ? n - 1 : n) : at;
        CHECK(kern::first_invalid(y.data(), n, true) == expect_allowing);
      }
    }
  }
}

TEST_CASE("pack_rows + gemm_packed: C = (s·A)·B over a size sweep, fresh and accumulating", "[kernels][gemm]") {
  unsigned seed = 900;
  for (std::size_t m : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 9u, 31u, 32u, 33u}) {
    for (std::size_t n : sweep_sizes()) {
      for (std::size_t k : {1u, 3u, 4u, 5u, 16u, 17u, 64u})
      for (bool accumulate : {false, true}) {
        const std::size_t lda = k + 3;  // row stride wider than the row
        auto a = testing::uniform(m * lda, seed++), b = testing::uniform(k * n, seed++);
        std::vector<float> packed(attnlab::kernels::packed_size(m, k), -1.0f), c(m * n, 3.0f);
        kern::pack_rows(m, k, a.data(), lda, 0.5f, packed.data());
        kern::gemm_packed(m, n, k, packed.data(), b.data(), n, c.data(), n, accumulate);
        std::vector<float> scaled(m * k);
        for (std::size_t i = 0; i < m; ++i)
          for (std::size_t p = 0; p < k; ++p) scaled[i * k + p] = a[i * lda + p] * 0.5f;  // exact: power of two
        auto want = ref::gemm(scaled, b, m, n, k);
        // Accumulating adds one more term to each sum: γ(k + 1) over Σ|a·b| + |3|. Fresh: C's 3s are gone.
        for (std::size_t i = 0; accumulate && i < want.value.size(); ++i) {
          want.value[i] += 3.0;
          want.bound[i] = want.bound[i] / ref::gamma(double(k)) * ref::gamma(double(k + 1)) + ref::gamma(double(k + 1)) * 3.0;
        }
        INFO("m=" << m << " n=" << n << " k=" << k << " accumulate=" << accumulate);
        CHECK_BOUNDED(c, want);
      }
    }
  }
}

TEST_CASE("gemm_packed: a panel of 1–3 rows gives each row the bits it has in a panel of 4", "[kernels][gemm]") {
  // A decode step's one query row runs alone; its bits must not depend on that (attention cut by rows relies on it).
  unsigned seed = 1900;
  for (std::size_t rows : {1u, 2u, 3u})
    for (std::size_t n : sweep_sizes())
      for (std::size_t k : {1u, 5u, 64u, 67u})
        for (bool accumulate : {false, true}) {
          auto a = testing::uniform(4 * k, seed++), b = testing::uniform(k * (n + 5), seed++);
          std::vector<float> four(attnlab::kernels::packed_size(4, k)), few(attnlab::kernels::packed_size(rows, k));
          kern::pack_rows(4, k, a.data(), k, 1.0f, four.data());
          kern::pack_rows(rows, k, a.data(), k, 1.0f, few.data());
          const std::size_t ldc = n + 3;  // wider than the row: nothing past n is written
          std::vector<float> c4(4 * ldc, 0.5f), c(rows * ldc, 0.5f);
          kern::gemm_packed(4, n, k, four.data(), b.data(), n + 5, c4.data(), ldc, accumulate);
          kern::gemm_packed(rows, n, k, few.data(), b.data(), n + 5, c.data(), ldc, accumulate);
          INFO("rows=" << rows << " n=" << n << " k=" << k << " accumulate=" << accumulate);
          for (std::size_t i = 0; i < rows * ldc; ++i) REQUIRE(std::bit_cast<std::uint32_t>(c[i]) == std::bit_cast<std::uint32_t>(c4[i]));
        }
}

TEST_CASE("row_max_checked: same max as row_max, flags NaN and +inf but not -inf", "[kernels]") {
  for (std::size_t n = 1; n <= 40; ++n) {
    auto x = testing::uniform(n, 500u + unsigned(n), -100.0f, 100.0f);
    bool invalid = true;
    CHECK(kern::row_max_checked(x.data(), n, &invalid) == kern::row_max(x.data(), n));
    CHECK_FALSE(invalid);
    for (std::size_t at = 0; at < n; ++at) {
      for (float v : {NAN, INFINITY, -INFINITY}) {
        auto y = x;
        y[at] = v;
        kern::row_max_checked(y.data(), n, &invalid);
        INFO("n=" << n << " at=" << at << " v=" << v);
        CHECK(invalid == (v != -INFINITY));
      }
    }
  }
}

TEST_CASE("sum_squares: every length against double, +inf on overflow", "[kernels]") {
  for (std::size_t n = 1; n <= 40; ++n) {
    auto x = testing::uniform(n, 300u + unsigned(n), -3.0f, 3.0f);
    double want = 0;
    for (float v : x) want += double(v) * v;
    INFO("n = " << n);
    CHECK(std::fabs(kern::sum_squares(x.data(), n) - want) <= ref::gamma(double(n)) * want);
  }
  std::vector<float> big(9, 1e19f);  // each square 1e38: the sum passes FLT_MAX
  CHECK(std::isinf(kern::sum_squares(big.data(), big.size())));
  std::vector<float> zeros(5, 0.0f);
  CHECK(kern::sum_squares(zeros.data(), zeros.size()) == 0.0f);
}

TEST_CASE("scratch sizes saturate instead of wrapping around (size_t is 32 bits in wasm32)", "[kernels]") {
  constexpr std::size_t big = SIZE_MAX / 2;
  CHECK(attnlab::sat_mul(big, 3) == SIZE_MAX);
  CHECK(attnlab::sat_mul(0, SIZE_MAX) == 0);
  CHECK(attnlab::sat_mul(7, 6) == 42);
  CHECK(attnlab::kernels::packed_size(5, big) == SIZE_MAX);
  CHECK(attnlab::kernels::packed_size(5, 3) == 24);
  CHECK(attnlab::kernels::packed_size(0, 3) == 0);
  attnlab::Scratch huge(SIZE_MAX / 2);  // count·sizeof(float) would wrap: must fail, not shrink
  CHECK_FALSE(huge.ok_for(SIZE_MAX / 2));
}

TEST_CASE("distance_bias and mask_bool: every length, against the scalar definition", "[kernels]") {
  for (std::size_t n = 1; n <= 19; ++n)
    for (float center : {-3.0f, 0.0f, 5.0f, 17.0f}) {
      auto x = testing::uniform(n, unsigned(n) * 7u, -4.0f, 4.0f), want = x;
      kern::distance_bias(x.data(), n, center, 0.375f);
      for (std::size_t i = 0; i < n; ++i) want[i] -= 0.375f * std::fabs(center - float(i));  // one product, one difference
      CHECK(x == want);
    }
  for (std::size_t n = 1; n <= 19; ++n) {
    auto x = testing::uniform(n, unsigned(n), -4.0f, 4.0f), want = x;
    std::vector<std::uint8_t> keep(n);
    for (std::size_t i = 0; i < n; ++i) keep[i] = std::uint8_t((i * 7 + n) % 3 ? (i % 5) + 1 : 0);  // any nonzero keeps
    kern::mask_bool(x.data(), n, keep.data());
    for (std::size_t i = 0; i < n; ++i) CHECK(x[i] == (keep[i] ? want[i] : -INFINITY));
  }
}
