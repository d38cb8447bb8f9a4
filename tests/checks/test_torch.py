"""torch.*: the real torch probe against the venv's CPU torch and a broken torch; judgements from injected facts."""

from __future__ import annotations

import os
import sys

import pytest

from envdoctor import Status, Unavailable
from envdoctor.core.probe import ProbeClient
from envdoctor.testing import gather, run_check
from envdoctor_checks import _cuda_compat as compat
from envdoctor_checks import extensions
from envdoctor_checks import torch as t

H200 = {"index": 0, "name": "NVIDIA H200", "uuid": "GPU-1", "cc": "9.0", "memory_total": 141 << 30, "brand": "NVIDIA"}
RTX5090 = {"index": 0, "name": "NVIDIA GeForce RTX 5090", "uuid": "GPU-2", "cc": "12.0", "brand": "GeForce"}
DRIVER = {"version": "580.65.06", "cuda_version": "13.0", "kernel_module": "580.65.06", "libcuda": {}}
CU130_BUILD = {"version": "2.11.0+cu130", "local": "cu130", "cuda": "13.0", "hip": None, "kind": "cuda", "location": "/sp/torch"}
CPU_BUILD = {"version": "2.13.0+cpu", "local": "cpu", "cuda": None, "hip": None, "kind": "cpu", "location": "/sp/torch"}
CU130_FLAGS = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]
SP = "/usr/local/lib/python3.12/dist-packages"


def lib(name: str, path: str, env: dict | None = None) -> dict:
    return t.annotate_libs([{"name": name, "path": path, "realpath": path}], env or {})[0]


GPU_RUNTIME = {
    "import_error": None,
    "version": "2.11.0+cu130",
    "cuda": "13.0",
    "arch_list": CU130_FLAGS,
    "cudnn": 91900,
    "cudnn_compile": [9, 19, 0],
    "nccl": "2.27.7",
    "cuda_available": True,
    "device_count": 1,
    "devices": [{"name": "NVIDIA H200", "cc": "9.0"}],
    "warnings": [],
    "loaded_libs": [
        lib("libcudnn.so.9", f"{SP}/nvidia/cudnn/lib/libcudnn.so.9"),
        lib("libcublas.so.13", f"{SP}/nvidia/cu13/lib/libcublas.so.13"),
        lib("libnccl.so.2", f"{SP}/nvidia/nccl/lib/libnccl.so.2"),
        lib("libgomp.so.1", f"{SP}/torch/lib/libgomp.so.1"),
        lib("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
    ],
}


# ---- the real probe --------------------------------------------------------------------------


@pytest.mark.slow
def test_real_probe_reports_the_cpu_torch_of_this_venv():
    client = ProbeClient()
    try:
        rt = gather(t.torch_runtime, probe=client, env=dict(os.environ))
    finally:
        client.close()
    assert rt["import_error"] is None
    assert rt["version"].startswith("2.13.0") and rt["version"].endswith("+cpu")
    assert rt["cuda"] is None and rt["arch_list"] == [] and rt["cuda_available"] is False and rt["device_count"] == 0
    gomp = [x for x in rt["loaded_libs"] if x["kind"] == "gomp"]
    assert gomp and gomp[0]["provenance"] == "bundled with torch"
    assert run_check(t.importable, torch_runtime=rt).status is Status.PASS
    row = run_check(t.loaded_libraries, torch_runtime=rt, env={})
    assert row.status is Status.PASS and "libgomp" in row.message


def test_broken_torch_import_is_reported_not_raised(tmp_path):
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise ImportError('libcudnn.so.9: cannot open shared object file: No such file or directory')\n")
    client = ProbeClient(env={**os.environ, "PYTHONPATH": str(tmp_path)})
    try:
        rt = client.call("envdoctor_checks.bodies.torch_info:collect", {}, timeout=120)
    finally:
        client.close()
    assert "libcudnn.so.9: cannot open shared object file" in rt["import_error"]
    assert rt["origin"] == str(pkg / "__init__.py")
    row = run_check(t.importable, torch_runtime=rt, torch_build=CU130_BUILD)
    assert row.status is Status.FAIL
    assert row.message.startswith("import torch fails: ImportError: libcudnn.so.9")
    assert "pip install --force-reinstall torch==2.11.0+cu130" in row.hint
    # The failing torch is not the installed one: the hint names the PYTHONPATH entry.
    shadowed = run_check(t.importable, torch_runtime=rt, dists=_dists([]))
    assert shadowed.status is Status.FAIL and f"it loads {pkg}, not the installed torch 2.11.0+cu130" in shadowed.message
    assert f"remove {tmp_path} from PYTHONPATH" in shadowed.hint
    # Checks that need the imported torch skip, pointing at the one that explains.
    dep = run_check(t.loaded_libraries, torch_runtime=rt, env={})
    assert dep.status is Status.SKIP and "torch.importable" in dep.message


def test_no_torch_means_unavailable(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "path", [str(tmp_path)])  # a sys.path without torch
    with pytest.raises(Unavailable, match="torch is not installed"):
        gather(t.torch_runtime, probe=None, env={})


# ---- compatibility rules ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cc", "flags", "how"),
    [
        ("9.0", CU130_FLAGS, "sass"),
        ("8.9", CU130_FLAGS, "sass"),  # sm_86 SASS runs on 8.9
        ("8.7", CU130_FLAGS, "none"),  # Orin iGPU is not served by sm_86/sm_80
        ("12.1", CU130_FLAGS, "sass"),  # GB10 runs sm_120 SASS
        ("10.3", CU130_FLAGS, "sass"),
        ("7.0", CU130_FLAGS, "none"),  # V100 dropped from cu130
        ("12.0", ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], "none"),  # RTX 5090 on cu121
        ("12.0", ["sm_80", "sm_90", "compute_90"], "ptx"),
        ("9.0", ["sm_90a"], "sass"),
        ("10.0", ["sm_90a", "compute_90a"], "none"),
    ],
)
def test_arch_match(cc, flags, how):
    assert compat.arch_match(cc, flags).how == how


