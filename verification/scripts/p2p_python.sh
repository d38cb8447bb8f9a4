#!/usr/bin/env bash
# On a GPU machine: (1) the peer-to-peer copy body of nvidia.p2p_consumer on
# every GPU pair, whatever the GPUs (the check itself runs it on consumer GPUs only); (2)
# `envdoctor check --python` judging another interpreter, with probes (CUDA included) run by it.
# Run from the repository root with the interpreter that has torch and envdoctor
# (PY=/opt/torch/.venv/bin/python by default). Expected:
#   2 GPUs            peer_pairs lists [[0, 1]]; peer_copy exact both ways with a bandwidth
#                     (H200 NVLink: hundreds of GB/s; PCIe: ~10-25); verdict PASS
#   1 GPU             peer_pairs lists no pair; verdict "no copies"
#   check -s nvidia.p2p_consumer   skip "not a multi-GPU consumer (GeForce) machine" on H200
#   --python target   platform.executable and torch_runtime.executable are the target;
#                     torch.importable, smoke.matmul pass there; a bad path exits 2
# Each exit status is asserted (`want` in faults.sh); exits 1 when one does not hold.
set +e
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit and its assertions
PY=${PY:-/opt/torch/.venv/bin/python}
h() { echo; echo "=== $* ==="; }

h "peer copies on every GPU pair (the body, any GPUs)"
"$PY" - <<'PY'
import json, os
from envdoctor import ProbeClient
from envdoctor_checks import nvidia
probe = ProbeClient()
try:
    copies = nvidia.measure_peer_copies(probe)
finally:
    probe.close()
print(json.dumps(copies, indent=1))
verdict = nvidia.judge_peer_copies(copies, dict(os.environ))
print("verdict:", verdict.status.value if verdict else "no copies", "-", verdict.message if verdict else "")
PY
want 0 "peer copies"

h "the check (skips on data-center GPUs)"
"$PY" -m envdoctor check --no-color -v -s nvidia.p2p_consumer; want 0 "p2p check"

h "--python: a second interpreter that sees this torch only through a .pth file"
BASE=$("$PY" -c 'import sys; print(sys._base_executable)')
SITE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
T=$(mktemp -d)
"$BASE" -m venv --without-pip "$T/venv"
echo "$SITE" > "$(echo "$T"/venv/lib/python3*/site-packages)/torch-from-elsewhere.pth"
"$PY" -m envdoctor check --no-color --python "$T/venv/bin/python" -s torch,packages,smoke.matmul,system.python --json "$T/r.json"; want 0 "--python on a venv"
"$PY" - "$T/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("platform.executable:", r["platform"]["executable"])
print("torch_runtime.executable:", (r["facts"].get("torch_runtime") or {}).get("executable"))
print("options.python:", r["options"].get("python"))
PY
h "--python: a clean venv (no torch): packages.versions fails naming it"
"$BASE" -m venv --without-pip "$T/clean"
"$PY" -m envdoctor check --no-color --python "$T/clean/bin/python" -s packages,torch.importable; want 1 "--python on a clean venv"
h "--python: not an interpreter (exit 2, one line)"
"$PY" -m envdoctor check --python /etc/hostname; want 2 "--python on a non-interpreter"
rm -rf "$T"
finish
