// Double-precision references for the engine's ops, each paired with a rigorous first-order bound on
// the float32 result's error, so a test asserts |fast − reference| ≤ bound element by element.
//
// How the bounds are derived (u = 2⁻²⁴ is float32's unit roundoff, γ(n) = n·u / (1 − n·u)):
//  * A dot product or GEMM entry summed in any order over k terms: |error| ≤ γ(k)·Σ|aᵢ·bᵢ|.
//  * softmax: z = (x − max)·μ is rounded twice (subtract, multiply): |Δz| ≤ 2u·|z| (+ the absolute error the
//    logits already carry). exp adds a relative error ≤ E (the kernel's spec, see tolerance below), which
//    for e^(z+Δz) means a relative error ≤ |Δz| + E. The sum of n such terms is off by ≤ γ(n) relative plus
//    the p-weighted mean of the terms' errors; the final 1/sum and product round twice more. So
//      |p̃ᵢ − pᵢ| ≤ pᵢ·(|Δzᵢ| + E + Σⱼ pⱼ(|Δzⱼ| + E) + γ(n) + 2u) + 2⁻¹²⁶
//    where 2⁻¹²⁶ covers terms below e^−87.3 that the vector exp flushes to zero (the sum is ≥ 1).
//  * attention: score errors are |Δsᵢⱼ| ≤ scale·(γ(dk)·Σ|q||k| + propagated input errors) + 2u·|sᵢⱼ|
//    (scale multiply, mask add; γ(dk + 1) on the streaming path, which scales q before the dot product);
//    they enter the weights as above. The streaming path also rescales each
//    partial sum once per later key tile by exp(m_old − m_new) (one exp and one multiply: ≤ 3u each).
//    The output Σⱼ wⱼ·vⱼ then adds γ(nk + 2) on Σ|wⱼ·vⱼ| (sum, plus the final normalization).
//  * Underflow: a product below float32's normal range rounds with an absolute error up to 2⁻¹⁵⁰ instead
//    of a relative one, so every sum of k products gets k·2⁻¹⁴⁹ more (a product of two 1e−26 is already 0).
// The second-order terms (products of two of these) are below 1e−12 relative for every size tested and
// are covered by adding ε² to each relative bound. Where the first-order relative bound of a probability
// reaches 1 (logits so large that their own rounding moves them by more than 1), the bound is 1.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace ref {

constexpr double u = 0x1p-24;
constexpr double flush_floor = 0x1p-126;
constexpr double underflow = 0x1p-149;  // per product, absolute (see above)
inline double gamma(double n) { return n * u / (1.0 - n * u); }

// Relative error spec of the exp used by the build's kernels (measured and enforced by exp_test.cpp).
// Either build's exp is within 1 ulp: libm expf (scalar), the own vector exp (SIMD; measured 0.69).
constexpr double exp_rel_error = 2 * u;

struct Bounded {
  std::vector<double> value;  // reference result
  std::vector<double> bound;  // max |float32 result − value| allowed
};

inline Bounded gemm(const std::vector<float>& a, const std::vector<float>& b, std::size_t m, std::size_t n, std::size_t k) {
  Bounded r{std::vector<double>(m * n), std::vector<double>(m * n)};
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0, sa = 0;
      for (std::size_t p = 0; p < k; ++p) {
        const double t = double(a[i * k + p]) * double(b[p * n + j]);
        s += t, sa += std::fabs(t);
      }
      r.value[i * n + j] = s;
      r.bound[i * n + j] = gamma(double(k)) * sa + double(k) * underflow;
    }
  return r;
}

// Softmax of rows of `x` (values already carrying absolute errors `dx`, zero for exact inputs), times mul.
inline Bounded softmax_rows(const std::vector<double>& x, const std::vector<double>& dx, std::size_t cols, double mul,
                            bool log, double extra_rel = 0.0) {
  const std::size_t rows = x.size() / cols;
  Bounded r{std::vector<double>(x.size()), std::vector<double>(x.size())};
  const double inf = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < rows; ++i) {
    const double* xr = &x[i * cols];
    const double m = *std::max_element(xr, xr + cols);
    if (m == -inf) {
      for (std::size_t j = 0; j < cols; ++j) r.value[i * cols + j] = log ? -inf : 0.0, r.bound[i * cols + j] = 0.0;
      continue;
    }
    double sum = 0;
    for (std::size_t j = 0; j < cols; ++j) sum += std::exp((xr[j] - m) * mul);
    std::vector<double> dz(cols);
    double mean_err = 0;
    const double dmax = dx[i * cols + std::size_t(std::max_element(xr, xr + cols) - xr)];  // the shift's own error
    for (std::size_t j = 0; j < cols; ++j) {
      if (xr[j] == -inf) continue;
      const double z = (xr[j] - m) * mul;
      dz[j] = 2 * u * std::fabs(z) + (dx[i * cols + j] + dmax) * mul;
      mean_err += std::exp(z) / sum * (dz[j] + exp_rel_error);
    }
    const double sum_err = mean_err + gamma(double(cols)) + extra_rel;
    for (std::size_t j = 0; j < cols; ++j) {
      const std::size_t at = i * cols + j;
      if (xr[j] == -inf) {
        r.value[at] = log ? -inf : 0.0, r.bound[at] = 0.0;
        continue;
      }
      const double z = (xr[j] - m) * mul;
      if (log) {
        const double v = z - std::log(sum);
        r.value[at] = v;
        // z's error, the log-sum's relative error (≈ absolute error of its log), and three roundings.
        r.bound[at] = dz[j] + sum_err + u * (std::fabs(std::log(sum)) + 2 * std::fabs(v) + std::fabs(z)) + sum_err * sum_err;
      } else {
        const double p = std::exp(z) / sum;
        const double rel = dz[j] + exp_rel_error + sum_err + 2 * u + extra_rel;
        r.value[at] = p;
        // e^ε − 1 ≤ ε + ε² while ε < 1. Beyond that the row is ill-conditioned: the inputs' own float32
        // errors move the logits by more than 1 (huge projections), and any probability in [0, 1] is an honest
        // float32 answer, so the bound is 1.
        r.bound[at] = rel < 1.0 ? p * (rel + rel * rel) + flush_floor : 1.0;
      }
    }
  }
  return r;
}

