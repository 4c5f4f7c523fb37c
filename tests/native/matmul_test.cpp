// matmul against the double reference (ref::gemm: |error| ≤ γ(k)·Σ|aᵢₚ·bₚⱼ| + k·2⁻¹⁴⁹, any summation order,
// so the k-blocked accumulation is covered too), over sizes below, at and above the vector width (4), the
// register block (4 rows × 8 columns), and the op's column block (128) and depth block (256); then every error.
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "matmul.h"
#include "testing.h"

namespace {

std::vector<float> transpose(const std::vector<float>& b, std::size_t rows, std::size_t cols) {
  std::vector<float> t(b.size());
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = b[r * cols + c];
  return t;
}

// Runs a·b (b is [k×n]) both ways: as given, and transposed with transpose_b; both must meet the bound.
void check_product(const std::vector<float>& a, const std::vector<float>& b, std::size_t m, std::size_t k, std::size_t n) {
  const auto want = ref::gemm(a, b, m, n, k);
  std::vector<float> c(m * n, NAN);
  REQUIRE(attnlab::matmul({a, b, m, k, n, false}, c).ok());
  CHECK_BOUNDED(c, want);
  const auto bt = transpose(b, k, n);
  std::vector<float> ct(m * n, NAN);
  REQUIRE(attnlab::matmul({a, bt, m, k, n, true}, ct).ok());
  CHECK_BOUNDED(ct, want);
}

std::vector<float> sentinel(std::size_t n) { return std::vector<float>(n, 4242.0f); }

bool untouched(const std::vector<float>& v) {
  for (float x : v)
    if (x != 4242.0f) return false;
  return true;
}

}  // namespace

TEST_CASE("matmul: size sweep around 4, 8, 32 and the 128-column block, both layouts of b", "[matmul]") {
  unsigned seed = 1;
  for (std::size_t m : {1u, 3u, 4u, 5u, 8u, 31u, 33u})
    for (std::size_t k : {1u, 3u, 4u, 5u, 8u, 17u, 32u})
      for (std::size_t n : {1u, 3u, 4u, 7u, 8u, 9u, 31u, 33u, 127u, 128u, 129u}) {
        INFO("m=" << m << " k=" << k << " n=" << n);
        // Two statements: two seed++ in one call's arguments are unsequenced, so GCC and clang would draw a and b
        // from different seeds.
        const auto a = testing::uniform(m * k, seed++);
        check_product(a, testing::uniform(k * n, seed++), m, k, n);
      }
}

TEST_CASE("matmul: the depth block (k around 256) and larger shapes", "[matmul]") {
  unsigned seed = 500;
  for (auto [m, k, n] : {std::tuple{4u, 255u, 8u}, {5u, 256u, 9u}, {3u, 257u, 129u}, {128u, 128u, 128u},
                         {33u, 513u, 130u}, {129u, 64u, 257u}, {1u, 1024u, 1u}, {200u, 300u, 70u}}) {
    INFO("m=" << m << " k=" << k << " n=" << n);
    const auto a = testing::normal(m * k, seed++, 3.0f);
    check_product(a, testing::normal(k * n, seed++, 0.5f), m, k, n);
  }
}

TEST_CASE("matmul: small integers multiply exactly, identity and zero", "[matmul]") {
  const std::size_t m = 6, k = 5, n = 7;
  std::vector<float> a(m * k), b(k * n), eye(k * k, 0.0f), c(m * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 7) - 3);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 5) - 2);
  for (std::size_t i = 0; i < k; ++i) eye[i * k + i] = 1.0f;
  REQUIRE(attnlab::matmul({a, b, m, k, n, false}, c).ok());
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      float want = 0.0f;
      for (std::size_t p = 0; p < k; ++p) want += a[i * k + p] * b[p * n + j];
      CHECK(c[i * n + j] == want);  // every partial sum is a small integer: no rounding at all
    }
  std::vector<float> ai(m * k);
  REQUIRE(attnlab::matmul({a, eye, m, k, k, false}, ai).ok());
  CHECK(ai == a);
  REQUIRE(attnlab::matmul({a, eye, m, k, k, true}, ai).ok());
  CHECK(ai == a);
  std::vector<float> zeros(k * n, 0.0f);
  REQUIRE(attnlab::matmul({a, zeros, m, k, n, false}, c).ok());
  for (float v : c) CHECK(v == 0.0f);
}

