"""Liveness without torch: every visible GPU still executes a kernel.

For checks that run every few seconds or minutes (a container HEALTHCHECK, node-problem-detector,
Slurm's HealthCheckProgram) importing torch (2-5 s) and compiling are too dear, and they prove
more than "is this GPU alive". ``liveness.kernel`` loads ``libcuda.so.1`` in a contained child
(``bodies/cuda_kernel.py``: standard library and ctypes only), hands the driver a tiny PTX kernel,
runs it on every visible device and checks every element it wrote. With NVML's health checks it
makes the ``liveness`` profile. What it catches that NVML alone does not: a GPU NVML lists but
that can no longer run work (a wedged context, an Xid 79 "fallen off the bus" in progress), the
CUDA toolkit's stub ``libcuda.so`` found before the driver's (``CUDA_ERROR_STUB_LIBRARY``), every
GPU hidden by ``CUDA_VISIBLE_DEVICES``, and a driver whose JIT cannot build code for the GPU.

Facts: ``driver_kernel``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

from envdoctor import Item, Status, Unavailable, check, fact, fail, ok, run_command, skip
from envdoctor_checks.health import gpu_label
from envdoctor_checks.nvidia import WEDGED_CAUSE, WEDGED_FIX, last_json

KERNEL_CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bodies", "cuda_kernel.py")
# cuInit on a healthy driver takes well under a second (about 0.1-0.3 s on the H200, more
# without persistence mode while the driver loads); 10 s is a driver that is not answering.
KERNEL_TIMEOUT = 10.0
RESET = WEDGED_FIX[0].upper() + WEDGED_FIX[1:]

# What a failure of cuInit means for the user, by the driver's own error name.
INIT_CAUSES = {
    "CUDA_ERROR_STUB_LIBRARY": (
        "the CUDA toolkit's stub libcuda.so was loaded instead of the driver's",
        "remove the toolkit's `stubs` directory (e.g. /usr/local/cuda/lib64/stubs) from LD_LIBRARY_PATH; the stub is for linking only",
    ),
    "CUDA_ERROR_NO_DEVICE": (
        "no CUDA device is visible",
        "check CUDA_VISIBLE_DEVICES (unset it to see every GPU) and that the container was started with the GPUs "
        "(`docker run --gpus all`, or a nvidia.com/gpu request in Kubernetes)",
    ),
    "CUDA_ERROR_INSUFFICIENT_DRIVER": (
        "the loaded libcuda is older than the kernel module",
        "the user-space driver and the kernel module must match: reinstall the driver or reboot after an upgrade",
    ),
    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH": (
        "the user-space driver (libcuda) and the kernel module are different versions",
        "reboot after a driver upgrade, or reinstall the driver so both match",
    ),
    "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE": (
        "a CUDA forward-compatibility libcuda is loaded on a GPU that does not support it",
        "remove the cuda-compat directory from LD_LIBRARY_PATH",
    ),
}


@fact("driver_kernel", source="live")
def driver_kernel(env) -> dict:
    """What the contained driver-API child reported (see ``bodies/cuda_kernel.py``)."""
    res = run_command([sys.executable, KERNEL_CHILD], timeout=KERNEL_TIMEOUT, env=env)
    if res.timed_out:
        return {"ok": False, "stage": "timeout", "error": f"the CUDA driver did not finish within {KERNEL_TIMEOUT:.0f}s"}
    answer = last_json(res.stdout)
    if answer is None:
        raise Unavailable(f"the CUDA driver-API child {res.describe()}")
    return answer


def _init_failure(k: Mapping[str, Any], env: Mapping[str, str]):
    name = str(k.get("error") or "")
    lib = (k.get("library") or {}).get("path")
    cause, hint = INIT_CAUSES.get(name, ("the CUDA driver cannot start", RESET))
    where = f"; libcuda loaded from {lib}" if lib else ""
    if name == "CUDA_ERROR_NO_DEVICE" and "CUDA_VISIBLE_DEVICES" in env:
        where += f"; CUDA_VISIBLE_DEVICES={env['CUDA_VISIBLE_DEVICES']!r}"
    action = "reset-gpu" if hint == RESET else ""  # else the cause's own fix (a variable, the driver)
    return fail(f"{k.get('stage')} failed with {name}: {cause}{where}", hint, details=dict(k), action=action)


@check("liveness.kernel", tags=("gpu", "health", "liveness"))
def kernel(driver_kernel, env, pci_gpus=None):
    """A kernel runs and computes correctly on every visible GPU (CUDA driver API, no torch)"""
    k = driver_kernel
    if k.get("stage") == "load":
        if not pci_gpus:
            return skip("no NVIDIA GPU on this machine" if pci_gpus is not None else f"libcuda.so.1 cannot be loaded ({k.get('error')})")
        return fail(
            f"libcuda.so.1 cannot be loaded ({k.get('error')}) although {len(pci_gpus)} NVIDIA GPU(s) are on the PCI bus",
            "install the NVIDIA driver, or in a container start it with the GPUs exposed (`docker run --gpus all`)",
            details=dict(k),
        )
    if k.get("stage") == "timeout":
        return fail(f"{k['error']}: {WEDGED_CAUSE}", RESET, details=dict(k), action="reset-gpu")
    if not k.get("ok"):
        return _init_failure(k, env)
    gpus = list(k.get("gpus") or [])
    if not gpus:
        return fail("the CUDA driver reports no device", INIT_CAUSES["CUDA_ERROR_NO_DEVICE"][1], details=dict(k))
    items = [
        Item(
            gpu_label(g),
            Status.PASS if g.get("ok") else Status.FAIL,
            f"{g.get('ms')} ms" if g.get("ok") else f"{g.get('stage')}: {g.get('error')}",
        )
        for g in gpus
    ]
    bad = [g for g in gpus if not g.get("ok")]
    if bad:
        text = "; ".join(f"{gpu_label(g)}: {g.get('stage')} failed with {g.get('error')}" for g in bad)
        message = f"{len(bad)} of {len(gpus)} GPU(s) could not run a kernel: {text}"
        return fail(message, RESET, details=dict(k), items=items, action="reset-gpu")
    slowest = max(float(g.get("ms") or 0) for g in gpus)
    return ok(f"a kernel ran and computed correctly on {len(gpus)} GPU(s) (slowest {slowest:.0f} ms)", details=dict(k), items=items)
