// The small GPT's layers (model/layers.h), each backward checked two ways on small shapes:
//  1. the engine's float32 result against the same formula evaluated in bounded double arithmetic from the
//     engine's own float inputs (bounded.h): |engine − reference| ≤ the derived bound, element by element;
//  2. that formula, from exact double inputs, against central finite differences of an independent double forward
//     of the layer (h = 1e-5: truncation ≈ h²·|f‴|/6 and rounding ≈ 1e-16·|f|/h, both ≲ 1e-9 at these sizes; the
//     tolerance 1e-7·(1 + |g|) leaves a wide margin and still catches any wrong term).
// The loss for 2 is L = Σ dy∘f(x) with a fixed random dy, so ∂L/∂x is exactly what the backward computes.
#include <cmath>
#include <functional>
#include <tuple>
#include <vector>

#include "attention_grad_reference.h"
#include "bounded.h"
#include "gemm_blocked.h"
#include "model/layers.h"
#include "testing.h"

using bnd::B;
namespace m = attnlab::model;

namespace {

using Vec = std::vector<double>;
std::vector<B> exact(const Vec& x) {
  std::vector<B> r(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r[i] = {x[i], 0};
  return r;
}
Vec values(const std::vector<B>& x) {
  Vec r(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r[i] = x[i].v;
  return r;
}

// ∂L/∂x by central differences, every coordinate, L evaluated with x in place.
void check_fd(Vec& x, const std::function<double()>& loss, const Vec& analytic, const char* name) {
  REQUIRE(x.size() == analytic.size());
  std::size_t bad = 0, first = 0;
  double got_first = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double fd = testing::central_difference(x, i, loss);
    if (!(std::fabs(fd - analytic[i]) <= 1e-7 * (1 + std::fabs(analytic[i]))) && bad++ == 0) first = i, got_first = fd;
  }
  INFO(name << ": " << bad << " coordinate(s) off; first " << first << ": finite difference " << got_first << ", analytic "
            << (bad ? analytic[first] : 0.0));
  CHECK(bad == 0);
}

double weighted(const Vec& dy, const Vec& y) {
  double s = 0;
  for (std::size_t i = 0; i < y.size(); ++i) s += dy[i] * y[i];
  return s;
}

// ---- references: each layer's formula over bounded values ----

std::vector<B> linear_ref(const std::vector<B>& x, const std::vector<B>& w, const std::vector<B>* b, std::size_t rows,
                          std::size_t in, std::size_t out) {
  std::vector<B> y(rows * out), xr(in), wc(in);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t o = 0; o < out; ++o) {
      for (std::size_t i = 0; i < in; ++i) xr[i] = x[r * in + i], wc[i] = w[i * out + o];
      y[r * out + o] = bnd::dot(xr, wc);
      if (b) y[r * out + o] = y[r * out + o] + (*b)[o];
    }
  return y;
}
struct LinearGrad {
  std::vector<B> dx, dw, db;
};
LinearGrad linear_grad_ref(const std::vector<B>& x, const std::vector<B>& w, const std::vector<B>& dy, std::size_t rows,
                           std::size_t in, std::size_t out) {
  LinearGrad g{std::vector<B>(rows * in), std::vector<B>(in * out), std::vector<B>(out)};
  std::vector<B> a, c;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t i = 0; i < in; ++i) {
      a.clear(), c.clear();
      for (std::size_t o = 0; o < out; ++o) a.push_back(dy[r * out + o]), c.push_back(w[i * out + o]);
      g.dx[r * in + i] = bnd::dot(a, c);
    }
  for (std::size_t i = 0; i < in; ++i)
    for (std::size_t o = 0; o < out; ++o) {
      a.clear(), c.clear();
      for (std::size_t r = 0; r < rows; ++r) a.push_back(x[r * in + i]), c.push_back(dy[r * out + o]);
      g.dw[i * out + o] = bnd::dot(a, c);
    }
  for (std::size_t o = 0; o < out; ++o) {
    a.clear();
    for (std::size_t r = 0; r < rows; ++r) a.push_back(dy[r * out + o]);
    g.db[o] = bnd::sum(a);
  }
  return g;
}