def test_driver_rule():
    assert compat.judge_driver("13.0", "13.0", "580.65.06").level == "ok"
    assert compat.judge_driver("13.0", "12.8", "570.133.20").level == "too_old"
    assert compat.judge_driver("12.8", "12.4", "550.54.14").level == "minor_compat"
    assert compat.judge_driver("11.8", "11.0", "450.36.06").level == "below_floor"
    assert compat.judge_driver("12.6", "13.0", "580.65.06").level == "ok"


# ---- judgements ------------------------------------------------------------------------------


def test_build_and_cpu_build_on_gpu_machine():
    row = run_check(t.build, torch_build=CPU_BUILD)
    assert row.status is Status.PASS and row.message == "torch 2.13.0+cpu (CPU build)"
    assert run_check(t.cpu_build_on_gpu_machine, torch_build=CPU_BUILD, gpus=Unavailable("no GPU"), pci_gpus=[]).status is Status.SKIP
    bad = run_check(t.cpu_build_on_gpu_machine, torch_build=CPU_BUILD, gpus=[H200], driver=DRIVER)
    assert bad.status is Status.FAIL and "CPU-only torch 2.13.0+cpu" in bad.message and "NVIDIA H200" in bad.message
    assert "download.pytorch.org/whl/cu130" in bad.hint
    assert run_check(t.cpu_build_on_gpu_machine, torch_build=CU130_BUILD, gpus=[H200]).status is Status.PASS


