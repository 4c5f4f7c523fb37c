// The training kernels (kernels/training.h) and the blocked matmul against double references with derived
// bounds, over sizes below, at and above multiples of the vector width (4), the panel (4 rows) and the matmul
// blocks (64 rows, 256 deep, 256 wide). Both kernel sets: this file runs in the SIMD and the scalar builds.
#include <cfloat>
#include <cmath>
#include <vector>

#include "bounded.h"
#include "kernels/kernels.h"
#include "kernels/training.h"
#include "matmul.h"
#include "testing.h"

namespace kern = attnlab::kernels::active;
using bnd::B;

namespace {
std::vector<std::size_t> lengths() {
  std::vector<std::size_t> s;
  for (std::size_t n = 1; n <= 17; ++n) s.push_back(n);
  for (std::size_t n : {31u, 32u, 33u, 63u, 64u, 65u, 127u, 128u, 129u}) s.push_back(n);
  return s;
}
}  // namespace

TEST_CASE("pack_cols packs Aᵀ exactly as pack_rows packs the transposed matrix", "[training][kernels]") {
  for (std::size_t m : {1u, 3u, 4u, 5u, 8u, 13u})
    for (std::size_t k : {1u, 2u, 7u, 16u}) {
      const std::size_t lda = m + 2;
      auto a = testing::uniform(k * lda, unsigned(m * 100 + k));  // [k × m], row stride lda
      std::vector<float> at(m * k);                              // its transpose, row-major [m × k]
      for (std::size_t p = 0; p < k; ++p)
        for (std::size_t i = 0; i < m; ++i) at[i * k + p] = a[p * lda + i];
      std::vector<float> x(attnlab::kernels::packed_size(m, k), -7.0f), y = x;
      kern::pack_cols(m, k, a.data(), lda, 0.25f, x.data());
      kern::pack_rows(m, k, at.data(), k, 0.25f, y.data());
      INFO("m=" << m << " k=" << k);
      CHECK(x == y);
    }
}

TEST_CASE("transpose: every shape around the 4×4 block, strided", "[training][kernels]") {
  for (std::size_t rows : {1u, 3u, 4u, 5u, 8u, 9u})
    for (std::size_t cols : {1u, 2u, 4u, 6u, 12u, 13u}) {
      const std::size_t lda = cols + 1, ldb = rows + 3;
      auto a = testing::uniform(rows * lda, unsigned(rows * 31 + cols));
      std::vector<float> b(cols * ldb, 9.0f);
      kern::transpose(rows, cols, a.data(), lda, b.data(), ldb);
      for (std::size_t j = 0; j < cols; ++j)
        for (std::size_t i = 0; i < ldb; ++i) CHECK(b[j * ldb + i] == (i < rows ? a[i * lda + j] : 9.0f));
    }
}

TEST_CASE("matmul: all four transposition cases over a size sweep across the blocks", "[training][matmul]") {
  using attnlab::Op;
  std::vector<float> scratch(attnlab::kMatmulScratch);
  unsigned seed = 7;
  const std::size_t ms[] = {1, 2, 3, 4, 5, 63, 64, 65, 130}, ns[] = {1, 5, 8, 9, 255, 256, 257}, ks[] = {1, 4, 7, 255, 256, 300};
  for (std::size_t m : ms)
    for (std::size_t n : ns)
      for (std::size_t k : ks) {
        if (m * n * k > 3'000'000) continue;  // keeps the sweep to seconds under sanitizers
        for (Op oa : {Op::n, Op::t})
          for (Op ob : {Op::n, Op::t}) {
            const bool acc = (seed & 1) != 0;
            const std::size_t lda = (oa == Op::n ? k : m) + 1, ldb = (ob == Op::n ? n : k) + 2, ldc = n + 3;
            auto a = testing::uniform((oa == Op::n ? m : k) * lda, seed++), b = testing::uniform((ob == Op::n ? k : n) * ldb, seed++);
            std::vector<float> c(m * ldc, 0.5f);
            attnlab::matmul(oa, ob, m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc, acc, scratch.data());
            std::size_t bad = 0;
            for (std::size_t i = 0; i < m; ++i)
              for (std::size_t j = 0; j < ldc; ++j) {
                if (j >= n) {
                  bad += c[i * ldc + j] != 0.5f;  // the padding between rows is never written
                  continue;
                }
                double s = acc ? 0.5 : 0.0, abs = acc ? 0.5 : 0.0;
                for (std::size_t p = 0; p < k; ++p) {
                  const double x = oa == Op::n ? a[i * lda + p] : a[p * lda + i], y = ob == Op::n ? b[p * ldb + j] : b[j * ldb + p];
                  s += x * y, abs += std::fabs(x * y);
                }
                bad += !(std::fabs(c[i * ldc + j] - s) <= ref::gamma(double(k + 1)) * abs + double(k) * ref::underflow);
              }
            INFO("m=" << m << " n=" << n << " k=" << k << " A" << (oa == Op::n ? "" : "ᵀ") << " B" << (ob == Op::n ? "" : "ᵀ")
                      << " accumulate=" << acc);
            CHECK(bad == 0);
          }
      }
}

