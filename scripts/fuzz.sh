#!/usr/bin/env bash
# `npm run fuzz [seconds]`: builds the libFuzzer harnesses (clang, ASan + UBSan) and runs each for the given
# time (default 300 s) from the seed corpora in tests/fuzz/corpus/; new inputs go to build/fuzz/corpus/ (not
# committed), a crash leaves its input in build/fuzz/. The harnesses are targets of the native-asan build (its core,
# compiled once with libFuzzer's coverage instrumentation, serves them and the Catch2 tests): after
# `scripts/test-native.sh` only the harnesses themselves are compiled here.
# `scripts/fuzz.sh --ci` (npm test): a bounded pass — fixed seed and run count, a fresh scratch corpus plus the
# committed seeds — so CI runs the same inputs' mutations as the pass that was checked before committing (not bit
# for bit: two passes with the same seed end a few coverage features apart, as measured below).
# Each harness is one single-threaded process, so FUZZ_JOBS of them (default: one per core) run at a time.
# The build's time and each harness's are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
NAMES=(softmax attention multihead rope attention_backward safetensors matmul attention_full attention_backward_full
       lm_loader tokenizer_json tokenizer_encode tokenizer_regex)
# --ci's run counts. Each was checked against the pass's coverage growth (libFuzzer's cov: edges and ft: features,
# seed 1, from the seeds alone): a count is cut only where both had long stopped growing. softmax, in two passes of
# the 1,000,000 runs it had: its last new edge at ~120,000 and ~130,000 runs, its features at their final count
# (1,060) by ~422,000 in one, within one of it (1,058 of 1,059) by 500,000 in the other (two passes differ by as
# much: the pass is not bit-for-bit repeatable); 550,000 keeps a margin past both. Every
# other harness still found new features in the last tenth of its runs (cov/ft last grew at, in thousands of runs:
# attention 159/297, multihead 159/195, rope 106/197, attention_backward 58/100, safetensors 94/98, matmul 10/19,
# attention_full 68/100, attention_backward_full 100/100, lm_loader 99/100, tokenizer_json 29/30,
# tokenizer_encode 90/100, tokenizer_regex 36/40): their counts stay.
declare -A RUNS=([softmax]=550000 [attention]=300000 [multihead]=200000 [rope]=200000 [attention_backward]=100000
                 [safetensors]=100000 [matmul]=20000 [attention_full]=100000 [attention_backward_full]=100000
                 [lm_loader]=100000 [tokenizer_json]=30000 [tokenizer_encode]=100000 [tokenizer_regex]=40000)
mode=${1:-${FUZZ_SECONDS:-300}}

t0=$SECONDS
bash scripts/configure-preset.sh native-asan
cmake --build --preset native-asan -j "$(nproc)" --target attnlab_fuzzers >/dev/null
echo "fuzz: harnesses built in $((SECONDS - t0)) s"
bin=../native-asan/tests/fuzz   # from build/fuzz, where the harnesses run
mkdir -p build/fuzz

# run_one NAME: runs one harness; prints its line, or its log's tail and a non-zero status on a crash.
run_one() {
  local name=$1 log="build/fuzz/$1.log" corpus args what t1=$SECONDS
  if [[ $mode == --ci ]]; then
    corpus=$(mktemp -d)
    args=(-seed=1 -runs="${RUNS[$name]}")
    what="${RUNS[$name]} runs, seed 1"
  else
    corpus="corpus/$name"
    mkdir -p "build/fuzz/$corpus"
    args=(-max_total_time="$mode")
    what="${mode} s"
  fi
  (cd build/fuzz && UBSAN_OPTIONS=halt_on_error=1 "$bin/fuzz_$name" "${args[@]}" -max_len=4096 \
      -print_final_stats=1 "$corpus" "../../tests/fuzz/corpus/$name") >"$log" 2>&1 || {
    tail -40 "$log"; echo "fuzz_$name ($what) FAILED (log: $log)"; return 1; }
  [[ $mode == --ci ]] && rm -rf "$corpus"
  local runs
  runs=$(grep -aoE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')  # -a: the log holds raw input bytes
  echo "== fuzz_$name ($what): $runs executions, 0 crashes, $((SECONDS - t1)) s"
}

t0=$SECONDS
jobs_max=${FUZZ_JOBS:-$(nproc)} running=0 failed=0
for name in "${NAMES[@]}"; do
  if ((running >= jobs_max)); then wait -n || failed=1; running=$((running - 1)); fi
  run_one "$name" &
  running=$((running + 1))
done
while ((running > 0)); do wait -n || failed=1; running=$((running - 1)); done
((failed == 0)) || { echo "fuzz: FAILED"; exit 1; }
total=0
for name in "${NAMES[@]}"; do
  total=$((total + $(grep -aoE 'stat::number_of_executed_units: *[0-9]+' "build/fuzz/$name.log" | grep -oE '[0-9]+$')))
done
echo "fuzz: $total executions in total, 0 crashes, $((SECONDS - t0)) s for the runs ($jobs_max at a time)"
