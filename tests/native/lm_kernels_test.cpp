// The language models' kernels (kernels/lm_kernels.h), each set against double references with bounds from the
// float32 arithmetic: matrix–vector products over F32, F16 and BF16 panels (rows below, at and above the 8-row panel,
// columns below, at and above the 4-wide vector and the 4-column unrolling), widening, RMSNorm, GELU's tanh form,
// the exact GELU and its erf (over a dense sweep of float32, subnormals to the tails), and SwiGLU's gate. The SIMD
// set must also agree with the scalar reference within the same bounds.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/half.h"
#include "kernels/lm_kernels.h"
#include "lm/config.h"
#include "lm/linear.h"
#include "lm/weights.h"
#include "testing.h"

namespace k = attnlab::kernels;

namespace {

enum class Fmt { f32, f16, bf16 };

std::uint16_t to_f16(float x) {  // round to nearest even through double (|x| small here: normal or subnormal F16)
  if (x == 0) return 0;
  const double a = std::fabs(double(x));
  int e;
  std::frexp(a, &e);  // a = m·2^e, m in [0.5, 1)
  const int exp = std::max(e - 1, -14);  // F16 exponent (subnormals share −14)
  const double q = std::nearbyint(a * std::ldexp(1.0, 10 - exp));  // 10 fraction bits
  const std::uint32_t bits = exp == -14 && q < 1024 ? std::uint32_t(q) : (std::uint32_t(exp + 15) << 10) + (std::uint32_t(q) - 1024);
  return std::uint16_t(bits | (x < 0 ? 0x8000u : 0u));
}
std::uint16_t to_bf16(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  return std::uint16_t((b + 0x7fff + ((b >> 16) & 1)) >> 16);
}

// W [rows × cols] as stored panels in `fmt` (rows past `rows` zero) and the exact values it holds.
struct Panels {
  std::vector<float> f32;
  std::vector<std::uint16_t> half;
  std::vector<double> value;  // [rows × cols]
};

Panels panels(std::size_t rows, std::size_t cols, Fmt fmt, unsigned seed) {
  const auto w = testing::normal(rows * cols, seed);
  const std::size_t padded = (rows + 7) / 8 * 8;
  Panels p;
  p.value.resize(rows * cols);
  if (fmt == Fmt::f32) p.f32.assign(padded * cols, 0.0f);
  else p.half.assign(padded * cols, 0);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const std::size_t base = (r / 8) * cols * 8 + c * 8;
      const float x = w[r * cols + c];
      if (fmt == Fmt::f32) {
        p.f32[base + r % 8] = x;
        p.value[r * cols + c] = x;
      } else {  // F16 panels hold w·2¹⁰ (lm_kernels.h)
        const std::uint16_t h = fmt == Fmt::f16 ? to_f16(x) : to_bf16(x);
        std::uint16_t stored = h;
        if (fmt == Fmt::f16) REQUIRE(k::f16_to_panel(h, stored));
        p.half[base + k::half_lane(r % 8)] = stored;
        p.value[r * cols + c] = fmt == Fmt::f16 ? k::f16_to_float(h) : k::bf16_to_float(h);
      }
    }
  return p;
}

template <class Matvec32, class MatvecHalf>
void run_matvec(Fmt fmt, const Panels& p, std::size_t rows, std::size_t cols, const float* x, float* y, bool acc,
                Matvec32 m32, MatvecHalf mh) {
  if (fmt == Fmt::f32) m32(p.f32.data(), rows, cols, x, y, acc);
  else mh(p.half.data(), rows, cols, x, y, acc);
}

}  // namespace

