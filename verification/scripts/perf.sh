#!/usr/bin/env bash
# Perf checks and `envdoctor bench` on the H200. About 3 minutes.
# Expected:
#  1. healthy: perf.matmul and perf.memory_bandwidth PASS against the H200 SXM row of
#     checks/_perf_table.py (warn below 75 % of 693 TFLOP/s bf16/fp16; the H200 gave 677/651,
#     TF32 356, copy 4,242 GB/s on 2026-11-29), exit 0;
#     then the measured figures and NVML state under load, from the JSON report.
#  2. a second process keeping the GPU busy with matmuls (a shared GPU: no setting is changed):
#     perf.matmul WARNs below 75 % of expected, reports clocks/power/reasons, and its hint points
#     at other work on the GPU; the load is stopped afterwards.
#  3. GPU hidden (CUDA_VISIBLE_DEVICES=""): both perf checks skip with the reason; exit 0.
#  4. envdoctor bench: the eager / default / reduce-overhead table (compile time, ms/step,
#     change vs eager, graph breaks); --plot if matplotlib is installed, else its clear refusal.
# Each exit status is asserted (`want` in faults.sh); exits 1 when one does not hold.
set +e
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit (fault_* functions), from this repository
h() { echo; echo "=== $1: ${*:2} ==="; }
OUT=$(mktemp -d)

h "perf checks, healthy" envdoctor check --select perf -v --json $OUT/perf.json
timeout 300 envdoctor check --select perf -v --json $OUT/perf.json
want 0 "perf checks healthy"

h "measured figures and NVML state under load (from the JSON report)" python3 "<facts matmul_perf/bandwidth_perf>"
python3 - "$OUT/perf.json" <<'PY'
import json, sys
facts = json.load(open(sys.argv[1]))["facts"]
for name in ("matmul_perf", "bandwidth_perf"):
    f = facts.get(name, {})
    if "devices" not in f:
        print(name, f)
        continue
    for d in f["devices"]:
        print(name, "GPU", d["index"], d["name"], "SMs", d["sm_count"])
        for key, m in list(d.get("matmul", {}).items()) + [("copy", d.get("bandwidth"))]:
            if not m:
                continue
            fig = f"{m['tflops']:.1f} TFLOP/s (n={m['n']})" if "tflops" in m else f"{m['gbps']:.0f} GB/s ({m['bytes'] >> 20} MiB)" if "gbps" in m else m
            print(f"  {key:5} {fig}  nvml: {json.dumps(m.get('nvml'))}")
PY

h "GPU shared with another process (background bf16 matmul load)" envdoctor check --select perf.matmul -v
READY=$OUT/load.ready
timeout 90 python3 - "$READY" <<'PY' &
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn_like(a)
torch.mm(a, b); torch.cuda.synchronize()
open(sys.argv[1], "w").close()
end = time.time() + 80
while time.time() < end:
    for _ in range(50):
        torch.mm(a, b)
    torch.cuda.synchronize()
PY
LOAD=$!
for _ in $(seq 60); do [ -f "$READY" ] && break; sleep 1; done
echo "background load pid $LOAD running: $([ -f "$READY" ] && echo yes || echo NO)"
timeout 180 envdoctor check --select perf.matmul -v
want 0 "perf under load"
kill "$LOAD" 2>/dev/null; wait "$LOAD" 2>/dev/null
echo "background load stopped"

h "GPU hidden (CUDA_VISIBLE_DEVICES='')" CUDA_VISIBLE_DEVICES= envdoctor check --select perf
CUDA_VISIBLE_DEVICES= timeout 120 envdoctor check --select perf
want 0 "perf with the GPU hidden"

if python3 -c "import matplotlib" 2>/dev/null; then
  h "bench (eager, default, reduce-overhead) with a plot" envdoctor bench --plot $OUT/bench.png
  timeout 420 envdoctor bench --plot $OUT/bench.png
  want 0 "bench --plot"; assert "the plot was written" test -s $OUT/bench.png
else
  h "bench --plot without matplotlib (clear refusal, exit 2, nothing run)" envdoctor bench --plot $OUT/bench.png
  timeout 60 envdoctor bench --plot $OUT/bench.png
  want 2 "bench --plot without matplotlib"
  h "bench (eager, default, reduce-overhead)" envdoctor bench
  timeout 420 envdoctor bench
  want 0 "bench"
fi
rm -rf "$OUT"
finish