struct LayerNormRef {
  std::vector<B> y, h, rstd;  // output, x̂, 1/σ per row
};
LayerNormRef layernorm_ref(const std::vector<B>& x, const std::vector<B>& w, const std::vector<B>& b, std::size_t rows,
                           std::size_t d) {
  LayerNormRef r{std::vector<B>(rows * d), std::vector<B>(rows * d), std::vector<B>(rows)};
  const B N{double(d), 0};
  for (std::size_t row = 0; row < rows; ++row) {
    std::vector<B> xr(x.begin() + std::ptrdiff_t(row * d), x.begin() + std::ptrdiff_t((row + 1) * d)), dev(d);
    const B mu = bnd::sum(xr) / N;
    for (std::size_t i = 0; i < d; ++i) dev[i] = xr[i] - mu;
    r.rstd[row] = B{1, 0} / bnd::sqrt(bnd::dot(dev, dev) / N + B{double(m::kLayerNormEps), 0});
    for (std::size_t i = 0; i < d; ++i) {
      r.h[row * d + i] = dev[i] * r.rstd[row];
      r.y[row * d + i] = r.h[row * d + i] * w[i] + b[i];
    }
  }
  return r;
}
struct LayerNormGrad {
  std::vector<B> dx, dw, db;
};
LayerNormGrad layernorm_grad_ref(const LayerNormRef& f, const std::vector<B>& w, const std::vector<B>& dy,
                                 std::size_t rows, std::size_t d) {
  LayerNormGrad g{std::vector<B>(rows * d), std::vector<B>(d), std::vector<B>(d)};
  const B N{double(d), 0};
  std::vector<std::vector<B>> dws(d), dbs(d);
  for (std::size_t row = 0; row < rows; ++row) {
    std::vector<B> gg(d), gh(d);
    for (std::size_t i = 0; i < d; ++i) gg[i] = dy[row * d + i] * w[i], gh[i] = gg[i] * f.h[row * d + i];
    const B gm = bnd::sum(gg) / N, ghm = bnd::sum(gh) / N;
    for (std::size_t i = 0; i < d; ++i) {
      g.dx[row * d + i] = (gg[i] - gm - f.h[row * d + i] * ghm) * f.rstd[row];
      dws[i].push_back(dy[row * d + i] * f.h[row * d + i]);
      dbs[i].push_back(dy[row * d + i]);
    }
  }
  for (std::size_t i = 0; i < d; ++i) g.dw[i] = bnd::sum(dws[i]), g.db[i] = bnd::sum(dbs[i]);
  return g;
}

}  // namespace

TEST_CASE("layer: embedding forward and backward (repeated tokens sum)", "[layers]") {
  const std::size_t V = 7, d = 6, batch = 3, seq = 5;
  const std::vector<std::int32_t> tokens{1, 4, 1, 6, 0, 2, 2, 2, 5, 1, 3, 0, 6, 4, 1};
  const auto wte = testing::normal(V * d, 1), wpe = testing::normal(seq * d, 2), dx = testing::normal(batch * seq * d, 3);
  std::vector<float> x(batch * seq * d), dwte(V * d, 0.0f), dwpe(seq * d, 0.0f);
  m::embedding_forward(tokens.data(), batch, seq, wte.data(), wpe.data(), d, x.data());
  m::embedding_backward(tokens.data(), batch, seq, dx.data(), d, dwte.data(), dwpe.data());
  std::vector<B> xw(x.size()), gw(V * d), gp(seq * d);
  for (std::size_t n = 0; n < batch * seq; ++n)
    for (std::size_t c = 0; c < d; ++c) xw[n * d + c] = bnd::in(wte[std::size_t(tokens[n]) * d + c]) + bnd::in(wpe[(n % seq) * d + c]);
  for (std::size_t v = 0; v < V; ++v)
    for (std::size_t c = 0; c < d; ++c) {
      std::vector<B> t{B{0, 0}};
      for (std::size_t n = 0; n < batch * seq; ++n)
        if (std::size_t(tokens[n]) == v) t.push_back(bnd::in(dx[n * d + c]));
      gw[v * d + c] = bnd::sum(t);
    }
  for (std::size_t t = 0; t < seq; ++t)
    for (std::size_t c = 0; c < d; ++c) {
      std::vector<B> s{B{0, 0}};
      for (std::size_t b = 0; b < batch; ++b) s.push_back(bnd::in(dx[(b * seq + t) * d + c]));
      gp[t * d + c] = bnd::sum(s);
    }
  CHECK_WITHIN(x, xw);
  CHECK_WITHIN(dwte, gw);
  CHECK_WITHIN(dwpe, gp);
  // Finite differences of Σ dx∘x with respect to wte and wpe.
  Vec te = ref::widen(wte), pe = ref::widen(wpe);
  const Vec g = ref::widen(dx);
  auto loss = [&] {
    Vec y(batch * seq * d);
    for (std::size_t n = 0; n < batch * seq; ++n)
      for (std::size_t c = 0; c < d; ++c) y[n * d + c] = te[std::size_t(tokens[n]) * d + c] + pe[(n % seq) * d + c];
    return weighted(g, y);
  };
  check_fd(te, loss, values(gw), "dwte");
  check_fd(pe, loss, values(gp), "dwpe");
}

