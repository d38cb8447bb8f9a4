"""The patient never takes down the doctor: real `envdoctor check` processes, hanging driver
tools, signals at any moment. Nothing survives a run and nothing is left in $TMPDIR."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid

import psutil
import pytest

from tests.conftest import marked
from tests.fakes import HERE, fake_nvidia_smi
from tests.test_runner import HANG_BODY, HANGING_PLUGIN


def _marked(marker: str) -> list[psutil.Process]:
    """Every process whose environment carries ``marker`` (each descendant of a run inherits it)."""
    return marked(marker)


def _cmdline(p: psutil.Process) -> str:
    """``p``'s command line, or "" once it has ended: a zombie (not yet reaped) has none to read."""
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


def _ended(pid: int) -> bool:
    """Whether process ``pid`` has ended: gone, or a zombie not yet reaped."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_gone(marker: str, within: float = 5.0) -> list[psutil.Process]:
    end = time.monotonic() + within
    while time.monotonic() < end:
        left = _marked(marker)
        if not left:
            return []
        time.sleep(0.1)
    return _marked(marker)


def _env(tmp_path, **extra) -> tuple[dict, str]:
    marker = uuid.uuid4().hex
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "ENVDOCTOR_TEST_MARKER": marker, "TMPDIR": str(tmp), "NO_COLOR": "1", **extra}
    return env, marker


def _timed_run(args, env) -> tuple[float, subprocess.CompletedProcess]:
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "envdoctor", "check", *args], capture_output=True, text=True, env=env, timeout=240)
    return time.monotonic() - start, r


@pytest.mark.slow
def test_a_wedged_driver_is_one_row_and_the_torch_probe_still_runs(tmp_path):
    args = ["--select", "nvidia,torch", "--format", "json"]
    healthy_env, marker = _env(tmp_path)
    healthy, r = _timed_run(args, healthy_env)
    assert r.returncode == 0, r.stderr
    bindir = tmp_path / "bin"
    fake_nvidia_smi(bindir, "hang")
    for extra in (
        {"PATH": f"{bindir}:{os.environ['PATH']}"},  # nvidia-smi hangs (NVML finds no library here)
        {"PYTHONPATH": str(HERE / "nvml"), "FAKE_NVML_MODE": "hang", "PATH": f"{bindir}:{os.environ['PATH']}"},  # both hang
    ):
        env, marker = _env(tmp_path, **extra)
        took, r = _timed_run(args, env)
        assert "Traceback" not in r.stderr
        rows = {x["id"]: x for x in json.loads(r.stdout)["results"]}
        # Generous against this machine's healthy run: the hang costs one 10 s deadline, not the run.
        assert took < healthy + 20 + 10, (took, healthy)
        assert rows["nvidia.driver"]["status"] == "fail" and "likely wedged" in rows["nvidia.driver"]["message"]
        assert rows["torch.importable"]["status"] == "pass"  # the torch probe ran
        assert not [i for i, x in rows.items() if x["status"] == "error"], rows
        assert rows["nvidia.gpus"]["status"] == "skip" and "did not" in rows["nvidia.gpus"]["message"]
        assert _wait_gone(marker) == []
        assert os.listdir(env["TMPDIR"]) == []


def _start(spawn, tmp_path, env, ignore=()):
    (tmp_path / "hangcheck.py").write_text(HANGING_PLUGIN)
    (tmp_path / "hangbody.py").write_text(HANG_BODY)
    return spawn("check", "--checks-path", str(tmp_path), "--select", "hang", env=env, ignore=ignore)


def _wait_for_probe(marker: str, within: float = 20.0) -> None:
    """Until the hanging body's grandchild (sleep 1000) runs: the worker is mid-probe."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if any("sleep" in _cmdline(p) for p in _marked(marker)):
            return
        time.sleep(0.05)
    raise AssertionError("the hanging probe never started")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGHUP, signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("delay", [0, 0.02, 0.05, 0.2, "probe"])
