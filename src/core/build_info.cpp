#include "build_info.h"

#include "kernels/kernels.h"

#ifndef ATTNLAB_VERSION
#define ATTNLAB_VERSION "0.0.0"
#endif

namespace attnlab {

BuildInfo build_info() noexcept { return {ATTNLAB_VERSION, kernels::kSimd, kernels::simd_kernel_name()}; }

}  // namespace attnlab
