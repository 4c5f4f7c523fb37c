#!/usr/bin/env bash
# `scripts/test-e2e-queue.sh QUEUE`: runs explorer e2e files (tests/e2e/) taken one at a time from QUEUE, a folder
# that `scripts/test-e2e-queue.sh --fill QUEUE` fills with every file, the largest first. Several runners may share
# one queue (npm test starts one in each lane, so the lane that finishes its own stages first takes more): a file is
# taken by renaming it out of QUEUE/todo, which only one rename can do, so each file runs exactly once. Each runner
# starts one Chromium for all its files (scripts/with-chromium.mjs). Exits non-zero if a file it ran failed; after a
# failure it takes no more files. `npm run test:e2e` runs every file in one process; this is the same files.
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ ${1:-} == --fill ]]; then
  queue=$2
  rm -rf "$queue"
  mkdir -p "$queue/todo" "$queue/taken"
  # Largest files first: a long file taken last would leave one runner working alone at the end.
  i=0
  for f in $(ls -S tests/e2e/*.test.mjs); do
    : >"$queue/todo/$(printf '%03d' $i)-${f##*/}"
    i=$((i + 1))
  done
  exit 0
fi

queue=${1:?usage: scripts/test-e2e-queue.sh [--fill] QUEUE}
[[ -d $queue/todo ]] || { echo "test-e2e-queue: $queue/todo is missing: fill it first (--fill)" >&2; exit 2; }

# Runs under one Chromium: this script calls itself once more inside scripts/with-chromium.mjs.
if [[ -z ${ATTNLAB_CHROMIUM_WS:-} ]]; then
  exec node scripts/with-chromium.mjs bash "$0" "$queue"
fi

ran=0 failed=()
for entry in $(ls "$queue/todo"); do
  mv "$queue/todo/$entry" "$queue/taken/" 2>/dev/null || continue   # another runner took it
  file=tests/e2e/${entry#*-}
  echo "== $file"
  node --test --test-concurrency=1 "$file" || failed+=("$file")
  ran=$((ran + 1))
  ((${#failed[@]} == 0)) || break
done
echo "test-e2e-queue: $ran files run here; $(ls "$queue/todo" | wc -l) left in the queue"
if ((${#failed[@]})); then
  echo "test-e2e-queue: FAILED: ${failed[*]}" >&2
  exit 1
fi
