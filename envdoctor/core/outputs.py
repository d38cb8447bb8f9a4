"""Report files: each target is tried before the run (a temporary file really created in its
directory) and written atomically after it, so a failed write leaves the previous report whole
and no temporary file behind."""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass

PREFIX = ".envdoctor-"


@dataclass(frozen=True)
class Output:
    fmt: str  # text | json | markdown | junit
    path: str | None  # None: standard output
    option: str  # the option that named it, for messages ("--json")


def _special(path: str) -> bool:
    """An existing non-regular file (/dev/stdout, /dev/full, a FIFO) is written in place:
    replacing it would swap a device node or a pipe for a plain file."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def target_problem(path: str) -> str | None:
    """Why ``path`` cannot take a report, found by really creating and removing a temporary
    file beside it (permission bits say nothing on /proc, a read-only mount or a full disk)."""
    if os.path.isdir(path):
        return "it is a directory"
    if _special(path):
        return None if os.access(path, os.W_OK) else "permission denied"
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        return f"directory {parent} does not exist"
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=PREFIX, suffix=".tmp")
    except OSError as e:
        return e.strerror or str(e)
    os.close(fd)
    os.unlink(tmp)
    return None


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory and
    ``os.replace``; raises OSError, with the previous file intact and the temporary one gone."""
    data = text.encode("utf-8")
    if _special(path):
        with open(path, "wb") as f:
            f.write(data)
        return
    parent = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=PREFIX, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o666 & ~_umask())  # as open() would have made it, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
