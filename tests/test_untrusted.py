"""Hostile inputs to every reader: each ends at once in a normal answer or one line (exit 2).

FIFOs, devices, oversized files, deep or odd JSON and TOML, lone surrogates, malformed facts,
rank summaries and JUnit text that XML cannot hold (issues 24.4-6, 30.6, 31.5-6).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import REPO

REPORTS = REPO / "tests" / "fixtures" / "reports"
CPU = REPORTS / "v1.0-cpu-box.json"


def _fifo(tmp_path: Path) -> str:
    path = str(tmp_path / "pipe")
    os.mkfifo(path)
    return path


def test_a_fifo_with_no_writer_and_a_device_are_refused_at_once_by_every_reader(tmp_path):
    from envdoctor.commands.triage import InputError, read_input
    from envdoctor.core.config import ConfigError, read_config
    from envdoctor.core.report import ReportError, load_report
    from envdoctor.sources.baseline import BaselineError, load_baseline, load_lock

    for path in (_fifo(tmp_path), "/dev/zero"):
        with pytest.raises(InputError, match="not a regular file"):
            read_input(path)
        with pytest.raises(ReportError, match="not a regular file"):
            load_report(path)
        with pytest.raises(BaselineError, match="not a regular file"):
            load_baseline(path)
        with pytest.raises(BaselineError, match="not a regular file"):
            load_lock(path)
        with pytest.raises(ConfigError, match="not a regular file"):
            read_config(path)


def test_a_file_over_the_limit_is_refused_without_reading_it_and_the_limit_is_said(tmp_path):
    from envdoctor.core.report import ReportError, load_report

    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(200 * 1024 * 1024)  # sparse: 200 MB that take no disk
    with pytest.raises(ReportError, match="larger than the 64 MiB"):
        load_report(str(big))


@pytest.mark.slow
def test_the_paste_from_a_pipe_still_works_and_a_pipe_that_never_ends_has_a_deadline(tmp_path, monkeypatch):
    from envdoctor.core import untrusted

    r = subprocess.run(
        [sys.executable, "-m", "envdoctor", "triage", "-"], input=(REPO / "tests/fixtures/pastes/nvidia_smi.txt").read_bytes(),
        capture_output=True, timeout=120, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert r.returncode in (0, 1) and b"Read: nvidia" in r.stdout, r.stderr
    rd, wr = os.pipe()
    try:
        with open(rd, "rb", closefd=False) as stream:
            monkeypatch.setattr(sys, "stdin", stream)
            with pytest.raises(untrusted.InputError, match="no end of file"):
                untrusted.read_bytes("-", 1024, timeout=0.2)
    finally:
        os.close(rd)
        os.close(wr)


def test_a_deep_baseline_and_an_infinite_config_value_are_one_line(tmp_path):
    from envdoctor.core.config import ConfigError, read_config
    from envdoctor.sources.baseline import BaselineError, load_baseline

    deep = tmp_path / "deep.json"
    deep.write_text('{"schema": "envdoctor-baseline/1", "facts": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}")
    with pytest.raises(BaselineError, match="nested deeper than 64"):
        load_baseline(str(deep))
    for body in (
        "[expect]\ngpu_memory = inf\n",
        "[expect]\ngpus = nan\n",
        "[expect]\ngpus = 99999999999999999999999\n",
        "a = " + "[" * 5000,
        '[expect]\ngpu_memory = "' + "9" * 400 + 'GB"\n',
        '[expect]\ngpus = ">=' + "9" * 5000 + '"\n',
        '[expect]\ntorch = ">=' + "9" * 5000 + '"\n',
        "[expect]\ngpus = " + "9" * 5000 + "\n",
    ):
        conf = tmp_path / "envdoctor.toml"
        conf.write_text(body)
        with pytest.raises(ConfigError) as e:
            read_config(conf)
        assert "\n" not in e.value.message and str(conf) in e.value.message


def test_a_baseline_of_a_newer_schema_says_so(tmp_path):
    from envdoctor.sources.baseline import BaselineError, load_baseline

    p = tmp_path / "b.json"
    p.write_text(json.dumps({"schema": "envdoctor-baseline/7", "facts": {}}))
    with pytest.raises(BaselineError, match="written by a newer envdoctor"):
        load_baseline(str(p))


def _report_with(tmp_path: Path, edit, name="b.json") -> Path:
    d = json.loads(CPU.read_text())
    text = edit(d)
    p = tmp_path / name
    p.write_text(text if isinstance(text, str) else json.dumps(d))
    return p


def test_lone_surrogates_in_a_report_are_shown_escaped_in_diff_and_fleet(tmp_path):
    from envdoctor.commands import diff, fleet
    from envdoctor.core.report import load_report

    def edit(d):
        d["results"][0].update(status="fail", message="MARK")
        d["platform"]["hostname"] = "HOSTMARK"
        return json.dumps(d).replace("MARK", "\\ud800x")

    p = _report_with(tmp_path, edit)
    loaded = load_report(str(p))
    assert loaded["platform"]["hostname"] == "HOST\\ud800x"
    d = diff.compare(load_report(str(CPU)), loaded)
    for fmt in ("text", "markdown", "json"):
        diff.render(d, fmt).encode("utf-8")
    fleet.render_text(fleet.summarize([str(CPU), str(p)])).encode("utf-8")


def test_a_report_whose_facts_have_the_wrong_type_is_malformed_in_diff(tmp_path):
    from envdoctor.commands.diff import diff_cmd

    def edit(d):
        d["facts"]["dists"] = "oops"

    r = CliRunner().invoke(diff_cmd, [str(CPU), str(_report_with(tmp_path, edit))])
    assert r.exit_code == 2 and "'facts.dists' is a str" in r.output, r.output


def test_fleet_a_missing_report_is_exit_2_and_a_malformed_one_is_one_row(tmp_path):
    from envdoctor.commands.fleet import fleet_cmd

    r = CliRunner().invoke(fleet_cmd, [str(CPU), str(tmp_path / "nope.json")])
    assert r.exit_code == 2 and "nope.json: no such file" in r.output

    def edit(d):
        d["facts"]["distributed"] = {"ranks": [{"failing": [{"no id": 1}]}, 7]}

    bad = _report_with(tmp_path, edit, "bad.json")
    r = CliRunner().invoke(fleet_cmd, [str(CPU), str(bad)])
    assert r.exit_code == 1 and "bad.json: malformed report" in r.output and "internal error" not in r.output


def test_select_with_an_empty_pattern_is_a_usage_error():
    from envdoctor.core.inputs import patterns

    with pytest.raises(ValueError, match="names no check"):
        patterns("--select", [""])
    with pytest.raises(ValueError, match="names no check"):
        patterns("--deselect", ["a", " , "])
    assert patterns("--select", ["smoke, torch.build"]) == ["smoke", "torch.build"]


def test_junit_xml_parses_with_control_characters_and_undecodable_names():
    from envdoctor.core.api import Item, Status
    from envdoctor.core.report import CheckOutcome, Report
    from envdoctor.reporters.junit import render_junit

    rows = (
        CheckOutcome("system.environment", "env", Status.FAIL, "bad \x1b[2J\x00 value", items=(Item("VAR_\udcff", Status.FAIL, "x\x07"),)),
        CheckOutcome("a.b", "t", Status.PASS, "ok \x0b"),
    )
    out = render_junit(Report("0", "now", 1.0, {}, rows))
    root = ET.fromstring(out.encode("utf-8"))
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None and "\\x1b[2J\\x00" in failure.get("message") and "VAR_\\udcff" in failure.text


def test_rank_zero_merges_good_summaries_and_makes_a_row_of_each_bad_one():
    from envdoctor.core.api import Status
    from envdoctor.core.report import rank_summaries
    from envdoctor.modes.distributed import merge_results

    row = {"id": "x.a", "title": "x", "status": "pass", "message": "fine", "hint": "", "tags": [], "source": "built-in"}
    raw = {
        "0": {"host": "a", "results": [row]},
        "1": {"host": "b", "results": [{**row, "status": "weird"}]},
        "2": {"host": "c", "results": [{"id": "x.a"}]},
        "x": {"results": []},
        "3": "not a summary",
    }
    good, bad = rank_summaries(raw)
    assert list(good) == [0]
    assert sorted(b.message.split(":")[0] for b in bad) == ["rank 1", "rank 2", "rank 3", "rank x"]
    assert all(b.status is Status.ERROR and "unreadable" in b.message for b in bad)
    assert [m.id for m in merge_results(good)] == ["x.a"]


def test_pasted_report_facts_of_the_wrong_shape_do_not_crash_checks():
    from envdoctor.core.registry import discover
    from envdoctor.core.triage import triage
    from envdoctor.sources import read_paste

    base = json.loads((REPORTS / "v1.0-gpu-h200.json").read_text())
    for name, value in (("gpus", [{}]), ("torch_xla", {}), ("torch_build", {}), ("env_vars", None), ("driver", {"cuda_version": "13.0"})):
        d = json.loads(json.dumps(base))
        d["facts"][name] = value
        text = json.dumps(d, indent=1)
        result = triage(discover(()), read_paste(text), text)
        crashed = [f"{r.id}: {r.message}" for r in result.rows if r.message.startswith(("check crashed", "check raised"))]
        assert not crashed, (name, crashed)


@pytest.mark.slow
def test_a_thread_limit_is_one_line_not_an_internal_error(tmp_path):
    code = (
        "import threading, sys\n"
        'def boom(self, *a, **k): raise RuntimeError("can\'t start new thread")\n'
        "threading.Thread.start = boom\n"
        "from envdoctor.cli import main\n"
        "main(['check', '--select', 'system.disk'])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().count("\n") == 0 and "cannot start a thread" in r.stderr and "ulimit -u" in r.stderr


def test_junit_attributes_from_another_machines_report_are_inert_too():
    """The slow fuzz lane's find: a report whose started_at (or a check id) holds an escape
    sequence made the JUnit XML unparseable (the attributes were written raw)."""
    from envdoctor.core.api import Status
    from envdoctor.core.report import CheckOutcome, Report
    from envdoctor.reporters.junit import render_junit

    rows = (CheckOutcome("a.b\x1b[2J", "t", Status.PASS, "ok"),)
    out = render_junit(Report("0", "\x1b[2J\r", 1.0, {}, rows))
    suite = ET.fromstring(out.encode("utf-8")).find("testsuite")
    assert suite is not None and suite.get("timestamp") == "\\x1b[2J\\r"
    assert suite.find("testcase").get("name") == "a.b\\x1b[2J"
