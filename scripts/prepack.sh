#!/usr/bin/env bash
# `prepack` (npm pack, npm publish): builds dist/ and puts the package's own README in the tarball.
#
# The tarball's README.md is the npm page, written for people who install the package (src/js/README.md);
# the repository's README.md is the front door of the repo. npm always packs the root README.md, so prepack
# puts the package page there and `postpack` (scripts/prepack.sh --restore) puts the repository's back. The
# repository's copy waits in build/README.repo.md; a pack that died between the two is healed by the next
# prepack, which restores it first.
set -euo pipefail
cd "$(dirname "$0")/.."

saved=build/README.repo.md
restore() { if [[ -f $saved ]]; then mv -f "$saved" README.md; fi; }

if [[ ${1:-} == --restore ]]; then restore; exit 0; fi
restore

# A real publish needs the links the npm page shows beside the README (repository, homepage, bugs). They are left
# unset on purpose: the project has no public URL yet, and a guessed one would send users to a wrong page. So a
# real publish stops here and says so; `npm publish --dry-run` and `npm pack` go on.
if [[ ${npm_command:-} == publish && ${npm_config_dry_run:-false} != true ]]; then
  missing=$(node -e 'const p = require("./package.json"); console.log(["repository", "homepage", "bugs"].filter((k) => !p[k]).join(", "))')
  if [[ -n $missing ]]; then
    echo "prepack: refusing to publish: package.json has no $missing." >&2
    echo "  They are left unset on purpose: the project has no public URL yet, and the npm page shows these links" >&2
    echo "  beside the README. Once the repository is public, set repository, homepage and bugs to its URLs, then" >&2
    echo "  publish. (npm publish --dry-run and npm pack work without them.)" >&2
    exit 1
  fi
fi

# dist/ is compiled from C++ with Emscripten: say so plainly when the toolchain is not here.
for tool in emcc cmake; do
  if ! command -v "$tool" >/dev/null; then
    echo "prepack: cannot build the package: '$tool' is not installed. dist/ (the wasm modules and their JS) is" >&2
    echo "  compiled from the C++ engine with Emscripten and CMake. On Debian 12: bash scripts/bootstrap.sh" >&2
    echo "  (or apt-get install emscripten cmake), then run npm pack / npm publish again." >&2
    exit 1
  fi
done
bash scripts/build-wasm.sh

mkdir -p build
cp README.md "$saved"
cp src/js/README.md README.md
