// The language models' kernels, wasm SIMD128 (lm_kernels.h). The matrix-vector products are one sequential read
// of the panels with their sums in registers (F32: four columns × two halves of a panel; 16-bit: two columns, their
// widened weights needing registers of their own); the 16-bit formats widen in registers (lm_kernels.h). Every loop
// has a scalar tail, so any size is valid.
#include <cmath>

#include "erf_simd.h"
#include "exp_simd.h"
#include "half.h"
#include "lm_kernels.h"
#include "simd128.h"
#include "tanh_simd.h"

namespace attnlab::kernels::simd {

namespace {

inline float hsum(v128_t v) noexcept {
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}

inline v128_t fma(v128_t acc, v128_t a, v128_t b) noexcept { return wasm_f32x4_add(acc, wasm_f32x4_mul(a, b)); }

// Eight 16-bit weights of a column (interleaved order) as two float32 vectors: rows 0–3 and rows 4–7.
struct Bf16 {
  v128_t high_mask;
  Bf16() noexcept : high_mask(wasm_i32x4_splat(int(0xffff0000u))) {}
  void operator()(v128_t v, v128_t& lo, v128_t& hi) const noexcept {
    lo = wasm_i32x4_shl(v, 16);
    hi = wasm_v128_and(v, high_mask);
  }
};
// F16 in four operations per eight weights, none of them a widening shift pair: rows 0–3 through i32x4.dot_i16x8_s
// (x86's pmaddwd), which multiplies each signed 16-bit half of a lane by a constant and adds the pair, so with 2¹³
// for the low half and 0 for the high one it gives the low half sign-extended and moved left by 13 in one
// instruction; rows 4–7 through one arithmetic shift right by 3. Either way exponent and mantissa land where float32
// has them (bits 13–27), the sign in bit 31, copies of it in bits 28–30 and (shift) the other half's bits below 13,
// which the mask clears: the pattern's value times 2⁻¹¹², bit for bit (a panel weight w·2⁻¹⁰²: lm_kernels.h). One
// half each way splits the work between the multiply and shift units (two multiply-adds: 4–5 % slower on GPT-2
// small's matrices, measured in Node on AMD EPYC; the F16 loop is bound by its vector operations, not by memory).
// Finite inputs only.
struct F16Unscaled {
  v128_t mask, low;
  F16Unscaled() noexcept : mask(wasm_i32x4_splat(int(0x8fffe000u))), low(wasm_i32x4_splat(0x2000)) {}
  void operator()(v128_t v, v128_t& lo, v128_t& hi) const noexcept {
    lo = wasm_v128_and(wasm_i32x4_dot_i16x8(v, low), mask);
    hi = wasm_v128_and(wasm_i32x4_shr(v, 3), mask);
  }
};

// An F16 panel's weights: × 2¹⁰² rebiases the exponent (half.h) and undoes the panel's 2¹⁰.
struct F16 {
  F16Unscaled unscaled;
  v128_t scale = wasm_f32x4_splat(kF16ScaleX);
  void operator()(v128_t v, v128_t& lo, v128_t& hi) const noexcept {
    unscaled(v, lo, hi);
    lo = wasm_f32x4_mul(lo, scale), hi = wasm_f32x4_mul(hi, scale);
  }
};

// y[8p … 8p + 7] from a panel's two sums (only the rows that exist).
inline void put(v128_t lo, v128_t hi, std::size_t p, std::size_t rows, float* y, bool accumulate) noexcept {
  float* yp = y + p * kLmPanel;
  if (rows - p * kLmPanel >= kLmPanel) {
    if (accumulate) lo = wasm_f32x4_add(lo, wasm_v128_load(yp)), hi = wasm_f32x4_add(hi, wasm_v128_load(yp + 4));
    wasm_v128_store(yp, lo);
    wasm_v128_store(yp + 4, hi);
    return;
  }
  alignas(16) float t[kLmPanel];
  wasm_v128_store(t, lo);
  wasm_v128_store(t + 4, hi);
  for (std::size_t r = 0; r < rows - p * kLmPanel; ++r) yp[r] = accumulate ? yp[r] + t[r] : t[r];
}

// Reads 8 KB ahead of a panel stream once per 4 KB of each panel (a page, where panels run on from one another), so
// that each page's first access (its address translation, then the memory) starts while the vector units still work
// on the page before: the multiply loops keep few loads in flight and stalled at every new page without it, where a
// plain read of the same bytes does not (docs/performance.md). Clamped to the matrix's last element (w itself for an
// empty matrix, which is never read: w − 1 would be a pointer outside it, and undefined where w is null). The bytes
// read are summed and the sum stored once, so that the loads are kept; bytes, so that no float arithmetic meets a
// weight that may be subnormal.
template <class T>
class PageAhead {
 public:
  PageAhead(const T* w, std::size_t rows, std::size_t cols) noexcept
      : last_(rows == 0 || cols == 0 ? w : w + (((rows + kLmPanel - 1) / kLmPanel) * cols * kLmPanel - 1)) {}
  ~PageAhead() {
    volatile unsigned keep = sink_;
    static_cast<void>(keep);
  }
  // Reads ahead of column c, at `at`, and returns where its page of columns ends (at most `limit`).
  std::size_t page(const T* at, std::size_t c, std::size_t limit) noexcept {
    const std::size_t left = std::size_t(last_ - at), step = kAhead / sizeof(T);
    sink_ += *reinterpret_cast<const unsigned char*>(at + (left < step ? left : step));
    return limit - c < kColumns ? limit : c + kColumns;
  }

