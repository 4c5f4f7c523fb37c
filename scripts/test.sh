#!/usr/bin/env bash
# `npm test`: installs what is missing, builds native and wasm, runs every suite; exits non-zero on any failure.
#
# After the bootstrap's apt packages, two lanes run side by side, each stage after the one before it in its lane:
#   native:  the native builds, CTest (both kernel sets in each build), the bounded fuzz pass, the package's tests
#            against the debug modules (linked from the wasm build's objects), then explorer e2e files;
#   package: npm ci (what is missing), the wasm build, the explorer build, the package's tests, the consumers, then
#            explorer e2e files. The native lane needs node_modules only for its last two stages, which wait for
#            the package lane's builds anyway.
# Most of their stages keep only one core busy, so two cores finish both in about the time of the longer. The e2e
# files are one queue that both lanes take from (scripts/test-e2e-queue.sh), so the lanes end together. The lanes
# share the wasm build folders (build/wasm-simd, build/wasm-scalar): the package lane holds them, under a lock, until
# its last stage that builds there (the consumers: npm pack builds the package), and the debug stage waits for that;
# the native lane's e2e runner waits, under a second lock, for the explorer build.
# The native lane writes to build/test-logs/native.log, printed when it ends.
# A failing stage stops its lane and the run (the package lane stops the native lane at once; the native lane stops
# the package lane at its next stage). The run ends, also on failure, with a table
# of every stage's wall time and CPU time (user + system of every process the stage started, Chromium's included:
# scripts/reap.py waits for them all; the stage's cost on an idle machine).
set -uo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs   # Emscripten's JS optimizer needs Debian's acorn

