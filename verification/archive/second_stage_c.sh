#!/bin/bash
# GPU run C (2026-12-01): the health profile and the report size with the final code (one H200).
export PYTHONUNBUFFERED=1 NO_COLOR=1
OUT=${OUT:-/tmp/envdoctor-verification}; mkdir -p "$OUT"
exec > >(tee $OUT/c.log) 2>&1
if [ -d .gpu ]; then python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-deps --no-build-isolation . || exit 1; fi
echo "== commit $(git rev-parse --short HEAD 2>/dev/null); $(date -u)"; nvidia-smi -L
T() { local s=$(date +%s%N); "$@"; local rc=$?; echo "[exit $rc, $(( ($(date +%s%N) - s) / 1000000 )) ms] $*"; }
echo "== 1. default check: report sizes (bars: JSON 65,536 B, Markdown 20,000 B)"
T envdoctor check --json $OUT/c_healthy.json --markdown $OUT/c_healthy.md | tail -2; wc -c $OUT/c_healthy.json $OUT/c_healthy.md
echo "== 2. health profile x4 (bar: 5 s, a kernel on every GPU)"
for i in 1 2 3 4; do T envdoctor check --profile health -q; done
T envdoctor check --profile health -v | grep -E '✓|✗|!|HEALTHY|PROBLEMS' | cut -c1-160
echo "== 3. the floor of a health check: import torch + one CUDA kernel"
for i in 1 2 3; do T python3 -c "import torch; x=torch.ones(256,256,device='cuda'); print((x@x).sum().item())"; done
echo "== done $(date -u)"
