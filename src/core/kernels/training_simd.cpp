// wasm SIMD128 versions of the training kernels (training.h). Unaligned loads, a scalar tail on every loop:
// any size and leading dimension is valid. Natively the same source compiles through SIMDe.
#include <cmath>

#include "erf_simd.h"
#include "exp_simd.h"
#include "simd128.h"
#include "training.h"

namespace attnlab::kernels::simd {
namespace {

inline float hsum(v128_t v) noexcept {
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}

// erfc_nonneg and its constants: erf_simd.h.
// Φ(x) = erfc(−x/√2)/2: erfc of |x|/√2, reflected for x > 0 (1 − erfc/2), so both tails keep relative accuracy.
inline v128_t phi_cdf(v128_t x, const ErfcVectors& e, const ExpVectors& k) noexcept {
  const v128_t c = wasm_f32x4_mul(e.half, erfc_nonneg(wasm_f32x4_mul(wasm_f32x4_abs(x), wasm_f32x4_splat(0.70710678118654752f)), e, k));
  return wasm_v128_bitselect(wasm_f32x4_sub(e.one, c), c, wasm_f32x4_gt(x, wasm_f32x4_splat(0.0f)));
}

}  // namespace

void pack_cols(std::size_t m, std::size_t k, const float* a, std::size_t lda, float s, float* packed) noexcept {
  const v128_t vs = wasm_f32x4_splat(s);
  for (std::size_t i0 = 0; i0 < m; i0 += kPanelRows) {
    const std::size_t cols = m - i0 < kPanelRows ? m - i0 : kPanelRows;
    if (cols == kPanelRows) {
      for (std::size_t p = 0; p < k; ++p, packed += 4) wasm_v128_store(packed, wasm_f32x4_mul(wasm_v128_load(a + p * lda + i0), vs));
    } else {
      for (std::size_t p = 0; p < k; ++p)
        for (std::size_t r = 0; r < kPanelRows; ++r) *packed++ = r < cols ? a[p * lda + i0 + r] * s : 0.0f;
    }
  }
}

void transpose(std::size_t rows, std::size_t cols, const float* a, std::size_t lda, float* b, std::size_t ldb) noexcept {
  std::size_t i = 0;
  for (; i + 4 <= rows; i += 4) {
    std::size_t j = 0;
    for (; j + 4 <= cols; j += 4) {  // a 4×4 block: load four rows, transpose in registers, store four columns
      const v128_t x0 = wasm_v128_load(a + i * lda + j), x1 = wasm_v128_load(a + (i + 1) * lda + j);
      const v128_t x2 = wasm_v128_load(a + (i + 2) * lda + j), x3 = wasm_v128_load(a + (i + 3) * lda + j);
      const v128_t t0 = wasm_i32x4_shuffle(x0, x1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(x2, x3, 0, 4, 1, 5);
      const v128_t t2 = wasm_i32x4_shuffle(x0, x1, 2, 6, 3, 7), t3 = wasm_i32x4_shuffle(x2, x3, 2, 6, 3, 7);
      wasm_v128_store(b + j * ldb + i, wasm_i32x4_shuffle(t0, t1, 0, 1, 4, 5));
      wasm_v128_store(b + (j + 1) * ldb + i, wasm_i32x4_shuffle(t0, t1, 2, 3, 6, 7));
      wasm_v128_store(b + (j + 2) * ldb + i, wasm_i32x4_shuffle(t2, t3, 0, 1, 4, 5));
      wasm_v128_store(b + (j + 3) * ldb + i, wasm_i32x4_shuffle(t2, t3, 2, 3, 6, 7));
    }
    for (; j < cols; ++j)
      for (std::size_t r = 0; r < 4; ++r) b[j * ldb + i + r] = a[(i + r) * lda + j];
  }
  for (; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) b[j * ldb + i] = a[i * lda + j];
}

void gelu(const float* x, std::size_t n, float* y) noexcept {
  const ExpVectors k = load_exp_vectors();
  const ErfcVectors e = load_erfc_vectors();
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const v128_t v = wasm_v128_load(x + i);
    wasm_v128_store(y + i, wasm_f32x4_mul(v, phi_cdf(v, e, k)));
  }
  if (i < n) {  // 1–3 left: padded with zeros through the same vector code
    float t[4] = {0, 0, 0, 0}, r[4];
    for (std::size_t j = 0; i + j < n; ++j) t[j] = x[i + j];
    const v128_t v = wasm_v128_load(t);
    wasm_v128_store(r, wasm_f32x4_mul(v, phi_cdf(v, e, k)));
    for (std::size_t j = 0; i + j < n; ++j) y[i + j] = r[j];
  }
}

void gelu_backward(const float* x, const float* dy, std::size_t n, float* dx) noexcept {
  const ExpVectors k = load_exp_vectors();
  const ErfcVectors e = load_erfc_vectors();
  const v128_t inv_sqrt_2pi = wasm_f32x4_splat(0.39894228040143268f), neg_half = wasm_f32x4_splat(-0.5f);
  auto grad = [&](v128_t v, v128_t g) {
    const v128_t pdf = wasm_f32x4_mul(inv_sqrt_2pi, exp_f32x4(wasm_f32x4_mul(neg_half, wasm_f32x4_mul(v, v)), k));
    return wasm_f32x4_mul(g, wasm_f32x4_add(phi_cdf(v, e, k), wasm_f32x4_mul(v, pdf)));
  };
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(dx + i, grad(wasm_v128_load(x + i), wasm_v128_load(dy + i)));
  if (i < n) {
    float tx[4] = {0, 0, 0, 0}, tg[4] = {0, 0, 0, 0}, r[4];
    for (std::size_t j = 0; i + j < n; ++j) tx[j] = x[i + j], tg[j] = dy[i + j];
    wasm_v128_store(r, grad(wasm_v128_load(tx), wasm_v128_load(tg)));
    for (std::size_t j = 0; i + j < n; ++j) dx[i + j] = r[j];
  }
}

float dot(const float* a, const float* b, std::size_t n) noexcept {
  v128_t s0 = wasm_f32x4_splat(0.0f), s1 = s0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(wasm_v128_load(a + i), wasm_v128_load(b + i)));
    s1 = wasm_f32x4_add(s1, wasm_f32x4_mul(wasm_v128_load(a + i + 4), wasm_v128_load(b + i + 4)));
  }
  if (i + 4 <= n) {
    s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(wasm_v128_load(a + i), wasm_v128_load(b + i)));
    i += 4;
  }
  float s = hsum(wasm_f32x4_add(s0, s1));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

