// The language models' matrix-vector kernels (src/core/kernels/lm_kernels.h) as a bare wasm module, for
// bench/lm-kernels.mjs: what each weight format's loop costs alone, with nothing of a decode step around it.
// The same objects as the package's modules (attnlab_core of this preset), called the way lm/linear.cpp calls them.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "kernels/lm_kernels.h"

namespace lmk = attnlab::kernels::lm_active;

extern "C" {

// 64-byte aligned, like the engine's weight storage; null when memory cannot grow.
void* bench_alloc(std::size_t bytes) { return std::aligned_alloc(64, (bytes + 63) & ~std::size_t(63)); }

void bench_f32(const float* w, std::size_t rows, std::size_t cols, const float* x, float* y) {
  lmk::matvec_f32(w, rows, cols, x, y, false);
}
// x already times kF16ScaleX, as linear() passes it whenever every |x| < kF16ScaleXLimit.
void bench_f16(const std::uint16_t* w, std::size_t rows, std::size_t cols, const float* xs, float* y) {
  lmk::matvec_f16_scaled(w, rows, cols, xs, y, false);
}
void bench_bf16(const std::uint16_t* w, std::size_t rows, std::size_t cols, const float* x, float* y) {
  lmk::matvec_bf16(w, rows, cols, x, y, false);
}
}
