#!/usr/bin/env bash
# `npm test`: installs what is missing, builds native and wasm, runs every suite, fails on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs   # Emscripten's JS optimizer needs Debian's acorn
start=$SECONDS
step() { echo; echo "==== $1 ($((SECONDS - start)) s)"; }

step "bootstrap";              bash scripts/bootstrap.sh
step "native tests (CTest)";   bash scripts/test-native.sh
step "fuzz (bounded, deterministic pass)"; bash scripts/fuzz.sh --ci
step "wasm package build";     npm run --silent build
step "package tests (node)";   npm run --silent test:js
step "API reference (TypeDoc over index.d.ts; a warning or an undocumented export fails)"; npm run --silent docs:api
step "package tests, debug wasm (ASSERTIONS=2, SAFE_HEAP=1)"; bash scripts/test-js-debug.sh
step "package consumers (npm pack → Node, TypeScript, Vite, webpack, esbuild, Rollup, Vitest, Chromium)"; npm run --silent test:consumers
step "explorer build";         npm run --silent build:web
step "explorer tests (Chromium)"; npm run --silent test:e2e
step "all tests passed"
