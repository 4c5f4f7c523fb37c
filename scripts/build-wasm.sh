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
# One glue for both modules: the two links produce the same JS but for the default file name, which is never
# used (the wrapper compiles the module and hands it over through instantiateWasm). Checked, since the glue's
# import and export names must match the module it runs.
same_glue() {
  sed 's/attnlab-scalar\.wasm/attnlab-simd.wasm/g' "$2" | cmp -s "$1" - \
    || { echo "build-wasm: $1 and $2 differ beyond the .wasm name; one glue cannot serve both modules" >&2; exit 1; }
}
same_glue build/wasm-simd/src/wasm/attnlab-simd.mjs build/wasm-scalar/src/wasm/attnlab-scalar.mjs
copy build/wasm-simd/src/wasm/attnlab-simd.mjs dist/attnlab.mjs
rm -f dist/attnlab-simd.mjs dist/attnlab-scalar.mjs   # per-module glue of earlier builds
for kind in simd scalar; do
  copy "build/wasm-$kind/src/wasm/attnlab-$kind.wasm" "dist/attnlab-$kind.wasm"
done
bash scripts/inline-wasm.sh dist   # the same modules as base64 in ES modules, for attnlab/inline
bash scripts/bundle-worker.sh dist   # the workers' script of init({ threads }), as a string

echo "dist/ (raw bytes, gzip -9 bytes):"
total() { local raw=0 gz=0 f; for f in "$@"; do raw=$((raw + $(wc -c <"$f"))); gz=$((gz + $(gzip -9c "$f" | wc -c))); done; echo "$raw $gz"; }
for f in dist/*; do
  read -r raw gz < <(total "$f")
  printf '  %-34s %8d %8d\n' "${f#dist/}" "$raw" "$gz"
done
# What an app loads, by entry: the wrapper, the glue and the chosen .wasm (attnlab), or the wrapper, the glue
# and both modules as base64 text (attnlab/inline).
wrapper=()
for f in src/js/*.js; do case $f in */index.js|*/inline.js|*/worker.js) ;; *) wrapper+=("dist/${f#src/js/}") ;; esac; done
for kind in simd scalar; do
  read -r raw gz < <(total dist/index.js "${wrapper[@]}" dist/attnlab.mjs dist/attnlab-$kind.wasm)
  printf '  %-34s %8d %8d\n' "= attnlab, $kind: js + glue + wasm" "$raw" "$gz"
done
read -r raw gz < <(total dist/inline.js "${wrapper[@]}" dist/attnlab.mjs dist/attnlab-*.inline.js)
printf '  %-34s %8d %8d\n' "= attnlab/inline: js + glue + both" "$raw" "$gz"
