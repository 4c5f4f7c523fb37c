#!/usr/bin/env bash
# Builds and runs the native Catch2 suite through CTest: a release build (GCC) and an ASan + UBSan build (clang, whose
# core also serves the libFuzzer harnesses: scripts/fuzz.sh), each holding
# both kernel sets (SIMD through SIMDe, and the scalar reference); CTest runs every test case once per set from
# the same binary ("simd/…", "scalar/…": tests/native/CMakeLists.txt).
# `scripts/test-native.sh build` only builds, `scripts/test-native.sh test` only runs (npm test times them apart);
# PRESETS="native-release" limits it to one build.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
PRESETS=${PRESETS:-"native-release native-asan"}
what=${1:-all}

for preset in $PRESETS; do
  if [[ $what != test ]]; then
    echo "== native: $preset: build"
    bash scripts/configure-preset.sh "$preset"
    cmake --build --preset "$preset" -j "$JOBS" --target attnlab_tests \
      | { grep -vE '^\[ *[0-9]+%\] (Built target|Building|Linking)' || true; }
  fi
  if [[ $what != build ]]; then
    echo "== native: $preset: CTest"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --preset "$preset" -j "$JOBS"
  fi
done
