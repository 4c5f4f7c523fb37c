// Decodes a fuzzer's bytes into sizes, flags and float values. Values are mostly ordinary numbers, with
// a share of the ones that break naive code: ±inf, NaN, 0, huge and tiny magnitudes.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <vector>

namespace fuzz {

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool flag() { return byte() & 1; }
  // 0 … max (0 exercises the size ≥ 1 check).
  std::size_t size(std::size_t max) { return byte() % (max + 1); }
  // Usually 0; sometimes ±1, to make a buffer one element short or long.
  long delta() {
    const std::uint8_t b = byte();
    return b % 16 == 0 ? -1 : b % 16 == 1 ? 1 : 0;
  }
  float value() {
    const std::uint8_t kind = byte();
    const std::int16_t raw = std::int16_t(std::uint16_t(byte()) | std::uint16_t(byte()) << 8);
    switch (kind % 32) {
      case 0: return INFINITY;
      case 1: return -INFINITY;
      case 2: return NAN;
      case 3: return 0.0f;
      case 4: return float(raw) * 1e26f;   // up to ~3e30
      case 5: return float(raw) * 1e-30f;  // tiny, some denormal
      case 6: return float(raw) / 100.0f;  // up to ±327
      default: return float(raw) / 8192.0f;  // ±4: the common case
    }
  }
  std::vector<float> values(std::size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = value();
    return v;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_, pos_ = 0;
};

inline std::size_t adjust(std::size_t n, long delta) { return delta < 0 && n == 0 ? 0 : std::size_t(long(n) + delta); }

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "fuzz check failed: %s\n", what);
  std::abort();
}
#define FUZZ_REQUIRE(cond) \
  do {                     \
    if (!(cond)) ::fuzz::fail(#cond); \
  } while (0)

inline bool all_finite(const std::vector<float>& v, bool allow_neg_inf) {
  for (float x : v)
    if (!std::isfinite(x) && !(allow_neg_inf && x == -INFINITY)) return false;
  return true;
}

}  // namespace fuzz
