#!/usr/bin/env bash
# Writes DIR/attnlab-worker.inline.js: the script each worker of init({ threads }) runs (src/js/worker.js with
# the glue and the lab, bundled by esbuild into one classic script) as a string in an ES module, so that
# threads.js can start workers from a Blob URL (browsers, file:// pages) or worker_threads' eval (Node) without
# a file to serve. Needs DIR/worker.js and DIR/attnlab.mjs (copied there first); removes DIR/worker.js after.
# Used by build-wasm.sh (dist/) and build-wasm-debug.sh (dist-debug/).
set -euo pipefail
dir=${1:?usage: bundle-worker.sh DIR}
esbuild=node_modules/.bin/esbuild
[[ -x $esbuild ]] || { echo "bundle-worker: $esbuild not found: run npm ci (scripts/bootstrap.sh)" >&2; exit 1; }
"$esbuild" "$dir/worker.js" --bundle --format=iife --minify --target=es2020 --log-level=warning --outfile="$dir/attnlab-worker.bundle.tmp.js"
node -e '
  const fs = require("node:fs");
  const [bundle, target] = process.argv.slice(1);
  const text = "// The script of every init({ threads }) worker (src/js/worker.js bundled by scripts/bundle-worker.sh).\n" +
    "export default " + JSON.stringify(fs.readFileSync(bundle, "utf8")) + ";\n";
  if (!fs.existsSync(target) || fs.readFileSync(target, "utf8") !== text) fs.writeFileSync(target, text);
  fs.rmSync(bundle);
' "$dir/attnlab-worker.bundle.tmp.js" "$dir/attnlab-worker.inline.js"
rm -f "$dir/worker.js"