float sum(const float* x, std::size_t n) noexcept {
  v128_t s0 = wasm_f32x4_splat(0.0f), s1 = s0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    s0 = wasm_f32x4_add(s0, wasm_v128_load(x + i));
    s1 = wasm_f32x4_add(s1, wasm_v128_load(x + i + 4));
  }
  if (i + 4 <= n) {
    s0 = wasm_f32x4_add(s0, wasm_v128_load(x + i));
    i += 4;
  }
  float s = hsum(wasm_f32x4_add(s0, s1));
  for (; i < n; ++i) s += x[i];
  return s;
}

void layernorm_row(const float* x, std::size_t n, const float* w, const float* b, float eps, float* y, float* mean,
                   float* rstd) noexcept {
  const float mu = sum(x, n) / static_cast<float>(n);
  const v128_t vmu = wasm_f32x4_splat(mu);
  v128_t acc = wasm_f32x4_splat(0.0f);
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const v128_t d = wasm_f32x4_sub(wasm_v128_load(x + i), vmu);
    acc = wasm_f32x4_add(acc, wasm_f32x4_mul(d, d));
  }
  float ss = hsum(acc);
  for (std::size_t j = i; j < n; ++j) ss += (x[j] - mu) * (x[j] - mu);
  const float r = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  const v128_t vr = wasm_f32x4_splat(r);
  for (i = 0; i + 4 <= n; i += 4) {
    v128_t h = wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(x + i), vmu), vr);
    if (w) h = wasm_f32x4_mul(h, wasm_v128_load(w + i));
    if (b) h = wasm_f32x4_add(h, wasm_v128_load(b + i));
    wasm_v128_store(y + i, h);
  }
  for (; i < n; ++i) {
    const float h = (x[i] - mu) * r;
    y[i] = (w ? h * w[i] : h) + (b ? b[i] : 0.0f);
  }
  *mean = mu, *rstd = r;
}

