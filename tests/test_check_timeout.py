"""Per-check timeouts (``@check(timeout=...)``), with real plugin files run through the CLI."""

from __future__ import annotations

import json
import time

import pytest

from envdoctor import check, ok
from envdoctor.core.facts import FactStore
from envdoctor.core.runner import evaluate
from tests.conftest import run_cli, startup_s

HANGS = """
import time
from envdoctor import check, ok

@check("local.hangs", tags=("build",), timeout=2)
def hangs():
    '''A check that hangs'''
    time.sleep(120)
    return ok("woke up")

@check("local.quick", tags=("build",), timeout=30)
def quick():
    '''A check well within its timeout'''
    return ok("quick")
"""


@pytest.mark.slow
def test_a_hanging_check_ends_at_its_own_timeout_and_the_run_goes_on(tmp_path):
    (tmp_path / "hangs.py").write_text(HANGS)
    start = time.monotonic()
    r = run_cli(
        "check", "--checks-path", str(tmp_path), "--select", "local", "--select", "system.python", "--format", "json", "--timeout", "100"
    )
    took = time.monotonic() - start
    rows = {x["id"]: x for x in json.loads(r.stdout)["results"]}
    assert rows["local.hangs"]["status"] == "error"
    assert rows["local.hangs"]["message"] == "did not finish within its own timeout of 2 s"
    assert 2 <= rows["local.hangs"]["duration_s"] < 5
    assert rows["local.quick"]["status"] == "pass" and rows["system.python"]["status"] == "pass"
    assert not json.loads(r.stdout)["summary"]["timed_out"]
    assert r.returncode == 1
    assert took < min(100, 2 + 2 * startup_s() + 10), took  # not the run's --timeout of 100 s (start-up measured)


PROBE_HANG = """
from envdoctor import check, ok

@check("local.probe_hangs", tags=("build",), timeout=3)
def probe_hangs(probe):
    '''A check whose probe call hangs'''
    probe.call("_bodies:sleep", {"seconds": 120, "ready": READY}, timeout=120)
    return ok("woke up")

@check("local.probe_after", tags=("build",))
def probe_after(probe):
    '''A check that needs the probe after the hung one'''
    import os, time
    end = time.monotonic() + 120
    while not os.path.exists(READY) and time.monotonic() < end:  # the hanging check holds the probe
        time.sleep(0.01)
    return ok(f"answer {probe.call('_bodies:answer', timeout=60)}")
"""

BODIES = """
import time

def sleep(seconds, ready):
    open(ready, "w").close()
    time.sleep(seconds)

def answer():
    return 42
"""


@pytest.mark.slow
def test_a_check_hung_in_its_probe_frees_the_probe_for_the_others(tmp_path):
    (tmp_path / "probing.py").write_text(PROBE_HANG.replace("READY", repr(str(tmp_path / "ready"))))
    (tmp_path / "_bodies.py").write_text(BODIES)
    start = time.monotonic()
    r = run_cli("check", "--checks-path", str(tmp_path), "--select", "local", "--format", "json", "--timeout", "100")
    took = time.monotonic() - start
    rows = {x["id"]: x for x in json.loads(r.stdout)["results"]}
    assert rows["local.probe_hangs"]["message"] == "did not finish within its own timeout of 3 s"
    assert rows["local.probe_after"]["status"] == "pass" and rows["local.probe_after"]["message"] == "answer 42"
    assert took < min(100, 3 + 2 * startup_s() + 20), took  # not the probe call's 120 s (start-up measured)


@pytest.mark.slow
def test_timeout_bounds_the_body_not_the_shared_facts():
    @check("t.slow_fact", timeout=0.5)
    def slow_fact(slow):
        """Uses a slow fact"""
        return ok(f"got {slow}")

    from envdoctor import fact

    @fact("slow")
    def slow():
        time.sleep(1.0)
        return 7

    from envdoctor.core.api import FACT_ATTR

    store = FactStore({"slow": getattr(slow, FACT_ATTR)})
    out = evaluate(slow_fact.__envdoctor_check__, store)
    assert out.status.value == "pass" and out.message == "got 7"


def test_abandon_callback_receives_the_left_thread():
    @check("t.hang", timeout=0.3)
    def hang():
        """Hangs"""
        time.sleep(5)

    seen = []
    out = evaluate(hang.__envdoctor_check__, FactStore({}), on_abandon=seen.append)
    assert out.status.value == "error" and "own timeout of 0.3 s" in out.message
    assert len(seen) == 1 and seen[0].is_alive() and seen[0].daemon
