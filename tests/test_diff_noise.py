"""`envdoctor diff` on real report pairs: an unchanged venv diffs as unchanged, however busy the
machine (a compile is judged by the CPU time it cost); causes follow the checks' declared
dependencies; a check regresses only when it fails as `envdoctor check` exits by."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from envdoctor.commands.diff import compare, render
from envdoctor.core.api import Status
from envdoctor.core.regressions import Dependencies
from envdoctor.core.report import CheckOutcome, Report, exit_code
from tests.conftest import run_cli

SELECT = "smoke.compile,compile.disabled_by_env,system.python,packages.versions"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[int, Path]]:
    base = tmp_path_factory.mktemp("noise")
    out = {}
    for label, env in (("a", {}), ("again", {}), ("off", {"TORCH_COMPILE_DISABLE": "1"})):
        path = base / f"{label}.json"
        done = run_cli("check", "-s", SELECT, "--format", "json", "-o", str(path), env=env)
        assert path.exists(), done.stderr
        out[label] = (done.returncode, path)
    return out


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.mark.slow
def test_two_runs_of_one_venv_are_no_regression(runs):
    (_, a), (_, b) = runs["a"], runs["again"]
    done = run_cli("diff", str(a), str(b))
    assert done.returncode == 0, done.stdout
    assert "Regressions" not in done.stdout and "REGRESSED" not in done.stdout
    assert "(+0%" not in done.stdout  # numbers that did not move get no line
    (compile,) = [r for r in _load(a)["results"] if r["id"] == "smoke.compile"]
    assert compile["status"] == "pass" and all(p["cpu_seconds"] > 0 for p in compile["details"]["parts"].values())


@pytest.mark.slow
def test_a_busy_machine_is_not_a_regression(runs):
    """Issue 30.3: the compile took 4x as long on a loaded machine, for the same CPU time."""
    a = _load(runs["a"][1])
    b = copy.deepcopy(a)
    _scale(b, wall=4.0, cpu=1.0)
    d = compare(a, b)
    assert not d.regressions and [m for m in d.metrics if m.unit == "s" and m.cpu]
    # The compile's CPU time 4x (and 2 s more): a regression, blamed on nothing that did not change.
    c = copy.deepcopy(a)
    _scale(c, wall=4.0, cpu=4.0)
    c["facts"]["dists"]["contourpy"] = {"name": "contourpy", "version": "1.3.3", "has_extensions": True, "compiled": ["x.so"]}
    d = compare(a, c)
    perf = [r for r in d.regressions if r.kind == "perf"]
    assert perf and all(r.name.startswith("smoke.compile") for r in perf)
    assert all(r.causes == () for r in perf), perf  # contourpy has no path to the compile smoke
    assert "contourpy" not in render(d, "text").split("Distributions")[0]


def _scale(report: dict, wall: float, cpu: float) -> None:
    """Every compile's wall-clock and CPU seconds scaled (CPU, when scaled, 2 s more: past the
    one-second floor of a tiny compile)."""
    for r in report["results"]:
        for part in (r.get("details") or {}).get("parts", {}).values():
            part["seconds"] *= wall
            part["cpu_seconds"] = part["cpu_seconds"] * cpu + (2.0 if cpu != 1.0 else 0.0)


@pytest.mark.slow
def test_torch_compile_disable_exits_0_in_both_commands(runs):
    code, off = runs["off"]
    assert code == 0
    done = run_cli("diff", str(runs["a"][1]), str(off))
    assert done.returncode == 0, done.stdout
    assert "smoke.compile: pass → skip" in done.stdout  # shown as a change, not a regression


@pytest.mark.parametrize("before", list(Status))
@pytest.mark.parametrize("after", list(Status))
@pytest.mark.parametrize("strict", [False, True])
def test_diff_and_check_agree_on_what_fails(before, after, strict):
    def report(status: Status) -> Report:
        return Report("0", "t", 0.0, {}, (CheckOutcome("x.y", "x", status),))

    def as_dict(status: Status) -> dict:
        return {"schema_version": "1.2", "results": [{"id": "x.y", "title": "x", "status": status.value}], "facts": {}}

    check_fails_before = exit_code(report(before), strict) != 0
    check_fails_after = exit_code(report(after), strict) != 0
    d = compare(as_dict(before), as_dict(after), strict=strict, deps=Dependencies())
    assert bool(d.regressions) == (check_fails_after and not check_fails_before)


def test_causes_follow_declared_dependencies():
    """A changed fact is a cause only along a path: a parameter, a fact it derives from, or blame=."""
    deps = Dependencies(
        checks={"t.pin": (("triton_pkg",), ()), "t.dists": (("dists",), ()), "t.blamed": (("dists",), ("numpy",))},
        facts={"triton_pkg": ("interpreter",), "dists": ("interpreter",)},
    )
    a = {"schema_version": "1.2", "results": [], "facts": {"dists": {"numpy": {"name": "numpy", "version": "2.2.6"}}}}
    for cid in ("t.pin", "t.dists", "t.blamed"):
        a["results"].append({"id": cid, "title": cid, "status": "pass"})
    b = copy.deepcopy(a)
    b["facts"]["dists"] = {
        "numpy": {"name": "numpy", "version": "2.4.0"},
        "triton": {"name": "triton", "version": "3.7.1"},
        "contourpy": {"name": "contourpy", "version": "1.3.3"},
    }
    for r in b["results"]:
        r["status"] = "fail"
    causes = {r.name: r.causes for r in compare(a, b, deps=deps).regressions}
    assert causes == {"t.pin": ("triton (none) → 3.7.1",), "t.dists": (), "t.blamed": ("numpy 2.2.6 → 2.4.0",)}
