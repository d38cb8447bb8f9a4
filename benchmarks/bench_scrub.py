#!/usr/bin/env python3
"""Scrubbing is linear in its input: time per MB, from 10 KB to 10 MB, against a floor.

    python benchmarks/bench_scrub.py              # 10 KB .. 10 MB
    python benchmarks/bench_scrub.py --max-mb 1   # quicker

Inputs: an ordinary report-like text (versions, paths, URLs, a few secrets) and each scrubbing
rule's worst case (a long run of letters, of ``a=``, of ``%41``, of ``@`` in a URL, ...). The
floor is one ``re.sub`` pass over the same text, measured in the same run, so a slower machine
moves both. The bar: at every size, seconds per MB stay within 3x of those at 10 KB (a
quadratic rule would grow 1000x over that range). Exit 0 when the bar is met, 1 when not.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from envdoctor.core.scrub import Scrubber  # noqa: E402

UNITS = {
    "ordinary": "torch 2.5.1+cu124 /usr/local/cuda-12.4/lib64 https://download.pytorch.org/whl/cu124 token=abc123def "
    "GPU-3f1c2a9e-8b7d-4c6e-9a51-2d0e7f4b1c93 hf_abcdefghijklmnopqrstuvwx01 password: pw12345\n",
    "letters": "a",
    "assign": "a=",
    "dashes": "-",
    "percent": "%41",
    "at-url": "x://@a",
    "query": "https://h/?a=b&",
    "hex": "0123456789abcdef",
    "lines": "a" * 30 + "\n",
    "quotes": '"k": "',
}
BAR = 3.0


def _time(fn, text: str) -> float:
    """Seconds per call, repeated for at least 0.2 s (a 10 KB call takes microseconds)."""
    n, start = 0, time.perf_counter()
    while True:
        fn(text)
        n += 1
        took = time.perf_counter() - start
        if took >= 0.2:
            return took / n


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-mb", type=float, default=10.0)
    args = ap.parse_args()
    scrub = Scrubber(("canaryvalue1",)).text
    floor = re.compile(r"\s+").sub
    sizes = [s for s in (10_000, 100_000, 1_000_000, 10_000_000) if s <= args.max_mb * 1_000_000]
    ok = True
    print(f"{'input':10} " + " ".join(f"{s // 1000:>9} KB" for s in sizes) + "   (scrub s/MB / floor s/MB)")
    for name, unit in UNITS.items():
        ratios = []
        for size in sizes:
            text = unit * (size // len(unit))
            mb = len(text) / 1e6
            ratios.append((_time(scrub, text) / mb) / max(_time(lambda t: floor(" ", t), text) / mb, 1e-9))
        grow = max(ratios) / ratios[0]
        ok &= grow <= BAR
        print(f"{name:10} " + " ".join(f"{r:12.1f}" for r in ratios) + f"   growth {grow:.1f}x" + ("" if grow <= BAR else "  FAIL"))
    print("linear: yes" if ok else f"linear: NO (growth over {BAR}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
