"""`envdoctor check --python PATH`: another interpreter's environment is examined, by that
interpreter (its distributions, its torch, probes run by it), and every report names it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from envdoctor.core.interpreter import InterpreterError, examine, own
from envdoctor.core.probe import ProbeClient
from envdoctor_checks import packages
from tests.conftest import run_cli


def _site_packages(venv: Path) -> Path:
    found = list(venv.glob("lib/python3*/site-packages"))
    assert len(found) == 1, found
    return found[0]


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A clean venv of this machine's base interpreter (no torch, no envdoctor, no click) with
    one fake distribution in it."""
    root = tmp_path_factory.mktemp("target") / "venv"
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    info = _site_packages(root) / "fakedist-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakedist\nVersion: 1.2.3\n")
    (info / "RECORD").write_text("fakedist/_speedups.cpython-311-x86_64-linux-gnu.so,,\n")
    return root


def _check_json(*args: str) -> tuple[subprocess.CompletedProcess, dict]:
    res = run_cli("check", "--no-color", "--format", "json", *args)
    assert res.returncode in (0, 1), res.stderr
    return res, json.loads(res.stdout)


@pytest.mark.slow
def test_a_clean_venv_is_judged_not_envdoctors_own_interpreter(venv):
    target = str(venv / "bin" / "python")
    res, report = _check_json("--python", target, "-s", "packages,torch.importable")
    assert report["platform"]["executable"] == target
    assert target in report["platform"]["summary"]
    assert report["options"]["python"] == target
    rows = {r["id"]: r for r in report["results"]}
    assert rows["packages.versions"]["status"] == "fail"
    assert f"torch is not installed in the interpreter examined ({target})" in rows["packages.versions"]["message"]
    assert rows["torch.importable"]["status"] == "skip"  # no torch there, though envdoctor's own has one
    dists = report["facts"]["dists"]
    assert dists["fakedist"]["version"] == "1.2.3" and dists["fakedist"]["compiled"] is True
    assert "torch" not in dists and "click" not in dists
    assert res.returncode == 1


@pytest.mark.slow
def test_text_and_markdown_headers_name_the_interpreter(venv):
    target = str(venv / "bin" / "python")
    for fmt in ("text", "markdown"):
        res = run_cli("check", "--no-color", "--format", fmt, "--python", target, "-s", "system.python")
        assert res.returncode == 0, res.stderr
        head = res.stdout.splitlines()[0] if fmt == "text" else res.stdout
        assert f"({target})" in head, res.stdout[:400]
        assert f"at {target}" in res.stdout


@pytest.mark.slow
def test_torch_reached_through_a_pth_file_is_imported_by_the_target(venv, tmp_path):
    """The target sees torch only through a .pth file naming the test venv's site-packages:
    a probe-backed check passing with that torch proves the probe ran in the target."""
    pth = _site_packages(venv) / "envdoctor-test-torch.pth"
    pth.write_text(sysconfig.get_paths()["purelib"] + "\n")
    try:
        target = str(venv / "bin" / "python")
        _, report = _check_json("--python", target, "-s", "torch.importable,packages.versions")
    finally:
        pth.unlink()
    rows = {r["id"]: r for r in report["results"]}
    assert rows["torch.importable"]["status"] == "pass", rows["torch.importable"]
    assert "2.13.0+cpu" in rows["torch.importable"]["message"]
    assert report["facts"]["torch_runtime"]["executable"] == target
    assert rows["packages.versions"]["status"] == "pass"


def test_the_probe_worker_runs_the_target_without_envdoctor_or_its_dependencies(venv):
    target = str(venv / "bin" / "python")
    client = ProbeClient(python=target)
    try:
        info = client.call("envdoctor_checks.bodies.torch_info:collect", timeout=60)
        click = client.call("importlib.util:find_spec", {"name": "click"}, timeout=30)
        envdoctor = client.call("importlib.util:find_spec", {"name": "envdoctor"}, timeout=30)
    finally:
        client.close()
    assert info["executable"] == target
    assert "No module named 'torch'" in info["import_error"]
    assert click is None and envdoctor is None


def test_the_query_reads_distributions_as_the_dists_fact_does():
    """The same interpreter read in-process and through the query: the same distributions."""
    there = examine(sys.executable)
    here = packages.dists()
    # pytest puts the repository on sys.path; its envdoctor.egg-info is seen only here.
    here.pop("envdoctor", None)
    there.facts["dists"].pop("envdoctor", None)
    assert there.facts["dists"] == here
    assert there.version == own().version and not there.own and own().own


def _fake(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize(
    "make, phrase",
    [
        (lambda t: str(t / "missing"), "no such file"),
        (lambda t: str(t), "is a directory"),
        (lambda t: (t / "plain").write_text("x") and str(t / "plain"), "not executable"),
        (lambda t: _fake(t, "notpy", "echo hello"), "not a working Python interpreter"),
        (lambda t: _fake(t, "crashes", "echo 'Fatal Python error: init' >&2; exit 1"), "Fatal Python error: init"),
        (
            lambda t: _fake(t, "old", 'echo \'envdoctor-interpreter: {"version": "3.8.10", "version_info": [3, 8, 10]}\''),
            "Python 3.8.10 is too old",
        ),
    ],
)
@pytest.mark.slow
def test_an_unusable_python_is_a_usage_error_before_the_run(tmp_path, make, phrase):
    path = make(tmp_path)
    with pytest.raises(InterpreterError, match=phrase):
        examine(path)
    res = run_cli("check", "--python", path, "-s", "packages")
    assert res.returncode == 2
    assert phrase in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert res.stdout == ""


@pytest.mark.slow
def test_a_hanging_python_is_refused_at_its_deadline(tmp_path):
    path = _fake(tmp_path, "hangs", "exec sleep 30")
    with pytest.raises(InterpreterError, match="did not answer within 1s"):
        examine(path, timeout=1)


def test_the_default_run_examines_envdoctors_own_interpreter():
    _, report = _check_json("-s", "system.python")
    assert report["platform"]["executable"] == sys.executable
    assert "python" not in report["options"]
    assert os.path.samefile(report["facts"]["python_info"]["executable"], sys.executable)
