"""The typed stack: one schema, one accessor, whatever the facts' source and age."""

from __future__ import annotations

import importlib.metadata as md
import json
from pathlib import Path

import pytest

import envdoctor
from envdoctor import TRITON_DISTS, Gpu, Stack, Unavailable, decode_cudnn, fact, from_facts
from envdoctor.commands.diff import compare
from envdoctor.commands.fleet import extract_facts
from envdoctor.core.api import Missing
from envdoctor.core.registry import discover
from envdoctor.reporters.json import from_dict
from envdoctor.reporters.markdown import render_markdown as markdown

FIXTURES = Path(__file__).parent / "fixtures" / "reports"


def _fixture(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.json")))
def test_every_fixture_report_reads_into_a_stack(name):
    d = _fixture(name)
    s = from_facts(d["facts"], d["platform"])
    assert isinstance(s, Stack) and s.source == "live"
    assert all(isinstance(g, Gpu) for g in s.gpus or ())


def test_gpu_report_is_typed_and_cudnn_decoded():
    s = from_facts(_fixture("v1.0-gpu-h200.json")["facts"])
    assert s.driver and s.driver.version == "580.65.06" and s.driver.cuda_version == "13.0"
    assert s.torch and (s.torch.version, s.torch.cuda, s.torch.kind) == ("2.11.0+cu130", "13.0", "cuda")
    assert s.torch.cudnn == "9.13.0" and s.torch.nccl == "2.27.7"
    assert s.gpus == s.visible_gpus and s.gpus[0].name == "NVIDIA H200" and s.gpus[0].memory_total == 150754820096
    assert s.triton and s.triton.version == "3.6.0"
    assert s.python and s.python.version == "3.12.3"
    assert s.os and s.os.name == "Ubuntu 24.04.2 LTS"


def test_cpu_report_says_what_is_absent():
    s = from_facts(_fixture("v1.0-cpu-box.json")["facts"])
    assert s.driver is None and s.missing["driver"] == "no NVIDIA GPU or driver on this machine"
    assert s.gpus is None and "gpus" in s.missing
    assert s.torch and s.torch.kind == "cpu" and s.torch.cuda == ""
    rows = dict(s.version_rows())
    assert rows["NVIDIA driver"] == "(none)" and rows["torch CUDA"] == "(none)"


def test_live_missing_values_and_report_markers_read_alike():
    live = from_facts({"driver": Missing("driver", "no NVIDIA driver found"), "dists": {}})
    old = from_facts({"driver": {"unavailable": "no NVIDIA driver found"}, "dists": {}})
    assert live == old
    assert live.missing["driver"] == "no NVIDIA driver found" and live.missing["torch"] == "torch is not installed"
    assert from_facts({"driver": Unavailable("x")}).missing["driver"] == "x"


def test_one_cudnn_decoder_everywhere():
    assert decode_cudnn(91300) == "9.13.0" and decode_cudnn(8907) == "8.9.7" and decode_cudnn("90100") == "9.1.0"
    facts = _fixture("v1.0-gpu-h200.json")["facts"]
    assert extract_facts(facts)["cudnn"] == "9.13.0"  # fleet used to show the raw 91300
    report = from_dict(_fixture("v1.0-gpu-h200.json"))
    assert "| cuDNN (torch) | `9.13.0` |" in markdown(report)


def test_fleet_and_diff_read_gpus_from_the_same_place():
    """A report recording only ``gpus`` (or only ``visible_gpus``) counts the same GPUs in both."""
    h200 = _fixture("v1.0-gpu-h200.json")
    for drop in ("gpus", "visible_gpus"):
        b = json.loads(json.dumps(h200))
        del b["facts"][drop]
        b["facts"]["gpus" if drop == "visible_gpus" else "visible_gpus"].append({**h200["facts"]["gpus"][0], "index": 1})
        assert extract_facts(b["facts"])["gpu_count"] == "2"
        assert [g["index"] for g in compare(h200, b).gpus_added] == [1]


def test_one_public_list_of_triton_distributions():
    from envdoctor.core import expect
    from envdoctor_checks import triton

    assert triton.TRITON_DISTS is TRITON_DISTS and expect.TRITON_DISTS is TRITON_DISTS
    assert {"triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu", "triton-xpu", "triton-windows"} <= set(TRITON_DISTS)
    s = from_facts({"dists": {"triton-windows": {"name": "triton-windows", "version": "3.5.1"}}})
    assert s.triton and s.triton.name == "triton-windows"


def test_public_api_exports_the_schema():
    for name in ("Stack", "Driver", "Gpu", "Distribution", "PythonInfo", "OsInfo", "TorchInfo", "from_facts", "TRITON_DISTS"):
        assert name in envdoctor.__all__ and getattr(envdoctor, name)


def test_source_is_recorded_and_checked():
    assert from_facts({}, source="pasted").source == "pasted"
    assert from_facts({}, source="baseline").source == "baseline"
    with pytest.raises(ValueError):
        from_facts({}, source="guessed")
    with pytest.raises(ValueError):
        fact("x", source="guessed")


def test_builtin_stack_fact_providers_mark_their_source():
    reg = discover()
    for name in ("dists", "torch_build", "torch_runtime", "driver", "gpus", "visible_gpus", "python_info", "os_release"):
        assert reg.facts[name].origin == "live", name


def test_wrong_shapes_are_not_recorded_never_a_crash():
    junk = {
        "dists": ["torch"],
        "driver": "580",
        "gpus": [1, "x", None, {"name": 5, "memory_total": "big", "index": [1]}],
        "torch_build": {"version": ["2.0"]},
        "torch_runtime": {"cudnn": {"x": 1}, "cuda": "13.0", "version": "2.11"},
        "python_info": 3.12,
        "os_release": {"name": None},
    }
    s = from_facts(junk, platform="linux")
    assert s.dists is None and s.driver is None and s.python is None and s.os is None
    assert s.gpus == (Gpu(index=3, name="5"),)
    assert s.torch and s.torch.version == "2.11" and s.torch.cudnn == ""


def test_dists_fact_records_compiled_extensions():
    from envdoctor_checks.packages import dists

    got = dists()
    assert got["torch"]["compiled"] is True  # torch/_C.cpython-*.so
    assert got["click"]["compiled"] is False  # pure Python
    s = from_facts({"dists": got})
    assert s.dists["torch"].has_extensions and not s.dists["click"].has_extensions
    assert md.distribution("torch").read_text("RECORD")


@pytest.mark.parametrize("triton_key", ["triton", "pytorch-triton", "Pytorch_Triton", "pytorch.triton-rocm", "TRITON"])
def test_extract_facts_types_only_the_dists_it_reads_and_agrees_with_the_whole_stack(triton_key):
    """The fleet types only torch's and Triton's distributions (a report lists every installed
    one); the facts must be those of the whole stack, whatever spelling the report's key has."""
    report = json.loads((Path(__file__).parent / "fixtures" / "reports" / "v1.0-gpu-h200.json").read_text())
    facts, platform = report["facts"], report.get("platform")
    dists = {k: v for k, v in facts["dists"].items() if k not in TRITON_DISTS}
    dists[triton_key] = {"name": triton_key, "version": "9.9.9", "location": "/x", "requires": []}
    facts = {**facts, "dists": {**{f"pkg-{i}": {"name": f"pkg{i}", "version": "1.0"} for i in range(300)}, **dists}}
    whole = from_facts(facts, platform).fleet_facts()
    assert extract_facts(facts, platform) == whole
    assert whole["triton"] == "9.9.9" and whole["torch"]
    assert extract_facts({**facts, "dists": {}}, platform)["triton"] == "not installed"
