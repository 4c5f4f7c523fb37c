// The language models' kernels (kernels/lm_kernels.h), each set against double references with bounds from the
// float32 arithmetic: matrix–vector products over F32, F16 and BF16 panels (rows below, at and above the 8-row panel,
// columns below, at and above the 4-wide vector and the 4-column unrolling), widening, RMSNorm, GELU's tanh form
// and SwiGLU's gate. The SIMD set must also agree with the scalar reference within the same bounds.
#include <cmath>
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
      } else {
        const std::uint16_t h = fmt == Fmt::f16 ? to_f16(x) : to_bf16(x);
        p.half[base + k::half_lane(r % 8)] = h;
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
  }
  // Through the kernels' widening too (both sets), in panel order.
  std::vector<std::uint16_t> panel(8 * 8192);
  for (std::size_t i = 0; i < panel.size(); ++i) panel[i] = std::uint16_t(i * 7 % 0x10000);
  for (auto& h : panel)
    if (!k::f16_finite(h)) h = 0x3c00;
  std::vector<float> a(panel.size()), b(panel.size());
  k::scalar::widen_panel_f16(panel.data(), 8192, a.data());
  k::lm_active::widen_panel_f16(panel.data(), 8192, b.data());
  for (std::size_t c = 0; c < 8192; ++c)
    for (std::size_t r = 0; r < 8; ++r) {
      REQUIRE(a[c * 8 + r] == k::f16_to_float(panel[c * 8 + k::half_lane(r)]));
      REQUIRE(std::memcmp(&a[c * 8 + r], &b[c * 8 + r], 4) == 0);  // bit for bit (−0 included)
    }
  k::lm_active::widen_panel_bf16(panel.data(), 8192, b.data());
  for (std::size_t c = 0; c < 8192; ++c)
    for (std::size_t r = 0; r < 8; ++r) REQUIRE(b[c * 8 + r] == k::bf16_to_float(panel[c * 8 + k::half_lane(r)]));
}

TEST_CASE("lm kernels: matrix-vector products over F32, F16 and BF16 panels within γ(cols + 1)·Σ|w·x|", "[lm][kernels]") {
  for (Fmt fmt : {Fmt::f32, Fmt::f16, Fmt::bf16})
    for (std::size_t rows : {1, 3, 7, 8, 9, 16, 17, 29})
      for (std::size_t cols : {1, 2, 3, 4, 5, 8, 9, 13, 16, 67}) {
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

TEST_CASE("lm kernels: F16 with x scaled by 2^112 gives matvec_f16's bits, subnormal weights included", "[lm][kernels]") {
  for (std::size_t rows : {1, 8, 13})
    for (std::size_t cols : {1, 4, 7, 33}) {
      Panels p = panels(rows, cols, Fmt::f16, unsigned(rows + 7 * cols));
      for (std::size_t i = 0; i < p.half.size(); i += 5) p.half[i] = std::uint16_t((p.half[i] & 0x83ffu));  // subnormals
      for (float big : {1.0f, 30000.0f, 65504.0f}) {
        auto x = testing::normal(cols, unsigned(cols), 1.0f);
        x[0] = big;
        std::vector<float> xs(cols);
        for (std::size_t c = 0; c < cols; ++c) xs[c] = x[c] * 0x1p112f;
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

// F16 subnormals (weights below 2⁻¹⁴) are kept beside the panels (weights.h): the products and the embedding's
// row lookup still see their exact values.
TEST_CASE("lm: F16 subnormal weights kept beside the panels give exact rows and products within the bound", "[lm][kernels]") {
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
  for (std::size_t i = 0; i < h.size(); ++i) {
    h[i] = i % 3 == 0 ? std::uint16_t((i * 37 % 1023 + 1) | (i % 2 ? 0x8000 : 0)) : to_f16(w[i]);  // a third subnormal
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
  CHECK(m.subnormal_count == (rows * cols + 2) / 3);
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
