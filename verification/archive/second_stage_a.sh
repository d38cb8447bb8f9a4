#!/bin/bash
# GPU run A (2026-12-01): the merged second-stage code on 2x H200.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 NO_COLOR=1
# Run from the repository root after installing the project (verification/README.md); OUT is
# where the log and JSON reports go. Needs 2 GPUs for parts 8-9; root for the faults.
OUT=${OUT:-/tmp/envdoctor-verification}; mkdir -p "$OUT"
exec > >(tee $OUT/gpu_a.log) 2>&1
echo "== commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(date -u)"; nvidia-smi -L
T() { local s=$(date +%s%N); "$@"; local rc=$?; echo "[exit $rc, $(( ($(date +%s%N) - s) / 1000000 )) ms] $*"; }
echo "== 1. default check, both GPUs"; ls -A /tmp > /tmp/before.txt
T envdoctor check -v --json $OUT/healthy.json | grep -v '^  ✓' | head -120
echo "== 2. CUDA_VISIBLE_DEVICES=1 / UUID / empty"
U1=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 1)
CUDA_VISIBLE_DEVICES=1 T envdoctor check -s nvidia.cuda_visible_devices,torch.cuda_available,smoke.matmul -v | tail -12
CUDA_VISIBLE_DEVICES=$U1 T envdoctor check -s nvidia.cuda_visible_devices,torch.cuda_available,smoke.matmul -v | tail -12
CUDA_VISIBLE_DEVICES= T envdoctor check --json $OUT/hidden_gpus.json | grep -v '^  [✓-]' | tail -25
echo "== 3. hanging nvidia-smi first on PATH"
mkdir -p /tmp/hang && printf '#!/bin/sh\nexec sleep 100000\n' > /tmp/hang/nvidia-smi && chmod +x /tmp/hang/nvidia-smi
PATH=/tmp/hang:$PATH T envdoctor check --json $OUT/hang_smi.json | grep -v '^  [✓-]' | tail -25
echo "== 4. hanging NVML (a pynvml whose nvmlInit never returns)"
mkdir -p /tmp/fakenvml && printf 'import time\ndef nvmlInit():\n    time.sleep(100000)\n' > /tmp/fakenvml/pynvml.py
PYTHONPATH=/tmp/fakenvml:/tmp/site T envdoctor check | grep -v '^  [✓-]' | tail -20
echo "== 5. leftovers after runs"; pgrep -af 'nvml_child|_probe_child|sleep 100000|compile_worker' || echo "no processes left"
ls -A /tmp | sort > /tmp/after.txt; echo "new in /tmp:"; comm -13 <(sort /tmp/before.txt) /tmp/after.txt | grep -v -E '^(hang|fakenvml|before.txt|after.txt)$'
echo "== 6. SIGKILL 6 s into a run"; envdoctor check > /dev/null 2>&1 & P=$!; sleep 6; kill -9 $P; sleep 3
pgrep -af '_probe_child|compile_worker|nvml_child' || echo "no processes left"; ls -A /tmp | grep -E 'envdoctor|torchinductor' || echo "no envdoctor temp dirs"
echo "== 7. compiled extensions really load"
T envdoctor check -s torch.extension_abi -v | tail -12
python3 -c "from envdoctor_checks.packages import dists; d=dists(); print({k:v.get('compiled') for k,v in d.items() if k.startswith(('torch','triton','nvidia-cu'))})"
T timeout 300 python3 -m pytest -q -p no:cacheprovider tests/checks/test_extensions.py 2>&1 | tail -4
echo "== 8. torchrun, 2 ranks over NCCL"
T timeout 240 torchrun --standalone --nproc-per-node=2 -m envdoctor check --distributed --json $OUT/dist.json 2>&1 | grep -v '^  [✓-]' | tail -40
echo "== 9. torchrun, rank 1's GPUs hidden"
printf '#!/bin/bash\n[ "$LOCAL_RANK" = 1 ] && export CUDA_VISIBLE_DEVICES=\nexec python3 -m envdoctor check --distributed --json %s/dist_hidden.json --rank-timeout 60\n' "$OUT" > /tmp/rankwrap.sh; chmod +x /tmp/rankwrap.sh
T timeout 240 torchrun --standalone --nproc-per-node=2 --no-python /tmp/rankwrap.sh 2>&1 | grep -v '^  [✓-]' | tail -40
echo "== done $(date -u)"
