#!/usr/bin/env bash
# `pip install <checkout>` into a fresh venv, then `envdoctor check`: without torch it fails
# (exit 1, naming torch missing in this interpreter) unless told torch is not expected
# (`--expect torch=none`: exit 0, grouped report, every torch-related check skipped with its
# reason); then the same with CPU torch.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$root"
cd "$work"
echo "--- fresh venv, no torch: envdoctor check fails, naming torch missing"
rc=0
"$work/venv/bin/envdoctor" check --no-color > "$work/missing.txt" || rc=$?
cat "$work/missing.txt"
test "$rc" -eq 1 || { echo "expected exit 1 without torch, got $rc"; exit 1; }
grep -q "torch is not installed in the interpreter examined ($work/venv/bin/python" "$work/missing.txt"
grep -q "bin/python[0-9.]* -m pip install torch" "$work/missing.txt"
echo "ok: no torch is exit 1 with the interpreter and the fix"
echo "--- fresh venv, no torch, --expect torch=none: envdoctor check"
"$work/venv/bin/envdoctor" check --no-color --expect torch=none --json "$work/no-torch.json" | tee "$work/no-torch.txt"
"$work/venv/bin/python" - "$work/no-torch.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
bad = [r["id"] for r in data["results"] if r["status"] in ("fail", "error")]
assert not bad, f"fresh venv without torch, torch=none: failing checks {bad}"
torchy = [r for r in data["results"] if r["area"] in ("torch", "smoke") or r["id"] == "packages.versions"]
assert torchy and all(r["status"] == "skip" for r in torchy), [(r["id"], r["status"]) for r in torchy]
assert data["platform"]["executable"].startswith(sys.prefix), data["platform"]
print(f"ok: {len(torchy)} torch-related checks skipped, e.g. {torchy[0]['id']}: {torchy[0]['message']}")
PY
echo "--- a plugin distribution installed into the venv: in list and in the report"
"$work/venv/bin/pip" install -q "$root/examples/plugin"
"$work/venv/bin/envdoctor" list | grep "^example.scratch_writable .*(envdoctor-example-plugin 0.1.0 \[example\])"
"$work/venv/bin/envdoctor" check --no-color --select example | tee "$work/plugin.txt"
grep -q "The scratch directory is writable: " "$work/plugin.txt"
echo "ok: the plugin's checks are listed with their source and reported"
echo "--- fresh venv with CPU torch 2.13.0: envdoctor check"
"$work/venv/bin/pip" install -q torch==2.13.0
"$work/venv/bin/envdoctor" check --no-color | tee "$work/torch.txt"
grep -q "torch 2.13.0+cpu" "$work/torch.txt"
echo "ok: torch version and CPU build reported"
