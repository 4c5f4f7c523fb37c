#!/usr/bin/env bash
# Builds the explorer (web/) into web/dist/: type-check, then a Vite production build, then the offline copy
# (one self-contained HTML file, `--mode single`) as web/dist/attnlab-explorer.html, linked from the page.
# Needs the package built first (dist/index.js, `npm run build`): the page imports it as 'attnlab'.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ! -f dist/index.js ]]; then
  echo "build-web: dist/index.js is missing; run 'npm run build' first" >&2
  exit 1
fi
npx --no-install tsc -p web/tsconfig.json
npx --no-install vite build --config web/vite.config.ts --logLevel warn
npx --no-install vite build --config web/vite.config.ts --mode single --logLevel warn
cp artifacts/single/index.html web/dist/attnlab-explorer.html
echo "build-web: wrote web/dist/ (offline copy: web/dist/attnlab-explorer.html, $(wc -c < web/dist/attnlab-explorer.html) bytes)"
