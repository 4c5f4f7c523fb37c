#!/usr/bin/env bash
# `npm run build` (and `prepack`): builds the wasm modules with Emscripten (SIMD and scalar, each as the
# operators alone and with the small GPT: src/wasm/CMakeLists.txt) and assembles the npm package in dist/.
# Incremental: when nothing changed it only re-checks and re-copies.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/emscripten-env.sh   # NODE_PATH, EMSDK_PYTHON, emcc present

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
# One glue for all four modules. Each kind's two links produce the same JS but for the default file name, which is
# never used (the wrapper compiles the module and hands it over through instantiateWasm): checked, since the
# glue's import and export names must match the module it runs. The GPT module's glue is the one shipped: the
# operators' module needs a subset of it (no Embind classes), checked by scripts/check-glue.mjs.
same_glue() {
  sed "s/$3/$4/g" "$2" | cmp -s "$1" - \
    || { echo "build-wasm: $1 and $2 differ beyond the .wasm name; one glue cannot serve both modules" >&2; exit 1; }
}
out=build/wasm-simd/src/wasm out_scalar=build/wasm-scalar/src/wasm
same_glue $out/attnlab-gpt-simd.mjs $out_scalar/attnlab-gpt-scalar.mjs 'attnlab-gpt-scalar\.wasm' attnlab-gpt-simd.wasm
same_glue $out/attnlab-simd.mjs $out_scalar/attnlab-scalar.mjs 'attnlab-scalar\.wasm' attnlab-simd.wasm
node scripts/check-glue.mjs $out/attnlab-gpt-simd.mjs $out/attnlab-simd.wasm $out_scalar/attnlab-scalar.wasm \
  $out/attnlab-gpt-simd.wasm $out_scalar/attnlab-gpt-scalar.wasm
copy $out/attnlab-gpt-simd.mjs dist/attnlab.mjs
rm -f dist/attnlab-simd.mjs dist/attnlab-scalar.mjs   # per-module glue of earlier builds
for module in simd scalar gpt-simd gpt-scalar; do
  copy "build/wasm-${module#gpt-}/src/wasm/attnlab-$module.wasm" "dist/attnlab-$module.wasm"
done
bash scripts/inline-wasm.sh dist   # the same modules as base64 in ES modules, for attnlab/inline
bash scripts/bundle-worker.sh dist   # the workers' script of init({ threads }), as a string

echo "dist/ (raw bytes, gzip -9 bytes):"
total() { local raw=0 gz=0 f; for f in "$@"; do raw=$((raw + $(wc -c <"$f"))); gz=$((gz + $(gzip -9c "$f" | wc -c))); done; echo "$raw $gz"; }
for f in dist/*; do
  read -r raw gz < <(total "$f")
  printf '  %-34s %8d %8d\n' "${f#dist/}" "$raw" "$gz"
done
# What an app loads, by entry and variant: the wrapper, the glue and the chosen .wasm (attnlab), or the wrapper,
# the glue and one variant's two modules as base64 text (attnlab/inline: the operators, attnlab/inline-gpt: with
# the small GPT).
wrapper=()
for f in src/js/*.js; do case $f in */index.js|*/inline.js|*/inline-gpt.js|*/worker.js|*/worker-gpt.js|*/worker-lm.js) ;; *) wrapper+=("dist/${f#src/js/}") ;; esac; done
for module in simd scalar gpt-simd gpt-scalar; do
  read -r raw gz < <(total dist/index.js "${wrapper[@]}" dist/attnlab.mjs dist/attnlab-$module.wasm)
  printf '  %-40s %8d %8d\n' "= attnlab, $module: js + glue + wasm" "$raw" "$gz"
done
read -r raw gz < <(total dist/inline.js "${wrapper[@]}" dist/attnlab.mjs dist/attnlab-simd.inline.js dist/attnlab-scalar.inline.js)
printf '  %-40s %8d %8d\n' "= attnlab/inline: js + glue + pair" "$raw" "$gz"
read -r raw gz < <(total dist/inline-gpt.js "${wrapper[@]}" dist/attnlab.mjs dist/attnlab-gpt-*.inline.js)
printf '  %-40s %8d %8d\n' "= attnlab/inline-gpt: js + glue + pair" "$raw" "$gz"
