"""Liveness without torch: the driver-API child run for real against a fake libcuda.so.1 (compiled
from tests/fakes/libcuda/fake_cuda.c, which computes the kernel on the CPU from the launch's real
parameters), and the check's judgement of each fault. The real GPU path is recorded in
docs/gpu-verification.md (verification/liveness.sh)."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid

import pytest

from envdoctor import Status
from envdoctor.testing import gather, run_check
from envdoctor_checks import liveness
from tests.conftest import run_cli
from tests.fakes import HERE
from tests.test_containment import _wait_gone

PCI = [{"address": "0000:19:00.0", "device": "0x2335", "class": "0x030200"}]


@pytest.fixture(scope="module")
def fake_libcuda(tmp_path_factory) -> str:
    if not shutil.which("gcc"):
        pytest.skip("gcc is needed to build the fake libcuda.so.1")
    out = tmp_path_factory.mktemp("libcuda")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out / "libcuda.so.1"), str(HERE / "libcuda" / "fake_cuda.c")], check=True)
    return str(out)


def _env(lib: str, mode: str, **extra: str) -> dict:
    return {**os.environ, "LD_LIBRARY_PATH": lib, "FAKE_CUDA": mode, **extra}


def _judge(lib: str, mode: str, **extra: str):
    env = _env(lib, mode, **extra)
    k = gather(liveness.driver_kernel, env=env)
    return run_check(liveness.kernel, driver_kernel=k, env=env, pci_gpus=PCI)


def test_a_kernel_that_computes_right_on_every_gpu_passes(fake_libcuda):
    row = _judge(fake_libcuda, "ok", FAKE_CUDA_COUNT="3")
    assert row.status is Status.PASS, row.message
    assert "3 GPU(s)" in row.message and [i.status for i in row.items] == [Status.PASS] * 3


def test_one_wrong_element_fails_naming_the_gpu_and_the_element(fake_libcuda):
    row = _judge(fake_libcuda, "wrong", FAKE_CUDA_COUNT="1")
    assert row.status is Status.FAIL
    assert "GPU 0 (Fake H200): compare failed with element 32768 is wrong" in row.message


def test_a_launch_failure_on_one_gpu_fails_that_gpu_only(fake_libcuda):
    row = _judge(fake_libcuda, "launchfail")
    assert row.status is Status.FAIL
    assert "1 of 2 GPU(s)" in row.message and "CUDA_ERROR_LAUNCH_FAILED" in row.message
    assert [i.status for i in row.items] == [Status.PASS, Status.FAIL]


def test_the_stub_library_first_on_the_path_is_named_with_its_path(fake_libcuda):
    row = _judge(fake_libcuda, "stub")
    assert row.status is Status.FAIL
    assert "CUDA_ERROR_STUB_LIBRARY" in row.message and os.path.join(fake_libcuda, "libcuda.so.1") in row.message
    assert "stubs" in row.hint and "LD_LIBRARY_PATH" in row.hint


def test_every_gpu_hidden_names_cuda_visible_devices(fake_libcuda):
    row = _judge(fake_libcuda, "nodevice", CUDA_VISIBLE_DEVICES="")
    assert row.status is Status.FAIL
    assert "no CUDA device is visible" in row.message and "CUDA_VISIBLE_DEVICES=''" in row.message


@pytest.mark.slow
def test_a_hung_synchronise_is_cut_at_the_deadline_and_leaves_no_process(fake_libcuda, monkeypatch):
    monkeypatch.setattr(liveness, "KERNEL_TIMEOUT", 1.0)
    marker = uuid.uuid4().hex
    row = _judge(fake_libcuda, "hang", ENVDOCTOR_TEST_MARKER=marker)
    assert row.status is Status.FAIL
    assert "did not finish within 1s" in row.message and "wedged" in row.message
    assert _wait_gone(marker) == []


def test_no_libcuda_and_no_gpu_skips_but_gpus_without_a_driver_fail(tmp_path):
    env = {**os.environ, "LD_LIBRARY_PATH": str(tmp_path)}
    k = gather(liveness.driver_kernel, env=env)
    if k.get("stage") != "load":
        pytest.skip("this machine has a libcuda.so.1 the loader finds")
    assert run_check(liveness.kernel, driver_kernel=k, env=env, pci_gpus=[]).status is Status.SKIP
    row = run_check(liveness.kernel, driver_kernel=k, env=env, pci_gpus=PCI)
    assert row.status is Status.FAIL and "libcuda.so.1 cannot be loaded" in row.message


@pytest.mark.slow
def test_the_liveness_profile_imports_no_torch_and_runs_the_kernel_check(fake_libcuda, tmp_path):
    """End to end: the profile's rows are the NVML checks and the kernel, and no process of the
    run imported torch (a sitecustomize that records any import of torch proves it)."""
    spy = tmp_path / "spy"
    spy.mkdir()
    seen = tmp_path / "torch-imported"
    (spy / "sitecustomize.py").write_text(
        "import sys\nclass _F:\n    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == 'torch': open({str(seen)!r}, 'a').write('x')\n"
        "        return None\nsys.meta_path.insert(0, _F())\n"
    )
    env = _env(fake_libcuda, "stub", PYTHONPATH=os.pathsep.join([str(spy), os.environ.get("PYTHONPATH", "")]))
    res = run_cli("check", "--profile", "liveness", "--format", "json", env=env)
    assert res.returncode == 1, res.stderr
    import json

    rows = {r["id"]: r for r in json.loads(res.stdout)["results"]}
    assert rows["liveness.kernel"]["status"] == "fail" and "CUDA_ERROR_STUB_LIBRARY" in rows["liveness.kernel"]["message"]
    assert not any(i.startswith(("smoke.", "torch.", "triton.", "compile.")) for i in rows)
    assert not seen.exists(), "a process of the liveness profile imported torch"
