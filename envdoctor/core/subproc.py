"""Run an external command safely: argv list, own process group, deadline, bounded output.

Used by facts (``nvidia-smi``, ``ldconfig -p``, ``ptxas --version``) and by the probe
machinery. Never raises for a missing, hanging or crashing program: the outcome is data.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from envdoctor.core.reaper import load_prctl
from envdoctor.core.run import describe_signal, last_line
from envdoctor.core.signals import stop_requested

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

MAX_OUTPUT = 256 * 1024
KILL_GRACE = 2.0


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    returncode: int | None  # None when it never started or was killed at the deadline
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str = ""  # why it could not start ("not found", "permission denied")
    duration: float = 0.0

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.error

    @property
    def signal(self) -> int | None:
        rc = self.returncode
        return -rc if rc is not None and rc < 0 else None

    def describe(self) -> str:
        """One line saying how it ended, for messages."""
        name = os.path.basename(self.argv[0]) if self.argv else "command"
        if self.error:
            return f"{name}: {self.error}"
        if self.timed_out:
            return f"{name} did not finish within {self.duration:.0f}s (killed)"
        if self.signal:
            return f"{name} {describe_signal(self.signal)}"
        if self.returncode:
            tail = last_line(self.stderr) or last_line(self.stdout)
            return f"{name} exited with {self.returncode}" + (f": {tail}" if tail else "")
        return f"{name} succeeded"


def kill_group(proc: subprocess.Popen, grace: float = KILL_GRACE) -> None:
    """TERM then KILL the whole process group of ``proc`` (it must lead its own session)."""
    if proc.poll() is not None:
        # The leader is gone but children may linger in the group.
        _signal_group(proc.pid, signal.SIGKILL)
        return
    _signal_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(proc.pid, signal.SIGKILL)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        pass


def kill_now(proc: subprocess.Popen, wait: float = KILL_GRACE) -> None:
    """KILL the whole process group of ``proc`` at once (no TERM first) and reap it."""
    _signal_group(proc.pid, signal.SIGKILL)
    try:
        proc.wait(wait)
    except subprocess.TimeoutExpired:
        pass


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


# ---- children die with envdoctor -------------------------------------------------------------
#
# How every child dies with envdoctor, however it dies (SIGKILL included):
# - commands run by :func:`run` get PR_SET_PDEATHSIG=SIGKILL between fork and exec, so the kernel
#   kills them when the thread that started them ends; :func:`run` waits for its child on that
#   thread, so that is when envdoctor dies. (A hanging nvidia-smi would otherwise run forever.)
# - the probe worker sets its own parent-death signal in its boot code (``_probe_child``), checks
#   that its parent is still the one that started it (closing the fork/prctl race), and watches a
#   control pipe whose write end only envdoctor holds: at EOF it removes its temporary directory
#   (the run's caches, TMPDIR included) and kills its whole process group (compilers, compile
#   workers). It is started from :func:`spawn_on_stable_thread`, because a parent-death signal
#   fires when the *thread* that forked ends, and check threads end during a run.

_PR_SET_PDEATHSIG = 1
_prctl: Callable[..., int] | None = None
_spawner: ThreadPoolExecutor | None = None
_spawner_lock = threading.Lock()


def _ensure_prctl() -> None:
    global _prctl
    if _prctl is None and sys.platform.startswith("linux"):
        _prctl = load_prctl()


def _die_with_parent_preexec(parent: int):
    """A preexec_fn: only an already-resolved C call and getppid, no imports, no locks, so it is
    safe in a child forked from a threaded process (glibc keeps malloc usable after fork)."""
    prctl = _prctl
    assert prctl is not None, "given only where prctl loaded"

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl: nobody would kill us
            os._exit(1)

    return preexec


def spawn_on_stable_thread(start):
    """Run ``start()`` (which starts a process) on one thread that lives as long as envdoctor."""
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            from concurrent.futures import ThreadPoolExecutor  # here: it imports logging, which `list` need not load

            _spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="envdoctor-spawner")
    return _spawner.submit(start).result()


def read_tail(f, limit: int = MAX_OUTPUT) -> str:
    f.flush()
    f.seek(0, os.SEEK_END)
    size = f.tell()
    f.seek(max(0, size - limit))
    data = f.read()
    text = data.decode("utf-8", "replace")
    return ("…" + text) if size > limit else text


def run(
    argv: Sequence[str],
    timeout: float = 10.0,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    input: str | None = None,
    user: int | None = None,
    group: int | None = None,
) -> Completed:
    """Run ``argv`` to completion or its deadline; ``user``/``group`` switch to that UID/GID
    (with no supplementary groups) in the child, which needs root."""
    argv = tuple(str(a) for a in argv)
    as_user: dict[str, Any] = {"user": user, "group": group, "extra_groups": []} if user is not None else {}
    start = time.monotonic()
    # Output goes to temporary files, not pipes: a chatty child can never block on a full pipe,
    # and we keep only the tail.
    _ensure_prctl()
    stopping = stop_requested()  # a command run while envdoctor stops (a fix's rollback) runs to its end
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                start_new_session=True,
                **as_user,
                preexec_fn=_die_with_parent_preexec(os.getpid()) if _prctl else None,
            )
        except FileNotFoundError:
            return Completed(argv, None, "", "", error="not found", duration=time.monotonic() - start)
        except PermissionError:
            return Completed(argv, None, "", "", error="permission denied", duration=time.monotonic() - start)
        except OSError as e:
            return Completed(argv, None, "", "", error=e.strerror or str(e), duration=time.monotonic() - start)
        timed_out = interrupted = False
        try:
            if input is not None and proc.stdin is not None:  # stdin is a pipe then
                try:
                    proc.stdin.write(input.encode())
                    proc.stdin.close()
                except BrokenPipeError:
                    pass
            timed_out, interrupted = _wait(proc, start + timeout, stopping)
        finally:
            kill_group(proc)  # also reaps grandchildren left behind by a finished leader
        rc = None if timed_out or interrupted else proc.returncode
        why = "interrupted (envdoctor is stopping)" if interrupted else ""
        return Completed(argv, rc, read_tail(out), read_tail(err), timed_out, why, time.monotonic() - start)


def _wait(proc: subprocess.Popen, deadline: float, stopping: bool) -> tuple[bool, bool]:
    """Wait for ``proc`` until ``deadline``: (timed out, interrupted). A stop signal that arrives
    during the wait and whose KeyboardInterrupt was lost (raised inside a finalizer, seen about 1
    in 100 SIGINTs) still ends it: the main thread raises it again, another thread gives up on the
    command. One started after the stop (``stopping``: a rollback) is waited for as usual."""
    while True:
        try:
            proc.wait(max(0.0, min(0.25, deadline - time.monotonic())))
            return False, False
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                return True, False
            if not stopping and stop_requested():
                if threading.current_thread() is threading.main_thread():
                    raise KeyboardInterrupt from None
                return False, True
