#!/bin/bash
# Run D: where the default check's time goes (timelines), and candidate speed-ups.
export PYTHONUNBUFFERED=1 NO_COLOR=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee $OUT/d.log) 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-deps --no-build-isolation . || exit 1
echo "== $(date -u) nproc $(nproc)"; nvidia-smi -L
fresh() { local d=$(mktemp -d); export TRITON_CACHE_DIR=$d/t TORCHINDUCTOR_CACHE_DIR=$d/i; }
tr() { fresh; echo "=== trace: $*"; local s=$(date +%s%N); env "$@" python3 benchmarks/trace_check.py check -q --json /tmp/r.json 2>&1 | grep -E "TRACE (call|spawn|end|imported)|TRACE check .*smoke|TRACE check .*torch\.(importable|cuda)|HEALTHY|PROBLEMS" | sort -k3 -n; echo "[wall $(( ($(date +%s%N) - s) / 1000000 )) ms]"; }
pb() { fresh; echo "=== bodies: $*"; env "$@" python3 benchmarks/profile_bodies.py $ORDER 2>&1 | tail -15; }
tr X=1
tr X=1
tr ENVDOCTOR_SMOKE_PARALLEL=triton
tr ENVDOCTOR_SMOKE_PARALLEL=1
tr TORCHINDUCTOR_COMPILE_THREADS=1
tr TORCHINDUCTOR_COMPILE_THREADS=1 ENVDOCTOR_SMOKE_PARALLEL=1
ORDER=""; pb X=1
ORDER=""; pb TORCHINDUCTOR_COMPILE_THREADS=1
ORDER=cuda,addcompile; pb X=1
ORDER=cuda,addcompile; pb TORCHINDUCTOR_COMPILE_THREADS=1
ORDER=cuda,function,module,cudagraphs,amp,triton,matmul; pb X=1
ORDER=cuda,dynamo,inductor; pb X=1
fresh; echo "=== floor script, time"; s=$(date +%s%N); python3 -c "$(python3 -c 'import sys; sys.path.insert(0,"benchmarks"); import bench_check; print(bench_check.FLOOR)')"; echo "[floor wall $(( ($(date +%s%N) - s) / 1000000 )) ms]"
fresh; s=$(date +%s%N); TORCHINDUCTOR_COMPILE_THREADS=1 python3 -c "$(python3 -c 'import sys; sys.path.insert(0,"benchmarks"); import bench_check; print(bench_check.FLOOR)')"; echo "[floor threads=1 wall $(( ($(date +%s%N) - s) / 1000000 )) ms]"
echo "== done $(date -u)"