TEST_CASE("gelu and its backward: within their specs against double erfc over ±14", "[training][kernels]") {
  std::vector<float> x;
  for (double v = -14.0; v <= 14.0; v += 1.0 / 1024) x.push_back(float(v));
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e30f, -1e30f, FLT_MAX, -FLT_MAX}) x.push_back(v);
  std::vector<float> y(x.size()), dy = testing::uniform(x.size(), 3, -2.0f, 2.0f), dx(x.size());
  kern::gelu(x.data(), x.size(), y.data());
  kern::gelu_backward(x.data(), dy.data(), x.size(), dx.data());
  std::size_t bad_y = 0, bad_dx = 0;
  double worst_y = 0, worst_dx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double xi = x[i];
    if (std::fabs(xi) > 1e3) {  // far tails: exactly x and 0, exactly 1·dy and 0
      bad_y += y[i] != (xi > 0 ? x[i] : -0.0f) && y[i] != (xi > 0 ? x[i] : 0.0f);
      bad_dx += dx[i] != (xi > 0 ? dy[i] : 0.0f) && !(xi < 0 && dx[i] == 0.0f);
      continue;
    }
    const double ey = std::fabs(y[i] - bnd::gelu(xi)), by = bnd::gelu_spec(xi);
    const B g = bnd::gelu_backward(bnd::in(x[i]), bnd::in(dy[i]));
    const double edx = std::fabs(dx[i] - g.v);
    bad_y += !(ey <= by), bad_dx += !(edx <= g.e);
    worst_y = std::fmax(worst_y, by > 0 ? ey / by : 0), worst_dx = std::fmax(worst_dx, g.e > 0 ? edx / g.e : 0);
  }
  INFO("worst err/spec: gelu " << worst_y << ", backward " << worst_dx);
  CHECK(bad_y == 0);
  CHECK(bad_dx == 0);
}

TEST_CASE("layernorm rows: forward and backward within their running bounds, every length", "[training][kernels]") {
  for (std::size_t n : lengths()) {
    auto x = testing::normal(n, unsigned(n), 3.0f), w = testing::uniform(n, unsigned(n) + 1, 0.5f, 1.5f),
         b = testing::uniform(n, unsigned(n) + 2), dy = testing::normal(n, unsigned(n) + 3);
    for (float& v : x) v += 5.0f;  // a mean far from 0, as residual streams have
    std::vector<float> y(n), dx(n, 0.25f), dw(n, 0.5f), db(n, -0.5f);
    float mean = 0, rstd = 0;
    kern::layernorm_row(x.data(), n, w.data(), b.data(), 1e-5f, y.data(), &mean, &rstd);
    kern::layernorm_backward_row(x.data(), n, mean, rstd, w.data(), dy.data(), dx.data(), dw.data(), db.data());
    // The reference runs the kernel's own formula in bounded arithmetic.
    const auto X = bnd::inputs(x), W = bnd::inputs(w), Bb = bnd::inputs(b), DY = bnd::inputs(dy);
    const B N{double(n), 0}, mu = bnd::sum(X) / N;
    std::vector<B> dev(n), yy(n), h(n), g(n), gh(n), dxx(n), dww(n), dbb(n);
    for (std::size_t i = 0; i < n; ++i) dev[i] = X[i] - mu;
    const B r = B{1, 0} / bnd::sqrt(bnd::dot(dev, dev) / N + B{double(1e-5f), 0});
    for (std::size_t i = 0; i < n; ++i) h[i] = dev[i] * r, yy[i] = h[i] * W[i] + Bb[i], g[i] = DY[i] * W[i], gh[i] = g[i] * h[i];
    const B gm = bnd::sum(g) / N, ghm = bnd::sum(gh) / N;
    for (std::size_t i = 0; i < n; ++i) {
      dxx[i] = B{0.25, 0} + (g[i] - gm - h[i] * ghm) * r;
      dww[i] = B{0.5, 0} + DY[i] * h[i];
      dbb[i] = B{-0.5, 0} + DY[i];
    }
    INFO("n=" << n);
    CHECK(std::fabs(mean - mu.v) <= mu.e);
    CHECK(std::fabs(rstd - r.v) <= r.e);
    CHECK_WITHIN(y, yy);
    CHECK_WITHIN(dx, dxx);
    CHECK_WITHIN(dw, dww);
    CHECK_WITHIN(db, dbb);
  }
}

