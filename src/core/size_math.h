// Size arithmetic for scratch buffers: products that saturate at SIZE_MAX instead of wrapping (size_t is 32 bits
// in wasm32), so a size too big for memory stays too big and fails to allocate rather than becoming small.
#pragma once
#include <cstddef>
#include <cstdint>

namespace attnlab {

// a·b, or SIZE_MAX when it does not fit.
inline constexpr std::size_t sat_mul(std::size_t a, std::size_t b) noexcept {
  return a != 0 && b > SIZE_MAX / a ? SIZE_MAX : a * b;
}

}  // namespace attnlab