TEST_CASE("lm kernels: F16 and BF16 widen exactly, subnormals included", "[lm][kernels]") {
  // Every finite F16 bit pattern against its value computed in double.
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    if (!k::f16_finite(std::uint16_t(h))) continue;
    const int e = int(h >> 10 & 31), m = int(h & 1023);
    const double v = (h & 0x8000 ? -1 : 1) * (e ? std::ldexp(1024 + m, e - 25) : std::ldexp(m, -24));
    REQUIRE(double(k::f16_to_float(std::uint16_t(h))) == v);
    // Its panel pattern: exactly v·2¹⁰, never a subnormal (only ±0 has a zero exponent); none from |v| ≥ 64.
    std::uint16_t p = 0xffff;
    const bool held = k::f16_to_panel(std::uint16_t(h), p);
    INFO("pattern 0x" << std::hex << h);
    REQUIRE(held == (std::fabs(v) < 64));
    if (!held) continue;
    REQUIRE(double(k::f16_to_float(p)) == v * 1024);
    REQUIRE(double(k::f16_panel_to_float(p)) == v);
    REQUIRE(((p & 0x7c00u) != 0 || (p & 0x7fffu) == 0));
    REQUIRE((p & 0x8000u) == (h & 0x8000u));  // −0 stays −0
  }
  // Through the kernels' widening too (both sets), in panel order: every finite pattern as an F16 panel's weight.
  std::vector<std::uint16_t> panel(8 * 8192);
  for (std::size_t i = 0; i < panel.size(); ++i) panel[i] = std::uint16_t(i * 7 % 0x10000);
  for (auto& h : panel)
    if (!k::f16_finite(h)) h = 0x3c00;
  std::vector<float> a(panel.size()), b(panel.size());
  k::scalar::widen_panel_f16(panel.data(), 8192, a.data());
  k::lm_active::widen_panel_f16(panel.data(), 8192, b.data());
  for (std::size_t c = 0; c < 8192; ++c)
    for (std::size_t r = 0; r < 8; ++r) {
      REQUIRE(a[c * 8 + r] == k::f16_panel_to_float(panel[c * 8 + k::half_lane(r)]));
      REQUIRE(std::memcmp(&a[c * 8 + r], &b[c * 8 + r], 4) == 0);  // bit for bit (−0 included)
    }
  k::lm_active::widen_panel_bf16(panel.data(), 8192, b.data());
  for (std::size_t c = 0; c < 8192; ++c)
    for (std::size_t r = 0; r < 8; ++r) REQUIRE(b[c * 8 + r] == k::bf16_to_float(panel[c * 8 + k::half_lane(r)]));
}

TEST_CASE("lm kernels: matrix-vector products over F32, F16 and BF16 panels within γ(cols + 1)·Σ|w·x|", "[lm][kernels]") {
  for (Fmt fmt : {Fmt::f32, Fmt::f16, Fmt::bf16})
    for (std::size_t rows : {1, 3, 7, 8, 9, 16, 17, 29})
      // Past 128 and 256 columns: the loops step by a page of F32 and of 16-bit panel columns (lm_simd.cpp).
      for (std::size_t cols : {1, 2, 3, 4, 5, 8, 9, 13, 16, 67, 127, 128, 129, 255, 256, 257, 515}) {
        const Panels p = panels(rows, cols, fmt, unsigned(rows * 131 + cols));
        const auto x = testing::normal(cols, unsigned(cols + 5));
        const auto y0 = testing::normal(rows, 3);
        for (bool acc : {false, true}) {
          std::vector<float> ys = y0, yv = y0;
          // Guards past the rows: a panel's padding rows must never be written.
          ys.resize(rows + 8, 7.0f), yv.resize(rows + 8, 7.0f);
          run_matvec(fmt, p, rows, cols, x.data(), ys.data(), acc, k::scalar::matvec_f32,
                     fmt == Fmt::f16 ? k::scalar::matvec_f16 : k::scalar::matvec_bf16);
          run_matvec(fmt, p, rows, cols, x.data(), yv.data(), acc, k::lm_active::matvec_f32,
                     fmt == Fmt::f16 ? k::lm_active::matvec_f16 : k::lm_active::matvec_bf16);
          for (std::size_t r = 0; r < rows; ++r) {
            double want = acc ? y0[r] : 0, abs = acc ? std::fabs(y0[r]) : 0;
            for (std::size_t c = 0; c < cols; ++c) want += p.value[r * cols + c] * x[c], abs += std::fabs(p.value[r * cols + c] * x[c]);
            const double bound = ref::gamma(double(cols + 1)) * abs + 1e-38;
            INFO("fmt " << int(fmt) << " rows " << rows << " cols " << cols << " acc " << acc << " row " << r);
            CHECK(std::fabs(ys[r] - want) <= bound);
            CHECK(std::fabs(yv[r] - want) <= bound);
          }
          for (std::size_t r = rows; r < rows + 8; ++r) CHECK((ys[r] == 7.0f && yv[r] == 7.0f));
        }
      }
}

