// Catch2's main, plus --kernels scalar|simd: the kernel set this run tests (kernels/dispatch.h). CTest runs
// every test case once per set from this one binary (tests/native/CMakeLists.txt).
#define CATCH_CONFIG_RUNNER
#include <string>

#include "kernels/dispatch.h"
#include "testing.h"

int main(int argc, char* argv[]) {
  namespace k = attnlab::kernels;
  Catch::Session session;
  std::string kernels;
  session.cli(session.cli() | Catch::clara::Opt(kernels, "scalar|simd")["--kernels"](
                                  "the kernel set to test (default: ATTNLAB_KERNELS, else simd)"));
  if (const int rc = session.applyCommandLine(argc, argv)) return rc;
  if (!kernels.empty()) {
    const bool known = kernels == "scalar" || kernels == "simd";
    if (!known || !k::use_kernel_set(kernels == "scalar" ? k::KernelSet::scalar : k::KernelSet::simd)) {
      Catch::cerr() << "--kernels " << kernels << ": this build has no such kernel set\n";
      return 2;
    }
  }
  testing::requested_kernels = kernels;
  return session.run();
}
