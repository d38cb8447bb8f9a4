"""The standard streams as every command writes them, whatever they are: closed (``>&-``), full
(``> /dev/full``), a closed pipe (``| head -1``), ASCII or latin-1. Light (``--help`` loads it):
``main`` wraps the streams once (:func:`guarded_streams`), and click, the reporters and
:func:`emit` all write through them."""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import sys

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
