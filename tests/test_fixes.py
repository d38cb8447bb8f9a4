"""Remediation as data (issue 12 item 5): Fix objects from checks to every reporter and back."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from envdoctor import Fix, Status, env_fix, fail, pip_fix, warn
from envdoctor.core.redact import scrub_report
from envdoctor.core.report import SCHEMA_VERSION, CheckOutcome, Report
from envdoctor.reporters import render
from envdoctor.reporters.json import from_dict, to_dict
from envdoctor.testing import Unavailable, run_check
from envdoctor_checks import nvidia, toolchain, torch, triton

FIXTURES = Path(__file__).parent / "fixtures" / "reports"
EXAMINED = {"executable": "/opt/examined/venv/bin/python3", "version": "3.12.3"}
TORCH_2_11 = {"name": "torch", "version": "2.11.0+cu130", "requires": ['triton==3.6.0; platform_system == "Linux"']}
CUDA_BUILD = {"version": "2.11.0+cu130", "kind": "cuda", "cuda": "13.0", "location": "/x/torch"}


def test_fix_validates_and_quotes():
    f = Fix(["python", "-m", "pip", "install", "numpy<2"], scope="venv")
    assert f.argv == ("python", "-m", "pip", "install", "numpy<2") and f.command == "python -m pip install 'numpy<2'"
    with pytest.raises(ValueError):
        Fix("pip install x")  # a string is not an argv
    with pytest.raises(ValueError):
        Fix(("x",), scope="cluster")
    with pytest.raises(TypeError):
        fail("m", "h", fixes=["pip install x"])
    assert warn("m", "plain hint still works").fixes == ()


def test_pip_fix_names_the_examined_interpreter():
    assert pip_fix(EXAMINED, "install", "x").argv[0] == "/opt/examined/venv/bin/python3"
    assert pip_fix(None, "install", "x").argv[:3] == ("python", "-m", "pip")  # unknown: plain python, never envdoctor's
    assert env_fix("CC", "/usr/bin/gcc") == Fix(("export", "CC=/usr/bin/gcc"), scope="environment")


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="the pin's marker is Linux-only")
def test_triton_pin_mismatch_carries_the_pip_command_for_the_examined_python():
    r = run_check(
        triton.torch_pin,
        dists={"torch": TORCH_2_11, "triton": {"name": "triton", "version": "3.5.1", "requires": []}},
        torch_build=CUDA_BUILD,
        triton_pkg=Unavailable("x"),
        python_info=EXAMINED,
    )
    assert r.status is Status.FAIL
    assert [f.argv for f in r.fixes] == [
        (EXAMINED["executable"], "-m", "pip", "install", "--force-reinstall", "--no-deps", "triton==3.6.0")
    ]
    assert r.fixes[0].scope == "venv" and not r.fixes[0].needs_root


def test_other_areas_carry_structured_commands():
    r = run_check(
        torch.numpy_abi,
        dists={"numpy": {"name": "numpy", "version": "2.1.0"}, "torch": {"name": "torch", "version": "2.2.0"}},
        python_info=EXAMINED,
    )
    assert r.status is Status.FAIL and r.fixes[0].argv[-2:] == ("install", "numpy<2")
    ubuntu = {"id": "ubuntu"}
    r = run_check(
        toolchain.python_h,
        python_info={"include_dir": "/usr/include/python3.12", "python_h": False, "version_info": [3, 12, 3]},
        dists={"torch": {}},
        os_release=ubuntu,
    )
    assert r.status is Status.FAIL and r.fixes == (Fix(("apt-get", "install", "-y", "python3.12-dev"), scope="system", needs_root=True),)
    r = run_check(
        toolchain.python_h,
        python_info={"include_dir": "/x", "python_h": False, "version_info": [3, 12, 3]},
        dists={"torch": {}},
        os_release={"id": "arch"},
    )
    assert r.status is Status.FAIL and r.fixes == ()  # unknown package manager: the sentence only
    gpus = [{"index": 0, "name": "NVIDIA A100", "cc": "8.0"}, {"index": 1, "name": "NVIDIA T4", "cc": "7.5"}]
    r = run_check(nvidia.cuda_visible_devices, env_vars={"CUDA_VISIBLE_DEVICES": "0"}, gpus=gpus)
    assert r.status is Status.WARN and r.fixes == (env_fix("CUDA_DEVICE_ORDER", "PCI_BUS_ID"),)


def _report(*fixes: Fix, status: Status = Status.FAIL) -> Report:
    row = CheckOutcome(
        "triton.torch_pin", "Triton matches torch's pin", status, "triton 3.5.1 is installed", "Install the pinned Triton.", fixes=fixes
    )
    return Report("0.1.0", "2026-01-01T00:00:00+00:00", 1.0, {"summary": "Linux"}, (row,))


PIP = Fix(("/v/bin/python", "-m", "pip", "install", "triton==3.6.0"), scope="venv")
LDCONFIG = Fix(("ldconfig",), scope="system", needs_root=True)


def test_reporters_show_the_commands():
    report = _report(PIP, LDCONFIG)
    text = render(report, "text")
    assert "→ Install the pinned Triton.\n        $ /v/bin/python -m pip install triton==3.6.0\n        $ ldconfig  (as root)" in text
    md = render(report, "markdown")
    assert "`/v/bin/python -m pip install triton==3.6.0`" in md and "`ldconfig` (as root)" in md
    junit = ET.fromstring(render(report, "junit"))
    assert "fix: /v/bin/python -m pip install triton==3.6.0" in junit.find(".//failure").text
    assert "$ ldconfig" not in render(_report(LDCONFIG, status=Status.PASS), "text")


def test_json_carries_fixes_validates_and_loads_back():
    data = json.loads(render(_report(PIP, LDCONFIG), "json"))
    assert data["schema_version"] == SCHEMA_VERSION == "1.3"
    assert data["results"][0]["fixes"][1] == {"argv": ["ldconfig"], "command": "ldconfig", "scope": "system", "needs_root": True}
    schema = json.loads(resources.files("envdoctor").joinpath("schema", "report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(data)
    assert from_dict(data).results[0].fixes == (PIP, LDCONFIG)
    bad = json.loads(json.dumps(data))
    bad["results"][0]["fixes"][0]["scope"] = "cluster"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(bad)


def test_a_1_0_report_without_fixes_still_validates_and_loads():
    data = json.loads((FIXTURES / "v1.0-gpu-h200-triton-mismatch.json").read_text())
    schema = json.loads(resources.files("envdoctor").joinpath("schema", "report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(data)
    report = from_dict(data)
    assert all(r.fixes == () for r in report.results)
    assert to_dict(report)["schema_version"] == "1.0"


def test_secrets_in_fix_commands_are_scrubbed():
    token = "hf_" + "Zq8w" * 9
    report = scrub_report(
        _report(env_fix("HF_TOKEN", token), Fix(("huggingface-cli", "login", "--token", token), scope="environment")), {"HF_TOKEN": token}
    )
    dumped = render(report, "json") + render(report, "text")
    assert token not in dumped and "HF_TOKEN=" in dumped
