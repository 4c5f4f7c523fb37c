// wasm SIMD128 kernels (4 float lanes). Loads and stores are unaligned; every loop has a scalar tail,
// so any size and any leading dimension is valid.
#include <cfloat>
#include <cmath>

#include "exp_simd.h"
#include "kernels.h"
#include "simd128.h"
#include "tanh_simd.h"

namespace attnlab::kernels {

const char* simd_kernel_name() noexcept { return ATTNLAB_SIMD_NAME; }

namespace simd {
namespace {

// Register block of MR rows × 8 columns (2 vectors): 2·MR accumulators live in registers across k.
template <int MR>
inline void block_mx8(std::size_t k, const float* a, std::size_t lda, const float* b, std::size_t ldb,
                      float* c, std::size_t ldc, bool accumulate) noexcept {
  v128_t c0[MR], c1[MR];
  for (int r = 0; r < MR; ++r) c0[r] = c1[r] = wasm_f32x4_splat(0.0f);
  for (std::size_t p = 0; p < k; ++p) {
    const v128_t b0 = wasm_v128_load(b + p * ldb);
    const v128_t b1 = wasm_v128_load(b + p * ldb + 4);
    for (int r = 0; r < MR; ++r) {
      const v128_t ar = wasm_f32x4_splat(a[r * lda + p]);
      c0[r] = wasm_f32x4_add(c0[r], wasm_f32x4_mul(ar, b0));
      c1[r] = wasm_f32x4_add(c1[r], wasm_f32x4_mul(ar, b1));
    }
  }
  for (int r = 0; r < MR; ++r) {
    float* cr = c + r * ldc;
    if (accumulate) {
      c0[r] = wasm_f32x4_add(c0[r], wasm_v128_load(cr));
      c1[r] = wasm_f32x4_add(c1[r], wasm_v128_load(cr + 4));
    }
    wasm_v128_store(cr, c0[r]);
    wasm_v128_store(cr + 4, c1[r]);
  }
}

// MR rows × 4 columns (one vector), for a column remainder of 4..7.
template <int MR>
inline void block_mx4(std::size_t k, const float* a, std::size_t lda, const float* b, std::size_t ldb,
                      float* c, std::size_t ldc, bool accumulate) noexcept {
  v128_t c0[MR];
  for (int r = 0; r < MR; ++r) c0[r] = wasm_f32x4_splat(0.0f);
  for (std::size_t p = 0; p < k; ++p) {
    const v128_t b0 = wasm_v128_load(b + p * ldb);
    for (int r = 0; r < MR; ++r) c0[r] = wasm_f32x4_add(c0[r], wasm_f32x4_mul(wasm_f32x4_splat(a[r * lda + p]), b0));
  }
  for (int r = 0; r < MR; ++r) {
    float* cr = c + r * ldc;
    if (accumulate) c0[r] = wasm_f32x4_add(c0[r], wasm_v128_load(cr));
    wasm_v128_store(cr, c0[r]);
  }
}

// MR rows × 1 column: the last 0..3 columns, same summation order as the vector lanes.
template <int MR>
inline void block_mx1(std::size_t k, const float* a, std::size_t lda, const float* b, std::size_t ldb,
                      float* c, std::size_t ldc, bool accumulate) noexcept {
  for (int r = 0; r < MR; ++r) {
    float s = 0.0f;
    for (std::size_t p = 0; p < k; ++p) s += a[r * lda + p] * b[p * ldb];
    c[r * ldc] = accumulate ? c[r * ldc] + s : s;
  }
}

template <int MR>
inline void row_panel(std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
                      std::size_t ldb, float* c, std::size_t ldc, bool accumulate) noexcept {
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8) block_mx8<MR>(k, a, lda, b + j, ldb, c + j, ldc, accumulate);
  if (j + 4 <= n) {
    block_mx4<MR>(k, a, lda, b + j, ldb, c + j, ldc, accumulate);
    j += 4;
  }
  for (; j < n; ++j) block_mx1<MR>(k, a, lda, b + j, ldb, c + j, ldc, accumulate);
}

// Packed-A micro-kernel: 4 rows × 8 columns. The four broadcasts read one pointer at constant offsets
// and B advances by one pointer add, so the loop is loads and arithmetic, with almost no address math.
// How it is compiled decides its speed (measured: docs/performance.md#kernel-and-engine-choices-measured):
// - specialized on everything but the sizes and kept out of line by clang (noinline): inlined there into the
//   column loop, or with the row count and the accumulate flag as run-time values, it ran slower;
// - one copy per caller: Emscripten's wasm optimizer then inlines each into it, where V8 unrolls the k loop by
//   two. While one copy served two callers (a partial-panel path, now packed_rows) it stayed a call, not unrolled,
//   and ran slower.
template <int NV, bool kAccumulate>
[[gnu::noinline]] void packed_block(std::size_t k, const float* ap, const float* b, std::size_t ldb, float* c,
                                   std::size_t ldc) noexcept {
  v128_t acc[4][NV];
  for (int r = 0; r < 4; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = wasm_f32x4_splat(0.0f);
  for (std::size_t p = 0; p < k; ++p, ap += 4, b += ldb) {
    v128_t bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = wasm_v128_load(b + 4 * v);
    for (int r = 0; r < 4; ++r) {
      const v128_t ar = wasm_v128_load32_splat(ap + r);
      for (int v = 0; v < NV; ++v) acc[r][v] = wasm_f32x4_add(acc[r][v], wasm_f32x4_mul(ar, bv[v]));
    }
  }
  for (int r = 0; r < 4; ++r)
    for (int v = 0; v < NV; ++v) {
      float* cr = c + r * ldc + 4 * v;
      wasm_v128_store(cr, kAccumulate ? wasm_f32x4_add(acc[r][v], wasm_v128_load(cr)) : acc[r][v]);
    }
}

// A last panel of 1–3 rows (a decode step's query heads and their probabilities), only its real rows: MR rows × NV
// vectors, NV as wide as the registers allow for MR (a 4-row block would spend three quarters of its work on zero
// rows for one). Each sum runs as in packed_block (p in sequence, multiply then add, then C), so a row's bits do not
// depend on the rows beside it or on which block width took its columns.
template <int MR, int NV>
[[gnu::noinline]] void packed_rows(std::size_t k, const float* ap, const float* b, std::size_t ldb, float* c,
                                   std::size_t ldc, bool accumulate) noexcept {
  v128_t acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = wasm_f32x4_splat(0.0f);
  for (std::size_t p = 0; p < k; ++p, ap += 4, b += ldb)
    for (int r = 0; r < MR; ++r) {
      const v128_t ar = wasm_v128_load32_splat(ap + r);
      for (int v = 0; v < NV; ++v) acc[r][v] = wasm_f32x4_add(acc[r][v], wasm_f32x4_mul(ar, wasm_v128_load(b + 4 * v)));
    }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) {
      float* cr = c + r * ldc + 4 * v;
      wasm_v128_store(cr, accumulate ? wasm_f32x4_add(acc[r][v], wasm_v128_load(cr)) : acc[r][v]);
    }
}

// The columns of MR packed rows but the last 0–3: blocks of 4·NV, then 8, then 4; returns the first column left.
template <int MR, int NV>
std::size_t packed_rows_columns(std::size_t n, std::size_t k, const float* ap, const float* b, std::size_t ldb,
                                float* c, std::size_t ldc, bool accumulate) noexcept {
  std::size_t j = 0;
  for (; j + 4 * NV <= n; j += 4 * NV) packed_rows<MR, NV>(k, ap, b + j, ldb, c + j, ldc, accumulate);
  if constexpr (NV > 2)
    for (; j + 8 <= n; j += 8) packed_rows<MR, 2>(k, ap, b + j, ldb, c + j, ldc, accumulate);
  if (j + 4 <= n) {
    packed_rows<MR, 1>(k, ap, b + j, ldb, c + j, ldc, accumulate);
    j += 4;
  }
  return j;
}

template <int NV>
inline void packed_block_any(std::size_t k, const float* ap, const float* b, std::size_t ldb, float* c, std::size_t ldc,
                             bool accumulate) noexcept {
  if (accumulate) packed_block<NV, true>(k, ap, b, ldb, c, ldc);
  else packed_block<NV, false>(k, ap, b, ldb, c, ldc);
}

inline float hmax(v128_t v) noexcept {
  v = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}

inline float hsum(v128_t v) noexcept {
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}

}  // namespace

void gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
          std::size_t ldb, float* c, std::size_t ldc, bool accumulate) noexcept {
  std::size_t i = 0;
  for (; i + 4 <= m; i += 4) row_panel<4>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, accumulate);
  switch (m - i) {
    case 3: row_panel<3>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, accumulate); break;
    case 2: row_panel<2>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, accumulate); break;
    case 1: row_panel<1>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, accumulate); break;
    default: break;
  }
}