TEST_CASE("lm kernels: matrix-vector products with no rows or no columns", "[lm][kernels]") {
  // An empty matrix may have no storage (an empty vector's data() is null): nothing of it is read, each row gets the
  // empty sum 0 (added to y when accumulating), and no pointer is formed outside it (the sanitizer build checks that).
  const std::vector<float> w32, x{1.5f, -2.0f, 0.25f};
  const std::vector<std::uint16_t> w16;
  using M32 = void (*)(const float*, std::size_t, std::size_t, const float*, float*, bool) noexcept;
  using M16 = void (*)(const std::uint16_t*, std::size_t, std::size_t, const float*, float*, bool) noexcept;
  const M32 f32[] = {k::scalar::matvec_f32, k::lm_active::matvec_f32};
  const M16 f16[] = {k::scalar::matvec_f16, k::scalar::matvec_f16_scaled, k::scalar::matvec_bf16,
                     k::lm_active::matvec_f16, k::lm_active::matvec_f16_scaled, k::lm_active::matvec_bf16};
  const std::size_t shapes[][2] = {{0, 0}, {0, 3}, {3, 0}, {9, 0}};
  for (const auto& shape : shapes)
    for (bool acc : {false, true})
      for (std::size_t f = 0; f < 8; ++f) {
        const std::size_t rows = shape[0], cols = shape[1];
        std::vector<float> y(rows + 8, 7.0f);
        for (std::size_t r = 0; r < rows; ++r) y[r] = 0.5f;
        if (f < 2) f32[f](w32.data(), rows, cols, x.data(), y.data(), acc);
        else f16[f - 2](w16.data(), rows, cols, x.data(), y.data(), acc);
        INFO("kernel " << f << " rows " << rows << " cols " << cols << " acc " << acc);
        for (std::size_t r = 0; r < rows; ++r) CHECK(y[r] == (acc ? 0.5f : 0.0f));
        for (std::size_t r = rows; r < rows + 8; ++r) CHECK(y[r] == 7.0f);
      }
}