@pytest.mark.slow
def test_every_child_dies_with_envdoctor_however_it_dies(spawn, tmp_path, sig, delay):
    env, marker = _env(tmp_path)
    proc = _start(spawn, tmp_path, env)
    if delay == "probe":
        _wait_for_probe(marker)
    else:
        time.sleep(delay)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    # CPython itself may still be starting (importing site and the .pth files, or runpy looking
    # for the package): its own KeyboardInterrupt, before a line of envdoctor ran; no code of ours
    # can run earlier (an editable install's pip-generated finder runs from a .pth file then).
    cpython_starting = "Traceback" in err and not re.search(r'File "[^"]*/envdoctor/', err) and delay != "probe"
    if not cpython_starting:
        assert "Traceback" not in err
    assert _wait_gone(marker) == [], "a child of envdoctor outlived it"
    assert os.listdir(env["TMPDIR"]) == [], "the run's temporary files outlived it"
    if sig == signal.SIGKILL or cpython_starting:
        return
    if delay == "probe":  # the run had started: its partial report is printed
        assert proc.returncode == 130, (out, err)
        assert "A cheap check: done" in out and "interrupted" in out
    else:  # 130, or the signal's default action before the interpreter ran any envdoctor code
        assert proc.returncode in (130, -sig), (proc.returncode, out, err)


WAITING_PLUGIN = """
import os, time
from envdoctor import check, ok

@check("wait.go")
def waits():
    '''A check that runs until the test lets it finish'''
    open(os.environ["READY_FILE"], "w").close()
    end = time.monotonic() + 60
    while not os.path.exists(os.environ["GO_FILE"]) and time.monotonic() < end:
        time.sleep(0.02)
    return ok("let go")
"""


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGINT, signal.SIGTERM])
@pytest.mark.slow
def test_a_signal_ignored_when_envdoctor_started_stays_ignored(spawn, tmp_path, sig):
    """`nohup envdoctor check &` (HUP ignored), a script's `envdoctor check &` (INT ignored): the
    signal the parent chose to ignore does not end the run, which completes with its report."""
    (tmp_path / "waitcheck.py").write_text(WAITING_PLUGIN)
    ready, go = tmp_path / "ready", tmp_path / "go"
    env, marker = _env(tmp_path, READY_FILE=str(ready), GO_FILE=str(go))
    proc = spawn("check", "--checks-path", str(tmp_path), "--select", "wait", env=env, ignore=(sig,))
    end = time.monotonic() + 60
    while not ready.exists() and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.02)
    assert ready.exists(), proc.communicate()
    for _ in range(3):
        proc.send_signal(sig)
        time.sleep(0.2)  # a handled signal would have ended the run by now (exit 130)
    go.touch()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, (proc.returncode, out, err)
    assert "A check that runs until the test lets it finish: let go" in out and "HEALTHY" in out
    assert "interrupted" not in out + err
    assert _wait_gone(marker) == []


@pytest.mark.slow
def test_a_ctrl_c_as_the_first_worker_starts_gives_the_partial_report_quickly(spawn, tmp_path):
    env, marker = _env(tmp_path)
    proc = _start(spawn, tmp_path, env)
    end = time.monotonic() + 20
    while time.monotonic() < end and not any("_probe_child" in _cmdline(p) for p in _marked(marker)):
        time.sleep(0.005)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 4, "stopping took too long"
    assert proc.returncode == 130 and "Traceback" not in err
    assert "A cheap check: done" in out
    assert _wait_gone(marker) == []


FAILING_SIGNAL_TEST = """
from tests.conftest import spawn  # noqa: F401 - the fixture
from tests.test_containment import _env, _start, _wait_for_probe


def test_fails_mid_run(spawn, tmp_path):
    env, marker = _env(tmp_path)
    env["ENVDOCTOR_TEST_MARKER"] = {marker!r}
    _start(spawn, tmp_path, env)
    _wait_for_probe({marker!r})
    assert False, "a signal test that fails with the run (and its sleep 1000) still going"
"""


@pytest.mark.slow
def test_a_failing_signal_test_leaves_no_process_behind(tmp_path):
    marker = uuid.uuid4().hex
    test = tmp_path / "test_fails.py"
    test.write_text(FAILING_SIGNAL_TEST.format(marker=marker))
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
        capture_output=True,
        text=True,
        cwd=str(HERE.parent.parent),
        timeout=240,
    )
    assert r.returncode == 1 and "1 failed" in r.stdout, r.stdout + r.stderr
    assert "a signal test that fails" in r.stdout  # it failed where meant, mid-run
    assert _wait_gone(marker) == [], "the failed test's run or its children outlived it"


@pytest.mark.slow
def test_a_full_compile_leaves_nothing_in_tmpdir(tmp_path):
    # The compile smoke really compiles with Inductor's C++ backend here, precompiled headers included.
    env, marker = _env(tmp_path)
    took, r = _timed_run(["--select", "smoke.compile,torch.importable", "--format", "json"], env)
    rows = {x["id"]: x for x in json.loads(r.stdout)["results"]}
    assert rows["smoke.compile"]["status"] == "pass", rows["smoke.compile"]
    assert os.listdir(env["TMPDIR"]) == []
    assert _wait_gone(marker) == []
