"""The step of envdoctor's smoke.matmul, on its own: fp32, TF32 and bf16 matmuls on every visible
GPU compared with a float64 reference on the CPU (error relative to |A| @ |B|).

Run it where the check failed, in the same environment: ``python repro_smoke.matmul.py``.
It needs torch only. Exit 0: every GPU is within tolerance; 1: torch sees no GPU, a GPU raised
(its error is printed) or a result is off.
"""

import sys

from _prelude import no_gpu  # envdoctor-repro: inline

TOLERANCE = {"fp32": 1e-4, "tf32": 5e-3, "bf16": 1.5e-2}


def one_gpu(torch, index, a, b):
    """The number of results off on GPU ``index``."""
    dev = torch.device("cuda", index)
    print(f"step: initialising CUDA on GPU {index} ({torch.cuda.get_device_name(index)})", flush=True)
    off = 0
    for kind, tol in TOLERANCE.items():
        a_in, b_in = (a.bfloat16(), b.bfloat16()) if kind == "bf16" else (a, b)
        ref = a_in.double() @ b_in.double()
        scale = (a_in.double().abs() @ b_in.double().abs()).clamp_min(1e-30)
        torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
        print(f"step: {kind} matmul on GPU {index}", flush=True)
        out = (a_in.to(dev) @ b_in.to(dev)).double().cpu()
        err = ((out - ref).abs() / scale).max().item()
        good = bool(torch.isfinite(out).all().item()) and err <= tol
        print(f"{'ok' if good else 'FAIL'}: GPU {index} {kind} relative error {err:.1e} (tolerance {tol:.0e})")
        off += not good
    return off


def main():
    import torch

    if no_gpu(torch):
        return 1
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(256, 256, generator=gen)
    b = torch.randn(256, 256, generator=gen)
    bad = 0
    for index in range(torch.cuda.device_count()):
        try:
            bad += one_gpu(torch, index, a, b)
        except Exception as e:  # noqa: BLE001 - one GPU's error, the next GPU is still tried
            print(f"FAIL: GPU {index}: {type(e).__name__}: {e}", file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
