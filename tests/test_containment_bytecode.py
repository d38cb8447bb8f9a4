"""Containment with the issue-16 machinery running: a prestarted worker importing torch, a spare,
and bytecode helpers compiling into the run's cache. A real `envdoctor check`, stopped by a signal
at any moment: nothing it started survives and nothing is left in $TMPDIR."""

from __future__ import annotations

import os
import re
import signal
import time

import pytest

from tests.test_containment import _cmdline, _env, _marked, _wait_gone

# A torch without bytecode whose import takes a while (as a real one does, compiling from source).
SLOW_TORCH = "import time\ntime.sleep(2)\n__version__ = '0.0.fake'\n"


def _slow_torch(tmp_path) -> str:
    sp = tmp_path / "sp"
    pkg = sp / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(SLOW_TORCH)
    # Enough modules that the helpers are still compiling when the signal comes.
    for i in range(200):
        (pkg / f"mod{i:03d}.py").write_text("".join(f"def f{j}(x):\n    return x + {j}\n" for j in range(200)))
    return str(sp)


def _left(tmpdir: str) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, n), tmpdir) for d, dirs, files in os.walk(tmpdir) for n in dirs + files)


def _bytecode_env(tmp_path) -> tuple[dict, str]:
    return _env(tmp_path, PYTHONPATH=_slow_torch(tmp_path), PYTHONDONTWRITEBYTECODE="1", ENVDOCTOR_PRECOMPILE="2")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
@pytest.mark.parametrize("delay", [0.05, 0.3, "helpers"])
@pytest.mark.slow
def test_nothing_survives_a_signal_while_torch_imports_and_helpers_compile(spawn, tmp_path, sig, delay):
    env, marker = _bytecode_env(tmp_path)
    proc = spawn("check", "--select", "torch.importable", env=env)
    if delay == "helpers":  # ready: a bytecode helper runs (a fixed 1 s missed it on a loaded machine)
        _wait_for_helpers(marker)
    else:
        time.sleep(delay)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    # As in test_containment: CPython may still be starting (no envdoctor code has run yet).
    cpython_starting = "Traceback" in err and not re.search(r'File "[^"]*/envdoctor/', err)
    if not cpython_starting:
        assert "Traceback" not in err, err
    assert _wait_gone(marker) == [], "a worker or bytecode helper outlived envdoctor"
    # Nothing at all, SIGKILL included: the worker's child makes its directory (between fork and
    # exec) and its guard removes it when envdoctor is gone, so no moment leaves an orphan.
    assert _left(env["TMPDIR"]) == [], "the run's temporary files (the bytecode cache) outlived it"
    assert not (tmp_path / "sp" / "torch" / "__pycache__").exists(), "the user's torch was written to"
    if sig != signal.SIGKILL and not cpython_starting:
        assert proc.returncode in (130, -sig), (proc.returncode, out, err)


def _helpers(marker: str) -> list:
    return [p for p in _marked(marker) if "_probe_child import helper" in _cmdline(p)]


def _wait_for_helpers(marker: str, within: float = 60.0) -> None:
    end = time.monotonic() + within
    while not _helpers(marker):
        if time.monotonic() > end:
            raise AssertionError("no bytecode helper started")
        time.sleep(0.02)


@pytest.mark.slow
def test_the_helpers_run_during_the_import_and_are_gone_after_a_whole_run(spawn, tmp_path):
    env, marker = _bytecode_env(tmp_path)
    proc = spawn("check", "--select", "torch.importable", "--format", "json", env=env)
    seen = set()
    end = time.monotonic() + 20
    while proc.poll() is None and time.monotonic() < end:
        try:
            seen |= {p.pid for p in _helpers(marker)}
        except Exception:  # noqa: BLE001 - a process that ended while being looked at
            pass
        time.sleep(0.05)
    out, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err
    assert len(seen) == 2, "ENVDOCTOR_PRECOMPILE=2 did not start two helpers"
    assert '"torch.importable"' in out
    assert _wait_gone(marker) == []
    assert os.listdir(env["TMPDIR"]) == []
