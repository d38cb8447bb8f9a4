#!/usr/bin/env python3
"""Is every paste reader linear? ``envdoctor triage``'s reading and judging, per MB of input,
from 10 KB to 10 MB, for the inputs that were once quadratic.

    python benchmarks/bench_triage_linear.py            # every shape, 10 KB .. 10 MB
    python benchmarks/bench_triage_linear.py --json bench-linear.json

Each shape is one long line of one repeated character class (letters, digits, spaces, dots,
dashes, ``|``, quotes, ``=``, ``:``, ``/``, ``+``, tokens that open a signature such as
``Found `` or ``lib``), many short lines, or a real paste repeated. In-process, one call per
size: ``read_paste`` + ``triage`` + the text answer. The floor is the same call on a one-line
paste, measured in the same run and subtracted, so what is left is the time the size costs.

The bar: for each shape, the time per MB at 10 MB is at most 3x the time per MB at 100 KB (a
quadratic reader is 100x). Exit 0 when every shape meets it, 1 when one does not.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIZES = (10_000, 100_000, 1_000_000, 10_000_000)
SHAPES = {
    "letters": "a",
    "digits": "9",
    "spaces": " ",
    "dots": ".",
    "dashes": "-",
    "pipes": "|",
    "quotes": "'\"",
    "equals": "=",
    "colons": ":",
    "slashes": "/",
    "plus": "+",
    "path-like": "a/",
    "'Found '": "Found ",
    "'lib'": "lib",
    "short lines": "a b\n",
    "empty lines": "\n",
    "indented lines": "  x = 1\n",
}
BAR = 3.0


def _triage_once(text: str) -> float:
    from envdoctor.core.registry import discover
    from envdoctor.core.triage import triage
    from envdoctor.reporters.triage import render
    from envdoctor.sources import read_paste

    reg = _triage_once.__dict__.setdefault("reg", discover(()))
    start = time.perf_counter()
    render(triage(reg, read_paste(text), text), "text", "bench")
    return time.perf_counter() - start


def _shape_text(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def measure(shapes: dict[str, str], sizes=SIZES) -> dict[str, dict[str, float]]:
    _triage_once("x")  # load the catalog, the checks and the readers
    floor = statistics.median(_triage_once("x\n") for _ in range(5))
    real = (ROOT / "tests" / "fixtures" / "pastes" / "collect_env_gpu.txt").read_text()
    out = {}
    for name, unit in [*shapes.items(), ("real paste repeated", real)]:
        row = {}
        for size in sizes:
            t = _triage_once(_shape_text(unit, size))
            row[str(size)] = max(t - floor, 0.0) / (size / 1e6)  # seconds per MB
        out[name] = row
        print(f"{name:>22}: " + "  ".join(f"{int(s) // 1000:>6} KB {v:7.3f} s/MB" for s, v in row.items()), flush=True)
    out["_floor_s"] = {"floor": floor}
    return out


NEEDLE_SIZES = (100_000, 1_000_000)


def needle_shapes() -> dict[str, str]:
    """Each catalog pattern's required literal texts, repeated: the words that open a match (a
    pattern whose window after its first word overlaps the next one is quadratic here)."""
    from envdoctor.core.registry import discover

    needles = sorted({n for sig in discover(()).signatures for n in sig.needles if n.strip()})
    return {f"needle {n[:20]!r}": n + " " for n in needles}


def _ratio(figures: dict, big: int, small: int) -> float:
    return max(row[str(big)] / max(row[str(small)], 1e-6) for name, row in figures.items() if not name.startswith("_"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    figures = measure(SHAPES)
    worst = _ratio(figures, SIZES[-1], SIZES[1])
    needles = measure(needle_shapes(), NEEDLE_SIZES)
    worst_needle = _ratio(needles, NEEDLE_SIZES[-1], NEEDLE_SIZES[0])
    print(f"every signature's needles repeated: worst 1 MB / 100 KB time-per-MB ratio: {worst_needle:.2f} (bar {BAR})")
    figures.update({k: v for k, v in needles.items() if not k.startswith("_")})
    worst = max(worst, worst_needle)
    print(f"floor (one-line paste): {figures['_floor_s']['floor']:.3f} s; worst 10 MB / 100 KB time-per-MB ratio: {worst:.2f} (bar {BAR})")
    if args.json:
        Path(args.json).write_text(json.dumps({"figures": figures, "worst_ratio": worst, "bar": BAR}, indent=1) + "\n")
    return 0 if worst <= BAR else 1


if __name__ == "__main__":
    raise SystemExit(main())