logs=build/test-logs
mkdir -p "$logs"
records=$logs/stages.tsv             # lane, name, start ms, wall ms, CPU ms, exit status: one line per stage
: >"$records"
load() { local a b c rest; read -r a b c rest </proc/loadavg; echo "$a $b $c"; }
load_at_start=$(load)
now_ms() { local t=${EPOCHREALTIME/./}; echo $((10#${t:0:-3})); }
t_start=$(now_ms)

# Sets cpu_ms: user + system milliseconds of this shell's waited-for children so far. `times` must run in this
# shell, not in a command substitution (a subshell counts its own children only), so it writes to a file.
children_cpu() {
  local f=$logs/.times.$BASHPID line re='([0-9]+)m([0-9]+)\.([0-9]+)s ([0-9]+)m([0-9]+)\.([0-9]+)s'
  times >"$f"
  { read -r line; read -r line; } <"$f"
  rm -f "$f"
  cpu_ms=0
  [[ $line =~ $re ]] || return 0
  local r=("${BASH_REMATCH[@]}")
  cpu_ms=$(( (10#${r[1]} * 60 + 10#${r[2]}) * 1000 + 10#${r[3]} + (10#${r[4]} * 60 + 10#${r[5]}) * 1000 + 10#${r[6]} ))
}
failed() { [[ -n $(awk -F'\t' '$6 != 0' "$records") ]]; }

# stage LANE NAME COMMAND…: runs COMMAND in this shell and records its times; returns its status. Refuses to start
# once a stage of either lane has failed.
stage() {
  local lane=$1 name=$2; shift 2
  failed && return 1
  echo; echo "==== $name"
  local t0 c0 rc
  t0=$(now_ms); children_cpu; c0=$cpu_ms
  if [[ $lane == main ]]; then "$@"; else /usr/bin/python3 scripts/reap.py "$@"; fi; rc=$?
  children_cpu
  printf '%s\t%s\t%d\t%d\t%d\t%d\n' "$lane" "$name" $((t0 - t_start)) $(($(now_ms) - t0)) $((cpu_ms - c0)) "$rc" >>"$records"
  ((rc == 0)) || echo "==== $name: FAILED (exit $rc)"
  return "$rc"
}

native_lane() {
  stage native "native: build (release, ASan + UBSan)"                bash scripts/test-native.sh build &&
  stage native "native: CTest, scalar and SIMD kernels in each build" bash scripts/test-native.sh test &&
  stage native "fuzz: build, bounded pass (fixed seed and run counts)" bash scripts/fuzz.sh --ci &&
  flock "$wasm_lock" true &&   # the package lane is done with the wasm build folders (it may have failed: stage checks)
  stage native "package tests, debug wasm (ASSERTIONS=2, SAFE_HEAP=1)" bash scripts/test-js-debug.sh &&
  flock "$web_lock" true &&    # the explorer is built (or its build failed: stage checks)
  stage native "explorer tests (Chromium), files left in the queue"    bash scripts/test-e2e-queue.sh "$e2e_queue"
}
package_lane() {
  stage package "bootstrap: npm ci (what is missing)"                 bash scripts/bootstrap.sh npm &&
  stage package "wasm package build"                                  npm run --silent build &&
  stage package "explorer build"                                      npm run --silent build:web &&
  release_web_build &&
  stage package "package tests (Node, Chromium)"                      npm run --silent test:js &&
  stage package "API reference (TypeDoc over index.d.ts)"             npm run --silent docs:api &&
  stage package "package consumers (npm pack; Node, TS, bundlers, Chromium)" node scripts/with-chromium.mjs npm run --silent test:consumers &&
  release_wasm_builds &&
  stage package "explorer tests (Chromium), files left in the queue"   bash scripts/test-e2e-queue.sh "$e2e_queue"
}

table() {
  echo
  echo "==== stage times (load average at start: $load_at_start; at end: $(load))"
  printf '  %-8s %-62s %8s %8s %8s\n' lane stage 'start s' 'wall s' 'CPU s'
  awk -F'\t' -v wall=$(($(now_ms) - t_start)) '
    function s(ms) { return sprintf("%.1f", ms / 1000) }
    { printf "  %-8s %-62s %8s %8s %8s%s\n", $1, $2, s($3), s($4), s($5), $6 ? "  FAILED (exit " $6 ")" : ""; cpu += $5 }
    END { printf "  %-8s %-62s %8s %8s %8s\n", "", "total (wall: start to end)", "", s(wall), s(cpu) }' "$records"
}

native_pid=
stop_native() { [[ -n $native_pid ]] && kill -TERM -- -"$native_pid" 2>/dev/null; }
trap 'stop_native; exit 130' INT TERM

# The wasm build folders' lock: taken here, before the lanes start, on a descriptor both lanes inherit; released
# (for every holder of the descriptor) by the package lane after the consumers, or here when that lane has ended.
wasm_lock=$logs/.wasm-builds.lock
exec {wasm_fd}>"$wasm_lock"
flock "$wasm_fd"
release_wasm_builds() { flock -u "$wasm_fd"; }
# The explorer's lock, the same way: held until web/dist/ is built, so that the native lane's e2e runner waits for it.
web_lock=$logs/.web-build.lock
exec {web_fd}>"$web_lock"
flock "$web_fd"
release_web_build() { flock -u "$web_fd"; }
# The explorer's e2e files, shared by one runner in each lane (scripts/test-e2e-queue.sh): whichever lane is free
# takes the next file, so the two lanes end together.
e2e_queue=$logs/e2e-queue
bash scripts/test-e2e-queue.sh --fill "$e2e_queue"

if stage main "bootstrap: apt packages" bash scripts/bootstrap.sh apt; then
  set -m   # job control for this one job: the native lane gets its own process group, so that it can be stopped
  native_lane >"$logs/native.log" 2>&1 &
  native_pid=$!
  set +m
  echo "(the native lane runs beside the package lane; its output: $logs/native.log, printed when it ends)"
  # In a subshell of its own, as the native lane: when the native lane ends, this shell reaps it and its whole CPU
  # time joins this shell's children's times, which would charge it to the package stage running then.
  ( package_lane ) || stop_native   # a failure here ends the run now
  release_wasm_builds
  release_web_build
  wait "$native_pid"; rc=$?
  native_pid=
  # A lane that ended without recording its failure (killed, or the shell itself failed) fails the run too.
  if ((rc)) && ! failed; then printf 'native\tthe native lane ended early\t0\t0\t0\t%d\n' "$rc" >>"$records"; fi
  # Every e2e file ran (each runner empties the queue unless a file of its own failed).
  if ! failed && [[ -n $(ls "$e2e_queue/todo") ]]; then
    printf 'main\texplorer e2e files never run: %s\t0\t0\t0\t1\n' "$(ls "$e2e_queue/todo" | tr '\n' ' ')" >>"$records"
  fi
  echo; echo "==== the native lane's output ($logs/native.log)"
  cat "$logs/native.log"
fi
table
if failed; then
  echo "npm test: FAILED: $(awk -F'\t' '$6 != 0 { printf "%s%s", sep, $2; sep = "; " }' "$records")"
  exit 1
fi
echo "npm test: every stage passed"
