"""What the commands share for output: the standard streams (whatever they are: closed, full,
ASCII), writing report files, colour, the TTY progress line and the one-line verdict."""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import sys
import threading
import time
from typing import NoReturn

# What an ASCII or latin-1 stream shows for the characters envdoctor's own texts use; anything
# else it cannot encode (a GPU name, a path) becomes "?". The same marks as check's ASCII ones.
ASCII_FALLBACK = {
    "✓": "ok",
    "✗": "XX",
    "✅": "ok",
    "❌": "XX",
    "⚠": "!!",
    "⏭": "--",
    "💥": "EE",
    "\ufe0f": "",  # the emoji presentation selector after ⚠ and ⏭
    "→": "->",
    "←": "<-",
    "—": "-",
    "–": "-",
    "−": "-",
    "×": "x",
    "·": "-",
    "…": "...",
    "≥": ">=",
    "≤": "<=",
    "±": "+/-",
    "‘": "'",
    "’": "'",
    "“": '"',
    "”": '"',
}
ERRORS = "envdoctor.ascii"  # the codec error handler that applies ASCII_FALLBACK


def _fallback(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    return "".join(ASCII_FALLBACK.get(ch, "?") for ch in exc.object[exc.start : exc.end]), exc.end


codecs.register_error(ERRORS, _fallback)


class StdoutError(OSError):
    """Standard output is closed or failing (``>&-``, ``> /dev/full``): exit 2 with one line."""


class _Guarded:
    """sys.stdout or sys.stderr during a command. A failing stdout raises StdoutError (a closed
    pipe stays BrokenPipeError: not an error); a failing or closed stderr drops what it is given,
    as nothing is left to tell. It has no ``buffer``, so click writes text through it (and its
    encoding) instead of forcing UTF-8 onto an ASCII stream's bytes."""

    def __init__(self, stream, name: str) -> None:
        self._stream = stream  # None: the descriptor was closed when Python started
        self._name = name

    def __getattr__(self, attr: str):
        if attr == "buffer" or self._stream is None:
            raise AttributeError(attr)
        return getattr(self._stream, attr)

    @property
    def encoding(self) -> str:
        return getattr(self._stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str:
        return getattr(self._stream, "errors", None) or "strict"

    def isatty(self) -> bool:
        return self._stream is not None and self._stream.isatty()

    def write(self, text: str) -> int:
        return self._call("write", text) or 0

    def flush(self) -> None:
        self._call("flush")

    def _call(self, method: str, *args):
        if self._stream is None:
            if self._name == "stderr":
                return len(args[0]) if args else None
            raise StdoutError(errno.EBADF, "it is closed")
        try:
            return getattr(self._stream, method)(*args)
        except BrokenPipeError:
            if self._name == "stderr":
                return None
            _stdout_to_devnull()  # the exit's flush of what is left then succeeds quietly
            raise
        except (OSError, ValueError) as e:
            if self._name == "stderr":
                return None
            raise StdoutError(getattr(e, "errno", None) or errno.EIO, getattr(e, "strerror", None) or str(e)) from None


def _reserve_std_fds() -> None:
    """A descriptor 0, 1 or 2 closed at start (``>&-``) is held open on /dev/null, so no file
    envdoctor opens later takes its number (and a child's stray output with it)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            try:
                new = os.open(os.devnull, os.O_RDWR)
                if new != fd:
                    os.dup2(new, fd)
                    os.close(new)
            except OSError:
                pass


def _tolerant(stream) -> None:
    """A latin-1 or ASCII stream shows ASCII_FALLBACK's marks, and '?' for the rest, rather
    than failing."""
    try:
        if codecs.lookup(stream.encoding).name not in ("utf-8", "utf-8-sig"):
            stream.reconfigure(errors=ERRORS)
    except (AttributeError, LookupError, TypeError, ValueError, OSError):
        pass  # not a TextIOWrapper (embedded use, a test runner's capture)


@contextlib.contextmanager
def guarded_streams():
    """The standard streams as every command writes them (see _Guarded), restored after."""
    _reserve_std_fds()
    saved = sys.stdout, sys.stderr
    for stream in saved:
        _tolerant(stream)
    sys.stdout, sys.stderr = _Guarded(saved[0], "stdout"), _Guarded(saved[1], "stderr")
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def stdout_failed(e: OSError) -> str:
    """The one line for a standard output that cannot be written; its descriptor now points at
    /dev/null, so what is left in the buffer does not fail again at exit."""
    _stdout_to_devnull()
    return f"cannot write to standard output: {e.strerror or e}"


def emit(text: str) -> str | None:
    """Print to stdout; None, or why it could not be written. A closed pipe (``| head -1``) is
    not a problem: the reader has what it wanted. A stdout that fails (``> /dev/full``) is."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_to_devnull()
        return None
    except OSError as e:
        return stdout_failed(e)
    return None


def _stdout_to_devnull() -> None:
    # What is left in the buffer would fail again at exit ("Exception ignored ..."): point the
    # descriptor at /dev/null so the final flush succeeds quietly.
    try:
        fd = sys.stdout.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass


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
