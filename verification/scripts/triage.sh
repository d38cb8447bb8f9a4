#!/usr/bin/env bash
# Triage and migration on the one-H200 machine. Expected:
#   before: a healthy report (exit 0), saved as JSON.
#   fault_triton_version 3.5.0 (torch 2.11.0+cu130 pins triton==3.6.0): the after report has
#     triton.torch_pin (and maybe triton.* / compile.* rows) failing; exit 1.
#   envdoctor diff before.json after.json: "triton 3.6.0 → 3.5.0" under Versions, triton.torch_pin
#     "pass → fail" under Regressions with its pip hint; exit 1. Same in markdown and json.
#   diff of a report with itself: "no differences", exit 0. Garbage input: one line, exit 2.
#   --redact: neither the host name nor the GPU UUID/serial appears; <gpu-uuid-1> does.
#   HF_TOKEN / URL-credential canaries: never printed (grep counts 0).
# Smoke tests are deselected in the before/after runs to keep this ~1 minute (they are not
# what a version diff is about). Every fault is undone at the end, even on error.
# Each exit status is asserted (`want` in faults.sh); exits 1 when one does not hold.
set +e
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit (fault_* functions), from this repository
h() { echo; echo "=== $1: ${*:2} ==="; }
rc() { echo "(exit $?)"; }
T="$(command -v timeout) 240"
OUT=$(mktemp -d)
cd "$OUT" || exit 1
trap 'fault_triton_version off >/dev/null 2>&1' EXIT
SEL=(--deselect smoke,perf,distributed)

h "before (healthy)" envdoctor check "${SEL[@]}" --json before.json
$T envdoctor check "${SEL[@]}" --json before.json; want 0 "report before"

h "inject" fault_triton_version 3.5.0
fault_triton_version 3.5.0

h "after (triton dist-info says 3.5.0)" envdoctor check "${SEL[@]}" --json after.json
$T envdoctor check "${SEL[@]}" --json after.json; want 1 "report after the fault"

h "undo" fault_triton_version off
fault_triton_version off

h "diff (text, exit 1 expected)" envdoctor diff before.json after.json
envdoctor diff before.json after.json; want 1 "diff text"

h "diff (markdown, for the issue)" envdoctor diff before.json after.json --format markdown
envdoctor diff before.json after.json --format markdown; want 1 "diff markdown"

h "diff (json, head)" envdoctor diff before.json after.json --format json
envdoctor diff before.json after.json --format json | head -40; want 0 "diff json"

h "identical (exit 0)" envdoctor diff before.json before.json
envdoctor diff before.json before.json; want 0 "diff with itself"

h "garbage input (one line, exit 2)" envdoctor diff before.json truncated.json
head -c 300 before.json > truncated.json
envdoctor diff before.json truncated.json; want 2 "garbage input"

h "redact: host, GPU UUID and serial must not appear" envdoctor check --select nvidia,system --redact --format json
HOST=$(hostname)
UUID=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
SERIAL=$(nvidia-smi --query-gpu=serial --format=csv,noheader | head -1)
$T envdoctor check --select nvidia,system --redact --format json -o redacted.json; want 0 "redacted json"
echo "host '$HOST' mentions: $(grep -cw -- "$HOST" redacted.json)"
[ -n "$UUID" ] && echo "uuid '$UUID' mentions: $(grep -c -- "$UUID" redacted.json)"
[ -n "$SERIAL" ] && echo "serial '$SERIAL' mentions: $(grep -cw -- "$SERIAL" redacted.json)"
echo "placeholders: $(grep -o '<gpu-uuid-[0-9]*>\|<gpu-serial-[0-9]*>\|<host>\|<home>\|<user>' redacted.json | sort | uniq -c | tr '\n' ' ')"

h "redacted markdown for a bug report (first 60 lines)" envdoctor check --select nvidia,torch,triton --redact --format markdown
$T envdoctor check --select nvidia,torch,triton --redact --format markdown | head -60; want 0 "redacted markdown"

h "secret canaries (counts must be 0)" HF_TOKEN=hf_... PIP_INDEX_URL=https://u:p@host envdoctor check -v --select system,packages
HF_TOKEN=hf_CanaryCanaryCanary0123456789ab PIP_INDEX_URL=https://canaryu:canaryp@pypi.example.com/simple \
  TORCHINDUCTOR_REMOTE_URL=redis://canaryu:canaryp@10.0.0.9:6379 \
  $T envdoctor check -v --select system,packages --json canary.json > canary.txt; want 0 "canaries"
echo "canary mentions: text $(grep -c 'hf_Canary\|canaryu\|canaryp' canary.txt), json $(grep -c 'hf_Canary\|canaryu\|canaryp' canary.json)"
grep -o '"PIP_INDEX_URL": "[^"]*"\|"TORCHINDUCTOR_REMOTE_URL": "[^"]*"' canary.json

h "triton dist-info restored" python3 -c "import importlib.metadata as m; print(m.version('triton'))"
python3 -c "import importlib.metadata as m; print(m.version('triton'))"
echo "reports kept in $OUT"
finish