TEST_CASE("lm kernels: RMSNorm, GELU (tanh form) and SwiGLU's gate against double", "[lm][kernels]") {
  for (std::size_t n : {1, 3, 4, 5, 8, 9, 31, 64, 67}) {
    const auto x = testing::normal(n, unsigned(n), 2.0f), w = testing::normal(n, unsigned(n + 100));
    // RMSNorm: Σx² within γ(n)Σx², then /n, + eps, √ and / round (4u), the scale (½ of Σx²'s relative error), and
    // the two products per element: |y − exact| ≤ (½γ(n + 4) + 2u)·|exact|.
    std::vector<float> ys(n), yv(n);
    k::scalar::rmsnorm_row(x.data(), n, w.data(), 1e-6f, ys.data());
    k::lm_active::rmsnorm_row(x.data(), n, w.data(), 1e-6f, yv.data());
    double ss = 0;
    for (float v : x) ss += double(v) * v;
    const double r = 1 / std::sqrt(ss / double(n) + double(1e-6f));
    for (std::size_t i = 0; i < n; ++i) {
      const double want = x[i] * r * w[i], bound = (0.5 * ref::gamma(double(n + 4)) + 2 * ref::u) * std::fabs(want) + 1e-40;
      CHECK(std::fabs(ys[i] - want) <= bound);
      CHECK(std::fabs(yv[i] - want) <= bound);
    }
    // GELU: tanh within 4u relative, its argument within (γ(3)·0.045|x|³ + 2u|x + 0.045x³| + u|z|)·√(2/π) plus the
    // constants' rounding; 1 + tanh and the products round once each.
    std::vector<float> gs(n), gv(n);
    k::scalar::gelu_tanh(x.data(), n, gs.data());
    k::lm_active::gelu_tanh(x.data(), n, gv.data());
    for (std::size_t i = 0; i < n; ++i) {
      const double v = x[i], c = std::sqrt(2 / M_PI), a = 0.044715, z = c * (v + a * v * v * v), t = std::tanh(z);
      const double want = 0.5 * v * (1 + t);
      const double ez = c * (ref::gamma(3) * a * std::fabs(v * v * v) + ref::u * std::fabs(v + a * v * v * v)) + 2 * ref::u * std::fabs(z) +
                        ref::u * c * a * std::fabs(v * v * v);
      const double bound = 0.5 * std::fabs(v) * ((1 - t * t) * ez + 4 * ref::u * std::fabs(t) + ref::u * std::fabs(1 + t)) + 2 * ref::u * std::fabs(want) + 1e-40;
      INFO("gelu n " << n << " x " << v);
      CHECK(std::fabs(gs[i] - want) <= bound);
      CHECK(std::fabs(gv[i] - want) <= bound);
    }
    // silu(g)·u: exp within 2u in the numerator and the denominator, four roundings.
    std::vector<float> ss_(n), sv(n);
    k::scalar::silu_mul(x.data(), w.data(), n, ss_.data());
    k::lm_active::silu_mul(x.data(), w.data(), n, sv.data());
    for (std::size_t i = 0; i < n; ++i) {
      const double g = x[i], want = g / (1 + std::exp(-g)) * w[i], bound = (4 * ref::u + 4 * ref::u) * std::fabs(want) + 1e-40;
      CHECK(std::fabs(ss_[i] - want) <= bound);
      CHECK(std::fabs(sv[i] - want) <= bound);
    }
  }
  // Tails: any length gives every element the value it has alone (the SIMD set runs tails through the vector code).
  const auto x = testing::normal(11, 9, 3.0f);
  std::vector<float> whole(11), one(1);
  k::lm_active::gelu_tanh(x.data(), 11, whole.data());
  for (std::size_t i = 0; i < 11; ++i) {
    k::lm_active::gelu_tanh(&x[i], 1, one.data());
    CHECK(one[0] == whole[i]);
  }
}

TEST_CASE("lm kernels: F16 with x scaled by 2^102 gives matvec_f16's bits, subnormal patterns included", "[lm][kernels]") {
  for (std::size_t rows : {1, 3, 7, 8, 9, 13, 16, 17, 29})
    for (std::size_t cols : {1, 2, 3, 4, 5, 7, 8, 9, 33, 67}) {
      Panels p = panels(rows, cols, Fmt::f16, unsigned(rows + 7 * cols));
      // Subnormal patterns (the loader stores none, but the kernels take any finite pattern).
      for (std::size_t i = 0; i < p.half.size(); i += 5) p.half[i] = std::uint16_t((p.half[i] & 0x83ffu));
      for (float big : {1.0f, 30000.0f, 0x1.fffffep25f}) {  // up to the largest float32 below kF16ScaleXLimit
        auto x = testing::normal(cols, unsigned(cols), 1.0f);
        x[0] = big;
        std::vector<float> xs(cols);
        for (std::size_t c = 0; c < cols; ++c) xs[c] = x[c] * k::kF16ScaleX;
        for (bool acc : {false, true}) {
          std::vector<float> a(rows, 0.5f), b(rows, 0.5f), c(rows, 0.5f), d(rows, 0.5f);
          k::scalar::matvec_f16(p.half.data(), rows, cols, x.data(), a.data(), acc);
          k::scalar::matvec_f16_scaled(p.half.data(), rows, cols, xs.data(), b.data(), acc);
          k::lm_active::matvec_f16(p.half.data(), rows, cols, x.data(), c.data(), acc);
          k::lm_active::matvec_f16_scaled(p.half.data(), rows, cols, xs.data(), d.data(), acc);
          CHECK(std::memcmp(a.data(), b.data(), rows * 4) == 0);
          CHECK(std::memcmp(c.data(), d.data(), rows * 4) == 0);
        }
      }
    }
}