def test_driver_supports_cuda():
    assert run_check(t.driver_supports_cuda, torch_build=CU130_BUILD, driver=DRIVER).status is Status.PASS
    old = {**DRIVER, "version": "570.133.20", "cuda_version": "12.8", "kernel_module": "570.133.20"}
    row = run_check(t.driver_supports_cuda, torch_build=CU130_BUILD, driver=old)
    assert row.status is Status.FAIL and "supports CUDA up to 12.8" in row.message
    assert ">= 580.65.06" in row.hint and "whl/cu128" in row.hint
    minor = run_check(
        t.driver_supports_cuda,
        torch_build={**CU130_BUILD, "cuda": "12.8"},
        driver={**DRIVER, "version": "550.54.14", "cuda_version": "12.4"},
    )
    assert minor.status is Status.WARN and "minor-version compatibility" in minor.message
    cpu = run_check(t.driver_supports_cuda, torch_build=CPU_BUILD, driver=DRIVER)
    assert cpu.status is Status.SKIP and "CPU build" in cpu.message


def test_arch_support_and_ptx_jit():
    ok = run_check(t.arch_support, torch_build=CU130_BUILD, torch_runtime=GPU_RUNTIME, gpus=[H200], visible_gpus=[H200])
    assert ok.status is Status.PASS and "sm_90" in ok.message
    old = {**GPU_RUNTIME, "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]}
    bad = run_check(t.arch_support, torch_build=CU130_BUILD, torch_runtime=old, gpus=[RTX5090])
    assert bad.status is Status.FAIL and "no kernel image" in bad.message and "cu130" in bad.hint
    assert run_check(t.ptx_jit, torch_build=CU130_BUILD, torch_runtime=GPU_RUNTIME, driver=DRIVER, gpus=[H200]).status is Status.SKIP
    gb10 = {**H200, "name": "NVIDIA GB10", "cc": "12.1"}
    ptx_rt = {**GPU_RUNTIME, "arch_list": ["sm_90", "compute_90"]}
    jit = run_check(t.ptx_jit, torch_build=CU130_BUILD, torch_runtime=ptx_rt, driver={**DRIVER, "cuda_version": "12.9"}, gpus=[gb10])
    assert jit.status is Status.FAIL and "unsupported toolchain" in jit.message and "580.65.06" in jit.hint


def test_cuda_available():
    row = run_check(t.cuda_available, torch_build=CU130_BUILD, torch_runtime=GPU_RUNTIME, gpus=[H200], visible_gpus=[H200])
    assert row.status is Status.PASS and "NVIDIA H200" in row.message
    broken = {
        **GPU_RUNTIME,
        "cuda_available": False,
        "device_count": 0,
        "warnings": ["CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error 802: system not yet initialized"],
    }
    bad = run_check(t.cuda_available, torch_build=CU130_BUILD, torch_runtime=broken, gpus=[H200], visible_gpus=[H200])
    assert bad.status is Status.FAIL and "Error 802" in bad.message and "fabricmanager" in bad.hint
    hidden = run_check(t.cuda_available, torch_build=CU130_BUILD, torch_runtime={**broken, "warnings": []}, gpus=[H200], visible_gpus=[])
    assert hidden.status is Status.SKIP and "nvidia.cuda_visible_devices" in hidden.message


def _dists(torch_requires, **others):
    d = {
        "torch": {"name": "torch", "version": "2.11.0+cu130", "location": f"{SP}/torch-2.11.0+cu130.dist-info", "requires": torch_requires}
    }
    for key, (version, requires) in others.items():
        d[key] = {"name": key, "version": version, "location": f"{SP}/{key}.dist-info", "requires": requires}
    return d


def test_nvidia_wheel_pins():
    req = [
        'nvidia-cudnn-cu13==9.19.0.56; platform_system == "Linux"',
        "cuda-toolkit[cublas,cudart]==13.0.2; platform_system == 'Linux'",
        'nvidia-nccl-cu13==2.27.7; platform_system == "Windows"',
    ]
    good = run_check(t.nvidia_wheel_pins, dists=_dists(req, **{"nvidia-cudnn-cu13": ("9.19.0.56", []), "cuda-toolkit": ("13.0.2", [])}))
    assert good.status is Status.PASS and "2 pinned" in good.message  # the Windows-only pin does not apply
    wrong = run_check(t.nvidia_wheel_pins, dists=_dists(req, **{"nvidia-cudnn-cu13": ("9.8.0.87", []), "cuda-toolkit": ("13.0.2", [])}))
    assert wrong.status is Status.WARN and "nvidia-cudnn-cu13 9.8.0.87" in wrong.message and "--force-reinstall" in wrong.hint
    missing = run_check(t.nvidia_wheel_pins, dists=_dists(req, **{"cuda-toolkit": ("13.0.2", [])}))
    assert missing.status is Status.FAIL and "nvidia-cudnn-cu13==9.19.0.56" in missing.message
    assert run_check(t.nvidia_wheel_pins, dists=_dists(["filelock"])).status is Status.SKIP


def test_loaded_libraries_judges_only_what_torch_loaded(tmp_path):
    # The GPU machine: pip cuDNN/NCCL loaded; an older system cuDNN exists in the ld cache but is
    # not loaded, and LD_LIBRARY_PATH is unset: nothing to warn about.
    row = run_check(t.loaded_libraries, torch_runtime=GPU_RUNTIME, env={})
    assert row.status is Status.PASS and "cuDNN 9.19.0" in row.message and "NCCL 2.27.7" in row.message
    # An old toolkit on LD_LIBRARY_PATH wins for cuBLAS.
    env = {"LD_LIBRARY_PATH": "/usr/local/cuda-12.1/lib64"}
    shadowed = {
        **GPU_RUNTIME,
        "loaded_libs": [*GPU_RUNTIME["loaded_libs"][:1], lib("libcublas.so.12", "/usr/local/cuda-12.1/lib64/libcublas.so.12", env)],
    }
    bad = run_check(t.loaded_libraries, torch_runtime=shadowed, env=env)
    assert bad.status is Status.WARN and "LD_LIBRARY_PATH" in bad.message and "unset LD_LIBRARY_PATH" in bad.hint
    # Two OpenMP runtimes in one process.
    omp = {**GPU_RUNTIME, "loaded_libs": [*GPU_RUNTIME["loaded_libs"], lib("libiomp5.so", "/opt/conda/lib/libiomp5.so")]}
    two = run_check(t.loaded_libraries, torch_runtime=omp, env={})
    assert two.status is Status.WARN and "more than one OpenMP runtime" in two.message
    # Another cuDNN version sitting on LD_LIBRARY_PATH, not loaded yet.
    d = tmp_path / "cudnn8"
    d.mkdir()
    (d / "libcudnn.so.9.1.0").write_text("")
    stray = run_check(t.loaded_libraries, torch_runtime=GPU_RUNTIME, env={"LD_LIBRARY_PATH": str(d)})
    assert stray.status is Status.WARN and "9.1.0" in stray.message and str(d) in stray.hint


def test_provenance():
    assert t.provenance(f"{SP}/nvidia/cudnn/lib/libcudnn.so.9", {}) == "pip wheel (nvidia-*)"
    assert t.provenance("/opt/conda/envs/x/lib/libcudnn.so.9", {"CONDA_PREFIX": "/opt/conda/envs/x"}) == "conda"
    assert t.provenance("/opt/cuda-12.4/lib64/libcublas.so.12", {"CUDA_HOME": "/opt/cuda-12.4"}) == "CUDA_HOME"
    assert t.provenance("/usr/lib/x86_64-linux-gnu/libcudnn.so.8", {}) == "system"


def test_duplicate_installs(tmp_path):
    dists = _dists([])
    spec = {"dir": f"{SP}/torch", "copies": [f"{SP}/torch"], "leftovers": []}
    assert run_check(t.duplicate_installs, torch_spec=spec, dists=dists).status is Status.PASS
    shadow = {"dir": "/tmp/broken-torch/torch", "copies": ["/tmp/broken-torch/torch", f"{SP}/torch"], "leftovers": [f"{SP}/~orch"]}
    row = run_check(t.duplicate_installs, torch_spec=shadow, dists=dists)
    assert row.status is Status.WARN and "import torch loads /tmp/broken-torch/torch" in row.message and "~orch" in row.message
    assert "PYTHONNOUSERSITE=1" in row.hint
    # The real fact on this venv: one torch.
    real = gather(t.torch_spec)
    assert real["dir"].endswith("site-packages/torch") and real["copies"] == [real["dir"]]


def test_numpy_abi():
    assert run_check(t.numpy_abi, dists=_dists([])).status is Status.SKIP
    old = _dists([], numpy=("2.1.0", []))
    old["torch"]["version"] = "2.2.2"
    row = run_check(t.numpy_abi, dists=old)
    assert row.status is Status.FAIL and "numpy<2" in row.hint
    pinned = _dists([], numpy=("2.1.0", []), **{"opencv-python": ("4.8.0", ["numpy<2"])})
    assert run_check(t.numpy_abi, dists=pinned).status is Status.WARN
    assert run_check(t.numpy_abi, dists=_dists([], numpy=("2.1.0", []))).status is Status.PASS


def test_extension_abi():
    assert run_check(extensions.extension_abi, dists=_dists([])).status is Status.SKIP
    good = _dists([], torchvision=("0.26.0+cu130", ["torch==2.11.0"]))
    assert run_check(extensions.extension_abi, dists=good).status is Status.PASS
    bad = _dists([], torchvision=("0.21.0+cu124", ["torch==2.6.0"]))
    row = run_check(extensions.extension_abi, dists=bad)
    assert row.status is Status.FAIL and "requires torch==2.6.0" in row.message and "undefined symbol" in row.message
    assert "pip install --force-reinstall torchvision" in row.hint


def test_nvrtc_builtins_is_not_a_second_nvrtc():
    # Seen on the H200: torch loads libnvrtc.so.13 and its companion libnvrtc-builtins.so.13.0.
    cu13 = "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib"
    assert t.lib_kind("libnvrtc-builtins.so.13.0") == "nvrtc-builtins"
    assert t.lib_kind("libnvrtc.so.13") == "nvrtc"
    rt = {
        **GPU_RUNTIME,
        "loaded_libs": [
            *GPU_RUNTIME["loaded_libs"],
            lib("libnvrtc.so.13", f"{cu13}/libnvrtc.so.13"),
            lib("libnvrtc-builtins.so.13.0", f"{cu13}/libnvrtc-builtins.so.13.0"),
        ],
    }
    assert run_check(t.loaded_libraries, torch_runtime=rt, env={}).status is Status.PASS


def test_cudnn_refused_by_torch_fails():
    # Seen on the H200 with the system cuDNN 9.14 directory first on LD_LIBRARY_PATH.
    err = "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 19, 0) but found runtime version (9, 14, 0)."
    rt = {**GPU_RUNTIME, "cudnn": {"error": err}}
    row = run_check(t.loaded_libraries, torch_runtime=rt, env={"LD_LIBRARY_PATH": "/lib/x86_64-linux-gnu"})
    assert row.status is Status.FAIL
    assert "cuDNN fails to load" in row.message and "(9, 14, 0)" in row.message
    assert "LD_LIBRARY_PATH" in row.hint


@pytest.mark.slow
def test_an_incomplete_shadowing_torch_is_diagnosed_by_name(tmp_path):
    """A directory named torch first on PYTHONPATH (no torch._C): one diagnosis, not five errors."""
    import json

    from tests.conftest import run_cli

    shadow = tmp_path / "shadow" / "torch"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    done = run_cli("check", "-s", "torch.importable,smoke.compile,smoke.triton", "--format", "json", env={"PYTHONPATH": str(shadow.parent)})
    rows = {r["id"]: r for r in json.loads(done.stdout)["results"]}
    imp = rows["torch.importable"]
    assert imp["status"] == "fail" and f"incomplete torch from {shadow}" in imp["message"] and "torch._C" in imp["message"]
    assert f"remove {shadow.parent} from PYTHONPATH" in imp["hint"]
    assert all(r["status"] != "error" for r in rows.values()), rows
