"""Stop `envdoctor check --select torch.importable` with SIGTERM, SIGINT or SIGKILL at random
moments while a prestarted worker imports a slow, bytecode-less fake torch and two bytecode
helpers compile it; count the runs that leave a process, a file in $TMPDIR or a traceback.

    python verification/scripts/signal_stress.py 80      # from the repository root

The same setup as tests/test_containment_bytecode.py, at random delays instead of three fixed
ones (a CI run once caught a leftover there at 0.3 s that fixed delays rarely reproduce).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.getcwd())

from tests.test_containment import _wait_gone  # noqa: E402 - after the repository is on the path
from tests.test_containment_bytecode import _bytecode_env, _left  # noqa: E402


def main(runs: int) -> int:
    bad = 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="envdoctor-stress-") as tmp:
            bad += _one(Path(tmp))
    print(f"{bad} bad of {runs}")
    return 1 if bad else 0


def _one(tmp: Path) -> int:
    """One stopped run; 1 when it left something."""
    env, marker = _bytecode_env(tmp)
    sig = random.choice([signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
    delay = random.uniform(0.1, 0.7)
    argv = [sys.executable, "-m", "envdoctor", "check", "--select", "torch.importable"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(delay)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    procs, left = _wait_gone(marker), _left(env["TMPDIR"])
    if procs or left or ("Traceback" in err and "/envdoctor/" in err):
        print("BAD", sig.name, f"{delay:.3f}s", procs, left[:3], err[-300:])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 40))
