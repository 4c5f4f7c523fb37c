// The double-precision functions RoPE's angle tables need (ln, exp, sin and cos together), written out because
// the wasm build would otherwise link musl's pow, sin and cos: 9.5 KB of the gzipped module, most of it their
// lookup tables. Short polynomials suffice here: the arguments are bounded (rope.cpp: base ≥ 1, angles
// 0 ≤ θ < 2³¹), and the tables are rounded to float32 afterwards. Errors, in units of 2⁻⁵³ (tests: rope_test.cpp
// measures each against long double and checks these bounds):
//   log(v), v ≥ 1:          ≤ 2·2⁻⁵³·log v + 2⁻⁵³
//   exp(x), x ≤ 0:          ≤ 3·2⁻⁵³ relative
//   sincos(θ), 0 ≤ θ < 2³¹: ≤ 4·2⁻⁵³ absolute (reduction by π/2 in three parts, then degree-17/18 Taylor)
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace attnlab::rope_math {

// 1/k!, correctly rounded (k! is exact in double up to 18!).
constexpr double inv_factorial(int k) {
  double f = 1;
  for (int i = 2; i <= k; ++i) f *= i;
  return 1.0 / f;
}

// ln 2 in two parts (fdlibm's): the first has 32 significant bits, so k·kLn2Hi is exact for |k| < 2²¹.
inline constexpr double kLn2Hi = 0x1.62e42feep-1, kLn2Lo = 0x1.a39ef35793c76p-33;

// Natural log of a finite v ≥ 1: v = m·2ᵉ with m in [√½, √2), ln v = e·ln 2 + 2·atanh(s), s = (m − 1)/(m + 1),
// |s| ≤ 0.172, so the atanh series to s²¹ leaves < 2⁻⁶⁰ out.
inline double log(double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  int e = int(bits >> 52) - 1023;
  bits = (bits & ((std::uint64_t(1) << 52) - 1)) | (std::uint64_t(1023) << 52);
  double m;
  std::memcpy(&m, &bits, sizeof m);  // v's significand, in [1, 2)
  if (m > 1.4142135623730951) m *= 0.5, ++e;
  const double s = (m - 1) / (m + 1), s2 = s * s;
  double p = 1.0 / 21;
  for (int k = 19; k >= 1; k -= 2) p = p * s2 + 1.0 / k;
  return e * kLn2Hi + (e * kLn2Lo + 2 * s * p);
}

// e^x for −745 < x ≤ 0: x = k·ln 2 + r, |r| ≤ 0.347, e^r by Taylor to r¹³ (the rest < 5e−18), times 2ᵏ.
inline double exp(double x) {
  const double k = std::nearbyint(x * 1.4426950408889634);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double p = inv_factorial(13);
  p = p * r + inv_factorial(12), p = p * r + inv_factorial(11), p = p * r + inv_factorial(10);
  p = p * r + inv_factorial(9), p = p * r + inv_factorial(8), p = p * r + inv_factorial(7);
  p = p * r + inv_factorial(6), p = p * r + inv_factorial(5), p = p * r + inv_factorial(4);
  p = p * r + inv_factorial(3), p = p * r + 0.5, p = p * r + 1, p = p * r + 1;
  return std::ldexp(p, int(k));
}

struct SinCos {
  double sin, cos;
};

// sin θ and cos θ for 0 ≤ θ < 2³¹. θ = n·π/2 + r with π/2 = P1 + P2 + P3: P1 and P2 have 22 significant bits,
// so n·P1 and n·P2 are exact for n < 2³¹ and θ − n·P1 is exact (Sterbenz); r is then within 2·2⁻⁵³ of its
// true value, and |r| ≤ π/4 (a hair more when n rounds at a boundary: the polynomials hold to 0.8).
inline SinCos sincos(double theta) {
  constexpr double P1 = 0x1.921fbp+0, P2 = 0x1.5110bp-22, P3 = 0x1.18469898cc517p-44;
  const double n = std::nearbyint(theta * 0x1.45f306dc9c883p-1);  // θ·2/π
  const double r = ((theta - n * P1) - n * P2) - n * P3, r2 = r * r;
  // sin r = r·Σ (−r²)ᵏ/(2k+1)!, to r¹⁷; cos r = Σ (−r²)ᵏ/(2k)!, to r¹⁸ (the rest < 2⁻⁵⁸ at |r| = 0.8).
  double s = -inv_factorial(17);
  s = s * r2 + inv_factorial(15), s = s * r2 - inv_factorial(13), s = s * r2 + inv_factorial(11);
  s = s * r2 - inv_factorial(9), s = s * r2 + inv_factorial(7), s = s * r2 - inv_factorial(5);
  s = s * r2 + inv_factorial(3);
  const double sin_r = r - r * r2 * s;
  double c = inv_factorial(18);
  c = c * r2 - inv_factorial(16), c = c * r2 + inv_factorial(14), c = c * r2 - inv_factorial(12);
  c = c * r2 + inv_factorial(10), c = c * r2 - inv_factorial(8), c = c * r2 + inv_factorial(6);
  c = c * r2 - inv_factorial(4);
  const double cos_r = 1 - r2 * (0.5 + r2 * c);
  switch (std::int64_t(n) & 3) {
    case 0: return {sin_r, cos_r};
    case 1: return {cos_r, -sin_r};
    case 2: return {-sin_r, -cos_r};
    default: return {-cos_r, sin_r};
  }
}

}  // namespace attnlab::rope_math
