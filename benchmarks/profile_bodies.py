#!/usr/bin/env python3
"""How long ``import torch`` and each smoke body take, in turn, in one process.

    TRITON_CACHE_DIR=$(mktemp -d) TORCHINDUCTOR_CACHE_DIR=$(mktemp -d) \\
        python benchmarks/profile_bodies.py cuda,matmul,triton,dynamo,inductor,function,module,cudagraphs,amp

Steps (comma-separated, in the order given; the default is the list above): ``cuda`` (CUDA
init), ``matmul``, ``triton``, ``function``, ``module``, ``both``, ``cudagraphs``, ``amp`` (the
smoke bodies of checks/bodies/smoke.py), ``dynamo`` and ``inductor`` (their imports alone),
``addcompile`` (the floor's ``torch.compile`` of ``a + b``). Prints the time since start and
the step's own time after each. Give it fresh caches, as above, to time a first compile.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time

DEFAULT = ["cuda", "matmul", "triton", "dynamo", "inductor", "function", "module", "cudagraphs", "amp"]


def _add_compile(torch) -> None:
    f = torch.compile(lambda a, b: a + b)
    a = torch.randn(16, device="cuda")
    f(a, a)
    torch.cuda.synchronize()


def run(step: str, torch, smoke) -> None:
    steps = {
        "cuda": lambda: (torch.zeros(1, device="cuda"), torch.cuda.synchronize()),
        "matmul": smoke.matmul,
        "triton": smoke.triton_add,
        "dynamo": lambda: __import__("torch._dynamo"),
        "inductor": lambda: __import__("torch._inductor.compile_fx"),
        "function": lambda: smoke.compile_smoke(parts=["function"]),
        "module": lambda: smoke.compile_smoke(parts=["module"]),
        "both": lambda: smoke.compile_smoke(parts=["function", "module"]),
        "cudagraphs": smoke.cudagraphs,
        "amp": smoke.amp_compile,
        "addcompile": lambda: _add_compile(torch),
    }
    if step not in steps:
        raise SystemExit(f"unknown step {step!r}; steps: {', '.join(steps)}")
    with contextlib.redirect_stdout(io.StringIO()):  # the bodies' stage lines
        steps[step]()


def main() -> None:
    start = last = time.perf_counter()

    def mark(what: str) -> None:
        nonlocal last
        now = time.perf_counter()
        print(f"{now - start:7.2f}s (+{now - last:5.2f}) {what}", flush=True)
        last = now

    import torch

    mark("import torch")
    from envdoctor_checks.bodies import smoke

    for step in sys.argv[1].split(",") if len(sys.argv) > 1 else DEFAULT:
        run(step, torch, smoke)
        mark(step)
    os._exit(0)  # no interpreter shutdown (Inductor's compile pool, CUDA teardown): not timed


if __name__ == "__main__":
    main()
