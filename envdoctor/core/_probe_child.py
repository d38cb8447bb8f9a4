"""The probe worker's main loop. Runs in a child interpreter, never in the doctor itself.

Reads one JSON request per line on stdin ({"target": "module:function", "kwargs": {...}}),
calls the function and writes one JSON response line to the file descriptor given as argv[1],
so that whatever the target prints (torch warnings, compiler output) cannot corrupt the
protocol. Kept free of envdoctor imports so it starts fast and cannot be broken by them.
"""

import ctypes
import importlib
import json
import os
import shutil
import signal
import sys
import threading
import time
import traceback

_PR_SET_PDEATHSIG = 1


def _end(root):
    """Take the worker down with everything it started, and its temporary directory."""
    try:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.killpg(0, signal.SIGTERM)  # compilers and compile workers first, so none writes on
        time.sleep(0.2)
    except OSError:
        pass
    if root:
        shutil.rmtree(root, ignore_errors=True)
    try:
        os.killpg(0, signal.SIGKILL)  # stragglers, and this process
    finally:
        os._exit(1)


def _watch(control_fd, root):
    """EOF on the control pipe: envdoctor is gone (however it died) or has let this worker go."""
    while True:
        try:
            if not os.read(control_fd, 1):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    _end(root)


def _guard(control_fd, parent, root):
    """Die with the parent: its death signal (SIGTERM, so the handler can clean up), a check that
    it did not die before prctl ran, and the control-pipe watchdog for when prctl is unavailable
    or the signal cannot be handled (the main thread stuck in C code)."""
    signal.signal(signal.SIGTERM, lambda *_: _end(root))
    try:
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        _end(root)
    threading.Thread(target=_watch, args=(control_fd, root), name="envdoctor-parent-watch", daemon=True).start()


def _respond(out, payload):
    try:
        text = json.dumps(payload, default=repr)
    except (TypeError, ValueError) as e:
        text = json.dumps({"ok": False, "exc_type": "TypeError", "message": f"result is not JSON: {e}"})
    out.write(text + "\n")
    out.flush()


def main(argv=None):
    argv = sys.argv if argv is None else argv
    root = None
    if len(argv) >= 5:  # result fd, control fd, parent pid, the run's temporary directory
        root = argv[4]
        _guard(int(argv[2]), int(argv[3]), root)
    out = os.fdopen(int(argv[1]), "w", encoding="utf-8")
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            module, _, name = req["target"].partition(":")
            func = getattr(importlib.import_module(module), name)
            value = func(**req.get("kwargs", {}))
            payload = {"ok": True, "value": value}
        except BaseException as e:  # noqa: BLE001 - everything is reported to the parent
            payload = {
                "ok": False,
                "exc_type": type(e).__name__,
                "message": str(e)[:4000],
                "traceback": traceback.format_exc()[-6000:],
            }
        sys.stdout.flush()
        sys.stderr.flush()
        _respond(out, payload)
    if root:
        _end(root)  # stdin closed: envdoctor let this worker go (or died); leave nothing behind


if __name__ == "__main__":
    main()