void layernorm_backward_row(const float* x, std::size_t n, float mean, float rstd, const float* w, const float* dy,
                            float* dx, float* dw, float* db) noexcept {
  const v128_t vmu = wasm_f32x4_splat(mean), vr = wasm_f32x4_splat(rstd);
  v128_t ag = wasm_f32x4_splat(0.0f), agx = ag;
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const v128_t h = wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(x + i), vmu), vr);
    v128_t g = wasm_v128_load(dy + i);
    if (w) g = wasm_f32x4_mul(g, wasm_v128_load(w + i));
    ag = wasm_f32x4_add(ag, g);
    agx = wasm_f32x4_add(agx, wasm_f32x4_mul(g, h));
  }
  float g_sum = hsum(ag), gx_sum = hsum(agx);
  for (std::size_t j = i; j < n; ++j) {
    const float h = (x[j] - mean) * rstd, g = w ? dy[j] * w[j] : dy[j];
    g_sum += g, gx_sum += g * h;
  }
  const float g_mean = g_sum / static_cast<float>(n), gx_mean = gx_sum / static_cast<float>(n);
  const v128_t vg = wasm_f32x4_splat(g_mean), vgx = wasm_f32x4_splat(gx_mean);
  for (i = 0; i + 4 <= n; i += 4) {
    const v128_t h = wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(x + i), vmu), vr);
    const v128_t d = wasm_v128_load(dy + i);
    const v128_t g = w ? wasm_f32x4_mul(d, wasm_v128_load(w + i)) : d;
    const v128_t t = wasm_f32x4_mul(wasm_f32x4_sub(wasm_f32x4_sub(g, vg), wasm_f32x4_mul(h, vgx)), vr);
    wasm_v128_store(dx + i, wasm_f32x4_add(wasm_v128_load(dx + i), t));
    if (dw) wasm_v128_store(dw + i, wasm_f32x4_add(wasm_v128_load(dw + i), wasm_f32x4_mul(d, h)));
    if (db) wasm_v128_store(db + i, wasm_f32x4_add(wasm_v128_load(db + i), d));
  }
  for (; i < n; ++i) {
    const float h = (x[i] - mean) * rstd, g = w ? dy[i] * w[i] : dy[i];
    dx[i] += (g - g_mean - h * gx_mean) * rstd;
    if (dw) dw[i] += dy[i] * h;
    if (db) db[i] += dy[i];
  }
}

void mul_diff(const float* y, const float* g, std::size_t n, float s, float mul, float* out) noexcept {
  const v128_t vs = wasm_f32x4_splat(s), vm = wasm_f32x4_splat(mul);
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    wasm_v128_store(out + i, wasm_f32x4_mul(wasm_f32x4_mul(vm, wasm_v128_load(y + i)), wasm_f32x4_sub(wasm_v128_load(g + i), vs)));
  for (; i < n; ++i) out[i] = mul * y[i] * (g[i] - s);
}

