#!/usr/bin/env bash
# `npm run fuzz [seconds]`: builds the libFuzzer harnesses (clang, ASan + UBSan) and runs each for the
# given time (default 300 s), starting from the seed corpora in tests/fuzz/corpus/. New inputs the
# fuzzer finds go to build/fuzz/corpus/ (not committed); a crash leaves its input in build/fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-${FUZZ_SECONDS:-300}}
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)" >/dev/null
total=0
for name in softmax attention multihead; do
  mkdir -p "build/fuzz/corpus/$name"
  log="build/fuzz/$name.log"
  echo "== fuzz_$name for ${SECONDS_EACH}s"
  (cd build/fuzz && UBSAN_OPTIONS=halt_on_error=1 "./tests/fuzz/fuzz_$name" -max_total_time="$SECONDS_EACH" \
      -max_len=4096 -print_final_stats=1 "corpus/$name" "../../tests/fuzz/corpus/$name") >"$log" 2>&1 || {
    tail -40 "$log"; echo "fuzz_$name FAILED (log: $log)"; exit 1; }
  runs=$(grep -aoE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')  # -a: the log holds raw input bytes
  echo "   $runs executions, 0 crashes"
  total=$((total + runs))
done
echo "fuzz: $total executions in total, 0 crashes"