struct AttentionRef {
  Bounded raw, scores, weights, out;
};

// q/k/v carry absolute errors dq/dk/dv (zero when they are exact inputs; projection errors in multi-head).
inline AttentionRef attention(const std::vector<double>& q, const std::vector<double>& dq, const std::vector<double>& k,
                              const std::vector<double>& dk_err, const std::vector<double>& v,
                              const std::vector<double>& dv_err, std::size_t nq, std::size_t nk, std::size_t dk,
                              std::size_t dv, double scale, bool causal, const std::vector<float>* mask, bool streaming) {
  const double inf = std::numeric_limits<double>::infinity();
  AttentionRef r;
  r.raw = {std::vector<double>(nq * nk), std::vector<double>(nq * nk)};
  r.scores = r.raw;
  for (std::size_t i = 0; i < nq; ++i)
    for (std::size_t j = 0; j < nk; ++j) {
      double s = 0, sa = 0, prop = 0, ksum = 0;
      for (std::size_t d = 0; d < dk; ++d) {
        const double qv = q[i * dk + d], kv = k[j * dk + d];
        s += qv * kv, sa += std::fabs(qv * kv), ksum += std::fabs(kv);
        prop += dq[i * dk + d] * std::fabs(kv) + std::fabs(qv) * dk_err[j * dk + d];
      }
      const std::size_t at = i * nk + j;
      r.raw.value[at] = s;
      r.raw.bound[at] = gamma(double(dk)) * sa + prop + double(dk) * underflow;
      // Materialized: (q·k)·scale, so the dot product's underflow is scaled too. Streaming: (q·scale)·k,
      // one more rounding per term, and underflow both in q·scale (times |k|) and in each product.
      // (The streaming path falls back to the materialized order when q·scale could overflow: take both.)
      const double materialized_err = scale * (gamma(double(dk)) * sa + prop + double(dk) * underflow);
      const double scaled_err =
          streaming ? std::fmax(materialized_err, scale * (gamma(double(dk + 1)) * sa + prop) + underflow * (double(dk) + ksum))
                    : materialized_err;
      const bool hidden = causal && (i + nk < nq || j > i + nk - nq);
      const double add = mask ? double((*mask)[at]) : 0.0;
      const double sc = hidden || add == -inf ? -inf : s * scale + add;
      r.scores.value[at] = sc;
      r.scores.bound[at] =
          sc == -inf ? 0.0 : scaled_err + 2 * u * (std::fabs(s * scale) + std::fabs(sc)) + 2 * underflow;
    }
  const double tiles = std::ceil(double(nk) / 64.0);
  r.weights = softmax_rows(r.scores.value, r.scores.bound, nk, 1.0, false, streaming ? tiles * 6 * u : 0.0);
  r.out = {std::vector<double>(nq * dv), std::vector<double>(nq * dv)};
  for (std::size_t i = 0; i < nq; ++i)
    for (std::size_t c = 0; c < dv; ++c) {
      double o = 0, err = 0;
      for (std::size_t j = 0; j < nk; ++j) {
        const double w = r.weights.value[i * nk + j], vv = v[j * dv + c];
        o += w * vv;
        err += r.weights.bound[i * nk + j] * std::fabs(vv) + w * (std::fabs(vv) * gamma(double(nk + 2)) + dv_err[j * dv + c]);
      }
      r.out.value[i * dv + c] = o;
      r.out.bound[i * dv + c] = err + double(nk + 1) * underflow;
    }
  return r;
}

// A float32 result may be ±inf where the exact value lies beyond float32's range (it rounds there).
inline bool overflows_float(double value, double bound) {
  return std::fabs(value) - bound > 3.4028234663852886e38;
}

// |got − want| ≤ bound, with infinities matched exactly or by overflow.
inline bool within(float got, double want, double bound) {
  if (std::isinf(want) || std::isinf(got)) return double(got) == want || (std::isinf(got) && overflows_float(want, bound) && (got > 0) == (want > 0));
  return std::fabs(double(got) - want) <= bound;
}

// Columns [c0, c0 + w) of a row-major [rows × cols] matrix (one head's slice of a projection).
inline std::vector<double> columns(const std::vector<double>& a, std::size_t rows, std::size_t cols, std::size_t c0,
                                   std::size_t w) {
  std::vector<double> r(rows * w);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < w; ++j) r[i * w + j] = a[i * cols + c0 + j];
  return r;
}

inline std::vector<double> widen(const std::vector<float>& x) { return {x.begin(), x.end()}; }
inline std::vector<double> zeros(std::size_t n) { return std::vector<double>(n, 0.0); }

}  // namespace ref
