#!/usr/bin/env bash
# Threads scaling on a machine with more cores than the development one: the small GPT's training step
# (bench/train-threads.mjs) and GPT-2 small's shape on the lab's workers (bench/lm-threads.mjs: stream read,
# decode, prefill, the serial part) at 1, 2, 4, … threads up to the machine's cores, one log per bench.
#
#   npm run build && bash bench/cores.sh [OUT_DIR] [--quick]
#
# NODE picks another node binary, PYTHON the one with NumPy that writes the checkpoint. --quick (a check of the script itself): fewer steps and tokens, 2 threads.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-artifacts/cores}; quick=${2:-}
node=${NODE:-node}
mkdir -p "$out"
cores=$(nproc)
list=1; t=2; while [ "$t" -le "$cores" ]; do list="$list,$t"; t=$((t * 2)); done
[ "$cores" -gt 1 ] && [ "${list##*,}" != "$cores" ] && list="$list,$cores"
steps=10 tokens=32 rounds=3
if [ "$quick" = --quick ]; then list=1,2 steps=2 tokens=4 rounds=1; fi
{
  echo "cores: $cores; threads measured: $list; $(grep -m1 'model name' /proc/cpuinfo); node $($node --version)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/machine.txt"
status=0
$node bench/train-threads.mjs --threads="${list#1,}" --steps=$steps --independent 2>&1 | tee "$out/train-threads.txt" || status=1
for dtype in F32 F16; do
  $node bench/lm-threads.mjs --dtype $dtype --threads "$list" --tokens $tokens --rounds $rounds 2>&1 | tee "$out/lm-threads-$dtype.txt" || status=1
done
exit $status
