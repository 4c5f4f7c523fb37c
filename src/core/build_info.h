// What this build of the engine contains: lets tests and the JS package prove the SIMD path is compiled in.
#pragma once

namespace attnlab {

struct BuildInfo {
  const char* version;  // semver of the engine
  bool simd;            // true when the wasm-SIMD128 kernels (native: through SIMDe) are the ones that run
  const char* kernels;  // the set that runs: "wasm-simd128", "simde-wasm-simd128" or "scalar"
                        // (native builds hold both sets and run the one the process chose: kernels/dispatch.h)
};

BuildInfo build_info() noexcept;

}  // namespace attnlab
