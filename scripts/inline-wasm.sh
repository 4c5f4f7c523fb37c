#!/usr/bin/env bash
# Writes DIR/attnlab-{simd,scalar,gpt-simd,gpt-scalar}.inline.js: each .wasm module in DIR as base64 text in an
# ES module, for the attnlab/inline entry (src/js/inline.js: the operators' pair) and attnlab/inline-gpt
# (src/js/inline-gpt.js: the pair with the small GPT). Rewritten only when the .wasm is newer. Used by
# build-wasm.sh (dist/) and build-wasm-debug.sh (dist-debug/).
set -euo pipefail
dir=${1:?usage: inline-wasm.sh DIR}
for kind in simd scalar gpt-simd gpt-scalar; do
  wasm="$dir/attnlab-$kind.wasm" inline="$dir/attnlab-$kind.inline.js"
  entry=attnlab/inline; [[ $kind == gpt-* ]] && entry=attnlab/inline-gpt
  if [[ ! -f $inline || $wasm -nt $inline ]]; then
    { echo "// attnlab-$kind.wasm as base64, for $entry (written by scripts/inline-wasm.sh)."
      printf "export default '%s';\n" "$(base64 -w0 "$wasm")"; } >"$inline.tmp"
    mv "$inline.tmp" "$inline"
  fi
done
