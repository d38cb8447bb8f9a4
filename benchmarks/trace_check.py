#!/usr/bin/env python3
"""Where the time of one ``envdoctor check`` goes: a timeline on stderr.

    python benchmarks/trace_check.py check -q --json r.json 2> trace.txt

Runs the check in this process with the probe client and the runner wrapped, and prints one
``TRACE`` line per worker started, per probe call answered and per check finished, each with
its start and end in seconds since this script started. Sort them by start to read the run:
``grep TRACE trace.txt | sort -k3 -n``. It measures, it changes nothing the check does.
"""

from __future__ import annotations

import sys
import time

from envdoctor.core import probe, runner

T0 = time.monotonic()


def say(text: str) -> None:
    sys.stderr.write(f"TRACE {text}\n")
    sys.stderr.flush()


def since(start: float) -> str:
    return f"{start - T0:6.2f} -> {time.monotonic() - T0:6.2f}"


def wrap() -> None:
    answer, start_worker, evaluate = probe.ProbeClient._request_answer, probe.ProbeClient._start_worker, runner.evaluate

    def traced_answer(self, worker, offset, timeout, what):
        start = time.monotonic()
        try:
            return answer(self, worker, offset, timeout, what)
        finally:
            say(f"call  {since(start)}  pid {worker.proc.pid} {what}")

    def traced_start(self, env, what, root=None):
        start = time.monotonic()
        worker = start_worker(self, env, what, root=root)
        say(f"spawn {since(start)}  pid {worker.proc.pid} for {what}")
        return worker

    def traced_evaluate(spec, store, **kw):
        start = time.monotonic()
        outcome = evaluate(spec, store, **kw)
        say(f"check {since(start)}  {spec.id} {outcome.status.value}")
        return outcome

    probe.ProbeClient._request_answer = traced_answer
    probe.ProbeClient._start_worker = traced_start
    runner.evaluate = traced_evaluate


def main() -> None:
    wrap()
    from envdoctor.cli import main as envdoctor_main

    say(f"imported {time.monotonic() - T0:.2f}")
    try:
        envdoctor_main(sys.argv[1:])
    finally:
        say(f"end {time.monotonic() - T0:.2f}")


if __name__ == "__main__":
    main()
