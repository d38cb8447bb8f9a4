#!/usr/bin/env bash
# GPU hardware health on the GPU machine, one or two GPUs: envdoctor's health rows and
# the figures behind them (the gpu_health fact) side by side with nvidia-smi's own readouts, so
# every number can be compared. Expected on a healthy H200 box: every health.* row passes except
# health.retired_pages (skip: Hopper remaps rows instead); ECC 0, remapped rows 0/0 not pending,
# recovery action 0, PCIe Gen5 x16 of Gen5 x16, NVLink 18/18 up per GPU (with two GPUs),
# clocks "GPU idle", no Xid since boot (from /dev/kmsg), nvidia.device_nodes passes. < 1 minute.
# Asserts the health rows pass (`expect` in faults.sh) and the figures were read; exits 1 otherwise.
set +e
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit and its assertions
h() { echo; echo "=== $* ==="; }
OUT=$(mktemp -d)

h envdoctor check --select health,nvidia.device_nodes -v --json $OUT/health.json
expect "health rows" 0 "HEALTHY|OK, with warnings" -- timeout 60 envdoctor check --select health,nvidia.device_nodes -v --json $OUT/health.json

h "envdoctor's figures (gpu_health fact, per GPU)"
python3 - $OUT/health.json <<'PY'
import json, sys
facts = json.load(open(sys.argv[1]))["facts"]
h = facts.get("gpu_health") or {}
if "unavailable" in h or "error" in h or not h.get("nvml"):
    print("gpu_health:", {k: h.get(k) for k in ("unavailable", "error", "nvml_reason")})
assert (h.get("nvml") or {}).get("gpus"), "gpu_health has no NVML figures"
for g in ((h.get("nvml") or {}).get("gpus") or []):
    link = g.get("nvlink") or {}
    print(f"GPU {g['index']} {g.get('pci_bus_id')} minor={g.get('minor_number')}")
    print(f"  ecc_mode={g.get('ecc_mode')} ecc={g.get('ecc')}")
    print(f"  remapped_rows={g.get('remapped_rows')} retired_pages={g.get('retired_pages')} recovery_action={g.get('recovery_action')}")
    print(f"  pcie={g.get('pcie')} utilization={g.get('utilization_gpu')}%")
    print(f"  nvlink up={len(link.get('active', []))} down={link.get('inactive')} clocks_event_reasons=0x{g.get('clocks_event_reasons', 0):x}")
    print(f"  unsupported={g.get('unsupported')} errors={g.get('errors')}")
log = h.get("kernel_log") or {}
print(f"kernel log: source={log.get('source')!r} complete={log.get('complete')} reason={log.get('reason')!r} xid events={len(log.get('events') or [])}")
PY
want 0 "gpu_health has NVML figures"

h "nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER,PERFORMANCE"
timeout 20 nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER,PERFORMANCE | grep -v '^ *$'

h "nvidia-smi -q -d PCIE (GPU Link Info) and utilization"
timeout 20 nvidia-smi -q -d PCIE | grep -E '^GPU |PCIe Generation|Link Width|Max|Current'
timeout 20 nvidia-smi --query-gpu=index,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,utilization.gpu,clocks_event_reasons.active --format=csv

h "nvidia-smi nvlink -s (links per GPU)"
timeout 20 nvidia-smi nvlink -s | grep -cE 'Link [0-9]+: [0-9]' ; timeout 20 nvidia-smi nvlink -s | grep -iE 'inactive|GPU ' | head -20

h "kernel log: Xid since boot, device nodes"
timeout 5 dmesg | grep -i 'xid' | tail -5; echo "xid lines: $(timeout 5 dmesg | grep -ci 'xid')"
ls -la /dev/nvidiactl /dev/nvidia-uvm /dev/nvidia[0-9]* 2>&1
grep -H 'Device Minor' /proc/driver/nvidia/gpus/*/information 2>&1
ls -d /sys/module/nvidia_uvm 2>&1

h "the health fact's own cost (wall time of the rows)"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('duration_s', r['duration_s']); [print(x['id'], x['status'], round(x.get('duration_s',0),2)) for x in r['results']]" $OUT/health.json
rm -rf "$OUT"
finish
