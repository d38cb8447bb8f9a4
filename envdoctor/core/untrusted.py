"""Reading what the user names or another machine wrote: bounded, total on any bytes, linear.

Every file envdoctor reads on the user's behalf (a paste, a report, a baseline, a lock file, a
config) comes through :func:`read_bytes`, and every JSON or TOML document through
:func:`load_json` / :func:`load_toml`. A file is read only when it is a regular file no larger
than its limit (a FIFO, a device, ``/dev/zero``: refused at once, the limit said); standard
input is read up to the limit and, from a pipe, within a deadline. A document deeper than
:data:`MAX_DEPTH`, holding NaN, infinity or an integer past 64 bits is refused; lone surrogates
(``"\\ud800"``, which no output encoding can write) are shown escaped. Every problem is one
:class:`InputError` whose ``reason`` reads after the file's name.
"""

from __future__ import annotations

import math
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Iterable
from itertools import chain, compress, repeat
from operator import not_
from typing import Any

MiB = 1 << 20
LIMITS = {"paste": 16 * MiB, "report": 64 * MiB, "baseline": 64 * MiB, "lock": 4 * MiB, "config": MiB}
STDIN_TIMEOUT = 60.0  # a pipe that sends no end of file within this is not a paste being sent
# A report is a few levels deep (facts -> dists -> torch -> requires -> str); anything much deeper
# is not one, and walking it (scrubbing secrets, redacting) would exhaust Python's stack.
MAX_DEPTH = 64
_KINDS: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
_KINDS += ((stat.S_ISSOCK, "a socket"),)


