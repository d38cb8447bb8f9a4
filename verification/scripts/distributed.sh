#!/usr/bin/env bash
# Distributed mode on the one-GPU machine: NCCL with world size 1 under torchrun, the combined
# report, and the fleet summary of it. Expected: distributed.launch/rendezvous/allreduce pass
# with backend nccl on cuda:0; distributed.bandwidth skips (needs 2 ranks); exit 0.
# A second run hides the GPU (CUDA_VISIBLE_DEVICES="") to show the gloo fallback. ~1-2 minutes.
# Each outcome is asserted (`expect` in faults.sh); exits 1 when any does not hold.
set +e
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit (fault_* functions), from this repository
h() { echo; echo "=== $1: ${*:2} ==="; }
OUT=$(mktemp -d)
port() { python3 -c "import socket;s=socket.socket();s.bind(('127.0.0.1',0));print(s.getsockname()[1])"; }

P=$(port)
h "NCCL world size 1 (healthy)" torchrun --nproc-per-node=1 --master-addr=127.0.0.1 --master-port=$P -m envdoctor check --distributed --select nvidia,torch -v --json $OUT/nccl.json
expect "NCCL world size 1" 0 "HEALTHY|OK, with warnings" -- timeout 300 torchrun --nproc-per-node=1 --master-addr=127.0.0.1 --master-port=$P -m envdoctor check --distributed --select nvidia,torch -v --json $OUT/nccl.json
h "combined report: backend and collective numbers" python3 -c "json facts.distributed"
python3 - "$OUT/nccl.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["facts"]["distributed"]
assert d.get("backend") == "nccl", d.get("backend")
print("backend:", d.get("backend"), "members:", d.get("members"), "store:", d.get("store"))
for r in d["ranks"]:
    print("rank", r["rank"], r["host"], r["state"], json.dumps(r.get("collective")))
PY
want 0 "the combined report's backend is nccl"

h "fleet summary of the combined report" envdoctor fleet $OUT/nccl.json
expect "fleet summary" 0 "1 node\(s\) pass" -- timeout 60 envdoctor fleet $OUT/nccl.json

P=$(port)
h "GPU hidden (CUDA_VISIBLE_DEVICES=''): gloo fallback" CUDA_VISIBLE_DEVICES= torchrun --nproc-per-node=1 ... -m envdoctor check --distributed --select distributed
expect "gloo fallback" 0 "gloo" -- env CUDA_VISIBLE_DEVICES= timeout 300 torchrun --nproc-per-node=1 --master-addr=127.0.0.1 --master-port=$P -m envdoctor check --distributed --select distributed -v

h "--distributed without a launcher (usage error, exit 2)" envdoctor check --distributed
expect "--distributed without a launcher" 2 "not started by a launcher" -- env -u RANK -u WORLD_SIZE envdoctor check --distributed
rm -rf "$OUT"
finish
