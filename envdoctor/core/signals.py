"""Signals of the envdoctor command: Ctrl-C, TERM and HUP all stop a run the same way.

``envdoctor/__init__.py`` installs a quiet handler before any import of ours, when envdoctor is
the program: a signal then ends the process at once with 130 (there is nothing to report yet,
and a traceback from half-done imports helps nobody). ``install_run`` replaces it at the top of
``main``: from there on the signal raises
KeyboardInterrupt, the runner stops the probes and the partial report is printed.

A signal ignored when envdoctor started (``nohup``, a script's ``&`` for INT) stays ignored: the
user asked for a run that survives it, and it completes with its report.
"""

from __future__ import annotations

import signal
import threading

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


# Set by the run's handler. A KeyboardInterrupt raised while the interpreter runs a callback (an
# import lock's weakref cleanup) is printed as "Exception ignored" and lost: the run went on into a
# hanging check (seen about 1 in 100 SIGINTs 20 ms after start). The runner looks here too.
_requested = threading.Event()


def stop_requested() -> bool:
    """Whether INT, TERM or HUP arrived since the run's handlers went in."""
    return _requested.is_set()


def _raise(signum, frame):  # noqa: ARG001
    _requested.set()
    raise KeyboardInterrupt


def watched() -> tuple[signal.Signals, ...]:
    """The stop signals envdoctor handles: those not ignored (as inherited from its parent)."""
    return tuple(sig for sig in STOP_SIGNALS if signal.getsignal(sig) != signal.SIG_IGN)


def _install(handler) -> None:
    for sig in watched():
        try:
            signal.signal(sig, handler)
        except (ValueError, OSError):
            pass  # not the main thread (embedded use)


def install_run() -> None:
    _install(_raise)
