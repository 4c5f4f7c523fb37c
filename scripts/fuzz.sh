#!/usr/bin/env bash
# `npm run fuzz [seconds]`: builds the libFuzzer harnesses (clang, ASan + UBSan) and runs each for the given
# time (default 300 s) from the seed corpora in tests/fuzz/corpus/; new inputs go to build/fuzz/corpus/ (not
# committed), a crash leaves its input in build/fuzz/.
# `scripts/fuzz.sh --ci` (npm test): a bounded, deterministic pass — fixed seed and run count, a fresh scratch
# corpus plus the committed seeds — so CI repeats exactly the pass that was checked before committing.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)" >/dev/null
total=0
for name in softmax attention multihead rope attention_backward safetensors matmul attention_full attention_backward_full \
    lm_loader tokenizer_json tokenizer_encode tokenizer_regex; do
  log="build/fuzz/$name.log"
  if [[ "${1:-}" == "--ci" ]]; then
    declare -A RUNS=([softmax]=1000000 [attention]=300000 [multihead]=200000 [rope]=200000 [attention_backward]=100000 [safetensors]=100000 [matmul]=20000 [attention_full]=100000 [attention_backward_full]=100000
      [lm_loader]=100000 [tokenizer_json]=30000 [tokenizer_encode]=100000 [tokenizer_regex]=40000)
    corpus=$(mktemp -d)
    args=(-seed=1 -runs="${RUNS[$name]}")
    echo "== fuzz_$name: ${RUNS[$name]} runs, seed 1"
  else
    seconds=${1:-${FUZZ_SECONDS:-300}}
    corpus="corpus/$name"
    mkdir -p "build/fuzz/$corpus"
    args=(-max_total_time="$seconds")
    echo "== fuzz_$name for ${seconds}s"
  fi
  (cd build/fuzz && UBSAN_OPTIONS=halt_on_error=1 "./tests/fuzz/fuzz_$name" "${args[@]}" -max_len=4096 \
      -print_final_stats=1 "$corpus" "../../tests/fuzz/corpus/$name") >"$log" 2>&1 || {
    tail -40 "$log"; echo "fuzz_$name FAILED (log: $log)"; exit 1; }
  [[ "${1:-}" == "--ci" ]] && rm -rf "$corpus"
  runs=$(grep -aoE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')  # -a: the log holds raw input bytes
  echo "   $runs executions, 0 crashes"
  total=$((total + runs))
done
echo "fuzz: $total executions in total, 0 crashes"
