#!/bin/bash
# GPU run B (2026-12-01): the final second-stage code (run on the one-H200 machine: two were not lent then). Run from the repository root after
# installing the project (verification/README.md). OUT: where the log and reports go.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 NO_COLOR=1
OUT=${OUT:-/tmp/envdoctor-verification}; mkdir -p "$OUT"
exec > >(tee $OUT/b.log) 2>&1
if [ -d .gpu ]; then python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-deps --no-build-isolation . || exit 1; fi
echo "== commit $(git rev-parse --short HEAD 2>/dev/null); $(date -u)"; nvidia-smi -L
T() { local s=$(date +%s%N); "$@"; local rc=$?; echo "[exit $rc, $(( ($(date +%s%N) - s) / 1000000 )) ms] $*"; }
echo "== 1. default check (both GPUs), report sizes"
T envdoctor check --json $OUT/b_healthy.json --markdown $OUT/b_healthy.md | tail -3; wc -c $OUT/b_healthy.json $OUT/b_healthy.md
echo "== 2. hanging nvidia-smi first on PATH (bar: healthy + 20 s)"
mkdir -p /tmp/hang && printf '#!/bin/sh\nexec sleep 100000\n' > /tmp/hang/nvidia-smi && chmod +x /tmp/hang/nvidia-smi
PATH=/tmp/hang:$PATH T envdoctor check --json $OUT/b_smi.json | grep -v '^  [✓-]' | tail -12
echo "== 3. GPUs hidden (bar: 1.5x healthy)"
CUDA_VISIBLE_DEVICES= T envdoctor check --json $OUT/b_hidden.json | grep -v '^  [✓-]' | tail -8
echo "== 4. health profile x3 (bar: 5 s, a kernel on every GPU)"
for i in 1 2 3; do T envdoctor check --profile health -q; done
T envdoctor check --profile health -v -s smoke.matmul | grep -E 'GPU [0-9]|HEALTHY|PROBLEMS'
echo "== 5. GPU hardware health vs nvidia-smi"; T timeout 90 bash verification/scripts/health.sh 2>&1 | head -80
echo "== 6. triage of this machine's own paste (expect exit 0)"
{ timeout 60 python3 -m torch.utils.collect_env; nvidia-smi; timeout 20 nvidia-smi -q; python3 -m pip list; } > /tmp/p.txt 2>&1
T envdoctor triage /tmp/p.txt | head -25
echo "== 7. baseline, drift, rehearsal"
cd /tmp && E=envdoctor
T $E baseline /tmp/b.json; T $E check --baseline /tmp/b.json --select baseline -q
M="$(python3 -c "import importlib.metadata as m; print(m.distribution('triton')._path)")/METADATA"; cp "$M" /tmp/M.orig; sed -i 's/^Version: .*/Version: 9.9.9/' "$M"
T $E check --baseline /tmp/b.json --select baseline.distributions | tail -4; cp /tmp/M.orig "$M"
F=$(python3 -c "import importlib.metadata as m; d=next(x for x in m.distributions() if (x.metadata['Name'] or '').startswith('nvidia-cublas')); print(next(str(d.locate_file(f)) for f in d.files if '.so' in str(f)))"); cp -p "$F" /tmp/orig.so; printf x >> "$F"
T $E check --baseline /tmp/b.json --select baseline.files | tail -4; cp -p /tmp/orig.so "$F"; T $E check --baseline /tmp/b.json --select baseline -q
(unset TRITON_CACHE_DIR XDG_CACHE_HOME; T $E check --select system.python --as-user 1000680000 | tail -8)
cd - > /dev/null
echo "== 8. peer copies (every GPU pair) and --python"; PY=$(command -v python3) T timeout 150 bash verification/scripts/p2p_python.sh 2>&1 | tail -45
echo "== 9. torchrun, one rank per GPU, over NCCL (split collective code)"
T timeout 120 torchrun --standalone --nproc-per-node=$(nvidia-smi -L | wc -l) -m envdoctor check --distributed --json $OUT/b_dist.json -s system.python 2>&1 | tail -4
python3 -c "import json;d=json.load(open('$OUT/b_dist.json'));print([(r['id'],r['status'],r['message'][:160]) for r in d['results'] if r['id'].startswith('distributed')])"
echo "== 10. diff healthy vs hidden (expect regressions, exit 1)"; T envdoctor diff $OUT/b_healthy.json $OUT/b_hidden.json | tail -15
echo "== 11. speed: floor / reference / check, one round"; T timeout 200 python3 benchmarks/bench_check.py -n 1 --warmup 0 --json $OUT/b_bench.json 2>&1 | tail -12
echo "== done $(date -u)"
