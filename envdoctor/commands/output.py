"""What the commands share for output: report targets checked before a run, writing them,
colour, the TTY progress line, the secret/identity boundary and the one-line verdict."""

from __future__ import annotations

import os
import sys
import threading
import time

import click

from envdoctor.core.exitcode import ExitCode


def writable_target(path: str) -> str:
    """Fail early, before a long run, if a report file cannot be written."""
    parent = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise click.UsageError(f"cannot write the report to {path}: it is a directory")
    if not os.path.isdir(parent):
        raise click.UsageError(f"cannot write the report to {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise click.UsageError(f"cannot write the report to {path}: permission denied")
    return path


def write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        click.echo(f"envdoctor: cannot write {path}: {e.strerror or e}", err=True)
        raise SystemExit(ExitCode.USAGE) from None


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


def protect(report, redact: bool):
    from envdoctor.core.redact import redact_report, scrub_report

    report = scrub_report(report)
    return redact_report(report) if redact else report


def quiet_line(report, strict: bool) -> str:
    """One line for health checks and logs: the verdict, the counts and the first problems."""
    from envdoctor.core.api import Status
    from envdoctor.reporters.text import summary_line, verdict

    bad = [r for r in report.results if r.status in (Status.FAIL, Status.ERROR) or (strict and r.status is Status.WARN)]
    line = f"envdoctor {verdict(report, strict)}: {summary_line(report)}"
    if bad:
        shown = "; ".join(f"{r.id}: {' '.join((r.message or r.status.value).split())}" for r in bad[:3])
        line += f" — {shown}" + (f"; +{len(bad) - 3} more" if len(bad) > 3 else "")
    return line
