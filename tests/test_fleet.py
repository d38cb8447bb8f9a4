"""Fleet summary on generated per-node reports: a failing node, a deviating node, bad files."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from envdoctor.cli import cli
from envdoctor.commands.fleet import extract_facts, summarize
from envdoctor.core.api import Status
from envdoctor.core.report import CheckOutcome, Report
from envdoctor.reporters.json import to_dict


def _facts(driver="580.65.06", gpus=8, torch="2.11.0+cu130", nccl="2.27.7") -> dict:
    return {
        "dists": {"torch": {"version": torch}, "triton": {"version": "3.6.0"}},
        "torch_build": {"version": torch, "cuda": "13.0", "kind": "cuda"},
        "torch_runtime": {"version": torch, "cuda": "13.0", "cudnn": 91002, "nccl": nccl},
        "driver": {"version": driver, "cuda_version": "13.0"},
        "visible_gpus": [{"name": "NVIDIA H200", "index": i} for i in range(gpus)],
        "python_info": {"version": "3.12.3"},
    }


def _report(host: str, facts: dict, fail: str | None = None, **kw) -> dict:
    results = [CheckOutcome("nvidia.driver", "driver", Status.PASS, "ok")]
    if fail:
        results.append(CheckOutcome(fail, fail, Status.FAIL, "GPU 3 fell off the bus", hint="reseat it"))
    r = Report("0.1.0", "2026-01-01T00:00:00+00:00", 1.0, {"hostname": host}, tuple(results), facts, **kw)
    return to_dict(r)


def _write(d: Path, name: str, data) -> None:
    (d / name).write_text(data if isinstance(data, str) else json.dumps(data))


def _fleet(tmp_path: Path) -> Path:
    d = tmp_path / "reports"
    d.mkdir()
    _write(d, "a.json", _report("node-a", _facts()))
    _write(d, "b.json", _report("node-b", _facts()))
    _write(d, "c.json", _report("node-c", _facts(driver="570.86.15"), fail="smoke.matmul"))
    _write(d, "d.json", _report("node-d", _facts(gpus=7)))
    _write(d, "broken.json", '{"schema_version": "1.0", "results": [')
    _write(d, "half.json", {"schema_version": "1.0", "results": [{"status": "pass"}]})
    return d


def test_extract_facts_reads_the_fleet_facts_and_marks_missing_hardware_as_none():
    got = extract_facts(_facts())
    assert got == {
        "torch": "2.11.0+cu130",
        "torch_cuda": "13.0",
        "triton": "3.6.0",
        "driver": "580.65.06",
        "cudnn": "9.10.2",  # decoded like diff and the markdown stack table (one decoder)
        "nccl": "2.27.7",
        "gpu_model": "NVIDIA H200",
        "gpu_count": "8",
        "python": "3.12.3",
    }
    cpu = extract_facts({"driver": {"unavailable": "no NVIDIA driver found"}, "gpus": {"unavailable": "no NVIDIA driver found"}})
    assert cpu == {"driver": "none", "gpu_model": "none", "gpu_count": "0"}


def test_summary_names_failing_and_deviating_nodes_and_lists_bad_files(tmp_path):
    fleet = summarize([str(_fleet(tmp_path))])
    assert [n.name for n in fleet.nodes] == ["node-a", "node-b", "node-c", "node-d"]
    assert [n.name for n in fleet.failing] == ["node-c"]
    rows = {r.fact: r for r in fleet.facts}
    assert rows["driver"].majority == "580.65.06" and rows["driver"].differing == {"node-c": "570.86.15"}
    assert rows["gpu_count"].majority == "8" and rows["gpu_count"].differing == {"node-d": "7"}
    assert rows["torch"].differing == {}
    assert fleet.deviating == ["node-c", "node-d"]
    reasons = {Path(u.source).name: u.reason for u in fleet.unreadable}
    assert reasons["broken.json"].startswith("is not valid JSON")
    assert reasons["half.json"].startswith("is not an envdoctor report")
    assert not fleet.healthy()


def test_fleet_command_prints_the_table_and_exits_1(tmp_path):
    d = _fleet(tmp_path)
    res = CliRunner().invoke(cli, ["fleet", *sorted(str(p) for p in d.iterdir())])
    assert res.exit_code == 1, res.output
    out = res.output
    assert "node-c  FAIL" in out and "[1] smoke.matmul" in out
    assert "driver" in out and "580.65.06" in out and "node-c: 570.86.15" in out
    assert "node-d: 7" in out
    assert "broken.json: is not valid JSON" in out and "half.json: is not an envdoctor report" in out
    assert out.rstrip().splitlines()[-1].startswith("PROBLEMS FOUND: 1 node(s) failing: node-c; 2 node(s) deviating: node-c, node-d")


def test_fleet_json_output(tmp_path):
    res = CliRunner().invoke(cli, ["fleet", "--format", "json", str(_fleet(tmp_path))])
    data = json.loads(res.output)
    assert res.exit_code == 1 and data["healthy"] is False
    assert data["failing"] == ["node-c"] and data["deviating"] == ["node-c", "node-d"]
    assert len(data["unreadable"]) == 2


def test_a_healthy_fleet_exits_0(tmp_path):
    for host in ("n1", "n2", "n3"):
        _write(tmp_path, f"{host}.json", _report(host, _facts()))
    res = CliRunner().invoke(cli, ["fleet", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "HEALTHY: 3 node(s) pass and agree" in res.output


def test_an_interrupted_report_is_listed_as_partial(tmp_path):
    _write(tmp_path, "n1.json", _report("n1", _facts()))
    _write(tmp_path, "n2.json", _report("n2", _facts(), interrupted=True))
    res = CliRunner().invoke(cli, ["fleet", str(tmp_path)])
    assert res.exit_code == 1
    assert "n2.json (n2): partial: interrupted" in res.output


def test_two_nodes_disagreeing_have_no_majority(tmp_path):
    _write(tmp_path, "n1.json", _report("n1", _facts(nccl="2.27.7")))
    _write(tmp_path, "n2.json", _report("n2", _facts(nccl="2.21.5")))
    fleet = summarize([str(tmp_path)])
    nccl = next(r for r in fleet.facts if r.fact == "nccl")
    assert nccl.majority is None and set(nccl.differing) == {"n1", "n2"}
    assert "(no majority)" in CliRunner().invoke(cli, ["fleet", str(tmp_path)]).output


def test_secrets_in_a_combined_report_and_in_unreadable_reasons_never_reach_the_output(tmp_path):
    """The fleet scrubs only what it shows: rank names, statuses, messages, facts, reasons. A
    hand-made combined report can carry a secret in any of them, or under an extra fact key."""
    token = "hf_FleetCanaryAbcdefghijklmnopqrstu01"
    url = "https://fleetuser:fleetCanaryPw@db.example.com/x"
    ranks = [
        {
            "rank": 0,
            "host": f"host {url}",
            "state": "reported",
            "failing": [{"id": "x.y", "status": f"fail {token}", "message": f"read {url} with {token}"}],
            "fleet": {"torch": "2.11.0", "HF_TOKEN": "shortCanary1"},
        },
        {"rank": 1, "host": "h1", "state": "lost", "note": f"rank died printing {token}", "failing": [], "fleet": {"torch": "2.11.0"}},
    ]
    combined = _report("node-a", {**_facts(), "distributed": {"ranks": ranks}})
    _write(tmp_path, "combined.json", combined)
    bad = {"schema_version": "1.0", "results": [{"id": f"plugin.{token}", "status": "pass", "title": 3}]}
    _write(tmp_path, "bad.json", bad)
    runner = CliRunner()
    for fmt in ("text", "json"):
        out = runner.invoke(cli, ["fleet", str(tmp_path), "--format", fmt]).output
        assert "/rank0" in out and "/rank1" in out and "bad.json" in out, out
        for secret in ("FleetCanary", "fleetuser", "fleetCanaryPw", "shortCanary1"):
            assert secret not in out, (fmt, secret, out)


def test_reports_are_read_one_at_a_time(tmp_path, monkeypatch):
    """Bounded memory: a report's parsed data is dropped before the next file is read."""
    import gc
    import weakref

    from envdoctor.commands import fleet as fleet_mod

    class Tracked(dict):  # a plain dict cannot be weakly referenced
        pass

    for i in range(3):
        _write(tmp_path, f"n{i}.json", _report(f"node-{i}", _facts()))
    alive: list[weakref.ref] = []
    real = fleet_mod.load_report

    def tracked(path):
        gc.collect()
        assert [r for r in alive if r() is not None] == [], "the previous report is still in memory"
        data = Tracked(real(path))
        alive.append(weakref.ref(data))
        return data

    monkeypatch.setattr(fleet_mod, "load_report", tracked)
    assert len(summarize([str(tmp_path)]).nodes) == 3
    assert len(alive) == 3
