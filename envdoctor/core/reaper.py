"""Nothing envdoctor's run started outlives it: a daemon a check, a plugin or a probe body forked
(double fork, ``setsid``) escapes every process group the engine kills, so envdoctor's process
becomes the "child subreaper" of everything below it (Linux ``PR_SET_CHILD_SUBREAPER``): such an
orphan is re-parented to envdoctor rather than to init, and :func:`reap` ends it before exit.
"""

from __future__ import annotations

import os
import signal
import sys

_PR_SET_CHILD_SUBREAPER = 36
_installed = False
_after: list = []  # what runs once every descendant is gone (see after_reap)


def after_reap(finish) -> None:
    """Run ``finish()`` at the end of every :func:`reap`, once the processes below this one are
    gone: what they would have removed themselves, had they lived long enough (a probe worker
    killed while it was still starting, before its own guard was set up)."""
    _after.append(finish)


def install() -> bool:
    """Become the subreaper of everything this process starts; False where that is not possible."""
    global _installed
    if not sys.platform.startswith("linux"):
        return False
    prctl = load_prctl()
    _installed = bool(prctl is not None and prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    return _installed


def load_prctl():
    """libc's ``prctl`` through ctypes, or None where it cannot be had."""
    import ctypes

    try:
        fn = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    fn.restype = ctypes.c_int
    return fn


def _no_children() -> bool:
    """True when the kernel says this process has no child at all (``/proc/self/task/*/children``,
    every thread's list empty): then nothing is below it, and psutil need not be loaded or /proc
    walked. False when it has one, or the kernel does not keep those lists."""
    try:
        tasks = os.listdir("/proc/self/task")
        for tid in tasks:
            with open(f"/proc/self/task/{tid}/children", "rb") as f:
                if f.read(1):
                    return False
    except OSError:
        return False
    return True


def reap(grace: float = 1.0) -> list[int]:
    """TERM, then KILL, every process still below this one; their pids (none unless installed);
    then what :func:`after_reap` registered."""
    try:
        return _reap(grace)
    finally:
        for finish in _after:
            try:
                finish()
            except Exception:  # noqa: BLE001 - one cleanup failing must not stop the others or the exit
                pass


def _reap(grace: float) -> list[int]:
    if not _installed or _no_children():
        return []
    import psutil

    try:
        left = psutil.Process(os.getpid()).children(recursive=True)
    except psutil.Error:
        return []
    for p in left:
        _send(p, signal.SIGTERM)
    _, alive = psutil.wait_procs(left, timeout=grace)
    for p in alive:
        _send(p, signal.SIGKILL)
    psutil.wait_procs(alive, timeout=grace)
    return [p.pid for p in left]


def _send(p, sig: int) -> None:
    import psutil

    try:
        p.send_signal(sig)
    except psutil.Error:
        pass
