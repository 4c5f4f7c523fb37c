#include "build_info.h"

#include "kernels/kernels.h"

#ifndef ATTNLAB_VERSION
#define ATTNLAB_VERSION "0.0.0"
#endif

namespace attnlab {

// The set that runs: in native builds the process's choice (kernels/dispatch.h), elsewhere the compiled one.
BuildInfo build_info() noexcept {
  const bool simd = kernels::kernel_set() == kernels::KernelSet::simd;
  return {ATTNLAB_VERSION, simd, simd ? kernels::simd_kernel_name() : "scalar"};
}

}  // namespace attnlab