// Every finite F16 bit pattern as a weight of both F16 matrix–vector kernels, in every lane of a panel, in the
// two-column loop and in its one-column tail, with a partial last panel: x is one-hot (t in column j, zeros
// elsewhere), so each output is the single product w·t plus zeros, which must be the float32 product of the
// panel weight the pattern holds (its value times 2⁻¹⁰) and t — the same one rounding — bit for bit (and y0 + that
// product when accumulating).
// A sum that starts at +0 cannot show a zero weight's sign: the widening test above checks −0 bit for bit.
TEST_CASE("lm kernels: every finite F16 pattern multiplies as its exact value in matvec_f16 and matvec_f16_scaled", "[lm][kernels]") {
  const std::size_t cols = 3, rows = (0x10000 + cols - 1) / cols;  // 21846 rows: 2731 panels, the last with 6
  const std::size_t padded = (rows + 7) / 8 * 8;
  std::vector<std::uint16_t> half(padded * cols, 0);
  std::vector<std::uint16_t> pattern(rows * cols);  // [rows × cols]
  std::size_t finite = 0;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const std::uint32_t i = std::uint32_t(c * rows + r);
      std::uint16_t h = i < 0x10000 ? std::uint16_t(i) : 0x3c00;
      if (!k::f16_finite(h)) h = 0x3c00;  // refused at load (lm_errors_test.cpp)
      else if (i < 0x10000) ++finite;
      pattern[r * cols + c] = h;
      half[(r / 8) * cols * 8 + c * 8 + k::half_lane(r % 8)] = h;
    }
  REQUIRE(finite == 0x10000 - 2048);
  using Matvec = void (*)(const std::uint16_t*, std::size_t, std::size_t, const float*, float*, bool) noexcept;
  const struct {
    const char* name;
    Matvec f;
    bool scaled;
  } kernels[] = {{"scalar matvec_f16", k::scalar::matvec_f16, false},
                 {"scalar matvec_f16_scaled", k::scalar::matvec_f16_scaled, true},
                 {"active matvec_f16", k::lm_active::matvec_f16, false},
                 {"active matvec_f16_scaled", k::lm_active::matvec_f16_scaled, true}};
  for (const auto& kern : kernels)
    for (std::size_t j = 0; j < cols; ++j)
      for (float t : {1.0f, -3.0f, 0x1.8p-7f, 1000.0f})
        for (bool acc : {false, true}) {
          std::vector<float> x(cols, 0.0f), y(rows + 8, 0.5f);
          x[j] = kern.scaled ? t * k::kF16ScaleX : t;
          kern.f(half.data(), rows, cols, x.data(), y.data(), acc);
          std::size_t wrong = 0, first = 0;
          for (std::size_t r = 0; r < rows; ++r) {
            const float p = k::f16_panel_to_float(pattern[r * cols + j]) * t, want = acc ? 0.5f + p : p;
            const bool same = want == 0 ? y[r] == 0 : std::memcmp(&y[r], &want, 4) == 0;
            if (!same && !wrong++) first = r;
          }
          INFO(kern.name << ", column " << j << ", t " << t << ", accumulate " << acc << ": first wrong row " << first << " (pattern 0x"
                         << std::hex << pattern[first * cols + j] << std::dec << ": " << y[first] << " for "
                         << k::f16_panel_to_float(pattern[first * cols + j]) * t << ")");
          CHECK(wrong == 0);
          for (std::size_t r = rows; r < rows + 8; ++r) CHECK(y[r] == 0.5f);  // padding rows never written
        }
}

