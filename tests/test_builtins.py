"""Issue 24 item 2: the built-in checks load from the engine's static list, from an install and
from a checkout that is not installed (PYTHONPATH=<checkout>), never twice; a run in which no
check ran is its own error, never HEALTHY and never exit 0."""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from envdoctor.core.exitcode import ExitCode
from envdoctor.core.registry import Registry, discover, load_builtins, load_entry_points
from tests.conftest import REPO, run_cli


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A copy of the checkout's package files (what `git archive HEAD` holds of them), not installed."""
    root = tmp_path_factory.mktemp("checkout")
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for d in ("envdoctor", "checks"):
        shutil.copytree(REPO / d, root / d, ignore=skip)
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def run_uninstalled(root: Path, *args: str) -> subprocess.CompletedProcess:
    """`python -m envdoctor ARGS` with the checkout first on PYTHONPATH and the dependencies
    (click, packaging, ...) from site-packages, without site's .pth files: the editable install of
    this very tree is not seen, as on a machine where envdoctor was never installed."""
    paths = [str(root), *site.getsitepackages()]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    cmd = [sys.executable, "-S", *(["-m", "envdoctor", *args] if args[0] != "-c" else args)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=root, timeout=300)


def test_the_checkout_copy_is_not_installed(checkout):
    r = run_uninstalled(
        checkout, "-c", "import importlib.util, envdoctor; print(importlib.util.find_spec('envdoctor_checks'), envdoctor.__file__)"
    )
    assert r.stdout.split()[0] == "None", r.stdout + r.stderr
    assert r.stdout.split()[1].startswith(str(checkout))


@pytest.mark.slow
def test_an_uninstalled_checkout_lists_every_builtin_check(checkout):
    r = run_uninstalled(checkout, "list", "--format", "json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert [x for x in rows if "error" in x] == []
    installed = discover(())
    assert sorted(x["id"] for x in rows) == sorted(c.id for c in installed.checks)
    assert len(rows) == len(installed.checks) > 50


@pytest.mark.slow
def test_an_uninstalled_checkout_runs_builtin_checks_and_their_probe_bodies(checkout):
    # torch.build reads torch through the probe worker: its body is a built-in loaded by file path there too.
    r = run_uninstalled(checkout, "check", "--select", "system.python,torch.importable,torch.build", "--format", "json")
    report = json.loads(r.stdout)
    rows = {x["id"]: x for x in report["results"]}
    assert set(rows) == {"system.python", "torch.importable", "torch.build"}, r.stderr
    assert {x["status"] for x in rows.values()} == {"pass"}, rows
    assert r.returncode == 0


@pytest.mark.slow
def test_a_checkout_without_its_builtins_is_no_check_ran_not_healthy(checkout, tmp_path):
    bare = tmp_path / "bare"
    shutil.copytree(checkout / "envdoctor", bare / "envdoctor")
    shutil.copy(checkout / "pyproject.toml", bare / "pyproject.toml")
    r = run_uninstalled(bare, "check")
    assert r.returncode == ExitCode.NO_CHECKS == 4
    assert "HEALTHY" not in r.stdout + r.stderr
    assert r.stderr.strip().splitlines() == [r.stderr.strip()]  # one line
    assert "no check ran" in r.stderr and "built-in checks" in r.stderr


@pytest.mark.slow
def test_a_selection_that_leaves_no_check_is_its_own_exit_code(tmp_path):
    (tmp_path / "envdoctor.toml").write_text('skip = ["*"]\n')
    r = run_cli("check", "--config", str(tmp_path / "envdoctor.toml"))
    assert r.returncode == ExitCode.NO_CHECKS, r.stdout + r.stderr
    assert "HEALTHY" not in r.stdout and "no check ran" in r.stderr and "left none" in r.stderr


def test_builtins_are_not_loaded_twice_when_an_entry_point_names_them_too():
    reg = Registry()
    load_builtins(reg)
    count = len(reg.checks)
    eps = [md.EntryPoint("builtin", "envdoctor_checks", "envdoctor.checks")]
    load_entry_points(reg, eps=eps)
    assert len(reg.checks) == count > 50 and reg.problems == []


def test_an_empty_report_is_never_exit_zero():
    from envdoctor.core.report import Report, exit_code

    empty = Report(tool_version="0", started_at="", duration=0.0, platform={}, results=(), facts={}, options={})
    assert exit_code(empty) is ExitCode.NO_CHECKS


def test_the_text_report_orders_areas_as_the_builtins_declare(monkeypatch):
    import envdoctor_checks
    from envdoctor.core.api import Status
    from envdoctor.core.report import CheckOutcome, Report
    from envdoctor.reporters.text import render_text

    rows = tuple(CheckOutcome(id=f"{a}.x", title=f"{a} row", status=Status.PASS) for a in ("zzz", "smoke", "system"))
    report = Report(tool_version="0", started_at="", duration=0.0, platform={}, results=rows, facts={}, options={})

    def order() -> list[str]:
        text = render_text(report)
        return sorted(("system", "smoke", "zzz"), key=lambda a: text.index(f"{a} row"))

    assert order() == ["system", "smoke", "zzz"]  # the declared order; an undeclared area last
    monkeypatch.setattr(envdoctor_checks, "AREA_ORDER", ("smoke", "system"))
    assert order() == ["smoke", "system", "zzz"]


def test_the_engine_reads_the_builtins_declarations():
    from envdoctor.core import builtins

    assert builtins.declared("PRELOAD") == "envdoctor_checks.bodies.torch_info:preload"
    assert builtins.declared("BENCH_BODY") == "envdoctor_checks.bodies.bench"
    assert builtins.declared("NOT_DECLARED", "fallback") == "fallback"
