#!/usr/bin/env bash
# `pip install <checkout>` into a fresh venv, then `envdoctor check`: exit 0, grouped report,
# every torch-related check skipped with its reason (no torch), then the same with CPU torch.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$root"
cd "$work"
echo "--- fresh venv, no torch: envdoctor check"
"$work/venv/bin/envdoctor" check --no-color --json "$work/no-torch.json" | tee "$work/no-torch.txt"
"$work/venv/bin/python" - "$work/no-torch.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
bad = [r["id"] for r in data["results"] if r["status"] in ("fail", "error")]
assert not bad, f"fresh venv without torch: failing checks {bad}"
torchy = [r for r in data["results"] if r["area"] in ("torch", "smoke") or r["id"] == "packages.versions"]
assert torchy and all(r["status"] == "skip" for r in torchy), [(r["id"], r["status"]) for r in torchy]
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