// y = x·Wᵀ through linear() on F16 panels, across its forms and blocks: n < 4 (matrix–vector products, x scaled by
// 2¹⁰² or, with an |x| ≥ 2²⁶, not), n ≥ 4 (panels widened into the packed GEMM), columns below, at and above the
// 256-column block and rows around the 8-row panel and the 128-row block; subnormal and negative-zero weights in
// the panels (as the loader stores them: w·2¹⁰). Each output within γ(cols + 1)·Σ|w·x| of the double product (any order of a float32 sum).
TEST_CASE("lm: linear() on F16 panels within the bound, every form and block size", "[lm][kernels]") {
  namespace lm = attnlab::lm;
  for (std::size_t cols : {3, 255, 256, 257, 600})
    for (std::size_t rows : {7, 8, 9, 33})
      for (std::size_t n : {1, 3, 4, 5, 129}) {
        const auto w = testing::normal(rows * cols, unsigned(rows * 7 + cols), 0.3f);
        std::vector<std::uint16_t> half((rows + 7) / 8 * 8 * cols, 0);
        std::vector<double> value(rows * cols);
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t c = 0; c < cols; ++c) {
            const std::size_t i = r * cols + c;
            const std::uint16_t h = i % 11 == 0 ? std::uint16_t(i % 1023 | (i % 2 ? 0x8000 : 0)) : to_f16(w[i]);  // subnormals, −0
            REQUIRE(k::f16_to_panel(h, half[(r / 8) * cols * 8 + c * 8 + k::half_lane(r % 8)]));
            value[i] = k::f16_to_float(h);
          }
        lm::Matrix m;
        m.dtype = lm::DType::f16, m.rows = rows, m.cols = cols, m.data = half.data();
        for (float big : {0.0f, 1e8f}) {
          auto x = testing::normal(n * cols, unsigned(n + cols), 2.0f);
          if (big != 0) x[cols / 2] = big;  // the first row's x past 2²⁶: that row's product unscaled
          std::vector<float> y(n * rows), scratch(lm::linear_scratch(n, cols));
          lm::linear(m, x.data(), n, y.data(), rows, nullptr, false, scratch.data());
          for (std::size_t i = 0; i < n; ++i)
            for (std::size_t r = 0; r < rows; ++r) {
              double want = 0, abs = 0;
              for (std::size_t c = 0; c < cols; ++c) want += value[r * cols + c] * x[i * cols + c], abs += std::fabs(value[r * cols + c] * x[i * cols + c]);
              INFO("cols " << cols << " rows " << rows << " n " << n << " big " << big << " x row " << i << " output " << r);
              CHECK(std::fabs(y[i * rows + r] - want) <= ref::gamma(double(cols + 1)) * abs);
            }
        }
      }
}

// F16 weights through the loader: subnormals (below 2⁻¹⁴) held in the panel as normal patterns (w·2¹⁰), weights of
// magnitude 64 or more beside it (lm_kernels.h, weights.h); the products and the embedding's row lookup see every
// weight's exact value.
TEST_CASE("lm: F16 weights placed as w·2^10, subnormals in the panel and magnitudes ≥ 64 beside it, give exact rows and products within the bound", "[lm][kernels]") {
  namespace lm = attnlab::lm;
  lm::LmConfig c;
  REQUIRE(lm::parse_config(R"({"architectures":["GPT2LMHeadModel"],"vocab_size":21,"n_positions":8,"n_embd":13,"n_layer":1,"n_head":1})", c).ok());
  std::unique_ptr<lm::WeightSet> ws;
  REQUIRE(lm::WeightSet::plan(c, lm::plan_shard(c, 0, 1), ws).ok());
  lm::Slot& slot = *ws->find("wte.weight");  // [21, 13]: rows across three panels, the last partial
  REQUIRE(ws->allocate(slot, lm::DType::f16, "model.safetensors").ok());
  const std::size_t rows = 21, cols = 13;
  std::vector<std::uint16_t> h(rows * cols);
  std::vector<double> value(rows * cols);
  const auto w = testing::normal(rows * cols, 5, 0.5f);
  std::size_t beside = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    const std::uint16_t sign = i % 16 < 8 ? 0 : 0x8000;
    switch (i % 8) {
      case 0: h[i] = std::uint16_t((i * 37 % 1023 + 1) | sign); break;           // subnormals
      case 2: h[i] = std::uint16_t((i % 3 == 0 ? 0x5400 : i % 3 == 1 ? 0x7bff : 0x5a40) | sign), ++beside; break;  // 64, 65504, 200
      case 3: h[i] = std::uint16_t((i % 3 == 0 ? 0x53ff : i % 3 == 1 ? 0x0001 : 0x03ff) | sign); break;  // just below 64; the least and the largest subnormal
      case 5: h[i] = sign; break;                                                 // ±0
      default: h[i] = to_f16(w[i]);
    }
    value[i] = k::f16_to_float(h[i]);
  }
  std::vector<std::uint8_t> bytes(h.size() * 2);
  std::memcpy(bytes.data(), h.data(), bytes.size());
  lm::Placement place(slot, lm::DType::f16, h.size());
  for (std::size_t at = 0; at < bytes.size(); at += 5)  // odd chunks: values split across calls
    REQUIRE(place.put(bytes.data() + at, std::min<std::size_t>(5, bytes.size() - at), "model.safetensors").ok());
  REQUIRE(place.done());
  REQUIRE(ws->seal(slot, "model.safetensors").ok());
  const lm::Matrix& m = *slot.matrix;
  CHECK(m.outlier_count == beside);
  const auto* held = static_cast<const std::uint16_t*>(m.data);
  for (std::size_t i = 0; i < m.panels() * 8 * cols; ++i) REQUIRE(((held[i] & 0x7c00u) != 0 || (held[i] & 0x7fffu) == 0));
  std::vector<float> row(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    m.read_row(r, row.data());
    for (std::size_t j = 0; j < cols; ++j) REQUIRE(row[j] == float(value[r * cols + j]));
  }
  // y = x·Wᵀ for one row (matrix-vector products) and for five (the packed GEMM), against double.
  for (std::size_t n : {1, 5}) {
    const auto x = testing::normal(n * cols, unsigned(n), 1.0f);
    std::vector<float> y(n * rows), scratch(lm::linear_scratch(n, cols));
    lm::linear(m, x.data(), n, y.data(), rows, nullptr, false, scratch.data());
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t r = 0; r < rows; ++r) {
        double want = 0, abs = 0;
        for (std::size_t j = 0; j < cols; ++j) want += value[r * cols + j] * x[i * cols + j], abs += std::fabs(value[r * cols + j] * x[i * cols + j]);
        INFO("n " << n << " row " << i << " output " << r);
        CHECK(std::fabs(y[i * rows + r] - want) <= ref::gamma(double(cols + 1)) * abs);
      }
  }
}

