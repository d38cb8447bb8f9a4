#!/usr/bin/env bash
# envdoctor bundle on a real GPU machine: a healthy bundle (no repro, real nvidia-smi -q, the
# nvidia-bug-report.sh tail when the driver ships it), then a bundle made with a fault (PATH without
# any C compiler, CC/CXX unset: Triton cannot build its launcher) whose repro_smoke.triton.py, run on
# its own in the same environment, must fail the way the smoke did, naming the compiler; triage and
# diff read the bundles. Asserts each outcome; exits non-zero when one does not hold.
#   bash verification/bundle.sh        (repository root; envdoctor and a CUDA torch installed; PY= to pick python)
set -uo pipefail
PY=${PY:-python3}
sel=()
[ -n "${SELECT:-}" ] && sel=(-s "$SELECT")  # e.g. SELECT=smoke,system.environment for a quicker healthy run
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "!! $*"; fails=$((fails + 1)); }
# unpack BUNDLE: into $work/<name>/ (dir= its envdoctor-bundle/), checking the manifest (sizes, sha256, 1 MB)
unpack() {
  local b=$1 d
  d="$work/$(basename "$1" .tar.gz)"
  dir="$d/envdoctor-bundle"
  mkdir -p "$d" && tar xzf "$b" -C "$d" || { fail "$b: not a tar.gz"; return 1; }
  "$PY" - "$d/envdoctor-bundle" <<'EOF' || fail "$b: manifest does not match its files"
import hashlib, json, os, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
names = set(os.listdir(d)) - {"manifest.json"}
assert names == {f["name"] for f in m["files"]}, names
for f in m["files"]:
    data = open(os.path.join(d, f["name"]), "rb").read()
    assert len(data) == f["bytes"] and hashlib.sha256(data).hexdigest() == f["sha256"], f["name"]
total = sum(os.path.getsize(os.path.join(d, n)) for n in os.listdir(d))
assert total <= 1024 * 1024, total
print(f"   manifest true: {len(names) + 1} files, {total} bytes; repros {[r['check'] for r in m['repros']]}")
EOF
}

echo "== healthy: envdoctor bundle --nvidia-bug-report"
"$PY" -m envdoctor bundle -o "$work/healthy.tar.gz" --nvidia-bug-report "${sel[@]}" || fail "healthy bundle: exit $?"
unpack "$work/healthy.tar.gz"; h=$dir
grep -q '"no_repro": "No repro' "$h/manifest.json" || fail "healthy: the manifest does not say there is no repro"
grep -q 'No repro: no smoke failed or errored' "$h/README.md" || fail "healthy: README does not say there is no repro"
ls "$h" | grep -q '^repro_' && fail "healthy: a repro was shipped: $(ls "$h" | grep '^repro_')"
grep -q 'Driver Version' "$h/nvidia-smi-q.txt" || fail "healthy: nvidia-smi-q.txt holds no nvidia-smi -q output"
if command -v nvidia-bug-report.sh >/dev/null; then
  if [ -s "$h/nvidia-bug-report.log" ]; then echo "   nvidia-bug-report.log: $(wc -c <"$h/nvidia-bug-report.log") bytes"
  elif grep -q 'nvidia-bug-report: no log came out' "$h/README.md"; then echo "   (nvidia-bug-report.sh wrote no log in time: said in the README)"
  else fail "healthy: nvidia-bug-report.sh is here but neither its log nor why not is in the bundle"; fi
else
  grep -q 'nvidia-bug-report.sh is not on PATH' "$h/README.md" || fail "healthy: no note that nvidia-bug-report.sh is absent"
fi
grep -iE 'verdict|repro' "$h/manifest.json" | head -3

echo "== fault: PATH without a C compiler (python and nvidia-smi only), CC/CXX unset"
bin="$work/bin"
mkdir "$bin"
# A wrapper, not a link: a venv's python found through a link elsewhere would not be that venv.
printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v "$PY")" >"$bin/python3" && chmod +x "$bin/python3"
ln -s "$(command -v nvidia-smi)" "$bin/nvidia-smi"
for c in gcc cc clang; do PATH=$bin command -v $c >/dev/null && fail "fault: $c still on the PATH"; done
nocc() { env -u CC -u CXX PATH="$bin" "$@"; }
nocc python3 -m envdoctor bundle -o "$work/nocc.tar.gz" -s smoke,system.environment || fail "fault bundle: exit $?"
unpack "$work/nocc.tar.gz"; f=$dir
ls "$f"
[ -f "$f/repro_smoke.triton.py" ] || fail "fault: no repro_smoke.triton.py (smoke.triton did not fail?)"
for script in "$f"/repro_*.py; do
  [ -f "$script" ] || continue
  check=$(basename "$script" .py); check=${check#repro_}
  mkdir -p "$work/alone/$check" && cp "$script" "$work/alone/$check/"
  out=$(cd "$work/alone/$check" && nocc python3 "$(basename "$script")" 2>&1); rc=$?
  echo "-- $(basename "$script") alone: exit $rc"; echo "$out" | tail -3
  [ "$rc" != 0 ] || fail "$check: its repro passed on its own where the smoke failed"
  grep -qiE 'compiler' <<<"$out" || fail "$check: its repro's error does not name the compiler"
  if [ "$check" = smoke.triton ]; then
    line=$(grep -iE 'C compiler' "$f/smoke.triton.log" | tail -1 | sed 's/^ *//')
    [ -n "$line" ] || fail "smoke.triton.log names no C compiler"
    grep -qF -- "$line" <<<"$out" || fail "smoke.triton: the repro's error differs from the smoke's: $line"
  fi
  grep -qE '^(import|from) envdoctor' "$script" && fail "$check: the repro imports envdoctor"
done
find "$work/alone" -mindepth 2 ! -name 'repro_*.py' | grep . && fail "a repro left files beside itself"

echo "== triage and diff read the bundles"
out=$("$PY" -m envdoctor triage "$work/nocc.tar.gz" 2>&1); rc=$?
echo "$out" | head -6
[ "$rc" = 1 ] && grep -qi 'compiler' <<<"$out" || fail "triage of the fault bundle: exit $rc, no compiler cause"
"$PY" -m envdoctor diff "$work/healthy.tar.gz" "$work/nocc.tar.gz" >"$work/diff.txt" 2>&1; rc=$?
head -12 "$work/diff.txt"
[ "$rc" = 1 ] && grep -q 'smoke.triton' "$work/diff.txt" || fail "diff healthy -> fault: exit $rc, smoke.triton not named"

cp "$work/healthy.tar.gz" "$work/nocc.tar.gz" "${OUT:-/tmp}/" 2>/dev/null
echo "failures: $fails"
exit $((fails > 0))
