// The model's one source of randomness: SplitMix64 (Steele, Lea & Flood), seeded, so that equal seeds give
// equal initial weights and equal samples on every platform.
#pragma once
#include <cmath>
#include <cstdint>

namespace attnlab::model {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept : state_(seed) {}
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1), 53 random bits.
  double uniform() noexcept { return double(next() >> 11) * 0x1p-53; }
  // Standard normal (Box–Muller, one value per pair of uniforms; u1 is kept away from 0).
  double normal() noexcept {
    const double u1 = (double(next() >> 11) + 0.5) * 0x1p-53, u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  std::uint64_t state_;
};

}  // namespace attnlab::model