TEST_CASE("layer: LayerNorm over rows, weight and bias gradients summed over rows", "[layers]") {
  for (std::size_t d : {1u, 3u, 4u, 5u, 8u, 13u, 32u}) {
    const std::size_t rows = 6;
    auto x = testing::normal(rows * d, unsigned(d), 2.0f), w = testing::uniform(d, unsigned(d) + 1, 0.5f, 1.5f),
         b = testing::uniform(d, unsigned(d) + 2), dy = testing::normal(rows * d, unsigned(d) + 3);
    for (float& v : x) v += 3.0f;
    std::vector<float> y(rows * d), mean(rows), rstd(rows), dx(rows * d, 0.0f), dw(d, 0.0f), db(d, 0.0f);
    m::layernorm_forward(x.data(), rows, d, w.data(), b.data(), y.data(), mean.data(), rstd.data());
    m::layernorm_backward(x.data(), rows, d, mean.data(), rstd.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data());
    const auto W = bnd::inputs(w), Bb = bnd::inputs(b), DY = bnd::inputs(dy);
    const auto f = layernorm_ref(bnd::inputs(x), W, Bb, rows, d);
    const auto g = layernorm_grad_ref(f, W, DY, rows, d);
    INFO("d=" << d);
    CHECK_WITHIN(y, f.y);
    CHECK_WITHIN(dx, g.dx);
    CHECK_WITHIN(dw, g.dw);
    CHECK_WITHIN(db, g.db);
    if (d == 1) continue;  // x̂ ≡ 0 there: the output does not depend on x at all, and eps dominates
    Vec xd = ref::widen(x), wd = ref::widen(w), bd = ref::widen(b);
    const Vec gy = ref::widen(dy);
    auto loss = [&] { return weighted(gy, values(layernorm_ref(exact(xd), exact(wd), exact(bd), rows, d).y)); };
    const auto fe = layernorm_ref(exact(xd), exact(wd), exact(bd), rows, d);
    const auto ge = layernorm_grad_ref(fe, exact(wd), exact(gy), rows, d);
    check_fd(xd, loss, values(ge.dx), "dx");
    check_fd(wd, loss, values(ge.dw), "dw");
    check_fd(bd, loss, values(ge.db), "db");
  }
}

