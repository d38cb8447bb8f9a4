"""The run plan and the CLI's inputs and outputs (issues 12, 13, 14): one decision of what runs,
refused patterns and timeouts, pre-flighted and atomic report files, any stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from envdoctor.core import plan as plan_mod
from envdoctor.core.api import CheckSpec, Item, Status
from envdoctor.core.config import ConfigError
from envdoctor.core.exitcode import ExitCode
from envdoctor.core.expect import Expectations, parse
from envdoctor.core.outputs import PREFIX, target_problem, write_atomic
from envdoctor.core.registry import Registry
from envdoctor.core.report import CheckOutcome, Report, Verdict, exit_code, verdict
from envdoctor.core.selection import PROFILE_TABLE, in_profile, judged_here
from tests.conftest import run_cli


def spec(cid: str, *tags: str) -> CheckSpec:
    return CheckSpec(id=cid, func=lambda: None, title=cid, tags=tags, params=())


SPECS = [spec("system.python", "build"), spec("smoke.matmul", "gpu", "smoke"), spec("perf.matmul", "gpu", "perf")]


def registry() -> Registry:
    return Registry(checks=list(SPECS), facts={}, problems=[], paths=[])


def report(*statuses: Status, **kw) -> Report:
    rows = tuple(CheckOutcome(f"a.c{i}", "t", s) for i, s in enumerate(statuses))
    return Report("0", "now", 0.0, {}, rows, **kw)


# -- the plan --------------------------------------------------------------------------------


def test_deselect_that_matches_nothing_is_refused_with_a_suggestion():
    with pytest.raises(plan_mod.PlanError, match=r"--deselect: no check matches 'smok' \(did you mean 'smoke'\?\)"):
        plan_mod.build(registry(), Expectations(), deselect=["smok"])
    with pytest.raises(plan_mod.PlanError, match=r"--select: no check matches 'sytem' \(did you mean 'system'\?\)"):
        plan_mod.build(registry(), Expectations(), select=["sytem"])


def test_config_skip_that_matches_nothing_is_refused():
    exp = Expectations().merged([parse("skip", ["smoke.matmull"], "envdoctor.toml")])
    with pytest.raises(
        plan_mod.PlanError, match=r"envdoctor.toml: skip: no check matches 'smoke.matmull' \(did you mean 'smoke.matmul'\?\)"
    ):
        plan_mod.build(registry(), exp)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0.0, -5.0])
def test_timeouts_must_be_positive_and_finite(value):
    with pytest.raises(plan_mod.PlanError, match="--timeout"):
        plan_mod.build(registry(), Expectations(), timeout=value)
    with pytest.raises(plan_mod.PlanError, match="--rank-timeout"):
        plan_mod.build(registry(), Expectations(), rank_timeout=value)


def test_the_plan_decides_checks_once_and_the_profile_table_is_the_rule():
    p = plan_mod.build(registry(), Expectations(), profile="build")
    assert [s.id for s in p.specs] == ["system.python"]
    assert not judged_here(SPECS[1], "build") and judged_here(SPECS[1], "runtime")
    assert [s.id for s in plan_mod.build(registry(), Expectations(), profile="full").specs] == [
        "system.python",
        "smoke.matmul",
        "perf.matmul",
        "expect.gpus",
    ]
    # Every profile runs it but health and liveness, which run only the checks tagged with their name.
    assert {name for name in PROFILE_TABLE if in_profile(SPECS[0], name)} == set(PROFILE_TABLE) - {"health", "liveness"}


@pytest.mark.parametrize("profile", ["runtime", "full"])
def test_runtime_and_full_expect_a_gpu(profile):
    p = plan_mod.build(registry(), Expectations(), profile=profile)
    assert p.expectations.get("gpus").text == ">=1"
    assert plan_mod.build(registry(), Expectations()).expectations.get("gpus") is None


def test_one_distributed_budget():
    from envdoctor.core.limits import distributed_budget

    assert distributed_budget(300, 120) == 300 + 5 * 120 + 60
    from envdoctor_checks import distributed as dist_checks

    assert "distributed_budget(local_timeout, rank_timeout)" in open(dist_checks.__file__).read()


def test_torch_none_is_an_expectation_that_is_no_row():
    exp = Expectations().merged([parse("torch", "none", "--expect")])
    assert not exp.torch_expected and exp.facts == ()
    assert plan_mod.build(registry(), exp).fact()["torch_expected"] is False
    assert plan_mod.build(registry(), Expectations()).fact()["torch_expected"] is True


def test_config_error_is_not_a_click_exception():
    import click

    assert not issubclass(ConfigError, click.ClickException)
    assert ConfigError("x").exit_code == ExitCode.USAGE


# -- one verdict -----------------------------------------------------------------------------


def test_one_verdict_and_one_exit_code():
    assert verdict(report(Status.PASS, Status.SKIP)) is Verdict.HEALTHY
    assert verdict(report(Status.WARN)) is Verdict.WARNINGS_ALLOWED and report(Status.WARN).healthy()
    assert verdict(report(Status.WARN), strict=True) is Verdict.WARNINGS and not report(Status.WARN).healthy(True)
    assert verdict(report(Status.ERROR)) is Verdict.PROBLEMS
    assert exit_code(report(Status.FAIL)) is ExitCode.FAILED
    assert exit_code(report(Status.PASS, interrupted=True)) is ExitCode.INTERRUPTED
    # A rank other than 0: its verdict is in rank 0's report; it fails only when it lost rank 0.
    assert exit_code(report(Status.FAIL, worker={"rank": 1, "world_size": 2, "delivered": True})) is ExitCode.OK
    assert exit_code(report(Status.PASS, worker={"rank": 1, "world_size": 2, "delivered": False})) is ExitCode.FAILED


# -- report files ----------------------------------------------------------------------------


def test_target_problem_really_creates_a_file(tmp_path):
    assert target_problem(str(tmp_path / "r.json")) is None
    assert target_problem("/proc/envdoctor-x.json")  # permission bits cannot tell; a real file can
    assert target_problem(str(tmp_path)) == "it is a directory"
    assert "does not exist" in target_problem(str(tmp_path / "no" / "r.json"))
    assert os.listdir(tmp_path) == []


def test_write_atomic_keeps_the_old_report_and_leaves_no_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "r.json"
    target.write_text("old")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_atomic(str(target), "new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["r.json"]
    monkeypatch.undo()
    write_atomic(str(target), "new")
    assert target.read_text() == "new" and os.listdir(tmp_path) == ["r.json"]


def test_write_atomic_onto_a_directory_fails_cleanly(tmp_path):
    (tmp_path / "r.json").mkdir()
    with pytest.raises(OSError):
        write_atomic(str(tmp_path / "r.json"), "x")
    assert sorted(os.listdir(tmp_path)) == ["r.json"] and (tmp_path / "r.json").is_dir()
    assert not any(n.startswith(PREFIX) for n in os.listdir(tmp_path))


# -- the CLI, in real subprocesses -------------------------------------------------------------

QUICK = ("check", "--select", "system.python,packages.versions", "--no-color")


@pytest.mark.slow
def test_cli_deselect_typo_and_nan_timeout_are_usage_errors():
    r = run_cli("check", "--deselect", "smok")
    assert r.returncode == 2 and "did you mean 'smoke'" in r.stderr and "Traceback" not in r.stderr
    for bad in ("nan", "inf", "-1"):
        r = run_cli("check", "--timeout", bad)
        assert r.returncode == 2 and "--timeout" in r.stderr, (bad, r.stderr)
    r = run_cli("check", "--rank-timeout", "nan")
    assert r.returncode == 2 and "--rank-timeout" in r.stderr


@pytest.mark.slow
def test_cli_unwritable_output_is_refused_before_the_run():
    r = run_cli(*QUICK, "--output", "/proc/envdoctor-x", "--json", "/proc/envdoctor-y")
    assert r.returncode == 2 and r.stdout == ""
    assert "/proc/envdoctor-x (--output)" in r.stderr and "/proc/envdoctor-y (--json)" in r.stderr


REMOVES_A_DIRECTORY = """
import os
from envdoctor import check, ok

