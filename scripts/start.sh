#!/usr/bin/env bash
# `npm start`: install what is missing, build the package if it is stale, build the explorer, serve it.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/bootstrap.sh   # apt packages, and npm ci when node_modules is missing or older than the lock file

# The package is stale when any engine/binding/wrapper source or a script of its build is newer than the last build
# npm start ran (its stamp; a build leaves dist/index.js untouched when the file did not change).
stamp=build/.npm-start-package
stale=1
if [[ -f dist/index.js && -f $stamp ]]; then
  newer=$(find src scripts/build-wasm.sh scripts/inline-wasm.sh scripts/bundle-worker.sh CMakeLists.txt CMakePresets.json \
    -newer "$stamp" -type f 2>/dev/null | head -n 1 || true)
  [[ -z "$newer" ]] && stale=0
fi
if [[ $stale -eq 1 ]]; then
  npm run build
  mkdir -p build && touch "$stamp"
fi

npm run build:web
exec node scripts/serve.mjs --port "${PORT:-8080}"
