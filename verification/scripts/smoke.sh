#!/usr/bin/env bash
# Smoke checks on the GPU machine: every smoke passes with per-GPU items
# and durations; then natural faults, one at a time, each undone: the right smoke names the
# right cause and the other smokes still run. Expected:
#   healthy                   all smokes pass (xla skips: not installed); exit 0
#   no C compiler on PATH     smoke.triton / smoke.compile / cudagraphs / amp fail "no C compiler found"
#   Python.h moved away       the same smokes fail "Python.h is missing (install python3-dev)"
#   unwritable TMPDIR         every smoke passes: tempfile and gcc fall back to /tmp (seen on
#                             the H200, 2026-11-29; the first guess was that compile smokes fail)
#   CUDA_VISIBLE_DEVICES=     smoke.matmul fails "CUDA_VISIBLE_DEVICES='' hides all 1 GPU(s)";
#                             GPU smokes skip with that reason; smoke.compile runs on CPU
# Each envdoctor run takes roughly one first torch.compile (10-30 s); ~3 minutes in all.
# Each exit status is asserted (`want` in faults.sh); exits 1 when one does not hold.
set +e
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit (fault_* functions), from this repository
h() { echo; echo "=== $1: ${*:2} ==="; }
OUT=$(mktemp -d)
rows() {  # id, status, duration, message and items of each smoke in a JSON report
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for x in r["results"]:
    if x["id"].startswith("smoke."):
        print(f"{x['id']:<18} {x['status']:<5} {x.get('duration_s', 0):6.2f}s  {x['message']}")
        if x.get("hint"):
            print(f"{'':>32}hint: {x['hint']}")
        for i in x.get("items", []):
            print(f"{'':>32}- {i['name']}: {i['status']} {i['message']}")
print("total", r.get("duration_s"), "s;", r.get("summary"))
PY
}

h "healthy: every smoke" envdoctor check --select smoke -v --json $OUT/healthy.json
timeout 300 envdoctor check --select smoke -v --json $OUT/healthy.json; want 0 "smokes healthy"
rows $OUT/healthy.json

h "healthy: per-smoke detail (kernels, graph breaks, per-GPU errors)" python3 -c "details of smoke.*"
python3 - $OUT/healthy.json <<'PY'
import json, sys
for x in json.load(open(sys.argv[1]))["results"]:
    if x["id"].startswith("smoke.") and x["status"] != "skip":
        print(x["id"], json.dumps(x.get("details"))[:1500])
PY

NOCC=$(fault_no_compiler_path)
h "fault: no C/C++ compiler on PATH" env -u CC -u CXX PATH=$NOCC envdoctor check --select smoke --json $OUT/nocc.json
TO=$(command -v timeout); ED=$(command -v envdoctor); env -u CC -u CXX PATH=$NOCC $TO 300 $ED check --select smoke --json $OUT/nocc.json > /dev/null; want 1 "no compiler"
rows $OUT/nocc.json

h "fault: Python.h moved away" fault_python_h on
fault_python_h on
h "fault: Python.h moved away" envdoctor check --select smoke --json $OUT/pyh.json
timeout 300 envdoctor check --select smoke --json $OUT/pyh.json > /dev/null; want 1 "Python.h hidden"
rows $OUT/pyh.json
h "undo" fault_python_h off
fault_python_h off

RO=$(fault_ro_dir)
h "fault: unwritable temporary directory" TMPDIR=$RO envdoctor check --select smoke --json $OUT/ro.json
TMPDIR=$RO timeout 300 envdoctor check --select smoke --json $OUT/ro.json > /dev/null; want 0 "read-only TMPDIR"
rows $OUT/ro.json
fault_ro_dir off

h "fault: CUDA_VISIBLE_DEVICES=" CUDA_VISIBLE_DEVICES= envdoctor check --select smoke --json $OUT/cvd.json
CUDA_VISIBLE_DEVICES= timeout 300 envdoctor check --select smoke --json $OUT/cvd.json > /dev/null; want 1 "GPU hidden"
rows $OUT/cvd.json

h "after the faults: healthy again" envdoctor check --select smoke
timeout 300 envdoctor check --select smoke > /dev/null; want 0 "healthy again"
rm -rf "$OUT"
finish
