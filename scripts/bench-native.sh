#!/usr/bin/env bash
# Native benchmark, SIMD (through SIMDe) then scalar kernels. Pass Google Benchmark flags through,
# e.g. scripts/bench-native.sh --benchmark_filter=Attention --benchmark_repetitions=3
set -euo pipefail
cd "$(dirname "$0")/.."
for preset in native-release native-scalar; do
  cmake --preset "$preset" -DATTNLAB_BUILD_BENCH=ON >/dev/null
  cmake --build --preset "$preset" -j "$(nproc)" --target attnlab_bench >/dev/null
  echo "== $preset ($( [ "$preset" = native-release ] && echo 'wasm-SIMD128 kernels via SIMDe' || echo 'scalar kernels'))"
  "build/$preset/tests/bench/attnlab_bench" --benchmark_min_warmup_time=0.1 "$@"
done