TEST_CASE("layer: Linear y = x·W + b and its three gradients, around the panel and block sizes", "[layers]") {
  std::vector<float> scratch(attnlab::kGemmScratch);
  unsigned seed = 40;
  for (const auto& shape : {std::tuple{1u, 1u, 1u}, {3u, 5u, 7u}, {4u, 8u, 4u}, {9u, 6u, 13u}, {65u, 17u, 33u}, {5u, 257u, 3u}}) {
    // Named copies, not structured bindings: the lambdas below capture them, which clang 14 (the ASan build) refuses.
    const unsigned rows = std::get<0>(shape), in = std::get<1>(shape), out = std::get<2>(shape);
    auto x = testing::normal(rows * in, seed++), w = testing::normal(in * out, seed++), b = testing::normal(out, seed++),
         dy = testing::normal(rows * out, seed++);
    std::vector<float> y(rows * out), dx(rows * in, 2.0f), dw(in * out, 0.0f), db(out, 0.0f);
    m::linear_forward(x.data(), rows, in, out, w.data(), b.data(), y.data(), false, scratch.data());
    m::linear_backward(x.data(), dy.data(), rows, in, out, w.data(), dx.data(), false, dw.data(), db.data(), scratch.data());
    const auto X = bnd::inputs(x), W = bnd::inputs(w), Bb = bnd::inputs(b), DY = bnd::inputs(dy);
    // The bias is added after the product: y = fl(fl(x·W) + b).
    const auto yr = linear_ref(X, W, &Bb, rows, in, out);
    const auto g = linear_grad_ref(X, W, DY, rows, in, out);
    INFO("rows=" << rows << " in=" << in << " out=" << out);
    CHECK_WITHIN(y, yr);
    CHECK_WITHIN(dx, g.dx);
    CHECK_WITHIN(dw, g.dw);
    CHECK_WITHIN(db, g.db);
    if (rows * in * out > 5000) continue;  // finite differences on the small shapes only
    Vec xd = ref::widen(x), wd = ref::widen(w), bd = ref::widen(b);
    const Vec gy = ref::widen(dy);
    auto loss = [&] {
      const auto bb = exact(bd);
      return weighted(gy, values(linear_ref(exact(xd), exact(wd), &bb, rows, in, out)));
    };
    const auto ge = linear_grad_ref(exact(xd), exact(wd), exact(gy), rows, in, out);
    check_fd(xd, loss, values(ge.dx), "dx");
    check_fd(wd, loss, values(ge.dw), "dw");
    check_fd(bd, loss, values(ge.db), "db");
  }
}

TEST_CASE("layer: GELU (exact, erf) — backward is the derivative", "[layers]") {
  auto x = testing::uniform(64, 5, -5.0f, 5.0f), dy = testing::normal(64, 6);
  std::vector<float> y(64), dx(64);
  m::gelu_forward(x.data(), 64, y.data());
  m::gelu_backward(x.data(), dy.data(), 64, dx.data());
  std::vector<B> yw(64), gw(64);
  for (std::size_t i = 0; i < 64; ++i) yw[i] = bnd::gelu(bnd::in(x[i])), gw[i] = bnd::gelu_backward(bnd::in(x[i]), bnd::in(dy[i]));
  CHECK_WITHIN(y, yw);
  CHECK_WITHIN(dx, gw);
  Vec xd = ref::widen(x);
  const Vec g = ref::widen(dy);
  auto loss = [&] {
    double s = 0;
    for (std::size_t i = 0; i < 64; ++i) s += g[i] * bnd::gelu(xd[i]);
    return s;
  };
  Vec analytic(64);
  for (std::size_t i = 0; i < 64; ++i) analytic[i] = g[i] * bnd::gelu_grad(xd[i]);
  check_fd(xd, loss, analytic, "dx");
}

