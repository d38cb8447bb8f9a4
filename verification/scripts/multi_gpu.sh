#!/usr/bin/env bash
# Two or more GPUs: the default check judges every GPU; CUDA_VISIBLE_DEVICES by index and by UUID
# selects one; torchrun over NCCL (one rank per GPU) measures an exact all-reduce and the bus
# bandwidth; a job whose rank 1 has its GPUs hidden names that rank and explains torchrun's
# ChildFailedError. Needs 2+ GPUs. Each outcome is asserted (`expect` in faults.sh); exits 1 when
# one does not hold. About 5 minutes.   bash verification/scripts/multi_gpu.sh
set +e
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 NO_COLOR=1
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit and its assertions
OUT=$(mktemp -d)
N=$(nvidia-smi -L | grep -c '^GPU ')
[ "$N" -ge 2 ] || { echo "!! this script needs 2 or more GPUs (found $N)"; exit 1; }

expect "default check, every GPU" 0 "^(HEALTHY|OK, with warnings)" -- envdoctor check -v --json "$OUT/healthy.json"
expect "smoke.matmul on every GPU" 0 "matmul correct on $N GPU\(s\)" -- envdoctor check -s smoke.matmul -v
U1=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 1)
expect "CUDA_VISIBLE_DEVICES=1" 0 "matmul correct on 1 GPU\(s\)" -- env CUDA_VISIBLE_DEVICES=1 envdoctor check -s nvidia.cuda_visible_devices,torch.cuda_available,smoke.matmul -v
expect "CUDA_VISIBLE_DEVICES=<UUID of GPU 1>" 0 "matmul correct on 1 GPU\(s\)" -- env CUDA_VISIBLE_DEVICES="$U1" envdoctor check -s nvidia.cuda_visible_devices,torch.cuda_available,smoke.matmul -v

expect "torchrun, one rank per GPU, NCCL" 0 "(HEALTHY|OK, with warnings)" -- timeout 300 torchrun --standalone --nproc-per-node="$N" -m envdoctor check --distributed --json "$OUT/dist.json"
python3 - "$OUT/dist.json" <<'PY'
import json, sys
rows = {r["id"]: r for r in json.load(open(sys.argv[1]))["results"]}
for cid in ("distributed.allreduce", "distributed.bandwidth"):
    print(cid, rows[cid]["status"], rows[cid]["message"][:200])
assert rows["distributed.allreduce"]["status"] == "pass" and "exact" in rows["distributed.allreduce"]["message"]
assert rows["distributed.bandwidth"]["status"] == "pass" and "GB/s" in rows["distributed.bandwidth"]["message"]
PY
want 0 "all-reduce exact and bandwidth measured"

printf '#!/bin/bash\n[ "$LOCAL_RANK" = 1 ] && export CUDA_VISIBLE_DEVICES=\nexec python3 -m envdoctor check --distributed --rank-timeout 60\n' > "$OUT/rankwrap.sh"
chmod +x "$OUT/rankwrap.sh"
expect "rank 1's GPUs hidden" 1 "rank 1 .*torch.cuda.is_available\(\) is False on this rank" -- timeout 300 torchrun --standalone --nproc-per-node="$N" --no-python "$OUT/rankwrap.sh"
saw "torchrun reports any non-zero exit as 'ChildFailedError'"
rm -rf "$OUT"
finish
