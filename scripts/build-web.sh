#!/usr/bin/env bash
# Builds the explorer (web/) into web/dist/: type-check, then a Vite production build.
# Needs the package built first (dist/index.js, `npm run build`): the page imports it as 'attnlab'.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ! -f dist/index.js ]]; then
  echo "build-web: dist/index.js is missing; run 'npm run build' first" >&2
  exit 1
fi
npx --no-install tsc -p web/tsconfig.json
npx --no-install vite build --config web/vite.config.ts --logLevel warn
echo "build-web: wrote web/dist/"
