#!/bin/bash
# Run H (2026-12-01): issue 16's default-check bar, the fault cases against the healthy run, the health profile.
export PYTHONUNBUFFERED=1 NO_COLOR=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee $OUT/h.log) 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-deps --no-build-isolation . || exit 1
echo "== commit $(git rev-parse --short HEAD 2>/dev/null); $(date -u) nproc $(nproc)"; nvidia-smi -L
T() { local s=$(date +%s%N); "$@"; local rc=$?; echo "[exit $rc, $(( ($(date +%s%N) - s) / 1000000 )) ms] $*"; }
ls -A /tmp | sort > /tmp/before.txt
echo "== 1. how long a healthy nvidia-smi query takes (the probe's bound is 3 s)"
for i in 1 2 3; do T nvidia-smi -i 0 --query-gpu=clocks.max.sm --format=csv,noheader,nounits; done
echo "== 2. default check: report sizes, the torch.bytecode row"
T envdoctor check --json $OUT/h_healthy.json --markdown $OUT/h_healthy.md | tail -3; wc -c $OUT/h_healthy.json $OUT/h_healthy.md
envdoctor check -s torch.bytecode -v | sed -n 3,12p
echo "== 3. healthy again, then the fault cases (bar: 1.5x healthy)"
T envdoctor check -q
mkdir -p /tmp/hang && printf '#!/bin/sh\nexec sleep 100000\n' > /tmp/hang/nvidia-smi && chmod +x /tmp/hang/nvidia-smi
PATH=/tmp/hang:$PATH T envdoctor check -q
mkdir -p /tmp/fakenvml && printf 'import time\ndef nvmlInit():\n    time.sleep(100000)\n' > /tmp/fakenvml/pynvml.py
PYTHONPATH=/tmp/fakenvml:/tmp/site T envdoctor check | grep -E "^  [✗!E]|HEALTHY|PROBLEMS|smoke.compile|compile.*matches eager" | cut -c1-220
CUDA_VISIBLE_DEVICES= T envdoctor check -q
echo "== 4. health profile x3 (bar: 5 s, a kernel on every GPU)"
for i in 1 2 3; do T envdoctor check --profile health -q; done
echo "== 5. leftovers"; pgrep -af '_probe_child|precompile|compile_worker|nvml_child|sleep 100000' || echo "no processes left"
ls -A /tmp | sort > /tmp/after.txt; echo "new in /tmp:"; comm -13 /tmp/before.txt /tmp/after.txt | grep -v -E '^(hang|fakenvml|before.txt|after.txt|r.json)$'
echo "== 6. bench: floor / reference / check, faults, everything in one worker, no bytecode helpers"
T timeout 400 python3 benchmarks/bench_check.py -n 3 --warmup 0 --faults --check-env ENVDOCTOR_SMOKE_PARALLEL=0 --check-env ENVDOCTOR_PRECOMPILE=0 --json $OUT/h_bench.json
echo "== done $(date -u)"