namespace {
// The unit in the last place of a float32 near y (subnormals: 2⁻¹⁴⁹).
double ulp_of(double y) {
  y = std::fabs(y);
  if (y < 0x1p-126) return 0x1p-149;
  int e;
  std::frexp(y, &e);  // y = m·2^e, m in [0.5, 1)
  return std::ldexp(1.0, e - 24);
}
// Every 509th float32 from +0 up to `hi` (subnormals and the smallest normals included), and their negatives: a
// relative step below 6e-5 everywhere.
std::vector<float> dense_sweep(float hi) {
  std::vector<float> x;
  for (std::uint32_t b = 0; b < 0x7f800000u; b += 509) {
    float v;
    std::memcpy(&v, &b, 4);
    if (v > hi) break;
    x.push_back(v), x.push_back(-v);
  }
  return x;
}
}  // namespace

// erf_simd.h's bounds: z = |x| < 1 within 3u·|erf x| (+ 2⁻¹⁴⁹ per subnormal rounding), z ≥ 1 within
// u·|erf x| + (13 + 2z²)u·erfc z; both at most 3 ulp. erf rounds to ±1 past |x| ≈ 3.92; the sweep goes to 12.
TEST_CASE("lm kernels: erf within its derived bound (3 ulp) against double erf, tiny to large |x|", "[lm][kernels]") {
  const auto x = dense_sweep(12.0f);
  std::vector<float> ys(x.size()), yv(x.size());
  k::scalar::erf_f32(x.data(), x.size(), ys.data());
  k::lm_active::erf_f32(x.data(), x.size(), yv.data());
  double worst_ulp = 0, worst_spec = 0, at = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i], z = std::fabs(v), want = std::erf(v);
    const double spec = z < 1 ? 3 * ref::u * std::fabs(want) + 2 * 0x1p-149
                              : ref::u * std::fabs(want) + (13 + 2 * z * z) * ref::u * std::erfc(z);
    const double e = std::fabs(yv[i] - want);
    if (e / ulp_of(want) > worst_ulp) worst_ulp = e / ulp_of(want), at = v;
    worst_spec = std::max(worst_spec, e / spec);
    if (!(e <= spec) || !(std::fabs(ys[i] - want) <= spec)) {
      INFO("x = " << v << ": simd " << yv[i] << ", scalar " << ys[i] << ", erf " << want << " ± " << spec);
      CHECK(false);
    }
    if (i % 2 && yv[i] != -yv[i - 1]) {  // odd, exactly (−0 included)
      INFO("x = " << v);
      CHECK(false);
    }
  }
  std::printf("erf: %zu samples, max error %.3f ulp at x = %.9g, %.3f of the derived bound\n", x.size(), worst_ulp, at, worst_spec);
  CHECK(worst_ulp <= 3);
  // Special values: ±0 keep their sign, ±inf give ±1, NaN stays NaN.
  const float special[5] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN};
  float out[5];
  k::lm_active::erf_f32(special, 5, out);
  CHECK((out[0] == 0 && !std::signbit(out[0]) && out[1] == 0 && std::signbit(out[1])));
  CHECK((out[2] == 1 && out[3] == -1 && std::isnan(out[4])));
}

