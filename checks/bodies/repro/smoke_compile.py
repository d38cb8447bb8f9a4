"""The step of envdoctor's smoke.compile, on its own: torch.compile (default mode, Inductor) of a
small function and of a small conv net, each compared with eager.

Run it where the check failed, in the same environment: ``python repro_smoke.compile.py``.
It needs torch only. Inductor and Triton compile into fresh cache directories (made inside
TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR when they are set), so nothing cached hides the
failure. Exit 0: both compile and match eager here; 1: a step failed (its traceback is on stderr).
"""

import sys

from _prelude import run_in_fresh_caches  # envdoctor-repro: inline


def main():
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}); compiling on {device}", flush=True)

    def function(x, y):
        return torch.relu(torch.sin(x) * torch.cos(y) + x) * 2.0

    nn = torch.nn
    net = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10)
    )
    gen = torch.Generator().manual_seed(0)
    steps = (
        ("function", function, (torch.randn(64, generator=gen).to(device), torch.randn(64, generator=gen).to(device))),
        ("conv net", net.to(device).eval(), (torch.randn(2, 3, 8, 8, generator=gen).to(device),)),
    )
    tol = 2e-3 if device == "cuda" else 1e-4
    bad = 0
    with torch.no_grad():
        for name, fn, args in steps:
            print(f"step: torch.compile of the {name} on {device}", flush=True)
            eager = fn(*args)
            got = torch.compile(fn)(*args)
            err = (got.float() - eager.float()).abs().max().item()
            same = torch.allclose(got.float(), eager.float(), rtol=tol, atol=tol)
            print(f"{'ok' if same else 'FAIL'}: the compiled {name} {'matches' if same else 'differs from'} eager (max error {err:.3g})")
            bad += not same
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(run_in_fresh_caches(main))
