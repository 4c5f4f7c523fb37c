#!/usr/bin/env bash
# Writes the script each worker of init({ threads }) runs — src/js/worker.js with the glue and the operators,
# bundled by esbuild into one classic script — twice: DIR/attnlab-worker.js, which the URL entry (attnlab) loads
# from beside itself only when threads are asked for, and DIR/attnlab-worker.inline.js, the same text as a string
# in an ES module, for attnlab/inline. threads.js starts workers from that text: a Blob URL in browsers (works on
# file:// pages and cross-origin hosts), worker_threads' eval in Node. Needs DIR/worker.js and DIR/attnlab.mjs
# (copied there first); removes DIR/worker.js (and worker-gpt.js and worker-lm.js, which only it imports) after.
# Used by build-wasm.sh (dist/) and build-wasm-debug.sh (dist-debug/).
set -euo pipefail
dir=${1:?usage: bundle-worker.sh DIR}
esbuild=node_modules/.bin/esbuild
[[ -x $esbuild ]] || { echo "bundle-worker: $esbuild not found: run npm ci (scripts/bootstrap.sh)" >&2; exit 1; }
# (fs, path: the debug glue also runs under Node, where threads.js supplies require)
"$esbuild" "$dir/worker.js" --bundle --format=iife --minify --external:fs --external:path --target=es2020 --log-level=warning --outfile="$dir/attnlab-worker.bundle.tmp.js"
node -e '
  const fs = require("node:fs");
  const [bundle, target, plain] = process.argv.slice(1);
  const code = fs.readFileSync(bundle, "utf8");
  if (!fs.existsSync(plain) || fs.readFileSync(plain, "utf8") !== code) fs.writeFileSync(plain, code);
  const text = "// The script of every init({ threads }) worker (src/js/worker.js bundled by scripts/bundle-worker.sh).\n" +
    "export default " + JSON.stringify(code) + ";\n";
  if (!fs.existsSync(target) || fs.readFileSync(target, "utf8") !== text) fs.writeFileSync(target, text);
  fs.rmSync(bundle);
' "$dir/attnlab-worker.bundle.tmp.js" "$dir/attnlab-worker.inline.js" "$dir/attnlab-worker.js"
rm -f "$dir/worker.js" "$dir/worker-gpt.js" "$dir/worker-lm.js"
