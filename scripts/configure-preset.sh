#!/usr/bin/env bash
# `scripts/configure-preset.sh PRESET`: `cmake --preset PRESET`, quietly, with one repair: in a build folder that was
# configured with another compiler (native-asan was GCC's before it moved to clang), CMake drops the cache and
# configures again without the preset's variables — no sanitizers, no fuzzers, no build type — so it runs a second
# time to set them.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(cmake --preset "$1" 2>&1) || { echo "$out" >&2; exit 1; }
if grep -q 'require your cache to be deleted' <<<"$out"; then
  echo "($1: configured again with the preset's variables: the folder had been configured with another compiler)"
  cmake --preset "$1" >/dev/null
fi
