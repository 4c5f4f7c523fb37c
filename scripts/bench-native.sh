#!/usr/bin/env bash
# Native benchmark, SIMD (through SIMDe) then scalar kernels: one binary, the set picked per run by ATTNLAB_KERNELS
# (src/core/kernels/dispatch.h). Pass Google Benchmark flags through,
# e.g. scripts/bench-native.sh --benchmark_filter=Attention --benchmark_repetitions=3
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset native-release -DATTNLAB_BUILD_BENCH=ON >/dev/null
cmake --build --preset native-release -j "$(nproc)" --target attnlab_bench >/dev/null
for set in simd scalar; do
  echo "== native-release, $( [ $set = simd ] && echo 'wasm-SIMD128 kernels via SIMDe' || echo 'scalar kernels')"
  ATTNLAB_KERNELS=$set build/native-release/tests/bench/attnlab_bench --benchmark_min_warmup_time=0.1 "$@"
done
