#!/usr/bin/env python3
"""How long the torch.compile smoke takes when it must compile on the CPU, full and small.

    python benchmarks/bench_compile_smoke.py                      # 2 rounds
    CUDA_VISIBLE_DEVICES= python benchmarks/bench_compile_smoke.py  # on a GPU machine: the hidden-GPU fault

The smoke's body (checks/bodies/smoke.py ``compile_smoke``) runs in an envdoctor probe worker,
timed after the worker has imported torch (so the figure is the compile alone), with fresh empty
Inductor and Triton caches each time, in rounds:

* **full** — ``gpu_build=False``: function and conv net, vectorised C++ (a CPU build of torch);
* **small** — ``gpu_build=True``: what a GPU build of torch that sees no GPU compiles (only the
  function, scalar C++);
* **auto** — what this torch does by itself (on a CUDA build with GPUs hidden: small).

The goal (issue 16): every fault case at most 1.5x the healthy run; the GPUs-hidden case was
86 s against 17 s, all of it this smoke compiling the full set on the CPU.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

VARIANTS = {"full": {"gpu_build": False}, "small": {"gpu_build": True}, "auto": {}}


def once(variant: str) -> tuple[float, dict]:
    from envdoctor.core.probe import ProbeClient
    from envdoctor_checks import smoke

    cache = tempfile.mkdtemp(prefix="envdoctor-bench-compile-")
    saved = {k: os.environ.get(k) for k in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")}
    os.environ.update(TORCHINDUCTOR_CACHE_DIR=os.path.join(cache, "inductor"), TRITON_CACHE_DIR=os.path.join(cache, "triton"))
    client = ProbeClient()
    try:
        client.call(f"{smoke.BODY}:matmul", {}, timeout=600)  # imports torch: not part of the figure
        start = time.perf_counter()
        value = client.call(f"{smoke.BODY}:compile_smoke", {"parts": ["function", "module"], **VARIANTS[variant]}, timeout=900)
        return time.perf_counter() - start, value
    finally:
        client.close()
        shutil.rmtree(cache, ignore_errors=True)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--rounds", type=int, default=2)
    ap.add_argument("--variants", default="full,small,auto")
    args = ap.parse_args(argv)
    variants = args.variants.split(",")
    times: dict[str, list[float]] = {v: [] for v in variants}
    for r in range(args.rounds):
        for v in variants:
            t, value = once(v)
            times[v].append(t)
            print(
                f"round {r + 1}  {v:<6} {t:6.1f}s  on {value['device']}: compiled {list(value['parts'])}, "
                f"left out {list(value.get('left_out') or {})}, vectorised {value.get('vectorized', True)}",
                flush=True,
            )
    med = {v: statistics.median(ts) for v, ts in times.items()}
    print()
    for v in variants:
        print(f"{v:<6} median {med[v]:6.1f}s" + (f"  = {med[v] / med['full']:.2f}x full" if "full" in med else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
