"""``envdoctor.run_command``: :func:`envdoctor.core.subproc.run`, loaded when a command is first
run; and the pure helpers a check uses on a command's result (:func:`describe_signal`,
:func:`last_line`).

A check module names ``run_command`` at import; most processes that import one (``triage``,
``list``) never run a command, and the process machinery (subprocess, tempfile, threads) costs
them start-up time for nothing.
"""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers: subproc.run's own signature
    from envdoctor.core.subproc import run as run_command
else:

    def run_command(*args: Any, **kwargs: Any):
        """Run ``argv`` to completion or its deadline (see :func:`envdoctor.core.subproc.run`)."""
        from envdoctor.core.subproc import run

        return run(*args, **kwargs)


def describe_signal(sig: int) -> str:
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = f"signal {sig}"
    meanings: dict[int, str] = {
        signal.SIGSEGV: "segmentation fault",
        signal.SIGABRT: "aborted",
        signal.SIGBUS: "bus error (often an exhausted /dev/shm)",
        signal.SIGFPE: "floating-point exception",
        signal.SIGILL: "illegal instruction (a binary built for another CPU?)",
        signal.SIGKILL: "killed, most often by the kernel's out-of-memory killer",
    }
    meaning = meanings.get(sig)
    return f"died of {name}" + (f" ({meaning})" if meaning else "")


def last_line(text: str) -> str:
    for line in reversed(text.strip().splitlines()):
        if line.strip():
            return line.strip()[:300]
    return ""
