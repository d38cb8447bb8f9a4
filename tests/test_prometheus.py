"""--format prometheus and --textfile DIR: the exposition text parses (prometheus_client), passes
promtool's check, is served by a real node_exporter's textfile collector, and carries one status
series per check, the per-GPU health figures with dcgm-exporter's labels, and the versions."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from prometheus_client.parser import text_string_to_metric_families

from envdoctor.core.api import Status
from envdoctor.core.report import CheckOutcome, Report
from envdoctor.reporters import render
from envdoctor.reporters.prometheus import escape
from envdoctor_checks._xid import KernelLog, parse_lines
from tests.checks.test_health import FAKE_NVML, explored_h200s, health_fact
from tests.components import NodeExporter, absent, wait_for
from tests.conftest import run_cli

TOKEN = "hf_" + "Zq8w" * 9


def _report(results=(), facts=None, host="node-7") -> Report:
    return Report(
        tool_version="0.1.0",
        started_at="2026-12-01T10:00:00+00:00",
        duration=2.5,
        platform={"hostname": host, "python": "3.11.7"},
        results=tuple(results),
        facts=facts or {},
    )


def _families(text: str) -> dict:
    return {f.name: f for f in text_string_to_metric_families(text)}


def _samples(fams: dict, name: str) -> list:
    return fams[name].samples


def gpu_report() -> Report:
    g0, g1 = explored_h200s()
    g0["uuid"], g1["uuid"] = "GPU-aaaaaaaa-1111-2222-3333-444444444444", "GPU-bbbbbbbb-1111-2222-3333-444444444444"
    g1["ecc"]["volatile"]["uncorrected"] = 2
    g1["clocks_event_reasons"] = 0x40
    pci = g1["pci_bus_id"]
    line = f"[ 7300.5] NVRM: Xid (PCI:{pci[4:-2]}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
    fact = health_fact([g0, g1], KernelLog("/dev/kmsg", tuple(parse_lines([line, line]))))
    rows = [
        CheckOutcome(id="health.ecc", title="ECC", status=Status.FAIL, message="GPU 1: 2", hint="reset", action="reset-gpu"),
        CheckOutcome(id="smoke.matmul", title="matmul", status=Status.ERROR, message="probe hung"),
        CheckOutcome(id="system.python", title="Python", status=Status.PASS, message="3.11"),
    ]
    facts = {"gpu_health": fact, "driver": {"version": "580.65.06", "cuda_version": "13.0"}, "torch_build": {"version": "2.13.0+cpu"}}
    return _report(rows, facts)


def test_one_status_series_per_check_and_status_and_could_not_judge_apart():
    fams = _families(render(gpu_report(), "prometheus"))
    status = {(s.labels["check"], s.labels["status"]): s.value for s in _samples(fams, "envdoctor_check_status")}
    assert len(status) == 3 * 5
    assert status[("health.ecc", "fail")] == 1 and status[("health.ecc", "pass")] == 0
    assert status[("smoke.matmul", "error")] == 1 and status[("smoke.matmul", "fail")] == 0  # could not judge is not a failure
    actions = {s.labels["check"]: s.labels["action"] for s in _samples(fams, "envdoctor_check_action")}
    assert actions == {"health.ecc": "reset-gpu"}  # the error row asks for nothing
    assert _samples(fams, "envdoctor_healthy")[0].value == 0
    assert _samples(fams, "envdoctor_last_run_timestamp_seconds")[0].value == 1796119200.0
    assert _samples(fams, "envdoctor_last_run_duration_seconds")[0].value == 2.5
    counts = {s.labels["status"]: s.value for s in _samples(fams, "envdoctor_checks")}
    assert counts == {"pass": 1, "warn": 0, "fail": 1, "skip": 0, "error": 1}


def test_gpu_series_carry_dcgm_exporter_labels_and_the_figures():
    fams = _families(render(gpu_report(), "prometheus"))
    ecc = {(s.labels["gpu"], s.labels["error_type"], s.labels["counter"]): s for s in _samples(fams, "envdoctor_gpu_ecc_errors")}
    bad = ecc[("1", "uncorrected", "volatile")]
    assert bad.value == 2 and bad.labels["UUID"] == "GPU-bbbbbbbb-1111-2222-3333-444444444444" and bad.labels["Hostname"] == "node-7"
    assert ecc[("0", "uncorrected", "volatile")].value == 0
    xid = {s.labels["gpu"]: s.value for s in _samples(fams, "envdoctor_gpu_xid_errors")}
    assert xid == {"0": 0, "1": 2}
    assert {s.labels["gpu"]: s.value for s in _samples(fams, "envdoctor_gpu_last_xid")} == {"0": 0, "1": 79}
    assert {s.labels["gpu"]: s.value for s in _samples(fams, "envdoctor_gpu_clocks_event_reasons")}["1"] == 0x40
    gens = {(s.labels["gpu"], s.labels["link"]) for s in _samples(fams, "envdoctor_gpu_pcie_link_gen")}
    assert gens == {("0", "current"), ("0", "max"), ("1", "current"), ("1", "max")}
    assert "envdoctor_gpu_pcie_link_width" in fams and "envdoctor_gpu_remapped_rows" in fams
    models = {s.labels["gpu"]: s.labels["model_name"] for s in _samples(fams, "envdoctor_gpu_info")}
    assert models == {"0": "NVIDIA H200", "1": "NVIDIA H200"}
    info = _samples(fams, "envdoctor_info")[0].labels
    assert info["torch"] == "2.13.0+cpu" and info["driver"] == "580.65.06" and info["schema_version"] == "1.3"


def test_an_unreadable_kernel_log_gives_no_xid_count_rather_than_zero():
    report = gpu_report()
    facts = dict(report.facts)
    facts["gpu_health"] = {**facts["gpu_health"], "kernel_log": KernelLog("", (), "not root").to_dict()}
    fams = _families(render(_report(report.results, facts), "prometheus"))
    assert "envdoctor_gpu_xid_errors" not in fams and "envdoctor_gpu_ecc_errors" in fams


def test_label_values_are_escaped_and_scrubbed():
    odd = 'a\\b"c\nd'
    assert escape(odd) == 'a\\\\b\\"c\\nd'
    rows = [CheckOutcome(id='plugin.x"y\\z', title="t", status=Status.FAIL, message="m", hint="h")]
    text = render(_report(rows, host=f"{odd} {TOKEN}"), "prometheus")
    assert TOKEN not in text
    fams = _families(text)
    assert {s.labels["check"] for s in _samples(fams, "envdoctor_check_status")} == {'plugin.x"y\\z'}
    host = _samples(fams, "envdoctor_info")[0].labels["Hostname"]
    assert host.startswith(odd) and TOKEN not in host


def _promtool(text: str) -> subprocess.CompletedProcess:
    if not shutil.which("promtool"):
        absent("promtool not installed (apt-get install prometheus; .ci/run installs it)")
    return subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)


def test_promtool_accepts_the_rendered_text():
    res = _promtool(render(gpu_report(), "prometheus"))
    assert res.returncode == 0, res.stdout + res.stderr


def test_promtool_catches_what_it_must():
    # The test can fail: a TYPE info family (which node_exporter refuses too) and a broken line.
    assert _promtool("# TYPE envdoctor_x info\nenvdoctor_x 1\n").returncode != 0
    assert _promtool('envdoctor_x{a="b} 1\n').returncode == 1


def _nvml_env() -> dict:
    return {**os.environ, "PYTHONPATH": FAKE_NVML, "FAKE_NVML_MODE": "h200"}


@pytest.mark.slow
def test_textfile_served_by_a_real_node_exporter(tmp_path):
    textdir = tmp_path / "textfile"
    textdir.mkdir()
    exporter = NodeExporter(textdir, tmp_path / "node-exporter.log")
    try:
        res = run_cli("check", "--select", "health,nvidia.gpus", "--textfile", str(textdir), "--quiet", env=_nvml_env())
        assert res.returncode in (0, 1), res.stderr
        assert sorted(os.listdir(textdir)) == ["envdoctor.prom"]  # the temporary file was renamed, none is left
        assert oct(os.stat(textdir / "envdoctor.prom").st_mode & 0o044) == oct(0o044 & ~_umask() & 0o044)
        body = wait_for(lambda: (m := exporter.metrics()) and "envdoctor_check_status" in m and m, 20, "the envdoctor series")
        fams = _families(body)
        assert _samples(fams, "node_textfile_scrape_error")[0].value == 0
        checks = {s.labels["check"] for s in _samples(fams, "envdoctor_check_status")}
        assert {"health.ecc", "health.xid", "nvidia.gpus"} <= checks
        ecc = _samples(fams, "envdoctor_gpu_ecc_errors")
        assert ecc and all(s.labels["UUID"].startswith("GPU-") and s.labels["gpu"] == "0" for s in ecc)
        assert _promtool((textdir / "envdoctor.prom").read_text()).returncode == 0
    finally:
        exporter.stop()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_textfile_directory_that_does_not_exist_is_refused_before_the_run(tmp_path):
    res = run_cli("check", "--select", "system.python", "--textfile", str(tmp_path / "nope"))
    assert res.returncode == 2
    assert "does not exist" in res.stderr and "Traceback" not in res.stderr


def test_format_prometheus_on_stdout_is_the_same_exposition():
    res = run_cli("check", "--select", "system.python,system.os", "--format", "prometheus")
    assert res.returncode == 0, res.stderr
    fams = _families(res.stdout)
    assert {s.labels["check"] for s in _samples(fams, "envdoctor_check_status")} == {"system.python", "system.os"}
