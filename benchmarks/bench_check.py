#!/usr/bin/env python3
"""How long a full ``envdoctor check`` takes, as a ratio against a floor measured in the same run.

    python benchmarks/bench_check.py                  # median of 3, one warm-up round
    python benchmarks/bench_check.py -n 5 --lanes both --json bench.json

Three commands, each a fresh process with fresh, empty TRITON_CACHE_DIR and
TORCHINDUCTOR_CACHE_DIR, run in rounds (floor, reference, check, floor, ...) so that a noisy
neighbour slows all of them alike:

* **floor** — imports torch, initialises CUDA (when there is a GPU) and runs one first
  ``torch.compile`` of ``a + b``: the least any tool that proves torch.compile works must pay;
* **reference** — the quick check people paste from blog posts: print torch/CUDA/Triton
  versions, a 1000x1000 matmul (on the GPU when there is one), a ``torch.compile`` of ``a + b``;
* **check** — ``python -m envdoctor check`` (every default check, all smokes);
* **check (build)** — ``python -m envdoctor check --profile build`` (what an image build runs).

The bar: on a GPU machine, check <= 0.75 x floor and <= 0.6 x reference (medians); on a machine
without a GPU (the floor is then ``import torch`` and one CPU ``torch.compile``), the default
check and the build profile each <= 1.5 x floor.
Exit status 0 when the bar is met, 1 when not (figures are printed either way).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

FLOOR = r"""
import torch
if torch.cuda.is_available():
    torch.cuda.init()
    dev = "cuda"
else:
    dev = "cpu"
a = torch.randn(16, device=dev)
b = torch.randn(16, device=dev)
f = torch.compile(lambda a, b: a + b)
f(a, b)
if dev == "cuda":
    torch.cuda.synchronize()
"""

REFERENCE = r"""
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())
try:
    import triton
    print("triton", triton.__version__)
except ImportError:
    print("triton not installed")
dev = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.randn(1000, 1000, device=dev)
y = x @ x
if dev == "cuda":
    torch.cuda.synchronize()