TEST_CASE("layer: MLP (c_fc → GELU → c_proj) forward and backward", "[layers]") {
  std::vector<float> scratch(attnlab::kGemmScratch);
  for (std::size_t d : {2u, 5u, 8u}) {
    const std::size_t rows = 7, h = 4 * d;
    auto x = testing::normal(rows * d, unsigned(d)), wf = testing::normal(d * h, unsigned(d) + 1, 0.5f),
         bf = testing::normal(h, unsigned(d) + 2), wp = testing::normal(h * d, unsigned(d) + 3, 0.5f),
         bp = testing::normal(d, unsigned(d) + 4), dy = testing::normal(rows * d, unsigned(d) + 5);
    std::vector<float> pre(rows * h), act(rows * h), y(rows * d, 1.0f), dx(rows * d, 0.5f), hidden(rows * h),
        dwf(d * h, 0.0f), dbf(h, 0.0f), dwp(h * d, 0.0f), dbp(d, 0.0f);
    const m::MlpWeights W{wf.data(), bf.data(), wp.data(), bp.data()};
    m::mlp_forward(x.data(), rows, d, W, pre.data(), act.data(), y.data(), true, scratch.data());  // y += MLP(x)
    m::mlp_backward(x.data(), pre.data(), act.data(), dy.data(), rows, d, W, {dwf.data(), dbf.data(), dwp.data(), dbp.data()},
                    dx.data(), true, hidden.data(), scratch.data());
    // Reference: the engine's pre-activations are its own inputs to GELU, so propagate their errors through.
    auto forward = [&](const std::vector<B>& X, const std::vector<B>& Wf, const std::vector<B>& Bf, const std::vector<B>& Wp,
                       const std::vector<B>& Bp, std::vector<B>& P, std::vector<B>& A) {
      P = linear_ref(X, Wf, &Bf, rows, d, h);
      A.resize(P.size());
      for (std::size_t i = 0; i < P.size(); ++i) A[i] = bnd::gelu(P[i]);
      auto yy = linear_ref(A, Wp, nullptr, rows, h, d);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < d; ++c) yy[r * d + c] = (B{1, 0} + yy[r * d + c]) + Bp[c];  // y = (y + a·Wp) + bp, the engine's order
      return yy;
    };
    auto backward = [&](const std::vector<B>& X, const std::vector<B>& Wf, const std::vector<B>& Wp, const std::vector<B>& P,
                        const std::vector<B>& A, const std::vector<B>& DY) {
      auto gp = linear_grad_ref(A, Wp, DY, rows, h, d);
      std::vector<B> dpre(P.size());
      for (std::size_t i = 0; i < P.size(); ++i) dpre[i] = bnd::gelu_backward(P[i], gp.dx[i]);
      auto gf = linear_grad_ref(X, Wf, dpre, rows, d, h);
      for (auto& v : gf.dx) v = B{0.5, 0} + v;
      return std::pair{gp, gf};
    };
    const auto X = bnd::inputs(x), Wf = bnd::inputs(wf), Bf = bnd::inputs(bf), Wp = bnd::inputs(wp), Bp = bnd::inputs(bp);
    std::vector<B> P, A;
    const auto yr = forward(X, Wf, Bf, Wp, Bp, P, A);
    const auto [gp, gf] = backward(X, Wf, Wp, P, A, bnd::inputs(dy));
    INFO("d=" << d);
    CHECK_WITHIN(pre, P);
    CHECK_WITHIN(act, A);
    CHECK_WITHIN(y, yr);
    CHECK_WITHIN(dwp, gp.dw);
    CHECK_WITHIN(dbp, gp.db);
    CHECK_WITHIN(dwf, gf.dw);
    CHECK_WITHIN(dbf, gf.db);
    CHECK_WITHIN(dx, gf.dx);
    Vec xd = ref::widen(x), wfd = ref::widen(wf), bfd = ref::widen(bf), wpd = ref::widen(wp), bpd = ref::widen(bp);
    const Vec gy = ref::widen(dy);
    auto loss = [&] {
      std::vector<B> p, a;
      return weighted(gy, values(forward(exact(xd), exact(wfd), exact(bfd), exact(wpd), exact(bpd), p, a)));
    };
    std::vector<B> pe, ae;
    forward(exact(xd), exact(wfd), exact(bfd), exact(wpd), exact(bpd), pe, ae);
    const auto [gpe, gfe] = backward(exact(xd), exact(wfd), exact(wpd), pe, ae, exact(gy));
    Vec dxe = values(gfe.dx);
    for (double& v : dxe) v -= 0.5;  // the accumulated 0.5 is not part of the gradient
    check_fd(xd, loss, dxe, "dx");
    check_fd(wfd, loss, values(gfe.dw), "dW_fc");
    check_fd(bfd, loss, values(gfe.db), "db_fc");
    check_fd(wpd, loss, values(gpe.dw), "dW_proj");
    check_fd(bpd, loss, values(gpe.db), "db_proj");
  }
}