 private:
  static constexpr std::size_t kAhead = 8192, kColumns = 4096 / (kLmPanel * sizeof(T));  // panel columns in 4 KB
  const T* last_;
  unsigned sink_ = 0;
};

template <class Widen>
void matvec_half(const std::uint16_t* w, std::size_t rows, std::size_t cols, const float* x, float* y, bool accumulate,
                 const Widen& widen) noexcept {
  PageAhead<std::uint16_t> ahead(w, rows, cols);
  const std::size_t pairs = cols & ~std::size_t(1);
  for (std::size_t p = 0; p * kLmPanel < rows; ++p) {
    const std::uint16_t* wp = w + p * cols * kLmPanel;
    // Two columns, four accumulators: with four columns and eight, V8 (16 xmm registers on x86-64, some taken)
    // kept three accumulators on the stack, loaded and stored every step; this way nothing spills (measured in
    // Node on F16 and BF16 panels of 37.7 M weights: 17.5 → 18.5–22 GB/s per CPU-second).
    v128_t a0 = wasm_f32x4_splat(0.0f), a1 = a0, a2 = a0, a3 = a0;
    std::size_t c = 0;
    while (c < pairs)
      for (const std::size_t end = ahead.page(wp, c, pairs); c < end; c += 2, wp += 2 * kLmPanel) {
        v128_t l0, h0, l1, h1;
        widen(wasm_v128_load(wp), l0, h0);
        widen(wasm_v128_load(wp + 8), l1, h1);
        const v128_t x0 = wasm_v128_load32_splat(x + c), x1 = wasm_v128_load32_splat(x + c + 1);
        a0 = fma(a0, x0, l0), a1 = fma(a1, x0, h0), a2 = fma(a2, x1, l1), a3 = fma(a3, x1, h1);
      }
    for (; c < cols; ++c, wp += kLmPanel) {
      v128_t l, h;
      widen(wasm_v128_load(wp), l, h);
      const v128_t xc = wasm_v128_load32_splat(x + c);
      a0 = fma(a0, xc, l), a1 = fma(a1, xc, h);
    }
    put(wasm_f32x4_add(a0, a2), wasm_f32x4_add(a1, a3), p, rows, y, accumulate);
  }
}

template <class Widen>
void widen_panel(const std::uint16_t* w, std::size_t k, float* out, const Widen& widen) noexcept {
  for (std::size_t c = 0; c < k; ++c, w += kLmPanel, out += kLmPanel) {
    v128_t lo, hi;
    widen(wasm_v128_load(w), lo, hi);
    wasm_v128_store(out, lo);
    wasm_v128_store(out + 4, hi);
  }
}

}  // namespace

void matvec_f32(const float* w, std::size_t rows, std::size_t cols, const float* x, float* y, bool accumulate) noexcept {
  PageAhead<float> ahead(w, rows, cols);
  const std::size_t quads = cols & ~std::size_t(3);
  for (std::size_t p = 0; p * kLmPanel < rows; ++p) {
    const float* wp = w + p * cols * kLmPanel;
    v128_t a0 = wasm_f32x4_splat(0.0f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    std::size_t c = 0;
    while (c < quads)
      for (const std::size_t end = ahead.page(wp, c, quads); c < end; c += 4, wp += 4 * kLmPanel) {
        const v128_t x0 = wasm_v128_load32_splat(x + c), x1 = wasm_v128_load32_splat(x + c + 1);
        const v128_t x2 = wasm_v128_load32_splat(x + c + 2), x3 = wasm_v128_load32_splat(x + c + 3);
        a0 = fma(a0, x0, wasm_v128_load(wp)), a1 = fma(a1, x0, wasm_v128_load(wp + 4));
        a2 = fma(a2, x1, wasm_v128_load(wp + 8)), a3 = fma(a3, x1, wasm_v128_load(wp + 12));
        a4 = fma(a4, x2, wasm_v128_load(wp + 16)), a5 = fma(a5, x2, wasm_v128_load(wp + 20));
        a6 = fma(a6, x3, wasm_v128_load(wp + 24)), a7 = fma(a7, x3, wasm_v128_load(wp + 28));
      }
    for (; c < cols; ++c, wp += kLmPanel) {
      const v128_t xc = wasm_v128_load32_splat(x + c);
      a0 = fma(a0, xc, wasm_v128_load(wp)), a1 = fma(a1, xc, wasm_v128_load(wp + 4));
    }
    put(wasm_f32x4_add(wasm_f32x4_add(a0, a2), wasm_f32x4_add(a4, a6)),
        wasm_f32x4_add(wasm_f32x4_add(a1, a3), wasm_f32x4_add(a5, a7)), p, rows, y, accumulate);
  }
}

void matvec_f16(const std::uint16_t* w, std::size_t rows, std::size_t cols, const float* x, float* y,
                bool accumulate) noexcept {
  matvec_half(w, rows, cols, x, y, accumulate, F16());
}

void matvec_f16_scaled(const std::uint16_t* w, std::size_t rows, std::size_t cols, const float* xs, float* y,
                       bool accumulate) noexcept {
  matvec_half(w, rows, cols, xs, y, accumulate, F16Unscaled());
}

void matvec_bf16(const std::uint16_t* w, std::size_t rows, std::size_t cols, const float* x, float* y,
                 bool accumulate) noexcept {
  matvec_half(w, rows, cols, x, y, accumulate, Bf16());
}

void widen_panel_f16(const std::uint16_t* w, std::size_t k, float* out) noexcept { widen_panel(w, k, out, F16()); }
void widen_panel_bf16(const std::uint16_t* w, std::size_t k, float* out) noexcept { widen_panel(w, k, out, Bf16()); }

void rmsnorm_row(const float* x, std::size_t n, const float* w, float eps, float* y) noexcept {
  v128_t a0 = wasm_f32x4_splat(0.0f), a1 = a0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t v0 = wasm_v128_load(x + i), v1 = wasm_v128_load(x + i + 4);
    a0 = fma(a0, v0, v0), a1 = fma(a1, v1, v1);
  }
  for (; i + 4 <= n; i += 4) {
    const v128_t v = wasm_v128_load(x + i);
    a0 = fma(a0, v, v);
  }
  float ss = hsum(wasm_f32x4_add(a0, a1));
  for (; i < n; ++i) ss += x[i] * x[i];
  const float r = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  const v128_t vr = wasm_f32x4_splat(r);
  for (i = 0; i + 4 <= n; i += 4)
    wasm_v128_store(y + i, wasm_f32x4_mul(wasm_f32x4_mul(wasm_v128_load(x + i), vr), wasm_v128_load(w + i)));
  for (; i < n; ++i) y[i] = x[i] * r * w[i];
}

void gelu_tanh(const float* x, std::size_t n, float* y) noexcept {
  const TanhVectors k = load_tanh_vectors();
  const v128_t c = wasm_f32x4_splat(0.7978845608028654f), a = wasm_f32x4_splat(0.044715f), half = wasm_f32x4_splat(0.5f);
  auto four = [&](v128_t v) {
    const v128_t z = wasm_f32x4_mul(c, wasm_f32x4_add(v, wasm_f32x4_mul(wasm_f32x4_mul(a, v), wasm_f32x4_mul(v, v))));
    return wasm_f32x4_mul(wasm_f32x4_mul(half, v), wasm_f32x4_add(k.exp.one, scaled_tanh_f32x4(z, z, k.exp.one, k)));
  };
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(y + i, four(wasm_v128_load(x + i)));
  if (i < n) {  // the last 1–3 through the same vector code: every element's result is independent of n
    alignas(16) float t[4] = {};
    for (std::size_t j = i; j < n; ++j) t[j - i] = x[j];
    wasm_v128_store(t, four(wasm_v128_load(t)));
    for (std::size_t j = i; j < n; ++j) y[j] = t[j - i];
  }
}

namespace {
// f over x[0 … n) four at a time, the last 1–3 through the same vector code (zero-padded): every element's result
// is independent of n.
template <class F>
void map4(const float* x, std::size_t n, float* y, F f) noexcept {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(y + i, f(wasm_v128_load(x + i)));
  if (i < n) {
    alignas(16) float t[4] = {};
    for (std::size_t j = i; j < n; ++j) t[j - i] = x[j];
    wasm_v128_store(t, f(wasm_v128_load(t)));
    for (std::size_t j = i; j < n; ++j) y[j] = t[j - i];
  }
}
}  // namespace

void gelu_erf(const float* x, std::size_t n, float* y) noexcept {
  const ErfVectors k = load_erf_vectors();
  map4(x, n, y, [&](v128_t v) { return wasm_f32x4_mul(v, phi_f32x4(v, k)); });
}

void erf_f32(const float* x, std::size_t n, float* y) noexcept {
  const ErfVectors k = load_erf_vectors();
  map4(x, n, y, [&](v128_t v) { return erf_f32x4(v, k); });
}

void silu_mul(const float* g, const float* u, std::size_t n, float* y) noexcept {
  const ExpVectors k = load_exp_vectors();
  const v128_t zero = wasm_f32x4_splat(0.0f);
  // e^(−|g|) ≤ 1 (exp_f32x4 takes arguments ≤ 0): silu(g) = g/(1 + e^(−g)) for g ≥ 0, g·e^g/(1 + e^g) below.
  auto four = [&](v128_t v, v128_t w) {
    const v128_t e = exp_f32x4(wasm_f32x4_neg(wasm_f32x4_abs(v)), k);
    const v128_t num = wasm_v128_bitselect(v, wasm_f32x4_mul(v, e), wasm_f32x4_ge(v, zero));
    return wasm_f32x4_mul(wasm_f32x4_div(num, wasm_f32x4_add(k.one, e)), w);
  };
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(y + i, four(wasm_v128_load(g + i), wasm_v128_load(u + i)));
  if (i < n) {
    alignas(16) float tg[4] = {}, tu[4] = {};
    for (std::size_t j = i; j < n; ++j) tg[j - i] = g[j], tu[j - i] = u[j];
    wasm_v128_store(tg, four(wasm_v128_load(tg), wasm_v128_load(tu)));
    for (std::size_t j = i; j < n; ++j) y[j] = tg[j - i];
  }
}

std::uint32_t stream_sum(const void* p, std::size_t n) noexcept {
  const auto* b = static_cast<const std::uint8_t*>(p);
  v128_t a0 = wasm_i32x4_splat(0), a1 = a0, a2 = a0, a3 = a0;
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    a0 = wasm_i32x4_add(a0, wasm_v128_load(b + i)), a1 = wasm_i32x4_add(a1, wasm_v128_load(b + i + 16));
    a2 = wasm_i32x4_add(a2, wasm_v128_load(b + i + 32)), a3 = wasm_i32x4_add(a3, wasm_v128_load(b + i + 48));
  }
  for (; i + 16 <= n; i += 16) a0 = wasm_i32x4_add(a0, wasm_v128_load(b + i));
  const v128_t s = wasm_i32x4_add(wasm_i32x4_add(a0, a1), wasm_i32x4_add(a2, a3));
  return std::uint32_t(wasm_i32x4_extract_lane(s, 0)) + std::uint32_t(wasm_i32x4_extract_lane(s, 1)) +
         std::uint32_t(wasm_i32x4_extract_lane(s, 2)) + std::uint32_t(wasm_i32x4_extract_lane(s, 3));
}

}  // namespace attnlab::kernels::simd
