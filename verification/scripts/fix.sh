#!/usr/bin/env bash
# `envdoctor fix` on the GPU machine, for the fix a GPU user meets most: the compile caches.
# TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR point at a regular file (no user can create a
# directory there): the cache checks fail and the compile smoke (Inductor's Triton kernels on
# the GPU) fails with them. `fix` without --yes changes nothing; `--yes` writes the export lines
# to the file to source and the re-check passes; a shell that sources the file compiles on the
# GPU again; `--undo` removes the file and the re-check fails again. Needs no network and no
# root beyond a writable /tmp. Each outcome is asserted; exits 1 when one does not hold. ~2 min.
set +e
export NO_COLOR=1
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../faults.sh"  # the assertions
OUT=$(mktemp -d); cd "$OUT" || exit 1
export XDG_STATE_HOME="$OUT/state"
: > "$OUT/not-a-dir"
export TORCHINDUCTOR_CACHE_DIR="$OUT/not-a-dir/inductor" TRITON_CACHE_DIR="$OUT/not-a-dir/triton"
SEL=(--select compile.inductor_cache,triton.cache_dir,smoke.compile)

expect "the broken caches fail, the compile smoke with them" 1 "PROBLEMS FOUND" -- envdoctor check "${SEL[@]}"
saw "Inductor cache \(TORCHINDUCTOR_CACHE_DIR\) .* is not writable"
saw "Triton cache \(TRITON_CACHE_DIR\) .* is not writable"
saw "torch.compile failed: NotADirectoryError"
expect "the plan, not on a terminal: nothing changes" 1 "Nothing changed: not a terminal" -- envdoctor fix "${SEL[@]}"
saw "export (TORCHINDUCTOR_CACHE_DIR|TRITON_CACHE_DIR)="
assert "no file to source was written by the plan" test -z "$(ls "$XDG_STATE_HOME"/envdoctor/*.env.sh 2>/dev/null)"

expect "--yes writes the lines to source and the re-check passes" 0 "fixed +compile.inductor_cache" -- envdoctor fix "${SEL[@]}" --yes
saw "fixed +triton.cache_dir"
saw "source .*\.env\.sh"
ENVF=$(ls "$XDG_STATE_HOME"/envdoctor/*.env.sh 2>/dev/null | head -1)
assert "the file to source exists" test -f "$ENVF"
cat "$ENVF"
expect "a shell that sources it compiles on the GPU" 0 "HEALTHY" -- bash -c ". '$ENVF' && envdoctor check ${SEL[*]} -v"
saw "smoke.compile"
expect "a shell that sources it: Inductor's own GPU compile works" 0 "ok cuda" -- bash -c ". '$ENVF' && python3 -c \"
import torch
f = torch.compile(lambda x: (x.sin() + 1).sum())
x = torch.randn(4096, device='cuda')
assert torch.allclose(f(x), (x.sin() + 1).sum(), rtol=1e-4, atol=1e-3)
print('ok', x.device.type)\""

expect "--undo removes the file and the re-check fails again" '*' "Restored" -- envdoctor fix "${SEL[@]}" --undo
saw "fail +(compile.inductor_cache|triton.cache_dir)"
assert "the file to source is gone" test ! -e "$ENVF"
cd / && rm -rf "$OUT"
finish