TEST_CASE("layer: causal multi-head attention on c_attn's output, with grouped K/V heads", "[layers]") {
  for (const auto& shape : {std::tuple{1u, 5u, 1u, 1u, 3u}, {2u, 7u, 4u, 2u, 2u}, {2u, 6u, 3u, 1u, 4u},
                            {1u, 40u, 4u, 4u, 8u}, {2u, 70u, 2u, 1u, 16u}}) {
    // Named copies, not structured bindings: the lambdas below capture them, which clang 14 (the ASan build) refuses.
    const unsigned batch = std::get<0>(shape), seq = std::get<1>(shape), heads = std::get<2>(shape),
                   kv = std::get<3>(shape), dh = std::get<4>(shape);
    const m::AttentionShape s{batch, seq, heads, kv, dh};
    const std::size_t n = batch * seq, w = s.width(), od = heads * dh;
    auto qkv = testing::normal(n * w, unsigned(seq * 10 + heads)), dout = testing::normal(n * od, unsigned(seq + 3));
    std::vector<float> out(n * od), lse(batch * heads * seq), dqkv(n * w, 7.0f);
    REQUIRE(m::attention_forward(s, qkv.data(), out.data(), lse.data(), nullptr).ok());
    REQUIRE(m::attention_backward(s, qkv.data(), out.data(), lse.data(), dout.data(), dqkv.data()).ok());
    // Per (batch, query head): slice q, the group's k/v, and run the single-head reference; GQA sums k/v gradients.
    const float scale = 1.0f / std::sqrt(float(dh));
    auto slice = [&](const std::vector<B>& src, std::size_t b, std::size_t col, std::size_t ld, std::size_t width) {
      std::vector<B> r(seq * width);
      for (std::size_t t = 0; t < seq; ++t)
        for (std::size_t c = 0; c < width; ++c) r[t * width + c] = src[(b * seq + t) * ld + col + c];
      return r;
    };
    auto gradients = [&](const std::vector<B>& QKV, const std::vector<B>& O, const std::vector<B>& LSE, const std::vector<B>& DO) {
      std::vector<B> g(n * w);
      std::vector<bool> seen(n * w, false);
      for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t h = 0; h < heads; ++h) {
          const std::size_t grp = h / (heads / kv), qo = h * dh, ko = (heads + grp) * dh, vo = (heads + kv + grp) * dh;
          std::vector<B> l(LSE.begin() + std::ptrdiff_t((b * heads + h) * seq), LSE.begin() + std::ptrdiff_t((b * heads + h + 1) * seq));
          const auto r = ref::attention_grad(slice(QKV, b, qo, w, dh), slice(QKV, b, ko, w, dh), slice(QKV, b, vo, w, dh),
                                             slice(O, b, qo, od, dh), l, slice(DO, b, qo, od, dh), seq, seq, dh, dh,
                                             bnd::in(scale), true, nullptr);
          for (std::size_t t = 0; t < seq; ++t)
            for (std::size_t c = 0; c < dh; ++c) {
              const std::size_t row = (b * seq + t) * w;
              g[row + qo + c] = r.dq[t * dh + c];
              for (auto [col, val] : {std::pair{ko + c, r.dk[t * dh + c]}, {vo + c, r.dv[t * dh + c]}}) {
                g[row + col] = seen[row + col] ? g[row + col] + val : val;
                seen[row + col] = true;
              }
            }
        }
      return g;
    };
    INFO("batch=" << batch << " seq=" << seq << " heads=" << heads << " kvHeads=" << kv << " headDim=" << dh);
    CHECK_WITHIN(dqkv, gradients(bnd::inputs(qkv), bnd::inputs(out), bnd::inputs(lse), bnd::inputs(dout)));
    if (seq > 10) continue;
    // Finite differences of Σ dout∘attention(qkv), from an independent double forward of the layer.
    Vec x = ref::widen(qkv);
    const Vec g = ref::widen(dout);
    auto forward = [&](Vec& O, Vec& L) {
      O.assign(n * od, 0.0), L.assign(batch * heads * seq, 0.0);
      for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t h = 0; h < heads; ++h) {
          const std::size_t grp = h / (heads / kv);
          Vec q(seq * dh), k(seq * dh), v(seq * dh);
          for (std::size_t t = 0; t < seq; ++t)
            for (std::size_t c = 0; c < dh; ++c) {
              const std::size_t row = (b * seq + t) * w;
              q[t * dh + c] = x[row + h * dh + c], k[t * dh + c] = x[row + (heads + grp) * dh + c];
              v[t * dh + c] = x[row + (heads + kv + grp) * dh + c];
            }
          const auto f = ref::attention_forward(q, k, v, seq, seq, dh, dh, double(scale), true, nullptr);
          for (std::size_t t = 0; t < seq; ++t) {
            L[(b * heads + h) * seq + t] = f.lse[t];
            for (std::size_t c = 0; c < dh; ++c) O[(b * seq + t) * od + h * dh + c] = f.o[t * dh + c];
          }
        }
    };
    auto loss = [&] {
      Vec O, L;
      forward(O, L);
      return weighted(g, O);
    };
    Vec O, L;
    forward(O, L);
    check_fd(x, loss, values(gradients(exact(x), exact(O), exact(L), exact(g))), "dqkv");
  }
}

