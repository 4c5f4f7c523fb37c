#!/usr/bin/env bash
# Debug build of the npm package for the JS suite: the four wasm modules linked again from the release builds'
# objects with Emscripten's -sASSERTIONS=2 -sSAFE_HEAP=1 -sSTACK_OVERFLOW_CHECK=2 (targets attnlab_wasm_debug and
# attnlab_wasm_gpt_debug of the wasm-simd and wasm-scalar builds: src/wasm/CMakeLists.txt; every check is applied
# when linking, so nothing is compiled twice), assembled in dist-debug/ with the same file names as dist/, so the
# unchanged src/js/index.js loads them. Never shipped; scripts/test-js-debug.sh runs the tests against it
# (ATTNLAB_DIST=dist-debug).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/emscripten-env.sh   # NODE_PATH, EMSDK_PYTHON, emcc present

for preset in wasm-simd wasm-scalar; do
  if [[ ! -f build/$preset/CMakeCache.txt ]]; then
    cmake --preset "$preset" >/dev/null
  fi
  cmake --build "build/$preset" -j2 --target attnlab_wasm_debug attnlab_wasm_gpt_debug \
    | { grep -vE '^\[ *[0-9]+%\] (Built target|Building|Linking)' || true; }
done

mkdir -p dist-debug
copy() { cmp -s "$1" "$2" || cp "$1" "$2"; }
for f in src/js/*.js; do copy "$f" "dist-debug/${f#src/js/}"; done
copy src/js/index.d.ts dist-debug/index.d.ts
simd=build/wasm-simd/src/wasm/debug scalar=build/wasm-scalar/src/wasm/debug
for module in simd gpt-simd; do copy "$simd/attnlab-$module.wasm" "dist-debug/attnlab-$module.wasm"; done
for module in scalar gpt-scalar; do copy "$scalar/attnlab-$module.wasm" "dist-debug/attnlab-$module.wasm"; done
# One glue for all four modules, as in dist/ (scripts/build-wasm.sh): the GPT module's, checked to differ between
# the two kinds only in the .wasm name and to run the operators' modules.
sed 's/attnlab-gpt-scalar\.wasm/attnlab-gpt-simd.wasm/g' $scalar/attnlab-gpt-scalar.mjs | cmp -s $simd/attnlab-gpt-simd.mjs - \
  || { echo "build-wasm-debug: the two modules' glue differs beyond the .wasm name" >&2; exit 1; }
node scripts/check-glue.mjs $simd/attnlab-gpt-simd.mjs dist-debug/attnlab-{simd,scalar,gpt-simd,gpt-scalar}.wasm
copy "$simd/attnlab-gpt-simd.mjs" "dist-debug/attnlab.mjs"
rm -f dist-debug/attnlab-simd.mjs dist-debug/attnlab-scalar.mjs   # per-module glue of earlier builds
bash scripts/inline-wasm.sh dist-debug
bash scripts/bundle-worker.sh dist-debug   # the workers' script of init({ threads }), as a string
# Proof that this is the checked build: SAFE_HEAP's and the assertions' helpers are in the glue.
grep -q SAFE_HEAP dist-debug/attnlab.mjs \
  || { echo "dist-debug/: the glue has no SAFE_HEAP checks; were the *_debug targets linked with -sSAFE_HEAP=1?" >&2; exit 1; }
echo "dist-debug/ (debug wasm: ASSERTIONS=2, SAFE_HEAP=1):"
for f in dist-debug/*; do printf '  %-26s %8d\n' "${f#dist-debug/}" "$(wc -c <"$f")"; done
