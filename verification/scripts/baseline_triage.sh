#!/usr/bin/env bash
# Triage of the GPU machine's own paste (collect_env, nvidia-smi, nvidia-smi -q, pip list) finds no
# problem; a baseline catches a changed distribution and a changed library file, and passes again
# once they are restored; the rehearsal of a UID with no passwd entry names the cache it cannot
# write. Needs root (it edits Triton's dist-info and an nvidia-cublas .so, then restores both).
# Each outcome is asserted (`expect` in faults.sh); exits 1 when one does not hold. About 1 minute.
set +e
export NO_COLOR=1
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit and its assertions
OUT=$(mktemp -d); cd "$OUT" || exit 1

own_paste_is_clean "triage of the machine's own paste"

expect "baseline recorded" 0 "recorded [0-9]+ distributions" -- envdoctor baseline b.json
expect "baseline unchanged" 0 "HEALTHY" -- envdoctor check --baseline b.json --select baseline -q
fault_triton_version 9.9.9
expect "a distribution changed" 1 "triton" -- envdoctor check --baseline b.json --select baseline.distributions
fault_triton_version off
F=$(python3 -c "import importlib.metadata as m; d=next(x for x in m.distributions() if (x.metadata['Name'] or '').startswith('nvidia-cublas')); print(next(str(d.locate_file(f)) for f in d.files if '.so' in str(f)))")
cp -p "$F" orig.so && printf x >> "$F"
expect "a library file changed" 1 "cublas" -- envdoctor check --baseline b.json --select baseline.files
cp -p orig.so "$F"
expect "baseline restored" 0 "HEALTHY" -- envdoctor check --baseline b.json --select baseline -q

expect "rehearsal of a UID without passwd entry" 1 "is not writable" -- env -u TRITON_CACHE_DIR -u XDG_CACHE_HOME envdoctor check --select system.python --as-user 1000680000
saw "TRITON_CACHE_DIR=/tmp/triton"
cd / && rm -rf "$OUT"
finish
