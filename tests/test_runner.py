"""The runner and fact store: containment, one reason for dependents, deadlines, Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import pytest

from envdoctor import Item, Missing, Skip, Status, Unavailable, check, fact, fail, ok, warn, worst
from envdoctor.core.api import CHECK_ATTR, FACT_ATTR
from envdoctor.core.facts import FactStore
from envdoctor.core.runner import evaluate, run_checks
from envdoctor.testing import gather, run_check
from tests.conftest import startup_s

CALLS = {"n": 0}


@fact("counted")
def counted():
    CALLS["n"] += 1
    return {"value": 7}


@fact("no_torch")
def no_torch():
    raise Unavailable("torch is not installed")


@fact("derived")
def derived(no_torch):
    return no_torch


@fact("crashing")
def crashing():
    raise RuntimeError("nvml exploded")


@check("t.uses_counted")
def uses_counted(counted):
    """uses counted"""
    return ok(str(counted["value"]))


@check("t.uses_counted_again")
def uses_counted_again(counted):
    """uses counted again"""
    return ok(str(counted["value"]))


@check("t.needs_torch")
def needs_torch(derived):
    """needs torch"""
    return ok()


@check("t.optional_torch")
def optional_torch(derived=None):
    """judges absence itself"""
    assert isinstance(derived, Missing) and not derived
    return warn(f"no torch: {derived.reason}", hint="pip install torch")


@check("t.crashes")
def crashes():
    """crashes"""
    raise ZeroDivisionError("oops")


@check("t.needs_crashing")
def needs_crashing(crashing):
    """needs a crashing fact"""
    return ok()


@check("t.skips")
def skips():
    """skips"""
    raise Skip("not applicable here")


@check("t.returns_junk")
def returns_junk():
    """returns junk"""
    return "fine"


def _store(*funcs):
    return FactStore({getattr(f, FACT_ATTR).name: getattr(f, FACT_ATTR) for f in funcs})


def test_fact_is_computed_once_for_many_checks():
    CALLS["n"] = 0
    store = _store(counted)
    specs = [getattr(f, CHECK_ATTR) for f in (uses_counted, uses_counted_again)]
    state = run_checks(specs, store)
    assert [state.outcomes[s.id].status for s in specs] == [Status.PASS, Status.PASS]
    assert CALLS["n"] == 1


def test_unavailable_fact_skips_dependents_with_one_reason():
    store = _store(no_torch, derived)
    out = evaluate(getattr(needs_torch, CHECK_ATTR), store)
    assert out.status is Status.SKIP and out.message == "torch is not installed"
    opt = evaluate(getattr(optional_torch, CHECK_ATTR), store)
    assert opt.status is Status.WARN and opt.message == "no torch: torch is not installed"


def test_errors_are_assigned_by_the_runner():
    store = _store(crashing)
    crashed = evaluate(getattr(crashes, CHECK_ATTR), store)
    assert crashed.status is Status.ERROR and "ZeroDivisionError: oops" in crashed.message
    dep = evaluate(getattr(needs_crashing, CHECK_ATTR), store)
    assert dep.status is Status.ERROR and "nvml exploded" in dep.message
    junk = evaluate(getattr(returns_junk, CHECK_ATTR), store)
    assert junk.status is Status.ERROR and "not a Result" in junk.message
    assert evaluate(getattr(skips, CHECK_ATTR), store).status is Status.SKIP


def test_testing_helpers_inject_facts():
    assert run_check(uses_counted, counted={"value": 3}).message == "3"
    assert run_check(needs_torch, derived=Unavailable("no torch here")).message == "no torch here"
    assert gather(derived, no_torch={"x": 1}) == {"x": 1}


def test_worst_and_items():
    items = [Item("GPU 0", Status.PASS), Item("GPU 3", Status.FAIL, "wrong result")]
    assert worst(items) is Status.FAIL
    r = fail("GPU 3 computed a wrong matmul", hint="run dcgmi diag -r 3 on GPU 3", items=items)
    assert r.items[1].name == "GPU 3"


@pytest.mark.slow
def test_deadline_turns_unfinished_checks_into_errors():
    @check("t.slow")
    def slow():
        """slow"""
        time.sleep(30)
        return ok()

    start = time.monotonic()
    state = run_checks([getattr(slow, CHECK_ATTR)], _store(), deadline=time.monotonic() + 0.5)
    assert time.monotonic() - start < 5
    assert state.timed_out
    assert state.outcomes["t.slow"].status is Status.ERROR
    assert "--timeout" in state.outcomes["t.slow"].message


HANGING_PLUGIN = """
from envdoctor import check, ok

@check("hang.probe")
def hangs(probe):
    '''A probe that never returns'''
    probe.call("hangbody:forever", timeout=600, what="the hanging probe")
    return ok()

@check("hang.cheap")
def cheap():
    '''A cheap check'''
    return ok("done")
"""

HANG_BODY = """
import subprocess, time

def forever():
    # A grandchild too: the whole process group must die with the probe.
    subprocess.Popen(["sleep", "1000"])
    time.sleep(1000)
