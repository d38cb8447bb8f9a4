#!/usr/bin/env bash
# The XLA checks and smoke.xla against a real torch_xla, on any machine (PJRT_DEVICE=CPU: no GPU or
# TPU needed). MODE pair: a matching pair (e.g. `pip install torch==2.9.0 torch_xla==2.9.0`) passes
# and the smoke computes on xla:0; MODE mismatch: torch_xla 2.9.0 under another torch
# (`pip install --no-deps torch_xla==2.9.0` beside torch 2.13) fails both, naming the pair and the
# pin as the fix, not a reinstall of the extension. PY: the venv's python, with envdoctor installed.
# Each outcome is asserted (`expect` in faults.sh); exits 1 when one does not hold.
#   PY=/path/to/venv/bin/python bash verification/scripts/xla.sh pair|mismatch
set +e
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the fault kit and its assertions
PY=${PY:-python3}
SEL=(--select xla --select smoke.xla --select packages.versions -v)
case "${1:-}" in
  pair)
    expect "matching torch/torch_xla pair" 0 "torch_xla [0-9.]+ matches torch" -- env PJRT_DEVICE=CPU "$PY" -m envdoctor check "${SEL[@]}"
    saw "matmul on xla:0 .* matches CPU" ;;
  mismatch)
    expect "torch_xla built for another torch" 1 "torch_xla [0-9.]+ is built for torch [0-9.]+, but torch .* is installed" -- env PJRT_DEVICE=CPU "$PY" -m envdoctor check "${SEL[@]}"
    saw "its extension _XLAC was built for another torch"
    saw 'pip install "torch~='
    if grep -q -- "--force-reinstall" <<<"$EXPECT_OUT"; then echo "!! FAIL: the fix is a reinstall of the extension"; fails=$((fails + 1)); fi ;;
  *) echo "usage: PY=... $0 pair|mismatch" >&2; exit 2 ;;
esac
finish
