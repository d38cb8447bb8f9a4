#!/usr/bin/env python3
"""How long ``envdoctor triage`` takes on real pastes, against ``envdoctor --help`` in the same run.

    python benchmarks/bench_triage.py            # median of 7 rounds
    python benchmarks/bench_triage.py -n 15 --json bench-triage.json

Each round runs, each as a fresh process and in this order so a noisy neighbour slows all alike:

* **help** — ``python -m envdoctor --help``: the command's own start-up (interpreter, click,
  the CLI module), the floor that issue 25 measures triage against;
* **triage** — ``python -m envdoctor triage PASTE`` on the GPU machine's collect_env +
  nvidia-smi + pip freeze (the largest typical paste);
* **corpus** — ``triage`` on one case of tests/fixtures/triage/ in turn.

The children run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed, one warm-up run
each): an installed envdoctor has its ``.pyc`` files, and recompiling every module on each run
would measure the compiler, not envdoctor.

The bar (issue 25, item 5): triage's median is at most 2x ``--help``'s median (both pastes).
Exit status 0 when the bar is met, 1 when not (figures are printed either way).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PASTES = ROOT / "tests" / "fixtures" / "pastes"
CORPUS = ROOT / "tests" / "fixtures" / "triage"
BAR_RATIO = 2.0
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=CHILD_ENV)
    return time.perf_counter() - start


def in_process(n: int) -> float:
    """Reading and judging the GPU machine's paste once the command is loaded (no start-up)."""
    sys.path.insert(0, str(ROOT))
    from envdoctor.core.registry import discover
    from envdoctor.core.triage import triage
    from envdoctor.sources import read_paste

    reg = discover()
    text = "\n".join((PASTES / n).read_text() for n in ("collect_env_gpu.txt", "nvidia_smi.txt", "pip_freeze.txt"))
    runs = []
    for _ in range(n):
        start = time.perf_counter()
        triage(reg, read_paste(text), text)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=7, help="rounds (default 7)")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "gpu-machine.txt"
        big.write_text("\n".join((PASTES / n).read_text() for n in ("collect_env_gpu.txt", "nvidia_smi.txt", "pip_freeze.txt")))
        cases = sorted(CORPUS.glob("*.txt"))
        helpcmd = [sys.executable, "-m", "envdoctor", "--help"]
        heavycmd = [sys.executable, "-m", "envdoctor", "triage", str(big)]
        floor, heavy, corpus = [], [], []
        for argv in (helpcmd, heavycmd):  # warm the file cache and write the bytecode
            timed(argv)
        for i in range(args.n):
            floor.append(timed(helpcmd))
            heavy.append(timed(heavycmd))
            corpus.append(timed([sys.executable, "-m", "envdoctor", "triage", str(cases[i % len(cases)])]))
    figures = {
        "help_median_s": statistics.median(floor),
        "gpu_machine_paste_median_s": statistics.median(heavy),
        "corpus_case_median_s": statistics.median(corpus),
        "gpu_machine_paste_max_s": max(heavy),
        "rounds": args.n,
    }
    figures["ratio_to_help"] = figures["gpu_machine_paste_median_s"] / figures["help_median_s"]
    figures["corpus_ratio_to_help"] = figures["corpus_case_median_s"] / figures["help_median_s"]
    figures["in_process_median_s"] = in_process(args.n)
    for k, v in figures.items():
        print(f"{k:28} {v:.3f}" if isinstance(v, float) else f"{k:28} {v}")
    ok = figures["ratio_to_help"] <= BAR_RATIO and figures["corpus_ratio_to_help"] <= BAR_RATIO
    print(f"bar: triage median <= {BAR_RATIO}x --help median: {'met' if ok else 'NOT met'}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
