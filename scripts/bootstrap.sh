#!/usr/bin/env bash
# Installs what attnlab's builds and tests need, and nothing when it is all there (a few dpkg look-ups).
# Debian 12: the toolchain from apt, JavaScript packages with `npm ci`. `bootstrap.sh apt` or `bootstrap.sh npm` does
# one half (npm test runs the native lane, which needs apt's part only, while npm ci runs).
set -euo pipefail
cd "$(dirname "$0")/.."
part=${1:-all}
[[ $part == all || $part == apt || $part == npm ]] || { echo "usage: scripts/bootstrap.sh [apt|npm]" >&2; exit 2; }

APT_PACKAGES=(
  cmake make g++ pkg-config       # native build
  catch2 libsimde-dev             # native tests; SIMDe compiles the wasm-SIMD kernels natively
  libbenchmark-dev                # native benchmark
  emscripten                      # the wasm package
  chromium                        # the explorer and the package in a real browser
  clang libclang-rt-14-dev        # the ASan + UBSan build and its libFuzzer harnesses (npm run fuzz; a short pass in npm test)
  python3-numpy                   # runs the explorer's "copy as NumPy code" output in the e2e tests
  python3-onnx                    # the LM bench's ONNX graph (bench/lm/gpt2_onnx.py; its self-check is a JS test)
  perl                            # the tokenizer: its Unicode tables' check (scripts/gen-unicode-tables.py)
  bible-kjv fortunes-min fortunes # the shipped model's corpus (scripts/train-shipped-model.mjs --check); the tokenizer's test texts
  openssl                         # the model panel's e2e test: a certificate for its stand-ins of the Hugging Face Hub
)

missing=()
[[ $part == npm ]] && APT_PACKAGES=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm ci when node_modules is missing or older than the lock file.
[[ $part == apt ]] && exit 0
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "bootstrap: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
