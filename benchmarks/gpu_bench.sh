#!/usr/bin/env bash
# The speed bar of issue 4 on the GPU machine: floor, reference and the full default
# `envdoctor check`, median of 3 in one run, and the check with smokes forced in turn (lanes=0)
# and side by side (lanes=1). ~4-6 minutes. Paste the output into docs/benchmarks.md.
set +e
echo "=== machine: nproc; nvidia-smi -L; python -c versions ==="
nproc; nvidia-smi -L
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
echo "=== bench: python3 benchmarks/bench_check.py -n 3 --warmup 1 --lanes both ==="
timeout 900 python3 "$(dirname "$0")/bench_check.py" -n 3 --warmup 1 --lanes both --json /tmp/envdoctor-bench.json
echo "exit=$?"
