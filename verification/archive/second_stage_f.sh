#!/bin/bash
export PYTHONUNBUFFERED=1 NO_COLOR=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee $OUT/f.log) 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-deps --no-build-isolation . || exit 1
echo "== $(date -u) nproc $(nproc)"
fresh() { local d=$(mktemp -d); export TRITON_CACHE_DIR=$d/t TORCHINDUCTOR_CACHE_DIR=$d/i; }
tr() { fresh; echo "=== trace: $*"; local s=$(date +%s%N); env "$@" python3 benchmarks/trace_check.py check -q --json /tmp/r.json 2>&1 | grep -E "TRACE (call|spawn|end|imported)|TRACE check .*smoke|HEALTHY|PROBLEMS" | sort -k3 -n; echo "[wall $(( ($(date +%s%N) - s) / 1000000 )) ms]"; }
tr X=1
tr X=1
tr ENVDOCTOR_PRECOMPILE=0
tr ENVDOCTOR_SMOKE_PARALLEL=triton
tr ENVDOCTOR_SMOKE_PARALLEL=1
envdoctor check -s torch.bytecode -v | tail -8
ls /tmp | grep -c envdoctor; ps aux | grep -c "[p]recompile"
echo "== done $(date -u)"
