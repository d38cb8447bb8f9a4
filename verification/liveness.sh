#!/usr/bin/env bash
# The liveness profile on a real GPU machine: healthy, then three faults, then its speed.
# Asserts each outcome and exits non-zero at the first that does not hold.
#   bash verification/liveness.sh            (from the repository root, envdoctor installed)
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/faults.sh"  # expect/finish, the assertions every script shares
expect healthy 0 'kernel ran and computed correctly on [0-9]+ GPU' -- envdoctor check --profile liveness -v
expect hidden 1 'CUDA_ERROR_NO_DEVICE' -- env CUDA_VISIBLE_DEVICES= envdoctor check --profile liveness -v
stub=$(find / -xdev -path '*stubs/libcuda.so' 2>/dev/null | head -1)
if [ -n "$stub" ]; then
  d=$(mktemp -d); ln -s "$stub" "$d/libcuda.so.1"
  expect stub 1 'CUDA_ERROR_STUB_LIBRARY' -- env LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}" envdoctor check --profile liveness -v
  rm -rf "$d"
else echo "!! no CUDA stub libcuda.so on this machine"; fails=$((fails+1)); fi
h=$(mktemp -d); printf '#!/bin/sh\nsleep 1000\n' > "$h/nvidia-smi"; chmod +x "$h/nvidia-smi"
start=$(date +%s%N)
expect hanging-nvidia-smi 0 'kernel ran and computed correctly' -- env PATH="$h:$PATH" envdoctor check --profile liveness -v
echo "hanging nvidia-smi run took $(( ($(date +%s%N) - start) / 1000000 )) ms"; rm -rf "$h"
pgrep -f 'sleep 1000' && { echo "!! a sleep 1000 outlived the run"; fails=$((fails+1)); }
python3 benchmarks/bench_liveness.py -n 9 --json "${OUT:-/tmp}/liveness-bench.json" || fails=$((fails+1))
finish
