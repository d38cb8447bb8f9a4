"""What the commands share for output: printing to stdout whatever it is (envdoctor.core.streams),
writing report files, colour, the TTY progress line and the one-line verdict."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import NoReturn

from envdoctor.core.streams import emit  # noqa: F401 - the commands write stdout with it


def writable_target(path: str) -> str:
    """Fail early, before a long run, if a file cannot be written (diff, fleet, triage, baseline,
    bench): one line and exit 2."""
    from envdoctor.core.outputs import target_problem

    why = target_problem(path)
    if why:
        _usage_error(f"cannot write the report to {path}: {why}")
    return path


def _usage_error(line: str) -> NoReturn:
    import click

    from envdoctor.core.exitcode import ExitCode

    click.echo(f"envdoctor: {line}", err=True)
    raise SystemExit(ExitCode.USAGE)


def write(path: str, text: str | bytes) -> None:
    """Write one file atomically, or say why not and exit 2 (diff, fleet, triage, bench)."""
    problem = write_report(path, text)
    if problem:
        _usage_error(problem)


def write_report(path: str, text: str | bytes) -> str | None:
    """Write one report file atomically; None, or one line saying why it could not be written."""
    from envdoctor.core.outputs import write_atomic

    try:
        write_atomic(path, text)
    except OSError as e:
        return f"cannot write {path}: {e.strerror or e}"
    return None


def use_color(no_color: bool, stream=None) -> bool:
    stream = stream or sys.stdout
    if no_color or "NO_COLOR" in os.environ:
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


class TTYProgress:
    """One self-rewriting line on stderr: which check runs and for how long. TTY only."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.running: dict[str, float] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._tick, daemon=True)
        self.width = 0

    def started(self, spec) -> None:
        with self.lock:
            self.running[spec.id] = time.monotonic()

    def finished(self, outcome) -> None:
        with self.lock:
            self.running.pop(outcome.id, None)
            self.done += 1

    def _tick(self) -> None:
        while not self.stop.wait(0.25):
            with self.lock:
                if not self.running:
                    continue
                cid, since = min(self.running.items(), key=lambda kv: kv[1])
                line = f"[{self.done}/{self.total}] running {cid} ({time.monotonic() - since:.0f}s)"
                if len(self.running) > 1:
                    line += f" +{len(self.running) - 1} more"
            pad = max(0, self.width - len(line))
            self.width = len(line)
            sys.stderr.write("\r" + line + " " * pad)
            sys.stderr.flush()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(1)
        if self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()


def quiet_line(report, strict: bool) -> str:
    """One line for health checks and logs: the verdict, the counts and the first problems.
    A rank other than 0 says where its verdict went instead (rank 0's report)."""
    from envdoctor.core.api import Status
    from envdoctor.reporters.text import summary_line, verdict

    if report.worker is not None:
        from envdoctor.modes.distributed import one_line

        return one_line(report)

    bad = [r for r in report.results if r.status in (Status.FAIL, Status.ERROR) or (strict and r.status is Status.WARN)]
    line = f"envdoctor {verdict(report, strict)}: {summary_line(report)}"
    if bad:
        shown = "; ".join(f"{r.id}: {' '.join((r.message or r.status.value).split())}" for r in bad[:3])
        line += f" — {shown}" + (f"; +{len(bad) - 3} more" if len(bad) > 3 else "")
    return line
