"""Probe body for ``envdoctor bench``: one training-step benchmark of the reference model.

Runs in a probe child (it imports torch). One call measures one mode (``eager``, ``default``,
``reduce-overhead`` or ``max-autotune``), so each compiled mode starts from a cold compiler
cache in its own worker and a crash in one mode cannot take the others' figures with it.

The reference model is the one from the PyTorch community's torch.compile write-ups: two
conv-bn-relu blocks, a global pool and a linear head, trained with SGD on cross-entropy.
"""

from __future__ import annotations

import statistics
import time

from envdoctor_checks.bodies.reference_model import reference_model


def device_info() -> dict:
    """Which device the benchmark would use, without running it."""
    import torch

    info = {"torch": torch.__version__, "cuda_build": torch.version.cuda, "cuda_available": False, "device_name": ""}
    try:
        info["cuda_available"] = bool(torch.cuda.is_available())
        if info["cuda_available"]:
            info["device_name"] = torch.cuda.get_device_name(0)
    except Exception as e:  # noqa: BLE001 - a broken CUDA setup means: no GPU for the benchmark
        info["cuda_error"] = f"{type(e).__name__}: {e}"
    info["cpu_threads"] = torch.get_num_threads()
    return info


def _graph_breaks(torch) -> tuple[int, list[str], int | None]:
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return 0, [], None
    breaks = counters.get("graph_break", {})
    reasons = sorted(breaks, key=lambda r: -breaks[r])[:5]
    unique = counters.get("stats", {}).get("unique_graphs")
    return int(sum(breaks.values())), [str(r)[:200] for r in reasons], unique


def _training_step(torch, mode: str, dev, batch: int, size: int, seed: int):
    """One SGD step of the reference model on a fixed random batch, eager or compiled in ``mode``."""
    import torch.nn.functional as F

    torch.manual_seed(seed)
    model = reference_model(torch).to(dev).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, 3, size, size, device=dev)
    y = torch.randint(0, 10, (batch,), device=dev)
    fwd = model
    if mode != "eager":
        torch._dynamo.reset()
        fwd = torch.compile(model, mode=mode)
    mark_step = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)

    def step() -> None:
        if mode in ("reduce-overhead", "max-autotune") and mark_step is not None:
            # CUDA graph trees reuse output memory between replays; marking the step start
            # tells them the previous iteration's outputs are dead.
            mark_step()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(fwd(x), y)
        loss.backward()
        opt.step()

    return step


def _timed_runs(torch, step, dev, runs: int, steps: int) -> list[float]:
    """Milliseconds per step for each of ``runs`` runs of ``steps`` steps."""
    per_step: list[float] = []
    for _ in range(runs):
        if dev.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(steps):
                step()
            end.record()
            end.synchronize()
            per_step.append(start.elapsed_time(end) / steps)
        else:
            t = time.perf_counter()
            for _ in range(steps):
                step()
            per_step.append((time.perf_counter() - t) * 1000 / steps)
    return per_step


def run_mode(mode: str, device: str, batch: int, size: int, warmup: int, runs: int, steps: int, seed: int = 0) -> dict:
    """Median training-step time of the reference model in one mode, in milliseconds."""
    import torch

    dev = torch.device(device)
    step = _training_step(torch, mode, dev, batch, size, seed)
    cuda = dev.type == "cuda"

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize(dev)

    # The first step of a compiled mode includes tracing and compiling forward and backward.
    sync()
    t0 = time.perf_counter()
    step()
    sync()
    first = time.perf_counter() - t0
    # Warm-up: reduce-overhead records its CUDA graphs on the first calls after compiling,
    # and cuDNN/cuBLAS pick their algorithms here.
    for _ in range(warmup):
        step()
    sync()
    per_step = _timed_runs(torch, step, dev, runs, steps)
    breaks, reasons, unique = _graph_breaks(torch) if mode != "eager" else (0, [], None)
    name = torch.cuda.get_device_name(dev) if cuda else "CPU"
    return {
        "mode": mode,
        "device": dev.type,
        "device_name": name,
        "torch": torch.__version__,
        "batch": batch,
        "size": size,
        "threads": torch.get_num_threads(),
        "first_step_s": first,
        "step_ms": statistics.median(per_step),
        "runs_ms": per_step,
        "graph_breaks": breaks,
        "break_reasons": reasons,
        "unique_graphs": unique,
    }
