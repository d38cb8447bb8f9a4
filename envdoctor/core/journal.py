"""The fix journal: what ``envdoctor fix`` changed in one Python environment, so that
``envdoctor fix --undo`` can put it back, and the lock that keeps two fix runs on one
environment from interleaving.

Everything lives in the user's state directory ($XDG_STATE_HOME/envdoctor, else
~/.local/state/envdoctor), keyed by a hash of the environment's ``sys.prefix``:
``<key>.json`` (the journal), ``<key>.lock`` (the fcntl lock, naming its holder),
``<key>.files/`` (backups of files a fix replaced) and ``<key>.env.sh`` (the environment lines
a fix wrote for the user to source).

A *snapshot* is what can be restored: every distribution's version as the examined interpreter's
importlib.metadata sees it (first copy on sys.path per canonical name), and, for watched
paths, every file's size and modification time.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

JOURNAL_VERSION = 1
MAX_JOURNAL_BYTES = 4 * 1024 * 1024  # a journal is a few KB; anything larger is not one
QUERY_TIMEOUT = 60.0
MAX_BACKUP_BYTES = 1 << 30


class JournalError(Exception):
    """A journal that cannot be used (corrupt, another environment's, unreadable): one line."""


class LockHeld(Exception):
    """Another fix run holds this environment's lock; the message says who."""


def state_dir(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    base = env.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "envdoctor")


def env_key(prefix: str) -> str:
    return hashlib.sha256(os.path.realpath(prefix).encode()).hexdigest()[:16]


def distribution_versions(python: str) -> dict[str, str]:
    """{canonical name: version} of the first copy on sys.path of every distribution in the
    environment of ``python`` (what ``import`` and pip see), read there by the same query as
    --python; JournalError when it cannot be read."""
    from envdoctor.core.interpreter import InterpreterError, examine

    try:
        found = (examine(python, timeout=QUERY_TIMEOUT).facts or {}).get("dists") or {}
    except InterpreterError as e:
        raise JournalError(f"cannot read the distributions of {python}: {e}") from None
    return {str(k): str(v.get("version")) for k, v in found.items() if isinstance(v, dict)}


def file_states(paths: Sequence[str]) -> dict[str, list[int]]:
    """{path: [size, mtime_ns]} of every file under each of ``paths`` that is a directory, and
    of each one that is a file (absent: left out); a directory itself is ``path/`` with []."""
    out: dict[str, list[int]] = {}
    for top in paths:
        if not os.path.isdir(top):
            with contextlib.suppress(OSError):
                st = os.lstat(top)
                out[top] = [st.st_size, st.st_mtime_ns]
            continue
        for root, _dirs, files in os.walk(top):
            out[os.path.join(root, "")] = []
            for name in files:
                path = os.path.join(root, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                out[path] = [st.st_size, st.st_mtime_ns]
    return out


@dataclass
class Journal:
    """One environment's journal: ``runs`` is a list of fix runs, oldest first; each holds
    ``entries`` (one per check row whose fixes ran) with ``before``/``after`` versions of the
    distributions the fix changed (None: absent) and ``created``/``replaced`` files."""

    path: str
    prefix: str
    runs: list[dict[str, Any]]

    @property
    def backups(self) -> str:
        return self.path[: -len(".json")] + ".files"

    def save(self) -> None:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        tmp = self.path + ".tmp"
        # private: a fix's index options may hold a password (they are needed to undo it)
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as f:
            json.dump({"version": JOURNAL_VERSION, "prefix": self.prefix, "runs": self.runs}, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)  # a crash leaves the old journal or the new one, never half of one

    def backup(self, paths: Sequence[str]) -> dict[str, str]:
        """Copy ``paths`` (files a fix may replace) into the backups: {path: its copy}."""
        total = sum(os.path.getsize(p) for p in paths)
        if total > MAX_BACKUP_BYTES:
            raise JournalError(
                f"the fix may replace {total >> 20} MiB of files, more than the journal keeps ({MAX_BACKUP_BYTES >> 20} MiB)"
            )
        return {p: self._copy(p) for p in paths}

    def forget(self, run: dict[str, Any]) -> None:
        """Drop ``run`` (undone, or nothing of it left to undo) and its backups."""
        self.runs.remove(run)
        for entry in run.get("entries") or ():
            for copy in (entry.get("replaced") or {}).values():
                with contextlib.suppress(OSError):
                    os.unlink(copy)

    def _copy(self, path: str) -> str:
        os.makedirs(self.backups, exist_ok=True)
        dest = os.path.join(self.backups, hashlib.sha256(f"{time.time_ns()}:{path}".encode()).hexdigest()[:24])
        shutil.copy2(path, dest)
        return dest


def journal_path(prefix: str, env: Mapping[str, str] | None = None) -> str:
    return os.path.join(state_dir(env), f"{env_key(prefix)}.json")


def env_file(prefix: str, env: Mapping[str, str] | None = None) -> str:
    """Where ``fix`` writes this environment's ``export`` lines for the user to source."""
    return journal_path(prefix, env)[: -len(".json")] + ".env.sh"


def load(prefix: str, env: Mapping[str, str] | None = None) -> Journal:
    """This environment's journal (empty when there is none); JournalError when the file is
    corrupt, too large or records another environment."""
    path = journal_path(prefix, env)
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_JOURNAL_BYTES + 1)
    except FileNotFoundError:
        return Journal(path, os.path.realpath(prefix), [])
    except OSError as e:
        raise JournalError(f"cannot read the fix journal {path}: {e.strerror or e}") from None
    try:
        if len(raw) > MAX_JOURNAL_BYTES:
            raise ValueError("larger than any journal")
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or data.get("version") != JOURNAL_VERSION or not isinstance(data.get("runs"), list):
            raise ValueError("not an envdoctor fix journal")
        if not all(isinstance(r, dict) and isinstance(r.get("entries"), list) for r in data["runs"]):
            raise ValueError("a run without entries")
    except (ValueError, UnicodeDecodeError) as e:
        raise JournalError(f"the fix journal {path} is corrupt ({e}); move it away to start a new one") from None
    if data.get("prefix") != os.path.realpath(prefix):
        raise JournalError(f"the fix journal {path} records another environment ({data.get('prefix')!r}, not {os.path.realpath(prefix)!r})")
    return Journal(path, data["prefix"], data["runs"])


@contextlib.contextmanager
def locked(prefix: str, what: str, env: Mapping[str, str] | None = None) -> Iterator[None]:
    """Hold this environment's fix lock (non-blocking): LockHeld names the holder."""
    path = journal_path(prefix, env)[: -len(".json")] + ".lock"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "another process"
            raise LockHeld(
                f"another fix run holds the lock for {os.path.realpath(prefix)} ({holder}); try again when it has finished"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}, since {time.strftime('%H:%M:%S')}: {what}".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def diff_versions(before: Mapping[str, str], after: Mapping[str, str]) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """(old, new) versions of every distribution that differs; None: absent on that side."""
    names = sorted(n for n in {*before, *after} if before.get(n) != after.get(n))
    return {n: before.get(n) for n in names}, {n: after.get(n) for n in names}


def diff_files(before: Mapping[str, Sequence[int]], after: Mapping[str, Sequence[int]]) -> tuple[list[str], list[str]]:
    """(created, changed-or-removed) paths between two :func:`file_states`."""
    created = sorted(p for p in after if p not in before)
    changed = sorted(p for p in before if list(after.get(p) or ()) != list(before[p]))
    return created, changed
