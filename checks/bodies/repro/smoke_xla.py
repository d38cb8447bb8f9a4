"""The step of envdoctor's smoke.xla, on its own: a matmul on the XLA device compared with CPU.

Run it where the check failed, in the same environment (PJRT_DEVICE included):
``python repro_smoke.xla.py``. It needs torch and torch_xla only.
Exit 0: the result matches CPU; 1: a step failed (its traceback is on stderr).
"""

import os
import sys


def main():
    print("step: importing torch_xla", flush=True)
    import torch
    import torch_xla

    print(f"torch {torch.__version__}, torch_xla {torch_xla.__version__}", flush=True)
    print(f"step: initialising the XLA device (PJRT_DEVICE={os.environ.get('PJRT_DEVICE', '<unset>')})", flush=True)
    try:
        device = torch_xla.device()
    except AttributeError:  # torch_xla < 2.5
        import torch_xla.core.xla_model as xm

        device = xm.xla_device()
    a = torch.randn(16, 16, generator=torch.Generator().manual_seed(0))
    print(f"step: running a matmul on {device}", flush=True)
    got = ((a.to(device) @ a.to(device)) + 1.0).cpu()
    err = (got - (a @ a + 1.0)).abs().max().item()
    good = torch.allclose(got, a @ a + 1.0, rtol=1e-2, atol=1e-2)
    print(f"{'ok' if good else 'FAIL'}: max error {err:.3g} against CPU")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