class InputError(ValueError):
    """An input that cannot be used; ``reason`` is one line that reads after the input's name.
    ``syntax``: the text is not the format at all (as opposed to content no input holds)."""

    def __init__(self, reason: str, syntax: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.syntax = syntax


def size_text(n: int) -> str:
    return f"{n / MiB:.0f} MiB" if n >= MiB else f"{n / 1024:.0f} KiB" if n >= 1024 else f"{n} bytes"


def _too_big(limit: int) -> InputError:
    return InputError(f"is larger than the {size_text(limit)} envdoctor reads from such a file")


def read_bytes(path: str, limit: int, *, head: bool = False, timeout: float = STDIN_TIMEOUT) -> bytes:
    """The bytes of ``path`` (``-``: standard input): at most ``limit + 1`` with ``head`` (the
    caller says the cut), else refused when larger than ``limit``."""
    if path == "-":
        data = _read_stdin(limit, timeout)
    else:
        data = _read_file(path, limit, head)
    if len(data) > limit and not head:
        raise _too_big(limit)
    return data


def _read_file(path: str, limit: int, head: bool) -> bytes:
    try:  # O_NONBLOCK: opening a FIFO with no writer returns at once (and is refused below)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError("no such file") from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file") from None
    except (OSError, ValueError) as e:  # ValueError: a NUL in the name
        raise InputError(f"cannot read it ({getattr(e, 'strerror', None) or e})") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError("is a directory, not a file")
        if not stat.S_ISREG(st.st_mode):
            kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
            raise InputError(f"is {kind}, not a regular file (envdoctor reads only regular files; copy it to one first)")
        if st.st_size > limit and not head:
            raise _too_big(limit)
        return _read_fd(fd, limit + 1, None)
    except OSError as e:
        raise InputError(f"cannot read it ({e.strerror or e})") from None
    finally:
        os.close(fd)


def _read_fd(fd: int, want: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    got = 0
    while got < want:
        if deadline is not None:
            left = deadline - time.monotonic()
            import select  # on use: most input is a file

            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise InputError(f"sent no end of file within {STDIN_TIMEOUT:.0f} s (close the pipe, or give the paste as a file)")
        try:
            chunk = os.read(fd, min(want - got, MiB))
        except BlockingIOError:
            time.sleep(0.01)
            continue
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _read_stdin(limit: int, timeout: float) -> bytes:
    stream = sys.stdin
    if stream is None or getattr(stream, "closed", False):
        raise InputError("is closed")
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # a stream with no descriptor (tests, embedding)
        buffer = getattr(stream, "buffer", None)
        if buffer is None:
            raise InputError("cannot be read") from None
        return buffer.read(limit + 1)
    try:
        mode = os.fstat(fd).st_mode
        interactive = os.isatty(fd)
    except OSError as e:
        raise InputError(f"cannot be read ({e.strerror or e})") from None
    # A file or a person typing has no deadline; a pipe must end within one.
    deadline = None if stat.S_ISREG(mode) or interactive else time.monotonic() + timeout
    try:
        return _read_fd(fd, limit + 1, deadline)
    except OSError as e:
        raise InputError(f"cannot be read ({e.strerror or e})") from None


def decode_utf8(data: bytes) -> str:
    """UTF-8 text (a BOM dropped); anything else is refused."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("is not UTF-8 text (binary data?)") from None


# -- JSON and TOML ------------------------------------------------------------------------------


class _NotFinite(ValueError):
    pass


def _no_constant(name: str) -> Any:
    # Python's json reads NaN and Infinity; JSON has neither, and envdoctor never writes them.
    raise _NotFinite(name)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def load_json(text: str) -> Any:
    """The JSON value of ``text``, checked (depth, numbers) and with lone surrogates escaped;
    raises :class:`InputError`."""
    import json

    try:
        data = json.loads(text, parse_constant=_no_constant)
    except _NotFinite as e:
        raise InputError(f"it holds {e}, which JSON does not allow") from None
    except json.JSONDecodeError as e:
        hint = " (the file looks truncated)" if text.lstrip().startswith(("{", "[")) and e.pos >= len(text.rstrip()) - 1 else ""
        raise InputError(f"is not valid JSON{hint}: {e.msg} at line {e.lineno}, column {e.colno}", syntax=True) from None
    except RecursionError:
        raise InputError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as e:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
        raise InputError(f"a number it holds cannot be read: {str(e).splitlines()[0][:80]}") from None
    return checked(data, surrogates=bool(_SURROGATE_ESCAPE.search(text)))


def load_toml(text: str) -> dict[str, Any]:
    """The TOML table of ``text``, checked like :func:`load_json`; raises :class:`InputError`."""
    from envdoctor.core.config import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"not valid TOML: {e}", syntax=True) from None
    except RecursionError:
        raise InputError(f"TOML nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as e:  # an integer of more digits than Python converts
        raise InputError(f"a number it holds cannot be read: {str(e).splitlines()[0][:80]}") from None
    return checked(data, surrogates=False, what="TOML")


def checked(data: Any, surrogates: bool = True, what: str = "JSON") -> Any:
    """``data`` (a parsed document) when its depth and numbers are in bounds, with lone
    surrogates escaped when ``surrogates``; raises :class:`InputError`."""
    problem = too_deep(data, what)
    if problem:
        raise InputError(problem)
    return _escape_surrogates(data) if surrogates else data


def _escape_surrogates(v: Any) -> Any:
    # Depth is bounded by MAX_DEPTH here (too_deep ran first), so recursion is safe.
    if isinstance(v, str):
        return v if v.isascii() else v.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(v, dict):
        return {_escape_surrogates(k): _escape_surrogates(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_escape_surrogates(x) for x in v]
    return v


def too_deep(data: Any, what: str = "JSON") -> str:
    """Nesting past MAX_DEPTH, or a number no input holds (1e999 reads as infinity; an integer
    past 64 bits overflows every float conversion downstream); "" when neither."""
    # A whole level at a time, sorted by type with C-level map/compress: a report holds
    # thousands of strings, and `fleet` runs this over thousands of reports, so a Python step
    # per item would cost more than parsing the JSON did.
    level: list[Any] = [data] if isinstance(data, (dict, list)) else []
    numbers: Iterable[Any]
    depth, problem = 1, _odd_number(data)
    while level and not problem:
        is_dict = list(map(isinstance, level, repeat(dict)))
        items = [
            *chain.from_iterable(map(dict.values, compress(level, is_dict))),
            *chain.from_iterable(compress(level, map(not_, is_dict))),
        ]
        if items and depth >= MAX_DEPTH:  # they are one level deeper
            return f"{what} nested deeper than {MAX_DEPTH} levels"
        kinds = set(map(type, items))
        if kinds <= _KNOWN:  # as json.loads makes them
            numbers = compress(items, map(_NUMBERS.__contains__, map(type, items))) if kinds & _NUMBERS else ()
            level = list(compress(items, map(_BOXES.__contains__, map(type, items)))) if kinds & _BOXES else []
        else:
            numbers, level = items, [v for v in items if isinstance(v, (dict, list))]
        problem = next(filter(None, map(_odd_number, numbers)), "")
        depth += 1
    return problem


_BOXES = frozenset({dict, list})
_NUMBERS = frozenset({int, float})
_KNOWN = frozenset({str, bool, type(None)}) | _BOXES | _NUMBERS


def _odd_number(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "a number too large to be a measurement"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 1 << 64:
        return "an integer too large to be a measurement"
    return ""
