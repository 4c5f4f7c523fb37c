// RoPE's reference: the rotation in long double with exact angles, and a derived bound on the engine's error.
//
// With computed tables the engine rotates pair (a, b) by float entries ĉ, ŝ with |ĉ − cos θ| ≤ u·|cos θ| + η and
// the same for ŝ (rope.h: one float rounding after double arithmetic whose error is η = (4·ln base + 5)·2⁻⁵³·θ +
// 16·2⁻⁵³). The kernel then computes a·ĉ − b·ŝ (and b·ĉ + a·ŝ) with three roundings: ≤ 2u(1 + u)(|a·ĉ| + |b·ŝ|).
// Together, to first order in u and η:
//   |out − exact| ≤ 3u·(|a·c| + |b·s|) + η·(|a| + |b|)      (+ u², u·η terms: the factor (1 + 4u) covers them)
// With given tables (ĉ = c exactly): 2u(1 + u)(|a·c| + |b·s|). A product below float32's normal range rounds with
// an absolute error up to 2⁻¹⁵⁰ instead: + 2⁻¹⁴⁸ for the two products. Entries past rotary_dim are copied: exact.
// The reference's own long double rounding (~1e−19 relative) is far below every bound.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "reference.h"

namespace ref {

// Exact-as-long-double angle of pair i at position p: p·base^(−2i/rotary_dim).
inline long double rope_angle(std::int64_t p, std::size_t i, std::size_t rotary_dim, double base) {
  return static_cast<long double>(p) * std::pow(static_cast<long double>(base), -2.0L * static_cast<long double>(i) / static_cast<long double>(rotary_dim));
}

// The engine's table error beyond float rounding (rope.h), for an angle θ.
inline double rope_eta(long double theta, double base) {
  return (4 * std::log(base) + 5) * 0x1p-53 * double(std::fabs(theta)) + 16 * 0x1p-53;
}

struct RopeCase {
  const std::vector<float>* x = nullptr;
  std::size_t batch = 1, heads = 1, seq = 1, dk = 0, rotary_dim = 0;
  bool bshd = false, interleaved = false, inverse = false;
  std::function<std::int64_t(std::size_t b, std::size_t s)> position;  // item b, token s
  double base = 10000.0;
  const std::vector<float>* cos = nullptr;  // given tables [max_position × rotary_dim/2], or null
  const std::vector<float>* sin = nullptr;
};

inline std::size_t rope_index(const RopeCase& c, std::size_t b, std::size_t h, std::size_t s) {
  return c.bshd ? ((b * c.seq + s) * c.heads + h) * c.dk : ((b * c.heads + h) * c.seq + s) * c.dk;
}

inline Bounded rope(const RopeCase& c) {
  const std::vector<float>& x = *c.x;
  const std::size_t r = c.rotary_dim ? c.rotary_dim : c.dk, half = r / 2;
  Bounded out{std::vector<double>(x.size()), std::vector<double>(x.size(), 0.0)};
  for (std::size_t b = 0; b < c.batch; ++b)
    for (std::size_t s = 0; s < c.seq; ++s) {
      const std::int64_t p = c.position(b, s);
      for (std::size_t h = 0; h < c.heads; ++h) {
        const std::size_t at = rope_index(c, b, h, s);
        for (std::size_t d = r; d < c.dk; ++d) out.value[at + d] = x[at + d];
        for (std::size_t i = 0; i < half; ++i) {
          long double cs, sn;
          double eta = 0, rounding = 2 * u * (1 + u);
          if (c.cos) {
            cs = (*c.cos)[std::size_t(p) * half + i], sn = (*c.sin)[std::size_t(p) * half + i];
          } else {
            const long double theta = rope_angle(p, i, r, c.base);
            cs = std::cos(theta), sn = std::sin(theta);
            eta = rope_eta(theta, c.base), rounding = 3 * u * (1 + 4 * u);
          }
          if (c.inverse) sn = -sn;
          const std::size_t ia = c.interleaved ? 2 * i : i, ib = c.interleaved ? 2 * i + 1 : i + half;
          const long double a = x[at + ia], bb = x[at + ib];
          out.value[at + ia] = double(a * cs - bb * sn);
          out.value[at + ib] = double(bb * cs + a * sn);
          const double mag = double(std::fabs(a * cs) + std::fabs(bb * sn)), mag_b = double(std::fabs(bb * cs) + std::fabs(a * sn));
          const double e = eta * double(std::fabs(a) + std::fabs(bb)) * (1 + 4 * u) + 0x1p-148;
          out.bound[at + ia] = rounding * mag + e;
          out.bound[at + ib] = rounding * mag_b + e;
        }
      }
    }
  return out;
}

}  // namespace ref
