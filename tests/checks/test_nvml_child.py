"""NVML runs in a child process with a deadline: a hang, a crash or an error in the NVIDIA
management library is a diagnosis, never the doctor's death (fake pynvml in tests/fakes/nvml)."""

from __future__ import annotations

import os
import time

import psutil
import pytest

from envdoctor import Status, Unavailable
from envdoctor.testing import gather, run_check
from envdoctor_checks import nvidia
from tests.fakes import HERE, fake_nvidia_smi

FAKE_NVML = str(HERE / "nvml")


def nvml_env(mode: str, **extra) -> dict:
    return {**os.environ, "PYTHONPATH": FAKE_NVML, "FAKE_NVML_MODE": mode, **extra}


def test_nvml_answers_through_the_child_with_the_same_fact_shape():
    value = nvidia.nvml_query(nvml_env("h200"))
    assert value["driver_version"] == "580.65.06" and value["cuda_version"] == "13.0"
    [g] = value["gpus"]
    assert (g["name"], g["cc"], g["memory_total"], g["persistence_mode"], g["brand"]) == (
        "NVIDIA H200",
        "9.0",
        143771 << 20,
        True,
        "NVIDIA",
    )
    assert g["pci_bus_id"] == "00000000:18:00.0" and g["processes"] == [] and "serial" in g["errors"]
    assert set(value) >= {"driver_version", "cuda_version", "library", "gpus", "p2p_read", "errors"}


def test_an_nvml_error_is_reported_with_its_text():
    with pytest.raises(Unavailable, match="Driver Not Loaded"):
        nvidia.nvml_query(nvml_env("raise"))


def test_an_nvml_segfault_does_not_take_the_doctor_down():
    with pytest.raises(Unavailable, match=r"died of SIGSEGV \(segmentation fault\)") as e:
        nvidia.nvml_query(nvml_env("segv"))
    assert not isinstance(e.value, nvidia.DriverHung)


@pytest.mark.slow
def test_a_hanging_nvml_is_killed_at_its_deadline_and_named():
    start = time.monotonic()
    with pytest.raises(nvidia.DriverHung, match=r"NVML did not answer within 1s: the driver or a GPU is likely wedged") as e:
        nvidia.nvml_query(nvml_env("hang"), timeout=1.0)
    assert time.monotonic() - start < 1.0 + 2 * 2 + 2  # the deadline plus the TERM/KILL grace
    assert "nvidia-smi -r" in e.value.reason and "Xid" in e.value.reason
    assert psutil.Process().children(recursive=True) == []


@pytest.mark.slow
def test_after_an_nvml_hang_one_row_fails_and_dependents_skip_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setattr(nvidia, "NVML_TIMEOUT", 1.0)
    monkeypatch.setattr(nvidia, "PROC_VERSION", str(tmp_path / "none"))
    monkeypatch.setattr(nvidia, "SYS_MODULE_VERSION", str(tmp_path / "none"))
    fake_nvidia_smi(tmp_path / "bin", "hang")
    start = time.monotonic()
    q = gather(nvidia.nvidia_query, env=nvml_env("hang", PATH=str(tmp_path / "bin")))
    # nvidia-smi is built on NVML: it is not given a second deadline to hang in.
    assert time.monotonic() - start < 1.0 + 2 * 2 + 2
    assert set(q["hung"]) == {"nvml"} and q["errors"]["nvidia-smi"].startswith("not run")
    with pytest.raises(Unavailable, match="NVML did not answer within 1s: the driver or a GPU is likely wedged") as e:
        gather(nvidia.driver, nvidia_query=q, pci_gpus=[])
    row = run_check(nvidia.driver_present, driver=e.value, pci_gpus=[], nvidia_query=q)
    assert row.status is Status.FAIL and row.message == "NVML did not answer within 1s: the driver or a GPU is likely wedged"
    assert "dmesg" in row.hint and "nvidia-smi -r" in row.hint
    skipped = run_check(nvidia.gpu_list, gpus=Unavailable(e.value.reason))
    assert skipped.status is Status.SKIP and "likely wedged" in skipped.message


@pytest.mark.slow
def test_a_hanging_nvidia_smi_is_the_wedge_diagnosis(tmp_path, monkeypatch):
    monkeypatch.setattr(nvidia, "NVIDIA_SMI_TIMEOUT", 1.0)
    fake_nvidia_smi(tmp_path / "bin", "hang")
    q = gather(nvidia.nvidia_query, env=nvml_env("raise", PATH=str(tmp_path / "bin")))
    assert q["hung"]["nvidia-smi"].startswith("nvidia-smi did not finish within 1s: the driver or a GPU is likely wedged")
    row = run_check(nvidia.driver_present, driver=Unavailable("x"), pci_gpus=[], nvidia_query=q)
    assert row.status is Status.FAIL and "nvidia-smi did not finish within 1s" in row.message
    assert psutil.Process().children(recursive=True) == []


def test_the_driver_queries_share_one_short_deadline():
    assert nvidia.NVML_TIMEOUT == nvidia.NVIDIA_SMI_TIMEOUT == nvidia.DRIVER_QUERY_TIMEOUT <= 10
