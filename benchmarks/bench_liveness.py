#!/usr/bin/env python3
"""The liveness profile against the floor of a torch health check, on a GPU machine.

    python benchmarks/bench_liveness.py            # 7 rounds
    python benchmarks/bench_liveness.py -n 15 --json liveness.json

Each a fresh process, in rounds (floor, liveness, floor, ...) so a busy neighbour slows both alike:

* **floor** — ``python -c "import torch; one matmul on every GPU"``: what the ``health`` profile
  pays at the least (import torch, a CUDA context, one kernel per GPU, a copy back);
* **liveness** — ``python -m envdoctor check --profile liveness -q``: NVML's driver and health
  checks and a PTX kernel on every GPU through the driver API, no torch.

Prints the median and best wall times and the ratio liveness / floor. The goal: liveness at most
0.5 s on the H200 and well under its floor. Exits 1 when the liveness run did not exit 0 (an
unhealthy or unjudged machine measures nothing) or the median is over ``--goal``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

FLOOR = (
    "import torch\n"
    "for i in range(torch.cuda.device_count()):\n"
    "    x = torch.ones(256, 256, device=f'cuda:{i}')\n"
    "    assert float((x @ x)[0, 0]) == 256.0\n"
)


def timed(argv: list[str]) -> tuple[float, int]:
    t = time.perf_counter()
    rc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    return time.perf_counter() - t, rc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--rounds", type=int, default=7)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--goal", type=float, default=0.5, help="seconds the liveness median must stay under")
    ap.add_argument("--json", dest="json_out")
    args = ap.parse_args(argv)
    commands = {"floor": [args.python, "-c", FLOOR], "liveness": [args.python, "-m", "envdoctor", "check", "--profile", "liveness", "-q"]}
    for argv_ in commands.values():  # warm the page cache and bytecode once
        timed(argv_)
    times: dict[str, list[float]] = {k: [] for k in commands}
    rcs: dict[str, set[int]] = {k: set() for k in commands}
    for _ in range(args.rounds):
        for name, argv_ in commands.items():
            wall, rc = timed(argv_)
            times[name].append(wall)
            rcs[name].add(rc)
    out = {k: {"median_s": statistics.median(v), "best_s": min(v), "rcs": sorted(rcs[k])} for k, v in times.items()}
    out["ratio"] = out["liveness"]["median_s"] / out["floor"]["median_s"]
    for k in commands:
        print(f"{k:9} median {out[k]['median_s']:.3f} s  best {out[k]['best_s']:.3f} s  exit {out[k]['rcs']}")
    print(f"liveness / floor = {out['ratio']:.2f} (goal: liveness median < {args.goal} s)")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(out, f, indent=2)
    return 0 if rcs["liveness"] == {0} and out["liveness"]["median_s"] < args.goal else 1


if __name__ == "__main__":
    sys.exit(main())