@check("local.removes")
def removes():
    '''A check that removes the --json file's directory during the run'''
    os.rmdir(os.environ["GONE_DIR"])
    return ok("removed")
"""


@pytest.mark.slow
def test_cli_one_failed_output_does_not_stop_the_others(tmp_path):
    # The --json target was fine before the run (tried then) and fails after it: its directory
    # is gone. /dev/full, the old stand-in, is now refused before the run (not a regular file).
    plugins, out, gone = tmp_path / "plugins", tmp_path / "out", tmp_path / "gone"
    for d in (plugins, out, gone):
        d.mkdir()
    (plugins / "removes.py").write_text(REMOVES_A_DIRECTORY)
    md, xml, js = out / "r.md", out / "r.xml", gone / "r.json"
    args = (*QUICK[:2], QUICK[2] + ",local", *QUICK[3:], "--checks-path", str(plugins))
    r = run_cli(*args, "--json", str(js), "--junit-xml", str(xml), "--markdown", str(md), env={"GONE_DIR": str(gone)})
    assert r.returncode == 2, r.stderr
    assert md.read_text().startswith("### envdoctor") and "<testsuite" in xml.read_text()
    problems = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(problems) == 1 and str(js) in problems[0] and "internal error" not in r.stderr
    assert sorted(os.listdir(out)) == ["r.md", "r.xml"] and not gone.exists()


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
@pytest.mark.slow
def test_cli_any_stdout_encoding(encoding):
    r = subprocess.run(
        [sys.executable, "-m", "envdoctor", *QUICK],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": encoding},
    )
    assert r.returncode in (0, 1), r.stderr.decode(errors="replace")
    out = r.stdout.decode(encoding)
    assert "✓" not in out and ("ok " in out or "XX " in out) and "Traceback" not in r.stderr.decode(errors="replace")


@pytest.mark.slow
def test_cli_stdout_to_dev_full_is_one_line_on_stderr():
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "envdoctor", *QUICK], stdout=full, stderr=subprocess.PIPE, text=True)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "standard output" in lines[0] and "internal error" not in r.stderr


@pytest.mark.slow
def test_cli_closed_stdout_pipe_is_quiet():
    cmd = f"{sys.executable} -m envdoctor check --select system,packages.versions --no-color -v | head -1"
    r = subprocess.run(["bash", "-c", "set -o pipefail; " + cmd], capture_output=True, text=True)
    assert r.stdout.startswith("envdoctor ") and r.stderr == "", r.stderr


def test_torch_missing_fails_unless_not_expected():
    from envdoctor.testing import run_check
    from envdoctor_checks.packages import versions

    dists = {"numpy": {"name": "numpy", "version": "2.0.0"}}
    row = run_check(versions, dists=dists)
    assert row.status is Status.FAIL and sys.executable in row.message
    assert f"{sys.executable} -m pip install torch" in row.hint
    row = run_check(versions, dists=dists, options={"torch_expected": False})
    assert row.status is Status.SKIP and "torch=none" in row.message


@pytest.mark.slow
def test_every_report_names_its_interpreter(tmp_path):
    out = tmp_path / "r.json"
    r = run_cli(*QUICK, "--json", str(out), "--expect", "torch=none")
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["platform"]["executable"] == sys.executable
    assert f"({sys.executable})" in r.stdout.splitlines()[0]
    md = run_cli(*QUICK, "--format", "markdown")
    assert sys.executable in md.stdout.split("\n\n")[1]


def test_must_pass_item_names_the_profile():
    from envdoctor.core.expect import judge_must_pass

    exp = Expectations().merged([parse("must_pass", ["smoke.matmul"], "x")])
    row = judge_must_pass(report(), exp, SPECS, "build").results[-1]
    assert row.items == (Item("smoke.matmul", Status.SKIP, "GPU check, not judged under --profile build"),)


def test_session_run_is_the_whole_pipeline_judged_compacted_and_scrubbed(monkeypatch):
    """Issue 23 item 1: one engine call executes the plan, adds the must_pass row and scrubs the
    report; the command only delivers it."""
    from envdoctor.core import session
    from envdoctor.core.api import Param, fail

    secret = "s3cr3t-token-value-91ab"
    monkeypatch.setenv("MY_API_TOKEN", secret)
    spec = CheckSpec(
        "local.leak", lambda env: fail("the token is " + env["MY_API_TOKEN"], "rotate it"), "Leaks", ("build",), (Param("env", False),)
    )
    reg = registry()
    reg.checks.append(spec)
    exp = Expectations((parse("must_pass", ["local.leak"], "envdoctor.toml"),))
    report = session.run(plan_mod.build(reg, exp, select=("local.leak",)))
    rows = {r.id: r for r in report.results}
    assert rows["local.leak"].status.value == "fail", rows["local.leak"].message
    assert secret not in rows["local.leak"].message
    assert rows["expect.must_pass"].status.value == "fail"
    assert report.options["select"] == ["local.leak"]
