#!/usr/bin/env bash
# The package's JS tests against the debug wasm build (Emscripten -sASSERTIONS=2 -sSAFE_HEAP=1
# -sSTACK_OVERFLOW_CHECK=2, -O1 -g; both modules): every load and store the engine makes is checked for null,
# out-of-heap and misaligned addresses, and Embind checks every argument's range. Builds dist-debug/ first
# (scripts/build-wasm-debug.sh, incremental), proves the checks are live (tests/js/support/debug-build.mjs),
# then runs the suites that exercise the module: results, errors, memory growth and leaks, loading, soak.
# Left out: browser.test.mjs (Chromium loads dist/ through its own page), pack.test.mjs and types.test.mjs
# (the tarball and the .d.ts, not the module). ~1.5 min on 2 cores after the build. The soak runs 20,000 calls per
# backend here (100,000 against the release build): under SAFE_HEAP a call costs about 4 times as much.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs

bash scripts/build-wasm-debug.sh

export ATTNLAB_DIST=dist-debug
ATTNLAB_SOAK_CALLS=20000 node --import ./tests/js/support/debug-globals.mjs --test --test-concurrency=1 \
  tests/js/support/debug-build.mjs \
  tests/js/softmax.test.mjs tests/js/attention.test.mjs tests/js/multihead.test.mjs tests/js/errors.test.mjs \
  tests/js/memory.test.mjs tests/js/loading.test.mjs tests/js/soak.test.mjs tests/js/rope.test.mjs \
  tests/js/softmax-backward.test.mjs tests/js/gpt.test.mjs tests/js/attention-backward.test.mjs tests/js/threads.test.mjs \
  tests/js/gpt-async.test.mjs tests/js/gpt-async-slices.test.mjs
# lab.loadModel: checkpoints streamed in (bytes, Blobs, URLs), their forwards and generation, every bad input, and
# the same models cut across the workers (the GPT-2-small-shaped checkpoint stays out: 124 M weights placed one
# checked store at a time). The checkpoints and their NumPy reference come from build/lm-checkpoints-js/ when an
# earlier run wrote them (tests/js/support/lm-fixtures.mjs), as the tokenizers' references below come from
# build/tokenizer-references/: neither depends on the build under test.
node --import ./tests/js/support/debug-globals.mjs --test --test-concurrency=1 tests/js/lm.test.mjs tests/js/lm-errors.test.mjs \
  tests/js/lm-threads.test.mjs
# lab.loadTokenizer: tokenizer.json and vocab.json + merges.txt parsed and run in the engine, every malformed file
# (untrusted bytes parsed in wasm: every load and store checked).
node --import ./tests/js/support/debug-globals.mjs --test --test-concurrency=1 tests/js/tokenizer.test.mjs tests/js/tokenizer-errors.test.mjs