TEST_CASE("dot, sum, mul_diff, log_softmax_grad, axpy, col_sum: every length", "[training][kernels]") {
  for (std::size_t n : lengths()) {
    auto a = testing::uniform(n, unsigned(n) + 10), b = testing::uniform(n, unsigned(n) + 20);
    const auto A = bnd::inputs(a), Bv = bnd::inputs(b);
    const B d = bnd::dot(A, Bv), s = bnd::sum(A);
    INFO("n=" << n);
    CHECK(std::fabs(kern::dot(a.data(), b.data(), n) - d.v) <= d.e);
    CHECK(std::fabs(kern::sum(a.data(), n) - s.v) <= s.e);

    std::vector<float> out(n), want_f(n);
    kern::mul_diff(a.data(), b.data(), n, 0.3f, 0.5f, out.data());
    std::vector<B> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = B{0.5, 0} * A[i] * (Bv[i] - bnd::in(0.3f));
    CHECK_WITHIN(out, want);

    auto y = testing::uniform(n, unsigned(n) + 30, -20.0f, 0.0f);
    y[0] = -INFINITY;  // a masked entry: exp gives exactly 0
    kern::log_softmax_grad(y.data(), b.data(), n, 0.7f, 2.0f, out.data());
    for (std::size_t i = 0; i < n; ++i)
      want[i] = B{2, 0} * (Bv[i] - bnd::in(0.7f) * (i == 0 ? B{0, 0} : bnd::exp(bnd::in(y[i]))));
    CHECK_WITHIN(out, want);

    std::vector<float> acc = b;
    kern::axpy(n, -1.5f, a.data(), acc.data());
    for (std::size_t i = 0; i < n; ++i) want[i] = Bv[i] + bnd::in(-1.5f) * A[i];
    CHECK_WITHIN(acc, want);

    const std::size_t rows = n % 5 + 1, ld = n + 2;
    auto m = testing::uniform(rows * ld, unsigned(n) + 40);
    std::vector<float> cs(n, 1.0f);
    kern::col_sum(rows, n, m.data(), ld, cs.data());
    for (std::size_t j = 0; j < n; ++j) {
      std::vector<B> col{B{1, 0}};
      for (std::size_t r = 0; r < rows; ++r) col.push_back(bnd::in(m[r * ld + j]));
      want[j] = bnd::sum(col);
    }
    CHECK_WITHIN(cs, want);
  }
}

TEST_CASE("adamw: one update against PyTorch's formula in double, with decay and clipping scale", "[training][kernels]") {
  for (std::size_t n : lengths()) {
    auto p = testing::normal(n, unsigned(n) + 50), g = testing::normal(n, unsigned(n) + 60),
         m = testing::normal(n, unsigned(n) + 70, 0.1f), v = testing::uniform(n, unsigned(n) + 80, 0.0f, 0.01f);
    auto p2 = p, m2 = m, v2 = v;
    const float gs = 0.5f, lr = 0.01f, b1 = 0.9f, b2 = 0.95f, bc1 = 1 - 0.9f * 0.9f, bc2 = 1 - 0.95f * 0.95f, eps = 1e-8f,
                wd = 0.1f;
    kern::adamw(n, p2.data(), g.data(), m2.data(), v2.data(), gs, lr, b1, b2, bc1, bc2, eps, wd);
    std::vector<B> P(n), M(n), Vv(n);
    for (std::size_t i = 0; i < n; ++i) {
      const B gi = bnd::in(g[i]) * bnd::in(gs);
      M[i] = bnd::in(b1) * bnd::in(m[i]) + (B{1, 0} - bnd::in(b1)) * gi;
      Vv[i] = bnd::in(b2) * bnd::in(v[i]) + (B{1, 0} - bnd::in(b2)) * gi * gi;
      const B step = (M[i] / bnd::in(bc1)) / (bnd::sqrt(Vv[i] / bnd::in(bc2)) + bnd::in(eps));
      P[i] = bnd::in(p[i]) - bnd::in(lr) * (bnd::in(wd) * bnd::in(p[i]) + step);
    }
    INFO("n=" << n);
    CHECK_WITHIN(m2, M);
    CHECK_WITHIN(v2, Vv);
    CHECK_WITHIN(p2, P);
  }
}
