"""The step of envdoctor's smoke.cudagraphs, on its own: torch.compile(mode="reduce-overhead")
(Inductor plus CUDA graph capture and replay) of a small function, compared with eager.

Run it where the check failed, in the same environment: ``python repro_smoke.cudagraphs.py``.
It needs torch only. Compile caches are fresh (made inside TORCHINDUCTOR_CACHE_DIR /
TRITON_CACHE_DIR when they are set). Exit 0: replays match eager; 1: a step failed.
"""

import sys

from _prelude import no_gpu, run_in_fresh_caches  # envdoctor-repro: inline


def main():
    import torch

    if no_gpu(torch):
        return 1

    def f(x, y):
        return torch.relu(torch.sin(x) * torch.cos(y) + x) * 2.0

    gen = torch.Generator().manual_seed(0)
    x = torch.randn(64, generator=gen).cuda()
    y = torch.randn(64, generator=gen).cuda()
    eager = f(x, y)
    print('step: torch.compile(mode="reduce-overhead") and CUDA graph capture', flush=True)
    compiled = torch.compile(f, mode="reduce-overhead")
    errors = []
    for _ in range(3):  # call 1 warms up, call 2 records, call 3 replays the graph
        torch.compiler.cudagraph_mark_step_begin()
        errors.append((compiled(x, y).clone() - eager).abs().max().item())
    torch.cuda.synchronize()
    good = max(errors) <= 1e-5
    print(f"{'ok' if good else 'FAIL'}: max error over warm-up, record and replay {max(errors):.3g}")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(run_in_fresh_caches(main))
