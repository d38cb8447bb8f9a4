#!/usr/bin/env python3
"""How long ``envdoctor fleet`` takes over many reports, and how much memory it holds, as ratios
against a floor measured in the same run.

    python benchmarks/bench_fleet.py                      # 1,000 and 10,000 reports
    python benchmarks/bench_fleet.py --sizes 1000 --json fleet.json

N synthetic reports are written from one real report (tests/fixtures/reports/v1.0-cpu-box.json,
about 107 KB: the size a real node's report has): every node gets its own host name, every 50th
an older driver, every 97th a failing check, every 13th a warning; one in 200 carries a
secret (a URL with credentials) in a failing message, which must not reach the output. Then,
each a fresh process:

* **floor** — ``json.load`` of every file in turn, keeping nothing: the least any tool that reads
  the reports must pay (interpreter start included);
* **fleet** — ``python -m envdoctor fleet DIR`` (the text table, the default format).

For each: wall time, CPU time (user + system) and peak RSS (``ru_maxrss``) of the child, measured
by a wrapper process so runs do not mix. The goals (issue 16): 1,000 reports in at most 2 s;
10,000 in linear time (time per report at 10k within 1.3x of that at 1k) and bounded memory (peak
RSS at 10k within 1.5x of that at 1k: what grows is the few strings kept per node, not the
reports read). Time is judged on CPU time, which a busy shared machine inflates far less than
wall time (the command is single-threaded and reads files the run just wrote, so on an idle
machine the two agree); both are printed. Exit 0 when the goals are met, 1 when not.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "reports" / "v1.0-cpu-box.json"
CANARY = "postgres://fleetuser:Sup3rS3cretCanary@db.internal:5432/app"

FLOOR = r"""
import json, os, sys
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    with open(os.path.join(d, name), encoding="utf-8") as f:
        json.load(f)
"""

# Runs one command and prints its wall time and the peak RSS of that one child (KiB on Linux).
MEASURE = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE).returncode
wall = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_kib": ru.ru_maxrss, "rc": rc}))
"""


def generate(base: dict, n: int, out: Path) -> None:
    """N reports, each differing from ``base`` where a fleet looks: host, driver, failing checks."""
    out.mkdir(parents=True, exist_ok=True)
    results = base["results"]
    for i in range(n):
        d = copy.copy(base)
        d["platform"] = {**base["platform"], "hostname": f"node{i:05d}"}
        facts = dict(base["facts"])
        if i % 50 == 7:
            facts["driver"] = {"version": "535.104.05", "cuda_version": "12.2"}
        d["facts"] = facts
        if i % 97 == 5 or i % 13 == 3 or i % 200 == 11:
            rs = list(results)
            status = "warn" if i % 13 == 3 and i % 97 != 5 and i % 200 != 11 else "fail"
            msg = f"synthetic problem on node{i:05d}" + (f" reading {CANARY}" if i % 200 == 11 else "")
            rs[0] = {**results[0], "status": status, "message": msg}
            d["results"] = rs
        (out / f"node{i:05d}.json").write_text(json.dumps(d), encoding="utf-8")


def measure(python: str, argv: list[str]) -> dict:
    done = subprocess.run([python, "-c", MEASURE, *argv], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated report counts; default 1000,10000")
    ap.add_argument("--python", default=sys.executable, help="interpreter that has envdoctor")
    ap.add_argument("--keep", help="write the reports under this directory and keep them")
    ap.add_argument("--json", dest="json_out", help="also write the figures to this file")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    base = json.loads(FIXTURE.read_text(encoding="utf-8"))
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="envdoctor-bench-fleet-"))
    figures: dict[int, dict[str, dict]] = {}
    try:
        for n in sizes:
            d = tmp / f"r{n}"
            generate(base, n, d)
            size_mb = sum(p.stat().st_size for p in d.iterdir()) / 1e6
            floor = measure(args.python, [args.python, "-c", FLOOR, str(d)])
            fleet = measure(args.python, [args.python, "-m", "envdoctor", "fleet", str(d)])
            as_json = measure(args.python, [args.python, "-m", "envdoctor", "fleet", str(d), "--format", "json"])
            secret = CANARY.split("@")[0].split(":")[-1]
            leaked = any(
                secret
                in subprocess.run([args.python, "-m", "envdoctor", "fleet", str(d), "-f", fmt], capture_output=True, text=True).stdout
                for fmt in ("text", "json")
            )
            figures[n] = {"floor": floor, "fleet": fleet, "fleet_json": as_json, "mb": size_mb, "leaked": leaked}
            for name, m in (("floor", floor), ("fleet", fleet), ("fleet -f json", as_json)):
                print(
                    f"{n:>6} reports ({size_mb:4.0f} MB)  {name:<14} wall {m['wall']:6.2f}s  cpu {m['cpu']:6.2f}s"
                    f" = {m['cpu'] / floor['cpu']:5.2f}x floor   peak RSS {m['rss_kib'] / 1024:4.0f} MiB"
                    f" = {m['rss_kib'] / floor['rss_kib']:4.2f}x floor   exit {m['rc']}",
                    flush=True,
                )
            if leaked:
                print("SECRET LEAKED into the fleet output")
            if not args.keep:
                shutil.rmtree(d, ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    ok = all(not f["leaked"] and f["fleet"]["rc"] in (0, 1) for f in figures.values())
    if 1000 in figures:
        ok &= figures[1000]["fleet"]["cpu"] <= 2.0
        print(f"\n1,000 reports: {figures[1000]['fleet']['cpu']:.2f}s CPU, {figures[1000]['fleet']['wall']:.2f}s wall (goal <= 2 s)")
    if 1000 in figures and 10000 in figures:
        small, big = figures[1000]["fleet"], figures[10000]["fleet"]
        per = (big["cpu"] / 10000) / (small["cpu"] / 1000)
        mem = big["rss_kib"] / small["rss_kib"]
        ok &= per <= 1.3 and mem <= 1.5
        print(f"10,000 vs 1,000: time per report {per:.2f}x (goal <= 1.3), peak RSS {mem:.2f}x (goal <= 1.5)")
    print("goals met" if ok else "goals MISSED")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"cpus": os.cpu_count(), "figures": figures, "met": ok}, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
