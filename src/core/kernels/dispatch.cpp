// The native builds' choice of kernel set from the environment (dispatch.h).
#include "dispatch.h"

#if ATTNLAB_KERNEL_SETS_BOTH
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace attnlab::kernels::detail {

KernelSet read_kernel_set() noexcept {
  const char* v = std::getenv("ATTNLAB_KERNELS");
  KernelSet s = KernelSet::simd;
  if (v && std::strcmp(v, "scalar") == 0) {
    s = KernelSet::scalar;
  } else if (v && *v && std::strcmp(v, "simd") != 0) {
    // A misspelt choice must not quietly test the other set.
    std::fprintf(stderr, "attnlab: ATTNLAB_KERNELS is '%s'; expected 'scalar' or 'simd'\n", v);
    std::abort();
  }
  signed char unset = -1;  // use_kernel_set() may have won the race: its choice stands
  kernel_set.compare_exchange_strong(unset, static_cast<signed char>(s), std::memory_order_relaxed);
  return KernelSet(kernel_set.load(std::memory_order_relaxed));
}

}  // namespace attnlab::kernels::detail
#endif
