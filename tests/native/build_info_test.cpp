// Proves which kernels a build runs: the flag, and the arithmetic itself.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "build_info.h"
#include "kernels/kernels.h"
#include "testing.h"

TEST_CASE("build info names the compiled-in kernels", "[build]") {
  const auto info = attnlab::build_info();
  CHECK(std::string(info.version) == ATTNLAB_VERSION);
#ifdef ATTNLAB_FORCE_SCALAR
  CHECK_FALSE(info.simd);
  CHECK(std::string(info.kernels) == "scalar");
#else
  CHECK(info.simd);
  CHECK(std::string(info.kernels) == "simde-wasm-simd128");
#endif
}

TEST_CASE("the active exp is the vector one in SIMD builds and libm in scalar builds", "[build]") {
  // The vector exp and libm's expf round differently somewhere in a dense sweep; the scalar set is libm.
  std::vector<float> x(100000), active(x.size()), libm(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -80.0f + 80.0f * float(i) / float(x.size());
  attnlab::kernels::active::exp_shifted(x.data(), x.size(), 0.0f, 1.0f, active.data());
  for (std::size_t i = 0; i < x.size(); ++i) libm[i] = std::exp(x[i]);
  const bool identical = std::memcmp(active.data(), libm.data(), x.size() * sizeof(float)) == 0;
  CHECK(identical == !attnlab::kernels::kSimd);
}
