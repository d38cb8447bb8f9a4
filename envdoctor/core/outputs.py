"""Every file envdoctor writes (reports, diff and fleet summaries, triage answers, baselines,
plots) goes through here: tried before the run, written atomically after it.

The target is found the way the kernel would open it, with two differences that keep a stranger
from steering the write:

- a symbolic link that sits in a sticky world-writable directory (``/tmp``) is followed only
  when the user or that directory's owner owns it (the rule of Linux's ``protected_symlinks``,
  applied whether or not the kernel has it on, and to root too); an existing file there that
  belongs to someone else is not replaced either;
- the target must be a regular file, or not exist yet: a FIFO (which would hang the write), a
  device, a socket or a directory is refused.

A user's own link (``report.json -> reports/latest.json``) is written through: the link stays,
its target gets the report. The report goes into a temporary file beside the target, created
with ``O_CREAT|O_EXCL|O_NOFOLLOW`` and mode 0600, synced, given its final mode (an existing
file's own; a new file's the umask's) and renamed over the target: a failed write leaves the
previous file whole and no temporary file behind.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from dataclasses import dataclass

PREFIX = ".envdoctor-"
_MAX_LINKS = 40  # as the kernel: ELOOP beyond
_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


@dataclass(frozen=True)
class Output:
    fmt: str  # text | json | markdown | junit
    path: str | None  # None: standard output
    option: str  # the option that named it, for messages ("--json")


class Refused(OSError):
    """A target envdoctor will not write; ``strerror`` says why in one line."""

    def __init__(self, why: str) -> None:
        super().__init__(errno.EPERM, why)


@dataclass(frozen=True)
class Target:
    directory: str  # the real directory the file is (or will be) in
    name: str  # its name there
    mode: int  # permission bits after the write
    owner: tuple[int, int] | None = None  # (uid, gid) to keep: root rewriting another's file


def _shared(st: os.stat_result) -> bool:
    """A sticky directory anyone may write to (``/tmp``, ``/var/tmp``, ``/dev/shm``)."""
    return bool(st.st_mode & stat.S_ISVTX and st.st_mode & stat.S_IWOTH)


def _stranger(uid: int, directory: os.stat_result) -> bool:
    """Whether a file owned by ``uid`` in a shared directory was put there by someone else."""
    return _shared(directory) and uid not in (os.geteuid(), directory.st_uid)


def _follow(path: str) -> str:
    """``path`` with every symbolic link followed, component by component as the kernel does,
    refusing a link a stranger left in a shared directory. The last component (or more) may
    not exist yet."""
    resolved = "/" if os.path.isabs(path) else os.getcwd()
    pending = list(reversed(path.split("/")))
    links = 0
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if part == "..":
            resolved = os.path.dirname(resolved)
            continue
        here = os.path.join(resolved, part)
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            return os.path.join(here, *reversed(pending))
        if not stat.S_ISLNK(st.st_mode):
            resolved = here
            continue
        links += 1
        if links > _MAX_LINKS:
            raise Refused(f"{path}: too many levels of symbolic links")
        if _stranger(st.st_uid, os.stat(resolved)):
            raise Refused(
                f"{here} is a symbolic link owned by uid {st.st_uid} in {resolved}, a directory anyone may write to: not followed"
            )
        target = os.readlink(here)
        if target.startswith("/"):
            resolved = "/"
        pending.extend(reversed(target.split("/")))
    return resolved


def resolve(path: str) -> Target:
    """Where a report for ``path`` goes, and with which mode; Refused (an OSError) when
    envdoctor will not write there."""
    real = _follow(path)
    directory, name = os.path.split(real)
    try:
        dst = os.stat(directory)
    except FileNotFoundError:
        raise Refused(f"directory {directory} does not exist") from None
    if not stat.S_ISDIR(dst.st_mode):
        raise Refused(f"{directory} is not a directory")
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        return Target(directory, name, 0o666 & ~_umask())
    where = "it is" if real == os.path.abspath(path) else f"it leads to {real}, which is"
    if not stat.S_ISREG(st.st_mode):
        kind = _KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file")
        raise Refused(f"{where} {kind}" + ("" if stat.S_ISDIR(st.st_mode) else "; reports are written to regular files only"))
    if _stranger(st.st_uid, dst):
        raise Refused(f"{where} owned by uid {st.st_uid} in {directory}, a directory anyone may write to: not replaced")
    mine = (st.st_uid, st.st_gid) == (os.geteuid(), os.getegid())
    owner = (st.st_uid, st.st_gid) if os.geteuid() == 0 and not mine else None
    return Target(directory, name, stat.S_IMODE(st.st_mode) & 0o777, owner)


def _create_temp(dir_fd: int) -> tuple[str, int]:
    """A new temporary file in the directory ``dir_fd``: never an existing name, never a link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        name = f"{PREFIX}{secrets.token_hex(6)}.tmp"
        try:
            return name, os.open(name, flags, 0o600, dir_fd=dir_fd)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name")


def target_problem(path: str) -> str | None:
    """Why ``path`` cannot take a report, found by resolving it as the write will and really
    creating and removing a temporary file beside it (permission bits say nothing on /proc, a
    read-only mount or a full disk); None when it can."""
    try:
        t = resolve(path)
        dir_fd = os.open(t.directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            name, fd = _create_temp(dir_fd)
            os.close(fd)
            os.unlink(name, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as e:
        return e.strerror or str(e)
    return None


def write_atomic(path: str, content: str | bytes) -> None:
    """Write ``content`` (text as UTF-8) to ``path``, as the module's docstring says; raises
    OSError (Refused for a target it will not write), with the previous file intact and the
    temporary one gone."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    t = resolve(path)
    dir_fd = os.open(t.directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        name, fd = _create_temp(dir_fd)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
                if t.owner:
                    _keep_owner(f.fileno(), t.owner)
                os.fchmod(f.fileno(), t.mode)
            os.replace(os.path.join(t.directory, name), os.path.join(t.directory, t.name))
        except BaseException:
            _unlink(name, dir_fd)
            raise
        try:
            os.fsync(dir_fd)  # the rename itself survives a crash
        except OSError:
            pass
    finally:
        os.close(dir_fd)


def _keep_owner(fd: int, owner: tuple[int, int]) -> None:
    try:
        os.fchown(fd, *owner)
    except OSError:
        pass  # a file system that does not let root give files away (NFS root_squash)


def _unlink(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def _umask() -> int:
    """The process's umask, read without changing it where Linux shows it (another thread may
    be creating files); elsewhere set and restored at once."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o22)
    os.umask(mask)
    return mask
