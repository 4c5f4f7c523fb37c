#!/usr/bin/env bash
# `npm run build` (and `prepack`): builds the SIMD and the scalar wasm module with Emscripten and assembles
# the npm package in dist/. Incremental: when nothing changed it only re-checks and re-copies.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs   # Debian's Emscripten 3.1.6 finds acorn (its JS optimizer) only through this

command -v emcc >/dev/null || { echo "emcc not found: run scripts/bootstrap.sh (Debian package 'emscripten')" >&2; exit 1; }

for preset in wasm-simd wasm-scalar; do
  # Configure once; afterwards `cmake --build` re-runs configure itself when a CMakeLists.txt changes.
  if [[ ! -f build/$preset/CMakeCache.txt ]]; then
    cmake --preset "$preset" >/dev/null
  fi
  cmake --build "build/$preset" -j2 | { grep -vE '^\[ *[0-9]+%\] (Built target|Building|Linking)' || true; }
done

mkdir -p dist
copy() { cmp -s "$1" "$2" || cp "$1" "$2"; }   # unchanged files keep their mtime
for f in src/js/*.js; do copy "$f" "dist/${f#src/js/}"; done
copy src/js/index.d.ts dist/index.d.ts
for kind in simd scalar; do
  for ext in mjs wasm; do copy "build/wasm-$kind/src/wasm/attnlab-$kind.$ext" "dist/attnlab-$kind.$ext"; done
done

echo "dist/ (raw bytes, gzip -9 bytes):"
total() { local raw=0 gz=0 f; for f in "$@"; do raw=$((raw + $(wc -c <"$f"))); gz=$((gz + $(gzip -9c "$f" | wc -c))); done; echo "$raw $gz"; }
for f in dist/*; do
  read -r raw gz < <(total "$f")
  printf '  %-26s %8d %8d\n' "${f#dist/}" "$raw" "$gz"
done
for kind in simd scalar; do
  read -r raw gz < <(total dist/*.js dist/attnlab-$kind.mjs dist/attnlab-$kind.wasm)
  printf '  %-26s %8d %8d\n' "= $kind: wrapper + glue + wasm" "$raw" "$gz"
done