void pack_rows(std::size_t m, std::size_t k, const float* a, std::size_t lda, float s, float* packed) noexcept {
  const v128_t vs = wasm_f32x4_splat(s);
  for (std::size_t i0 = 0; i0 < m; i0 += kPanelRows) {
    const std::size_t rows = m - i0 < kPanelRows ? m - i0 : kPanelRows;
    const float* r0 = a + i0 * lda;
    std::size_t p = 0;
    if (rows == kPanelRows) {  // 4×4 blocks: load four rows, transpose, store as four interleaved columns
      for (; p + 4 <= k; p += 4, packed += 16) {
        const v128_t x0 = wasm_v128_load(r0 + p), x1 = wasm_v128_load(r0 + lda + p);
        const v128_t x2 = wasm_v128_load(r0 + 2 * lda + p), x3 = wasm_v128_load(r0 + 3 * lda + p);
        const v128_t t0 = wasm_i32x4_shuffle(x0, x1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(x2, x3, 0, 4, 1, 5);
        const v128_t t2 = wasm_i32x4_shuffle(x0, x1, 2, 6, 3, 7), t3 = wasm_i32x4_shuffle(x2, x3, 2, 6, 3, 7);
        wasm_v128_store(packed, wasm_f32x4_mul(wasm_i32x4_shuffle(t0, t1, 0, 1, 4, 5), vs));
        wasm_v128_store(packed + 4, wasm_f32x4_mul(wasm_i32x4_shuffle(t0, t1, 2, 3, 6, 7), vs));
        wasm_v128_store(packed + 8, wasm_f32x4_mul(wasm_i32x4_shuffle(t2, t3, 0, 1, 4, 5), vs));
        wasm_v128_store(packed + 12, wasm_f32x4_mul(wasm_i32x4_shuffle(t2, t3, 2, 3, 6, 7), vs));
      }
    }
    for (; p < k; ++p)
      for (std::size_t r = 0; r < kPanelRows; ++r) *packed++ = r < rows ? r0[r * lda + p] * s : 0.0f;
  }
}

void gemm_packed(std::size_t m, std::size_t n, std::size_t k, const float* a_packed, const float* b, std::size_t ldb,
                 float* c, std::size_t ldc, bool accumulate) noexcept {
  for (std::size_t i0 = 0; i0 < m; i0 += kPanelRows, a_packed += kPanelRows * k) {
    const std::size_t rows = m - i0 < kPanelRows ? m - i0 : kPanelRows;
    float* ci = c + i0 * ldc;
    std::size_t j = 0;
    if (rows == 1) {
      j = packed_rows_columns<1, 8>(n, k, a_packed, b, ldb, ci, ldc, accumulate);
    } else if (rows == 2) {
      j = packed_rows_columns<2, 4>(n, k, a_packed, b, ldb, ci, ldc, accumulate);
    } else if (rows == 3) {
      j = packed_rows_columns<3, 2>(n, k, a_packed, b, ldb, ci, ldc, accumulate);
    } else {
      for (; j + 8 <= n; j += 8) packed_block_any<2>(k, a_packed, b + j, ldb, ci + j, ldc, accumulate);
      if (j + 4 <= n) {
        packed_block_any<1>(k, a_packed, b + j, ldb, ci + j, ldc, accumulate);
        j += 4;
      }
    }
    for (; j < n; ++j)  // last 0–3 columns
      for (std::size_t r = 0; r < rows; ++r) {
        float s = 0.0f;
        for (std::size_t p = 0; p < k; ++p) s += a_packed[p * kPanelRows + r] * b[p * ldb + j];
        ci[r * ldc + j] = accumulate ? ci[r * ldc + j] + s : s;
      }
  }
}

float row_max(const float* x, std::size_t n) noexcept {
  std::size_t i = 0;
  float m = -__builtin_inff();
  if (n >= 8) {
    v128_t m0 = wasm_v128_load(x), m1 = wasm_v128_load(x + 4);
    for (i = 8; i + 8 <= n; i += 8) {
      m0 = wasm_f32x4_pmax(m0, wasm_v128_load(x + i));
      m1 = wasm_f32x4_pmax(m1, wasm_v128_load(x + i + 4));
    }
    m = hmax(wasm_f32x4_pmax(m0, m1));
  }
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

float row_max_checked(const float* x, std::size_t n, bool* invalid) noexcept {
  // NaN and +inf are exactly the values for which x ≤ FLT_MAX is false (-inf passes): one compare per vector.
  const v128_t fmax = wasm_f32x4_splat(FLT_MAX);
  v128_t ok = wasm_i32x4_splat(-1);
  float m = -__builtin_inff();
  std::size_t i = 0;
  if (n >= 8) {
    v128_t m0 = wasm_v128_load(x), m1 = wasm_v128_load(x + 4);
    for (; i + 8 <= n; i += 8) {
      const v128_t a = wasm_v128_load(x + i), b = wasm_v128_load(x + i + 4);
      m0 = wasm_f32x4_pmax(m0, a);
      m1 = wasm_f32x4_pmax(m1, b);
      ok = wasm_v128_and(ok, wasm_v128_and(wasm_f32x4_le(a, fmax), wasm_f32x4_le(b, fmax)));
    }
    m = hmax(wasm_f32x4_pmax(m0, m1));
  }
  bool tail_bad = false;
  for (; i < n; ++i) {
    m = x[i] > m ? x[i] : m;
    tail_bad |= !(x[i] <= FLT_MAX);
  }
  *invalid = tail_bad || !wasm_i32x4_all_true(ok);
  return m;
}

namespace {

// kScaled: multiply by `mul` after the shift; skipped when mul is 1 (attention, plain softmax).
template <bool kScaled>
float exp_shifted_impl(const float* x, std::size_t n, float shift, float mul, float* out) noexcept {
  const ExpVectors k = load_exp_vectors();
  const v128_t vshift = wasm_f32x4_splat(shift), vmul = wasm_f32x4_splat(mul);
  auto arg = [&](v128_t v) {
    const v128_t d = wasm_f32x4_sub(v, vshift);
    return kScaled ? wasm_f32x4_mul(d, vmul) : d;
  };
  // Four independent exps per iteration: one exp is a chain of ~17 dependent operations, so the loop is
  // bound by latency, not by throughput. Four chains in flight ran faster than one, two, three or eight
  // (docs/performance.md#kernel-and-engine-choices-measured): V8 has 16 vector registers, and already at four it
  // keeps some of the constants on the stack.
  v128_t acc = wasm_f32x4_splat(0.0f);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v128_t e[4];
    for (int u = 0; u < 4; ++u) e[u] = exp_f32x4(arg(wasm_v128_load(x + i + 4 * u)), k);
    if (out)
      for (int u = 0; u < 4; ++u) wasm_v128_store(out + i + 4 * u, e[u]);
    acc = wasm_f32x4_add(acc, wasm_f32x4_add(wasm_f32x4_add(e[0], e[1]), wasm_f32x4_add(e[2], e[3])));
  }
  for (; i + 4 <= n; i += 4) {
    const v128_t e = exp_f32x4(arg(wasm_v128_load(x + i)), k);
    if (out) wasm_v128_store(out + i, e);
    acc = wasm_f32x4_add(acc, e);
  }
  float sum = hsum(acc);
  if (i < n) {  // 1–3 left: through the same vector exp, padded with -inf (which gives exactly 0)
    float tail[4] = {-__builtin_inff(), -__builtin_inff(), -__builtin_inff(), -__builtin_inff()}, e[4];
    for (std::size_t t = 0; i + t < n; ++t) tail[t] = x[i + t];
    wasm_v128_store(e, exp_f32x4(arg(wasm_v128_load(tail)), k));
    for (std::size_t t = 0; i + t < n; ++t) {
      if (out) out[i + t] = e[t];
      sum += e[t];
    }
  }
  return sum;
}

}  // namespace

float exp_shifted(const float* x, std::size_t n, float shift, float mul, float* out) noexcept {
  return mul == 1.0f ? exp_shifted_impl<false>(x, n, shift, mul, out) : exp_shifted_impl<true>(x, n, shift, mul, out);
}

void scale_add(float* x, std::size_t n, float s, const float* add) noexcept {
  const v128_t vs = wasm_f32x4_splat(s), vmax = wasm_f32x4_splat(FLT_MAX);
  std::size_t i = 0;
  if (add) {
    for (; i + 4 <= n; i += 4) {
      const v128_t y = wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(x + i), vs), wasm_v128_load(add + i));
      wasm_v128_store(x + i, wasm_f32x4_pmin(y, vmax));
    }
    for (; i < n; ++i) x[i] = std::fmin(x[i] * s + add[i], FLT_MAX);
  } else {
    for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, wasm_f32x4_pmin(wasm_f32x4_mul(wasm_v128_load(x + i), vs), vmax));
    for (; i < n; ++i) x[i] = std::fmin(x[i] * s, FLT_MAX);
  }
}