"""


def _marked_env(tmp_path) -> tuple[dict, str]:
    """This test's own environment marker (tests.test_containment): what survives is counted
    among this run's descendants, not machine-wide, where another test's sleepers would count."""
    from tests.test_containment import _env

    return _env(tmp_path)


def _survivors(marker: str) -> list:
    from tests.test_containment import _wait_gone

    return _wait_gone(marker)


@pytest.mark.slow
def test_global_timeout_kills_a_hanging_probe_with_its_children(tmp_path):
    (tmp_path / "hangcheck.py").write_text(HANGING_PLUGIN)
    (tmp_path / "hangbody.py").write_text(HANG_BODY)
    env, marker = _marked_env(tmp_path)
    start = time.monotonic()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "envdoctor",
            "check",
            "--checks-path",
            str(tmp_path),
            "--select",
            "hang",
            "--timeout",
            "4",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    elapsed = time.monotonic() - start
    assert elapsed < 4 + 2 * startup_s() + 4, elapsed  # within --timeout, plus start-up (measured) and kill grace
    data = json.loads(r.stdout)
    rows = {x["id"]: x for x in data["results"]}
    assert rows["hang.cheap"]["status"] == "pass"
    assert rows["hang.probe"]["status"] == "error"
    assert data["summary"]["timed_out"] is True
    assert r.returncode == 1
    assert _survivors(marker) == []


@pytest.mark.slow
def test_ctrl_c_prints_partial_report_and_exits_130(spawn, tmp_path):
    (tmp_path / "hangcheck.py").write_text(HANGING_PLUGIN)
    (tmp_path / "hangbody.py").write_text(HANG_BODY)
    env, marker = _marked_env(tmp_path)
    proc = spawn("check", "--checks-path", str(tmp_path), "--select", "hang", "--no-color", env=env)
    from tests.test_containment import _wait_for_probe

    _wait_for_probe(marker)  # ready: the hanging body's grandchild runs, the run is mid-probe
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert "A cheap check: done" in out
    assert "interrupted" in out
    assert "Traceback" not in err
    assert _survivors(marker) == []


@pytest.mark.slow
def test_a_stop_signal_whose_interrupt_was_swallowed_still_stops_the_run(monkeypatch):
    """A KeyboardInterrupt raised while the interpreter runs an import lock's weakref callback is
    printed as "Exception ignored" and lost; the run's signal handler also records the stop, and the
    runner ends the run with it (seen: a SIGINT 20 ms after start left the run in a hanging check)."""
    import threading

    from envdoctor.core import signals

    release = threading.Event()

    @check("t.hangs")
    def hangs():
        """waits"""
        release.wait(30)
        return ok("released")

    monkeypatch.setattr(signals, "_requested", threading.Event())
    signals._requested.set()  # what _raise does before its KeyboardInterrupt went missing
    start = time.monotonic()
    try:
        state = run_checks([getattr(hangs, CHECK_ATTR)], FactStore({}))
    finally:
        release.set()
    assert state.interrupted and time.monotonic() - start < 5
    assert state.outcomes["t.hangs"].status is Status.ERROR and "interrupted" in state.outcomes["t.hangs"].message


def test_a_lost_interrupt_still_ends_a_command_envdoctor_waits_for(monkeypatch, tmp_path):
    # A stop signal whose KeyboardInterrupt the interpreter swallowed (it was raised inside a
    # finalizer) must not leave envdoctor waiting on a command that never ends (seen once in CI:
    # `envdoctor fix` waited 240 s on a fix command after its SIGINT).
    import psutil

    from envdoctor.core import signals
    from envdoctor.core.subproc import run

    monkeypatch.setattr(signals, "_requested", threading.Event())
    threading.Timer(0.5, signals._requested.set).start()  # the signal lands during the wait, its exception lost
    pidfile = tmp_path / "pid"
    cmd = ["sh", "-c", f"echo $$ > {pidfile}; exec sleep 30"]
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):  # the main thread: raised again
        run(cmd, timeout=60)
    assert time.monotonic() - start < 5
    assert not psutil.pid_exists(int(pidfile.read_text())) or psutil.Process(int(pidfile.read_text())).status() == psutil.STATUS_ZOMBIE
    # a command started once the stop was requested (a fix's rollback) runs to its end
    assert run(["sh", "-c", "sleep 0.6; exit 4"], timeout=10).returncode == 4
    monkeypatch.setattr(signals, "_requested", threading.Event())
    box = {}
    worker = threading.Thread(target=lambda: box.update(done=run(cmd, timeout=60)))
    worker.start()
    time.sleep(0.5)
    signals._requested.set()
    worker.join(10)
    assert not worker.is_alive() and not box["done"].ok and "interrupted" in box["done"].describe()


def test_a_command_ends_as_before_without_a_stop(tmp_path):
    from envdoctor.core.subproc import run

    assert run(["sh", "-c", "exit 3"], timeout=10).returncode == 3
    slow = run(["sleep", "5"], timeout=0.6)
    assert slow.timed_out and slow.returncode is None and slow.duration < 3