void log_softmax_grad(const float* y, const float* g, std::size_t n, float s, float mul, float* out) noexcept {
  const ExpVectors k = load_exp_vectors();
  const v128_t vs = wasm_f32x4_splat(s), vm = wasm_f32x4_splat(mul);
  auto f = [&](v128_t yv, v128_t gv) { return wasm_f32x4_mul(vm, wasm_f32x4_sub(gv, wasm_f32x4_mul(vs, exp_f32x4(yv, k)))); };
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(out + i, f(wasm_v128_load(y + i), wasm_v128_load(g + i)));
  if (i < n) {
    float ty[4] = {0, 0, 0, 0}, tg[4] = {0, 0, 0, 0}, r[4];
    for (std::size_t j = 0; i + j < n; ++j) ty[j] = y[i + j], tg[j] = g[i + j];
    wasm_v128_store(r, f(wasm_v128_load(ty), wasm_v128_load(tg)));
    for (std::size_t j = 0; i + j < n; ++j) out[i + j] = r[j];
  }
}

void axpy(std::size_t n, float a, const float* x, float* y) noexcept {
  const v128_t va = wasm_f32x4_splat(a);
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    wasm_v128_store(y + i, wasm_f32x4_add(wasm_v128_load(y + i), wasm_f32x4_mul(va, wasm_v128_load(x + i))));
  for (; i < n; ++i) y[i] += a * x[i];
}

void col_sum(std::size_t rows, std::size_t cols, const float* x, std::size_t ldx, float* out) noexcept {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = x + r * ldx;
    std::size_t j = 0;
    for (; j + 4 <= cols; j += 4) wasm_v128_store(out + j, wasm_f32x4_add(wasm_v128_load(out + j), wasm_v128_load(row + j)));
    for (; j < cols; ++j) out[j] += row[j];
  }
}

void adamw(std::size_t n, float* p, const float* g, float* m, float* v, float gscale, float lr, float beta1, float beta2,
           float bc1, float bc2, float eps, float wd) noexcept {
  const v128_t vgs = wasm_f32x4_splat(gscale), vlr = wasm_f32x4_splat(lr), vb1 = wasm_f32x4_splat(beta1),
               vb2 = wasm_f32x4_splat(beta2), v1b1 = wasm_f32x4_splat(1.0f - beta1), v1b2 = wasm_f32x4_splat(1.0f - beta2),
               vbc1 = wasm_f32x4_splat(bc1), vbc2 = wasm_f32x4_splat(bc2), veps = wasm_f32x4_splat(eps),
               vwd = wasm_f32x4_splat(wd);
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const v128_t gi = wasm_f32x4_mul(wasm_v128_load(g + i), vgs);
    const v128_t mi = wasm_f32x4_add(wasm_f32x4_mul(vb1, wasm_v128_load(m + i)), wasm_f32x4_mul(v1b1, gi));
    const v128_t vi = wasm_f32x4_add(wasm_f32x4_mul(vb2, wasm_v128_load(v + i)), wasm_f32x4_mul(wasm_f32x4_mul(v1b2, gi), gi));
    wasm_v128_store(m + i, mi);
    wasm_v128_store(v + i, vi);
    const v128_t pi = wasm_v128_load(p + i);
    const v128_t step = wasm_f32x4_div(wasm_f32x4_div(mi, vbc1), wasm_f32x4_add(wasm_f32x4_sqrt(wasm_f32x4_div(vi, vbc2)), veps));
    wasm_v128_store(p + i, wasm_f32x4_sub(pi, wasm_f32x4_mul(vlr, wasm_f32x4_add(wasm_f32x4_mul(vwd, pi), step))));
  }
  for (; i < n; ++i) {
    const float gi = g[i] * gscale;
    m[i] = beta1 * m[i] + (1.0f - beta1) * gi;
    v[i] = beta2 * v[i] + (1.0f - beta2) * gi * gi;
    p[i] -= lr * (wd * p[i] + (m[i] / bc1) / (std::sqrt(v[i] / bc2) + eps));
  }
}

}  // namespace attnlab::kernels::simd