void scale(float* x, std::size_t n, float s) noexcept {
  const v128_t vs = wasm_f32x4_splat(s);
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, wasm_f32x4_mul(wasm_v128_load(x + i), vs));
  for (; i < n; ++i) x[i] *= s;
}

void soft_cap(float* x, std::size_t n, float s, float cap) noexcept {
  const TanhVectors k = load_tanh_vectors();
  const v128_t vs = wasm_f32x4_splat(s), vinv = wasm_f32x4_splat(1.0f / cap), vcap = wasm_f32x4_splat(cap);
  auto capped = [&](v128_t v) {
    const v128_t y = wasm_f32x4_mul(v, vs);
    return scaled_tanh_f32x4(y, wasm_f32x4_mul(y, vinv), vcap, k);
  };
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, capped(wasm_v128_load(x + i)));
  if (i < n) {  // 1–3 left: through the same vector code, so every element is computed alike
    float tail[4] = {0, 0, 0, 0};
    for (std::size_t t = 0; i + t < n; ++t) tail[t] = x[i + t];
    wasm_v128_store(tail, capped(wasm_v128_load(tail)));
    for (std::size_t t = 0; i + t < n; ++t) x[i + t] = tail[t];
  }
}

void distance_bias(float* x, std::size_t n, float center, float slope) noexcept {
  // |center − i| for four consecutive i at a time: exact while positions stay below 2^24.
  const v128_t vslope = wasm_f32x4_splat(slope), four = wasm_f32x4_splat(4.0f);
  v128_t pos = wasm_f32x4_sub(wasm_f32x4_splat(center), wasm_f32x4_make(0.0f, 1.0f, 2.0f, 3.0f));
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4, pos = wasm_f32x4_sub(pos, four))
    wasm_v128_store(x + i, wasm_f32x4_sub(wasm_v128_load(x + i), wasm_f32x4_mul(vslope, wasm_f32x4_abs(pos))));
  for (; i < n; ++i) x[i] -= slope * std::fabs(center - float(i));
}

