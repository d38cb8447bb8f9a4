#!/usr/bin/env python3
"""How long ``envdoctor triage`` takes on real pastes, against a floor measured in the same run.

    python benchmarks/bench_triage.py            # median of 7 per paste
    python benchmarks/bench_triage.py -n 15 --json bench-triage.json

Two commands, each a fresh process, run in rounds (floor, triage, floor, ...) so a noisy
neighbour slows both alike:

* **floor** — ``python -c pass``: the interpreter's own start-up, which no command can beat;
* **triage** — ``python -m envdoctor triage PASTE`` on the GPU machine's collect_env +
  nvidia-smi + pip freeze (the largest typical paste) and on every corpus case in turn.

The bar (issue 15): a paste is triaged in under 0.5 s (median, process included).
Exit status 0 when the bar is met, 1 when not (figures are printed either way).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PASTES = ROOT / "tests" / "fixtures" / "pastes"
CORPUS = ROOT / "tests" / "fixtures" / "triage"
BAR_S = 0.5


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
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
        floor, heavy, corpus = [], [], []
        timed([sys.executable, "-m", "envdoctor", "triage", str(big)])  # warm the file cache
        for i in range(args.n):
            floor.append(timed([sys.executable, "-c", "pass"]))
            heavy.append(timed([sys.executable, "-m", "envdoctor", "triage", str(big)]))
            corpus.append(timed([sys.executable, "-m", "envdoctor", "triage", str(cases[i % len(cases)])]))
    figures = {
        "floor_median_s": statistics.median(floor),
        "gpu_machine_paste_median_s": statistics.median(heavy),
        "corpus_case_median_s": statistics.median(corpus),
        "gpu_machine_paste_max_s": max(heavy),
        "rounds": args.n,
    }
    figures["ratio_to_floor"] = figures["gpu_machine_paste_median_s"] / figures["floor_median_s"]
    figures["in_process_median_s"] = in_process(args.n)
    for k, v in figures.items():
        print(f"{k:28} {v:.3f}" if isinstance(v, float) else f"{k:28} {v}")
    ok = figures["gpu_machine_paste_median_s"] < BAR_S and figures["corpus_case_median_s"] < BAR_S
    print(f"bar: median < {BAR_S} s per paste: {'met' if ok else 'NOT met'}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
