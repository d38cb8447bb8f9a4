#!/usr/bin/env bash
# Distributed mode on the one-GPU machine: NCCL with world size 1 under torchrun, the combined
# report, and the fleet summary of it. Expected: distributed.launch/rendezvous/allreduce pass
# with backend nccl on cuda:0; distributed.bandwidth skips (needs 2 ranks); exit 0.
# A second run hides the GPU (CUDA_VISIBLE_DEVICES="") to show the gloo fallback. ~1-2 minutes.
set +e
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit (fault_* functions), from this repository
h() { echo; echo "=== $1: ${*:2} ==="; }
OUT=$(mktemp -d)
port() { python3 -c "import socket;s=socket.socket();s.bind(('127.0.0.1',0));print(s.getsockname()[1])"; }

P=$(port)
h "NCCL world size 1 (healthy)" torchrun --nproc-per-node=1 --master-addr=127.0.0.1 --master-port=$P -m envdoctor check --distributed --select nvidia,torch -v --json $OUT/nccl.json
timeout 300 torchrun --nproc-per-node=1 --master-addr=127.0.0.1 --master-port=$P -m envdoctor check --distributed --select nvidia,torch -v --json $OUT/nccl.json
echo "exit=$?"
h "combined report: backend and collective numbers" python3 -c "json facts.distributed"
python3 - "$OUT/nccl.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["facts"]["distributed"]
print("backend:", d.get("backend"), "members:", d.get("members"), "store:", d.get("store"))
for r in d["ranks"]:
    print("rank", r["rank"], r["host"], r["state"], json.dumps(r.get("collective")))
PY

h "fleet summary of the combined report" envdoctor fleet $OUT/nccl.json
timeout 60 envdoctor fleet $OUT/nccl.json
echo "exit=$?"

P=$(port)
h "GPU hidden (CUDA_VISIBLE_DEVICES=''): gloo fallback" CUDA_VISIBLE_DEVICES= torchrun --nproc-per-node=1 ... -m envdoctor check --distributed --select distributed
CUDA_VISIBLE_DEVICES= timeout 300 torchrun --nproc-per-node=1 --master-addr=127.0.0.1 --master-port=$P -m envdoctor check --distributed --select distributed -v
echo "exit=$?"

h "--distributed without a launcher (usage error, exit 2)" envdoctor check --distributed
env -u RANK -u WORLD_SIZE envdoctor check --distributed
echo "exit=$?"
rm -rf "$OUT"