void mask_bool(float* x, std::size_t n, const std::uint8_t* keep) noexcept {
  const v128_t ninf = wasm_f32x4_splat(-__builtin_inff()), zero = wasm_i32x4_splat(0);
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    // four bytes widened to four 32-bit lanes; a zero byte selects -inf
    const v128_t k32 = wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(keep + i)));
    wasm_v128_store(x + i, wasm_v128_bitselect(ninf, wasm_v128_load(x + i), wasm_i32x4_eq(k32, zero)));
  }
  for (; i < n; ++i)
    if (!keep[i]) x[i] = -__builtin_inff();
}

float sum_squares(const float* x, std::size_t n) noexcept {
  v128_t a0 = wasm_f32x4_splat(0.0f), a1 = a0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t u = wasm_v128_load(x + i), v = wasm_v128_load(x + i + 4);
    a0 = wasm_f32x4_add(a0, wasm_f32x4_mul(u, u));
    a1 = wasm_f32x4_add(a1, wasm_f32x4_mul(v, v));
  }
  if (i + 4 <= n) {
    const v128_t u = wasm_v128_load(x + i);
    a0 = wasm_f32x4_add(a0, wasm_f32x4_mul(u, u));
    i += 4;
  }
  float s = hsum(wasm_f32x4_add(a0, a1));
  for (; i < n; ++i) s += x[i] * x[i];
  return s;
}

std::size_t first_invalid(const float* x, std::size_t n, bool allow_neg_inf) noexcept {
  // Non-finite ⇔ exponent bits all ones. Scan 16 at a time; on a hit, the scalar scan finds the index.
  const v128_t exp_mask = wasm_i32x4_splat(0x7f800000), neg_inf = wasm_i32x4_splat(int(0xff800000u));
  auto bad = [&](v128_t v) {
    v128_t b = wasm_i32x4_eq(wasm_v128_and(v, exp_mask), exp_mask);
    return allow_neg_inf ? wasm_v128_andnot(b, wasm_i32x4_eq(v, neg_inf)) : b;
  };
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v128_t any = wasm_v128_or(wasm_v128_or(bad(wasm_v128_load(x + i)), bad(wasm_v128_load(x + i + 4))),
                                    wasm_v128_or(bad(wasm_v128_load(x + i + 8)), bad(wasm_v128_load(x + i + 12))));
    if (wasm_v128_any_true(any)) break;
  }
  for (; i < n; ++i)
    if (!std::isfinite(x[i]) && !(allow_neg_inf && x[i] == -__builtin_inff())) return i;
  return n;
}

}  // namespace simd
}  // namespace attnlab::kernels
