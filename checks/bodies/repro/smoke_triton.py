"""The step of envdoctor's smoke.triton, on its own: a Triton vector-add kernel compiled, launched
and compared with x + y (on the GPU; without one, in Triton's CPU interpreter, TRITON_INTERPRET=1).

Run it where the check failed, in the same environment: ``python repro_smoke.triton.py``.
It needs torch and triton only. Triton compiles into a fresh cache directory (inside
TRITON_CACHE_DIR when it is set), so no cached kernel or launcher hides the failure.
Exit 0: the kernel is exact here; 1: a step failed (its traceback is on stderr).
"""

import os
import sys

import torch  # before triton: whether a GPU is there decides TRITON_INTERPRET
from _prelude import run_in_fresh_caches  # envdoctor-repro: inline

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # no GPU: Triton's CPU interpreter, as the smoke runs it; read on import
print("step: importing triton", flush=True)
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def main():
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    print(f"torch {torch.__version__}, triton {triton.__version__}; running on {device}", flush=True)
    gen = torch.Generator().manual_seed(0)
    n = 4099
    x = torch.randn(n, generator=gen).to(device)
    y = torch.randn(n, generator=gen).to(device)
    out = torch.empty_like(x)
    print("step: compiling and launching the Triton vector-add kernel", flush=True)
    add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    if device == "cuda":
        torch.cuda.synchronize()
    err = (out.cpu() - (x + y).cpu()).abs().max().item()
    print(f"{'ok' if err == 0.0 else 'FAIL'}: max error {err:.3g} (exact expected)")
    return 0 if err == 0.0 else 1


if __name__ == "__main__":
    sys.exit(run_in_fresh_caches(main, ("TRITON_CACHE_DIR",)))
