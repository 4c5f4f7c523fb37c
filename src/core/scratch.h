// Scratch memory that reports failure instead of throwing or aborting (the wasm build has no exceptions):
// ops allocate everything they need before writing any output, so running out of memory writes nothing.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <cstdint>
#include <cstring>

#include "size_math.h"

namespace attnlab {

class Scratch {
 public:
  Scratch() = default;
  explicit Scratch(std::size_t count) noexcept
      : data_(count && count <= SIZE_MAX / sizeof(float) ? static_cast<float*>(std::malloc(count * sizeof(float)))
                                                         : nullptr),
        size_(data_ ? count : 0) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  Scratch(Scratch&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr, o.size_ = 0; }
  Scratch& operator=(Scratch&& o) noexcept {
    if (this != &o) std::free(data_), data_ = o.data_, size_ = o.size_, o.data_ = nullptr, o.size_ = 0;
    return *this;
  }
  ~Scratch() { std::free(data_); }

  // True when `count` floats were requested and obtained (a zero-size request is always fine).
  [[nodiscard]] bool ok_for(std::size_t count) const noexcept { return count == 0 || data_ != nullptr; }
  float* data() noexcept { return data_; }
  const float* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

 private:
  float* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace attnlab
