#!/usr/bin/env bash
# The run's bounds on a GPU machine: a hanging nvidia-smi first on PATH and a hanging NVML each
# end in a bounded run (NVML named "likely wedged"); a SIGKILL mid-run and all the runs leave no
# process and nothing new in /tmp; the default run's reports stay within their size bars (JSON
# <= 65,536 B, Markdown <= 20,000 B); the health profile runs a kernel on every GPU. Each outcome
# is asserted (`expect`/`assert` in faults.sh); exits 1 when one does not hold. About 3 minutes.
#   bash verification/scripts/run_bounds.sh          (speed ratios: benchmarks/bench_check.py --faults)
set +e
export NO_COLOR=1
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit and its assertions
OUT=$(mktemp -d)
ls -A /tmp | sort > "$OUT/before.txt"

expect "default check, reports written" 0 "(HEALTHY|OK, with warnings)" -- envdoctor check --json "$OUT/r.json" --markdown "$OUT/r.md"
assert "JSON report <= 65,536 B ($(wc -c < "$OUT/r.json") B)" test "$(wc -c < "$OUT/r.json")" -le 65536
assert "Markdown report <= 20,000 B ($(wc -c < "$OUT/r.md") B)" test "$(wc -c < "$OUT/r.md")" -le 20000

H=$(mktemp -d); printf '#!/bin/sh\nexec sleep 100000\n' > "$H/nvidia-smi"; chmod +x "$H/nvidia-smi"
expect "hanging nvidia-smi first on PATH" 0 "(HEALTHY|OK, with warnings)" -- timeout 120 env PATH="$H:$PATH" envdoctor check -q
N=$(mktemp -d); printf 'import time\ndef nvmlInit():\n    time.sleep(100000)\n' > "$N/pynvml.py"
expect "hanging NVML" 1 "NVML did not answer within [0-9]+s: the driver or a GPU is likely wedged" -- timeout 120 env PYTHONPATH="$N" envdoctor check
rm -rf "$H" "$N"

expect "health profile" 0 "(HEALTHY|OK, with warnings)" -- envdoctor check --profile health -v -s smoke.matmul
saw "matmul correct on $(nvidia-smi -L | grep -c '^GPU ') GPU\(s\)"

envdoctor check > /dev/null 2>&1 & P=$!; sleep 6; kill -9 "$P"; wait "$P" 2>/dev/null; sleep 3
left() { pgrep -af '_probe_child|precompile|compile_worker|nvml_child|sleep 100000'; }
assert "no process left after SIGKILL and the runs" test -z "$(left)"
ls -A /tmp | sort > "$OUT/after.txt"
new=$(comm -13 "$OUT/before.txt" "$OUT/after.txt" | grep -v -x "$(basename "$OUT")")
echo "new in /tmp: ${new:-nothing}"
assert "nothing new in /tmp" test -z "$new"
rm -rf "$OUT"
finish
