// IEEE binary16 (F16) and bfloat16 (BF16) bit patterns as float32: both widen exactly.
#pragma once
#include <cstdint>
#include <cstring>

namespace attnlab::kernels {

inline float bits_to_float(std::uint32_t bits) noexcept {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// BF16 is the top half of a float32.
inline float bf16_to_float(std::uint16_t h) noexcept { return bits_to_float(std::uint32_t(h) << 16); }

// F16: exponent and mantissa moved into float32's fields (<< 13) read as a float 2¹¹² too small — the exponent
// biases differ by 127 − 15 — so one exact multiply rebiases every finite value, subnormals included (an F16
// subnormal m·2⁻²⁴ becomes the float32 subnormal m·2⁻¹³⁶, then m·2⁻²⁴). Infinity and NaN (exponent 31) are kept.
inline float f16_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16, rest = h & 0x7fffu;
  if (rest >= 0x7c00u) return bits_to_float(sign | 0x7f800000u | ((rest & 0x3ffu) << 13));
  const float f = bits_to_float(rest << 13) * 0x1p112f;
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits_to_float(bits | sign);
}

// Whether a 16-bit pattern is finite in its format (exponent not all ones).
inline bool f16_finite(std::uint16_t h) noexcept { return (h & 0x7c00u) != 0x7c00u; }
inline bool bf16_finite(std::uint16_t h) noexcept { return (h & 0x7f80u) != 0x7f80u; }

}  // namespace attnlab::kernels
