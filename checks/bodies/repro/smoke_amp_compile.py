"""The step of envdoctor's smoke.amp_compile, on its own: a compiled linear-relu-linear under bf16
autocast compared with the same under eager autocast.

Run it where the check failed, in the same environment: ``python repro_smoke.amp_compile.py``.
It needs torch only. Compile caches are fresh (made inside TORCHINDUCTOR_CACHE_DIR /
TRITON_CACHE_DIR when they are set). Exit 0: bf16 output matches eager; 1: a step failed.
"""

import sys

from _prelude import no_gpu, run_in_fresh_caches  # envdoctor-repro: inline


def main():
    import torch

    if no_gpu(torch):
        return 1
    gen = torch.Generator().manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 16)).cuda().eval()
    x = torch.randn(8, 64, generator=gen).cuda()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        eager = model(x)
        print("step: torch.compile under bf16 autocast", flush=True)
        got = torch.compile(model)(x)
    torch.cuda.synchronize()
    err = (got.float() - eager.float()).abs().max().item()
    good = got.dtype == torch.bfloat16 and torch.allclose(got.float(), eager.float(), rtol=2e-2, atol=2e-2)
    print(f"{'ok' if good else 'FAIL'}: output {got.dtype}, max error {err:.3g} against eager autocast")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(run_in_fresh_caches(main))
