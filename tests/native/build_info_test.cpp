// Proves which kernels a run uses: the report, the choice the run asked for, and the arithmetic itself.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "build_info.h"
#include "kernels/kernels.h"
#include "testing.h"

namespace {
#ifdef ATTNLAB_FORCE_SCALAR
constexpr const char* kSimdName = "scalar";  // no SIMD set in this build
#else
constexpr const char* kSimdName = "simde-wasm-simd128";
#endif
}  // namespace

TEST_CASE("build info names the kernel set that runs, the one the run asked for", "[build]") {
  const auto info = attnlab::build_info();
  CHECK(std::string(info.version) == ATTNLAB_VERSION);
  const bool simd = attnlab::kernels::kernel_set() == attnlab::kernels::KernelSet::simd;
  CHECK(info.simd == simd);
  CHECK(std::string(info.kernels) == (simd ? kSimdName : "scalar"));
#ifdef ATTNLAB_FORCE_SCALAR
  CHECK_FALSE(info.simd);
#endif
  // CTest names the set (main.cpp's --kernels); the report must follow it.
  if (!testing::requested_kernels.empty()) {
    INFO("--kernels " << testing::requested_kernels);
    CHECK(info.simd == (testing::requested_kernels == "simd"));
    CHECK(std::string(info.kernels) == (testing::requested_kernels == "simd" ? kSimdName : "scalar"));
  }
}

TEST_CASE("the active exp is the vector one when the SIMD set runs and libm when the scalar set runs", "[build]") {
  // The vector exp and libm's expf round differently somewhere in a dense sweep; the scalar set is libm. So the
  // arithmetic itself tells which set ran, and build info must say the same.
  std::vector<float> x(100000), active(x.size()), libm(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -80.0f + 80.0f * float(i) / float(x.size());
  attnlab::kernels::active::exp_shifted(x.data(), x.size(), 0.0f, 1.0f, active.data());
  for (std::size_t i = 0; i < x.size(); ++i) libm[i] = std::exp(x[i]);
  const bool identical = std::memcmp(active.data(), libm.data(), x.size() * sizeof(float)) == 0;
  CHECK(identical == !attnlab::build_info().simd);
}
