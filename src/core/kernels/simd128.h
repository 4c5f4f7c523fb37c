// One spelling of the wasm SIMD128 intrinsics for both targets: real wasm SIMD under Emscripten
// (-msimd128), SIMDe's portable implementation natively (SSE on x86-64, NEON on ARM, or plain C).
#pragma once
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#define ATTNLAB_SIMD_NAME "wasm-simd128"
#else
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/wasm/simd128.h>
#define ATTNLAB_SIMD_NAME "simde-wasm-simd128"
#endif
