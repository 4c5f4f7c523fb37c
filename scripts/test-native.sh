#!/usr/bin/env bash
# Builds and runs the native Catch2 suite through CTest in each configuration that ships or guards:
# SIMD kernels (through SIMDe), forced scalar, and both under ASan + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
PRESETS=${PRESETS:-"native-release native-scalar native-asan native-asan-scalar"}

for preset in $PRESETS; do
  echo "== native: $preset"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$JOBS" --target attnlab_tests
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --preset "$preset" -j "$JOBS"
done
