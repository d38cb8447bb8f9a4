"""The recommended action of every warn/fail row (schema 1.3): from NVML's recovery action, the
Xid catalog, baseline drift and the fixes; "none" for pass, skip and error (could not judge)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from envdoctor import ACTIONS, Fix, Status, fail, pip_fix, warn
from envdoctor.core.report import CheckOutcome, Report, recommended_action
from envdoctor.reporters import render
from envdoctor.reporters.json import from_dict, to_dict
from envdoctor.testing import run_check
from envdoctor_checks import _gpu_health as gh
from envdoctor_checks import baseline, health, smoke
from envdoctor_checks._xid import KernelLog, parse_lines
from tests.checks.test_health import explored_h200s, health_fact, two_h200s_one_broken
from tests.checks.test_smoke import CUDA_TORCH, CannedProbe, gpu


def _row(status: Status, *, action: str = "", fixes=(), cid: str = "x.y") -> CheckOutcome:
    return CheckOutcome(
        id=cid, title="T", status=status, message="m", hint="h" if status is not Status.PASS else "", fixes=fixes, action=action
    )


def test_only_warn_and_fail_rows_recommend_anything():
    for status in (Status.PASS, Status.SKIP, Status.ERROR):
        assert _row(status, action="reboot").recommended == "none"
    assert _row(Status.ERROR).judged is False and _row(Status.FAIL).judged is True
    assert _row(Status.FAIL).recommended == "fix-environment"  # no fix, no named action


def test_a_fix_gives_the_action_by_its_kind():
    pip = pip_fix({"executable": "/v/bin/python"}, "install", "--force-reinstall", "triton==3.6.0")
    assert _row(Status.FAIL, fixes=(pip,)).recommended == "reinstall-package"
    assert _row(Status.WARN, fixes=(Fix(("apt-get", "install", "gcc"), needs_root=True),)).recommended == "reinstall-package"
    assert _row(Status.WARN, fixes=(Fix(("export", "CC=/usr/bin/gcc"), scope="environment"),)).recommended == "fix-environment"
    compileall = Fix(("/v/bin/python", "-m", "compileall", "-q", "/v/lib"), scope="venv")
    assert _row(Status.WARN, fixes=(compileall,)).recommended == "fix-environment"
    assert _row(Status.WARN, fixes=(compileall, pip)).recommended == "reinstall-package"  # the strongest


def test_a_check_names_its_action_and_a_wrong_one_is_refused():
    assert fail("m", "h", action="drain-node").action == "drain-node"
    with pytest.raises(ValueError, match="action must be one of"):
        warn("m", "h", action="panic")
    assert recommended_action(Status.FAIL, "panic") == "fix-environment"  # a hand-made Result's bad value is not trusted


@pytest.mark.parametrize(
    ("value", "action"),
    [(1, "reset-gpu"), (2, "reboot"), (3, "drain-node"), (4, "drain-node"), (5, "drain-node"), (6, "reboot"), (7, "reboot")],
)
def test_nvml_recovery_action_maps_to_the_recommended_action(value, action):
    g0, g1 = explored_h200s()
    g1["recovery_action"] = value
    row = run_check(health.recovery, gpu_health=health_fact([g0, g1]))
    assert row.status is Status.FAIL and row.recommended == action


def test_health_findings_carry_their_remedy_as_the_action():
    g0, g1 = explored_h200s()
    g1["ecc"]["volatile"]["uncorrected"] = 2
    g1["clocks_event_reasons"] = 0x40
    facts = {"gpu_health": health_fact([g0, g1])}
    assert run_check(health.ecc, **facts).recommended == "reset-gpu"
    assert run_check(health.clocks, **facts).recommended == "hardware-inspection"
    lost = explored_h200s()
    lost[1]["errors"] = {"ecc": {"code": 15, "text": "GPU is lost"}}
    assert run_check(health.recovery, gpu_health=health_fact(lost)).recommended == "reboot"
    hung = health_fact(explored_h200s(), nvml_hung=True, nvml_reason="NVML did not answer")
    assert run_check(health.recovery, gpu_health=hung).recommended == "reset-gpu"
    # a healthy machine recommends nothing
    assert {run_check(c, gpu_health=health_fact(explored_h200s())).recommended for c in (health.ecc, health.recovery)} == {"none"}


@pytest.mark.parametrize(
    ("line", "action"),
    [
        ("NVRM: Xid (PCI:0000:00:07): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.", "reboot"),
        ("NVRM: Xid (PCI:0000:00:07): 48, pid=1234, name=python, An uncorrectable double bit error", "reset-gpu"),
    ],
)
def test_the_xid_catalog_gives_the_action(line, action):
    g = {**explored_h200s()[0], "pci_bus_id": "00000000:00:07.0"}
    log = KernelLog("/dev/kmsg", tuple(parse_lines([f"[ 10.0] {line}"])))
    row = run_check(health.xid, gpu_health=health_fact([g], log))
    assert row.status in (Status.WARN, Status.FAIL)
    info = gh.REMEDY_ACTION[parse_lines([line])[0].info.remedy]
    assert row.recommended == action == info


def test_a_smoke_failing_on_a_broken_gpu_recommends_the_evidence_action():
    fact, visible = two_h200s_one_broken()
    probe = CannedProbe(matmul={"size": 256, "gpus": [gpu(0), gpu(1, err=0.5)]})
    row = run_check(smoke.matmul, probe=probe, torch_build=CUDA_TORCH, env={}, gpus=visible, visible_gpus=visible, gpu_health=fact)
    assert row.status is Status.FAIL and row.recommended in ("reboot", "reset-gpu")
    clean = health_fact(explored_h200s())
    row = run_check(smoke.matmul, probe=probe, torch_build=CUDA_TORCH, env={}, gpus=visible, visible_gpus=visible, gpu_health=clean)
    assert row.status is Status.FAIL and row.recommended == "fix-environment"  # no hardware evidence: not the GPU


def test_baseline_drift_asks_for_a_reinstall():
    recorded = {"facts": {"dists": {"torch": {"name": "torch", "version": "2.13.0"}}}}
    row = run_check(baseline.distributions, baseline=recorded, dists={"torch": {"name": "torch", "version": "2.12.0"}})
    assert row.status is Status.FAIL and row.recommended == "reinstall-package"


def _report(*rows: CheckOutcome) -> Report:
    return Report(tool_version="0", started_at="2026-12-01T00:00:00+00:00", duration=1.0, platform={"hostname": "h"}, results=rows)


def test_every_format_shows_it_and_error_stays_could_not_judge():
    report = _report(
        _row(Status.FAIL, action="reset-gpu", cid="health.ecc"), _row(Status.ERROR, cid="smoke.matmul"), _row(Status.PASS, cid="a.b")
    )
    data = to_dict(report)
    assert [r["action"] for r in data["results"]] == ["reset-gpu", "none", "none"]
    from importlib import resources

    schema = json.loads(resources.files("envdoctor").joinpath("schema/report.schema.json").read_text())
    jsonschema.validate(data, schema)
    bad = json.loads(json.dumps(data))
    bad["results"][0]["action"] = "panic"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    assert from_dict(data).results[0].recommended == "reset-gpu"
    text = render(report, "text")
    assert "recommended action: reset-gpu" in text and "could not judge" in text
    md = render(report, "markdown")
    assert "**Recommended action:** `reset-gpu`" in md and "**Could not judge:**" in md


def test_an_older_report_without_actions_derives_them():
    data = to_dict(_report(_row(Status.FAIL, fixes=(Fix(("pip", "install", "x"), scope="venv"),))))
    del data["results"][0]["action"]
    data["schema_version"] = "1.2"
    assert from_dict(data).results[0].recommended == "reinstall-package"


def test_actions_are_the_schema_s_and_the_docs_list():
    from importlib import resources

    from tests.conftest import REPO

    schema = json.loads(resources.files("envdoctor").joinpath("schema/report.schema.json").read_text())
    assert tuple(schema["$defs"]["result"]["properties"]["action"]["enum"]) == ACTIONS
    docs = " ".join((REPO / "docs" / "json-schema.md").read_text().split())
    assert ", ".join(f"`{a}`" for a in ACTIONS) in docs
    assert ACTIONS[0] == "none" and len(set(ACTIONS)) == 8


def test_a_gpu_that_cannot_run_a_kernel_asks_for_a_reset():
    from envdoctor_checks import liveness

    pci = [{"pci_bus_id": "0000:18:00.0"}]
    one_bad = {"stage": "done", "ok": True, "gpus": [{"index": 0, "ok": False, "stage": "launch", "error": "CUDA_ERROR_LAUNCH_FAILED"}]}
    assert run_check(liveness.kernel, driver_kernel=one_bad, env={}, pci_gpus=pci).recommended == "reset-gpu"
    hung = {"stage": "timeout", "error": "the kernel did not finish within 10 s"}
    assert run_check(liveness.kernel, driver_kernel=hung, env={}, pci_gpus=pci).recommended == "reset-gpu"
    no_lib = {"stage": "load", "error": "libcuda.so.1: cannot open shared object file"}
    assert run_check(liveness.kernel, driver_kernel=no_lib, env={}, pci_gpus=pci).recommended == "fix-environment"
