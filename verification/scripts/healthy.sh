#!/usr/bin/env bash
# The full default run on the GPU machine, as a user runs it: text (for the README) and JSON.
# Each outcome is asserted (`expect` in faults.sh); exits 1 when any does not hold.
set +e
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit (fault_* functions), from this repository
echo "=== envdoctor check (default profile, every default check and smoke) ==="
expect "default check" 0 "HEALTHY|OK, with warnings" -- envdoctor check --no-color --json /tmp/healthy.json
python3 - <<'PY'
import json
r = json.load(open("/tmp/healthy.json"))
assert r["facts"].get("gpus"), "no GPU in the facts"
print("summary", r["summary"], "duration_s", r["duration_s"])
for k in ("driver", "torch_runtime"):
    v = r["facts"].get(k)
    if isinstance(v, dict):
        print(k, {x: v.get(x) for x in ("version", "cuda_version", "cuda", "cudnn", "nccl", "arch_list", "device_count")})
for g in r["facts"].get("gpus", []) if isinstance(r["facts"].get("gpus"), list) else []:
    print("gpu", g.get("index"), g.get("name"), "CC", g.get("cc"))
for x in r["results"]:
    if x["id"] == "torch.loaded_libraries":
        for i in x["items"]:
            print("loaded:", i["name"], i["message"])
PY
want 0 "the report names the GPUs"
echo "=== envdoctor check --select nvidia.gpus -v (the H200 and its compute capability) ==="
expect "GPU, driver, torch build" 0 "HEALTHY|OK, with warnings" -- envdoctor check --select nvidia.gpus,nvidia.driver,torch.build,torch.loaded_libraries -v --no-color
finish