print("matmul ok", tuple(y.shape))
f = torch.compile(lambda a, b: a + b)
a = torch.randn(16, device=dev)
print("compile ok", bool((f(a, a) == a + a).all()))
"""


def timed(argv: list[str], env: dict[str, str], timeout: float) -> tuple[float, int]:
    cache = tempfile.mkdtemp(prefix="envdoctor-bench-")
    run_env = {**env, "TRITON_CACHE_DIR": os.path.join(cache, "triton"), "TORCHINDUCTOR_CACHE_DIR": os.path.join(cache, "inductor")}
    start = time.perf_counter()
    try:
        rc = subprocess.run(argv, env=run_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        rc = -999
    elapsed = time.perf_counter() - start
    shutil.rmtree(cache, ignore_errors=True)
    return elapsed, rc


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--rounds", type=int, default=3, help="measured rounds (median is reported); default 3")
    ap.add_argument("--warmup", type=int, default=1, help="unmeasured rounds first (page cache); default 1")
    ap.add_argument("--python", default=sys.executable, help="interpreter that has torch and envdoctor")
    ap.add_argument(
        "--lanes",
        choices=("auto", "both"),
        default="auto",
        help="'both' also times the check with ENVDOCTOR_SMOKE_PARALLEL=0 and =1 (smokes in turn vs side by side)",
    )
    ap.add_argument("--check-args", default="", help="extra arguments for 'envdoctor check', e.g. '--select smoke'")
    ap.add_argument(
        "--check-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="also time the check with this variable set (repeatable: one row each), e.g. TORCHINDUCTOR_COMPILE_THREADS=1",
    )
    ap.add_argument(
        "--faults",
        action="store_true",
        help="also time the check with the GPUs hidden (CUDA_VISIBLE_DEVICES='' and naming a missing GPU, 99); goal <= 1.5 x check",
    )
    ap.add_argument(
        "--bar", choices=("auto", "gpu", "cpu"), default="auto", help="which bar applies; auto: gpu when nvidia-smi lists a GPU"
    )
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--json", dest="json_out", help="also write the figures to this file")
    return ap.parse_args(argv)


def commands_of(args: argparse.Namespace) -> dict[str, tuple[list[str], dict[str, str]]]:
    """name -> (argv, environment) of every command timed, floor and reference first."""
    env = dict(os.environ)
    env.pop("ENVDOCTOR_SMOKE_PARALLEL", None)
    check = [args.python, "-m", "envdoctor", "check", *args.check_args.split()]
    commands = {"floor": ([args.python, "-c", FLOOR], env), "reference": ([args.python, "-c", REFERENCE], env), "check": (check, env)}
    commands["check (build)"] = ([*check, "--profile", "build"], env)
    if args.lanes == "both":
        commands["check (lanes=0)"] = (check, {**env, "ENVDOCTOR_SMOKE_PARALLEL": "0"})
        commands["check (lanes=1)"] = (check, {**env, "ENVDOCTOR_SMOKE_PARALLEL": "1"})
    for setting in args.check_env:
        name, _, value = setting.partition("=")
        commands[f"check ({setting})"] = (check, {**env, name: value})
    if args.faults:
        commands["check (no GPU)"] = (check, {**env, "CUDA_VISIBLE_DEVICES": ""})
        commands["check (GPU 99)"] = (check, {**env, "CUDA_VISIBLE_DEVICES": "99"})
    return commands


def measure(commands, args) -> tuple[dict[str, list[float]], dict[str, set[int]]]:
    """Rounds of every command in turn (a noisy neighbour slows all alike); warm-up rounds first."""
    times: dict[str, list[float]] = {k: [] for k in commands}
    codes: dict[str, set[int]] = {k: set() for k in commands}
    for r in range(args.warmup + args.rounds):
        measured = r >= args.warmup
        for name, (cmd, cmd_env) in commands.items():
            t, rc = timed(cmd, cmd_env, args.timeout)
            print(f"{'round ' + str(r - args.warmup + 1) if measured else 'warm-up':>8}  {name:<16} {t:7.2f}s  exit {rc}", flush=True)
            if measured:
                times[name].append(t)
                codes[name].add(rc)
    return times, codes


# GPU machine: the default check at most 0.75x the floor and 0.6x the reference. CPU machine: the
# default check and the build profile each at most 1.5x the floor (import torch + one CPU compile).
BAR_FLOOR, BAR_REFERENCE, BAR_CPU = 0.75, 0.6, 1.5


def has_gpu() -> bool:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return False
    try:
        done = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and "GPU " in done.stdout


def verdict(commands, times, codes, gpu: bool) -> tuple[dict[str, float], float, bool]:
    """Print the table and the bar; (medians, ratio of the check to the floor, bar met)."""
    med = {k: statistics.median(v) for k, v in times.items()}
    floor, ref = med["floor"], med["reference"]
    print()
    print(f"{'command':<16} {'median':>8} {'/ floor':>8} {'/ ref':>7}   runs")
    for name in commands:
        runs = " ".join(f"{t:.2f}" for t in times[name])
        print(f"{name:<16} {med[name]:7.2f}s {med[name] / floor:7.2f}x {med[name] / ref:6.2f}x   {runs}")
    ratio, build = med["check"] / floor, med["check (build)"] / floor
    print()
    if gpu:
        met = ratio <= BAR_FLOOR and med["check"] / ref <= BAR_REFERENCE
        bar = f"check = {ratio:.2f} x floor (bar {BAR_FLOOR}), {med['check'] / ref:.2f} x reference (bar {BAR_REFERENCE})"
    else:
        met = ratio <= BAR_CPU and build <= BAR_CPU
        bar = f"no GPU: check = {ratio:.2f} x floor, check --profile build = {build:.2f} x floor (bar {BAR_CPU} each)"
    print(bar + (": bar met" if met else ": bar MISSED"))
    for name in ("check (no GPU)", "check (GPU 99)"):
        if name in med:
            print(f"{name} = {med[name] / med['check']:.2f} x check (goal <= 1.5)")
    if any(rc not in (0, 1) for rc in codes["check"]):
        print(f"note: envdoctor check exited with {sorted(codes['check'])} (0 healthy, 1 a check failed)")
    return med, ratio, met


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    commands = commands_of(args)
    times, codes = measure(commands, args)
    gpu = has_gpu() if args.bar == "auto" else args.bar == "gpu"
    med, ratio, met = verdict(commands, times, codes, gpu)
    if args.json_out:
        figures = {
            "rounds": args.rounds,
            "python": args.python,
            "cpus": os.cpu_count(),
            "times": times,
            "median": med,
            "exit_codes": {k: sorted(v) for k, v in codes.items()},
            "bar": "gpu" if gpu else "cpu",
            "ratio_floor": ratio,
            "ratio_build_floor": med["check (build)"] / med["floor"],
            "ratio_reference": med["check"] / med["reference"],
            "bar_met": met,
        }
        with open(args.json_out, "w") as f:
            json.dump(figures, f, indent=2)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
