"""Signals of the envdoctor command: Ctrl-C, TERM and HUP all stop a run the same way.

``install_early`` runs before anything heavy is imported (from ``envdoctor/__init__.py``, only
when envdoctor is the program): a signal then ends the process at once, quietly, with 130
(there is nothing to report yet, and a traceback from half-done imports helps nobody).
``install_run`` replaces it at the top of ``main``: from there on the signal raises
KeyboardInterrupt, the runner stops the probes and the partial report is printed.
"""

from __future__ import annotations

import os
import signal
import sys

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
INTERRUPTED = 130


def _quiet_exit(signum, frame):  # noqa: ARG001
    try:
        os.write(2, b"envdoctor: interrupted\n")
    finally:
        os._exit(INTERRUPTED)


def _raise(signum, frame):  # noqa: ARG001
    raise KeyboardInterrupt


def _install(handler) -> None:
    for sig in STOP_SIGNALS:
        try:
            signal.signal(sig, handler)
        except (ValueError, OSError):
            pass  # not the main thread (embedded use)


def is_envdoctor_program() -> bool:
    """True while the envdoctor console script or `python -m envdoctor` is starting."""
    argv0 = sys.argv[0] if sys.argv else ""
    return argv0 == "-m" or os.path.basename(argv0) == "envdoctor"


def install_early() -> None:
    _install(_quiet_exit)


def install_run() -> None:
    _install(_raise)
