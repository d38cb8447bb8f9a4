#!/bin/bash
export PYTHONUNBUFFERED=1 NO_COLOR=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee $OUT/g.log) 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-deps --no-build-isolation . || exit 1
echo "== commit $(git rev-parse --short HEAD 2>/dev/null); $(date -u) nproc $(nproc)"; nvidia-smi -L
fresh() { local d=$(mktemp -d); export TRITON_CACHE_DIR=$d/t TORCHINDUCTOR_CACHE_DIR=$d/i; }
tr() { fresh; echo "=== trace: $*"; local s=$(date +%s%N); env "$@" python3 benchmarks/trace_check.py check -q --json /tmp/r.json 2>&1 | grep -E "TRACE (call|spawn|end|imported)|TRACE check .*smoke|HEALTHY|PROBLEMS" | sort -k3 -n; echo "[wall $(( ($(date +%s%N) - s) / 1000000 )) ms]"; }
T() { local s=$(date +%s%N); "$@"; local rc=$?; echo "[exit $rc, $(( ($(date +%s%N) - s) / 1000000 )) ms] $*"; }
tr X=1
tr ENVDOCTOR_SMOKE_PARALLEL=0
tr ENVDOCTOR_SMOKE_PARALLEL=1
echo "=== default check, report"; T envdoctor check --json $OUT/g_healthy.json | tail -4
echo "=== hanging nvidia-smi"; mkdir -p /tmp/hang && printf '#!/bin/sh\nexec sleep 100000\n' > /tmp/hang/nvidia-smi && chmod +x /tmp/hang/nvidia-smi
PATH=/tmp/hang:$PATH T envdoctor check -q
echo "=== health profile x3"; for i in 1 2 3; do T envdoctor check --profile health -q; done
echo "=== leftovers: $(ls /tmp | grep -c envdoctor) dirs, $(pgrep -fc precompile) helpers, $(pgrep -fc _probe_child) workers"
echo "=== bench"; T timeout 420 python3 benchmarks/bench_check.py -n 3 --warmup 1 --faults --json $OUT/g_bench.json
echo "== done $(date -u)"