TEST_CASE("matmul: tiny and large magnitudes (underflow, near the overflow guard)", "[matmul]") {
  const std::size_t m = 9, k = 37, n = 11;
  auto tiny = testing::uniform(m * k, 71, -1e-20f, 1e-20f), b = testing::uniform(k * n, 72, -1e-20f, 1e-20f);
  check_product(tiny, b, m, k, n);  // products ≈ 1e-40: denormal or 0, covered by the k·2⁻¹⁴⁹ term
  auto big = testing::uniform(m * k, 73, -1e17f, 1e17f), big_b = testing::uniform(k * n, 74, -1e17f, 1e17f);
  check_product(big, big_b, m, k, n);  // norms ≈ 3.5e17 each: 1e35, accepted, and exact to the bound
}

TEST_CASE("matmul: every size, length and value error names the argument and writes nothing", "[matmul]") {
  const std::size_t m = 2, k = 3, n = 4;
  const auto a = testing::uniform(m * k, 5), b = testing::uniform(k * n, 6);
  auto expect_error = [&](const attnlab::MatmulArgs& args, std::size_t out_len, const char* arg, const std::string& text) {
    auto out = sentinel(out_len);
    const auto s = attnlab::matmul(args, out);
    INFO(s.message);
    CHECK(s.kind == attnlab::ErrorKind::range);
    CHECK(s.arg == arg);
    CHECK(s.message.find(text) != std::string::npos);
    CHECK(untouched(out));
  };
  expect_error({a, b, 0, k, n}, 0, "m", "m must be an integer >= 1, got 0");
  expect_error({a, b, m, 0, n}, m * n, "k", "k must be an integer >= 1, got 0");
  expect_error({a, b, m, k, 0}, 0, "n", "n must be an integer >= 1, got 0");
  expect_error({std::span(a).first(5), b, m, k, n}, m * n, "a", "a must have m·k = 2·3 = 6 elements, got 5");
  expect_error({a, std::span(b).first(11), m, k, n}, m * n, "b", "b must have k·n = 3·4 = 12 elements, got 11");
  expect_error({a, std::span(b).first(11), m, k, n, true}, m * n, "b", "b must have n·k = 4·3 = 12 elements, got 11");
  expect_error({a, b, m, k, n}, m * n + 1, "out", "out must have m·n = 2·4 = 8 elements, got 9");
  for (float bad : {NAN, INFINITY, -INFINITY}) {
    auto a2 = a;
    a2[4] = bad;
    expect_error({a2, b, m, k, n}, m * n, "a", "a[4] is ");
    auto b2 = b;
    b2[11] = bad;
    expect_error({a, b2, m, k, n, true}, m * n, "b", "b[11] is ");
  }
  // Rows of norm 2e18 against columns of norm 2e19: 4e37 > 1e37 could overflow; rejected before any work.
  std::vector<float> big_a(m * k, 0.0f), big_b(k * n, 0.0f);
  big_a[0] = 2e18f, big_b[0] = 2e19f;
  expect_error({big_a, big_b, m, k, n}, m * n, "a", "a and b are too large");
  big_b[0] = 1e18f;  // 2e36: fine
  std::vector<float> c(m * n);
  REQUIRE(attnlab::matmul({big_a, big_b, m, k, n}, c).ok());
  CHECK(c[0] == 2e36f);
}

TEST_CASE("matmul: out may not overlap an input, and sizes whose product overflows are rejected", "[matmul]") {
  std::vector<float> buf(16, 1.0f);
  const auto s = attnlab::matmul({std::span<const float>(buf).first(4), std::span<const float>(buf).subspan(4, 4), 2, 2, 2},
                                 std::span<float>(buf).subspan(2, 4));
  CHECK(s.arg == "out");
  CHECK(s.message.find("overlap") != std::string::npos);
  const std::size_t huge = std::size_t(1) << (sizeof(std::size_t) * 8 - 2);
  const auto t = attnlab::matmul({{}, {}, huge, 8, 1}, {});
  CHECK(t.kind == attnlab::ErrorKind::range);
  CHECK(t.arg == "a");
  CHECK(t.message.find("too large") != std::string::npos);
}