// The exact GELU x·Φ(x) against double, with Φ's bound as tests/lm/checkpoints.py carries it into the models'
// bounds: z = |x|/√2 (within 1.3u: the constant and the product), z < 1: ½(3u·erf z + 1.5u·z + u·erfc z);
// z ≥ 1: ½·erfc z·(16 + 5z²)u; x > 0 adds u·Φ (1 − ½erfc z rounds); then |x|·(that + 2⁻¹²⁶) + u·|y|. The
// left tail's bound grows with z² (x/√2 rounded moves erfc by 2z² times its relative error): it is the
// conditioning of Φ there, not the kernel.
TEST_CASE("lm kernels: the exact GELU within its bound, and not the tanh form", "[lm][kernels]") {
  const auto x = dense_sweep(20.0f);
  std::vector<float> ys(x.size()), yv(x.size());
  k::scalar::gelu_erf(x.data(), x.size(), ys.data());
  k::lm_active::gelu_erf(x.data(), x.size(), yv.data());
  auto spec_of = [](double v, double want) {
    const double z = std::fabs(v) / std::sqrt(2.0), ec = std::erfc(z), phi = 0.5 * std::erfc(-v / std::sqrt(2.0));
    const double e_phi = (z < 1 ? 0.5 * ref::u * (3 * (1 - ec) + 1.5 * z + ec) : 0.5 * ec * (16 + 5 * z * z) * ref::u) +
                         (v > 0 ? ref::u * phi : 0.0);
    return std::fabs(v) * (e_phi + 0x1p-126) + ref::u * std::fabs(want) + 0x1p-149;
  };
  double worst = 0, worst_ulp = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i], want = v * 0.5 * std::erfc(-v / std::sqrt(2.0)), spec = spec_of(v, want);
    worst = std::max(worst, std::fabs(yv[i] - want) / spec);
    if (std::fabs(v) <= 4) worst_ulp = std::max(worst_ulp, std::fabs(yv[i] - want) / ulp_of(want));
    if (!(std::fabs(yv[i] - want) <= spec) || !(std::fabs(ys[i] - want) <= spec)) {
      INFO("x = " << v << ": simd " << yv[i] << ", scalar " << ys[i] << ", exact " << want << " ± " << spec);
      CHECK(false);
    }
  }
  std::printf("gelu_erf: %zu samples, %.3f of the bound at worst; %.2f ulp at worst for |x| <= 4\n", x.size(), worst, worst_ulp);
  // The tanh form is another function: at x = 2.7 it is 4.7e-4 away, thousands of times this bound.
  const float at[1] = {2.7f};
  float tanh_form[1], exact[1];
  k::lm_active::gelu_tanh(at, 1, tanh_form);
  k::lm_active::gelu_erf(at, 1, exact);
  const double want = 2.7f * 0.5 * std::erfc(-double(2.7f) / std::sqrt(2.0));
  CHECK(std::fabs(exact[0] - want) <= spec_of(2.7f, want));
  CHECK(std::fabs(tanh_form[0] - want) > 1000 * spec_of(2.7f, want));
  // Tails: any length gives every element the value it has alone.
  const auto xs = testing::normal(11, 9, 3.0f);
  std::vector<float> whole(11), one(1);
  k::lm_active::gelu_erf(xs.data(), 11, whole.data());
  for (std::size_t i = 0; i < 11; ++i) {
    k::lm_active::gelu_erf(&xs[i], 1, one.data());
    CHECK(one[0] == whole[i]);
  }
}
