#!/bin/bash
# Run I (2026-12-01): the final code of issue 16: the default check's text (README), the health
# profile, the bar (median of 3), and the same bar on an install that has its bytecode.
export PYTHONUNBUFFERED=1 NO_COLOR=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee $OUT/i.log) 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-deps --no-build-isolation . || exit 1
echo "== commit $(git rev-parse --short HEAD 2>/dev/null); $(date -u) nproc $(nproc)"; nvidia-smi -L
T() { local s=$(date +%s%N); "$@"; local rc=$?; echo "[exit $rc, $(( ($(date +%s%N) - s) / 1000000 )) ms] $*"; }
echo "== 1. default check"; T envdoctor check
echo "== 2. health profile x3"; for i in 1 2 3; do T envdoctor check --profile health -q; done
echo "== 3. the bar: python3 benchmarks/bench_check.py -n 3 --warmup 0"
T timeout 200 python3 benchmarks/bench_check.py -n 3 --warmup 0 --json $OUT/i_bench.json
echo "== 4. an install with its bytecode: every module compiled into PYTHONPYCACHEPREFIX, used by floor, reference and check alike"
export PYTHONPYCACHEPREFIX=/tmp/pyc; SP=$(python3 -c "import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))")
T python3 -m compileall -q -j 0 "$SP" /usr/lib/python3.12 > /dev/null 2>&1
envdoctor check -s torch.bytecode | sed -n 3,4p
T timeout 100 python3 benchmarks/bench_check.py -n 1 --warmup 0
echo "== done $(date -u)"
