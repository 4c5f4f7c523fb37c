# Sourced by the scripts that run Emscripten (build-wasm.sh, build-wasm-debug.sh): what Debian's emcc needs from
# the environment, and a clear message when it is missing.
export NODE_PATH=/usr/share/nodejs   # Debian's Emscripten 3.1.6 finds acorn (its JS optimizer) only through this
# emcc/em++ are Python scripts run by `python3` from PATH; Debian's own interpreter directly, not through a
# version manager's shim that a PATH may put first (a pyenv shim costs about 0.08 s of CPU per call, and the
# build makes about 130 calls).
[[ -x /usr/bin/python3 ]] && export EMSDK_PYTHON=${EMSDK_PYTHON:-/usr/bin/python3}
command -v emcc >/dev/null || { echo "emcc not found: run scripts/bootstrap.sh (Debian package 'emscripten')" >&2; exit 1; }