TEST_CASE("layer: cross-entropy with ignored targets — loss and dL/dlogits", "[layers]") {
  for (std::size_t V : {1u, 2u, 5u, 16u, 33u}) {
    const std::size_t rows = 6;
    auto logits = testing::normal(rows * V, unsigned(V), 3.0f);
    std::vector<std::int32_t> targets(rows);
    for (std::size_t r = 0; r < rows; ++r) targets[r] = std::int32_t((r * 7 + 3) % V);
    targets[2] = -1;  // ignored
    std::vector<float> grad = logits, per_row(rows);
    const auto ce = m::cross_entropy(grad.data(), targets.data(), rows, V, true, per_row.data());
    CHECK(ce.count == rows - 1);
    CHECK(std::isnan(per_row[2]));
    // Reference: m = max, e = exp(x − m), S = Σ e, loss = (m − x_t) + log S, grad = e·(1/count)/S − [t]/count.
    std::vector<B> want(rows * V);
    double mean = 0, mean_err = 0;
    const B inv = B{1, 0} / B{double(rows - 1), 0};
    for (std::size_t r = 0; r < rows; ++r) {
      if (targets[r] < 0) continue;
      double mx = -INFINITY;
      for (std::size_t j = 0; j < V; ++j) mx = std::fmax(mx, logits[r * V + j]);
      std::vector<B> e(V);
      for (std::size_t j = 0; j < V; ++j) e[j] = bnd::exp(bnd::in(logits[r * V + j]) - B{mx, 0});
      const B S = bnd::sum(e);
      const double loss = (mx - logits[r * V + std::size_t(targets[r])]) + std::log(S.v);
      const double loss_err = S.e / (S.v - S.e) + 4 * ref::u * (std::fabs(loss) + 1);  // log's argument, double roundings
      CHECK(std::fabs(per_row[r] - loss) <= loss_err + ref::u * std::fabs(loss));
      mean += loss / double(rows - 1), mean_err += loss_err / double(rows - 1);
      const B factor = inv / S;
      for (std::size_t j = 0; j < V; ++j) {
        want[r * V + j] = e[j] * factor;
        if (std::int32_t(j) == targets[r]) want[r * V + j] = want[r * V + j] - inv;
      }
    }
    INFO("V=" << V);
    CHECK(std::fabs(ce.mean - mean) <= mean_err);
    CHECK_WITHIN(grad, want);
    // Finite differences of the mean loss in double.
    Vec x = ref::widen(logits);
    auto loss = [&] {
      double s = 0;
      for (std::size_t r = 0; r < rows; ++r) {
        if (targets[r] < 0) continue;
        double mx = -INFINITY, z = 0;
        for (std::size_t j = 0; j < V; ++j) mx = std::fmax(mx, x[r * V + j]);
        for (std::size_t j = 0; j < V; ++j) z += std::exp(x[r * V + j] - mx);
        s += mx + std::log(z) - x[r * V + std::size_t(targets[r])];
      }
      return s / double(rows - 1);
    };
    check_fd(x, loss, values(want), "dlogits");
  }
}
