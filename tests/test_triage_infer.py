"""Causes settled by facts without an error line (issue 25 item 2): a GPU's product name -> its
compute capability -> whether the pasted torch build has kernels for it; a CPU-only torch beside
GPU evidence; a ROCm build against its GPU's gfx target; a driver against torch's CUDA. Each
broken paste has a healthy twin that must give no cause (no false alarm)."""

from __future__ import annotations

import pytest

from envdoctor.core.registry import discover
from envdoctor.core.triage import triage
from envdoctor.sources import read_paste
from envdoctor_checks import _release_data as rd

REG = discover()


def top(text: str):
    """The top-ranked cause when it is a problem (exit 1), else None."""
    t = triage(REG, read_paste(text), text)
    return t.causes[0] if t.causes and t.causes[0].is_problem else None


# ---- a GPU name and a torch build written by hand ---------------------------------------------

BROKEN_ARCH = {
    "conda 1.7 + cudatoolkit 10.1 on a 3090": "torch==1.7.0\ncudatoolkit=10.1\nGPU: RTX 3090\n",
    "pip 2.1.2+cu118 on a 5090": "- torch 2.1.2+cu118\n- GPU: NVIDIA GeForce RTX 5090\n",
    "PTX of CUDA 10.2 cannot serve Ampere": "torch 1.5.0+cu102\nGPU: GeForce RTX 3090\n",
    "collect_env 1.x, a GPU below sm_35": "PyTorch version: 1.2.0\nIs debug build: No\nCUDA used to build PyTorch: 10.0\n"
    "Is CUDA available: No\nGPU models and configuration: GPU 0: GeForce 210\n",
    "bare version, a GPU below every build of the line": "torch 1.2.0\nGPU: GeForce 210\nIs CUDA available: No\n",
    "prose only: a GPU no torch release supports": "GPU is GeForce GT 740M | 3.0\nThe pytorch cannot detect the old CUDA.\n",
}

HEALTHY_ARCH = {
    "2.1.2+cu118 on a 3090": "torch 2.1.2+cu118\nGPU: RTX 3090\n",
    "1.7.0 cu101 on a GTX 1080": "torch==1.7.0\ncudatoolkit=10.1\nGPU: GeForce GTX 1080\n",
    "1.2.0 on a Tesla K80": "torch 1.2.0\nGPU: Tesla K80\n",
    "an unknown GPU name is not judged": "torch 2.1.2+cu118\nGPU: NVIDIA Foo 1234\n",
}


@pytest.mark.parametrize("text", BROKEN_ARCH.values(), ids=BROKEN_ARCH.keys())
def test_a_gpu_without_kernels_in_the_pasted_build_is_named(text):
    cause = top(text)
    assert cause is not None and cause.cause_id == "arch_not_in_torch_build", cause
    assert cause.check in ("torch.arch_support", "torch.line_arch_support")


@pytest.mark.parametrize("text", HEALTHY_ARCH.values(), ids=HEALTHY_ARCH.keys())
def test_a_gpu_the_build_covers_gives_no_cause(text):
    assert top(text) is None


def test_a_gpu_below_the_lowest_arch_is_named_as_too_old_not_as_cuda_unavailable():
    cause = top(BROKEN_ARCH["collect_env 1.x, a GPU below sm_35"])
    assert cause.check == "torch.arch_support"
    assert "below the build's lowest arch (sm_35)" in cause.summary


def test_the_legacy_arch_table_serves_torch_1x_only():
    assert rd.arch_flags("1.7.0", "10.1") == ("sm_37", "sm_50", "sm_60", "sm_70", "sm_75")
    assert rd.arch_flags("1.4.0+cu101") == ("sm_37", "sm_50", "sm_60", "sm_61", "sm_70", "sm_75", "compute_37")
    assert rd.arch_flags("1.7.0") is None  # no variant: unknown
    assert rd.arch_flags("0.4.1", "9.0") is None  # older than the table
    assert rd.arch_flags("2.1.2+cu118") == rd.cuda_build("2.1.2", "cu118").arch_flags
    assert set(rd.line_arch_flags("1.2.0")) == {"cu92", "cu100"}
    assert rd.cuda_first("8.6") == "11.1" and rd.cuda_first("7.5") is None


# ---- a CPU-only torch beside GPU evidence -----------------------------------------------------

SMI_HEADER = "| NVIDIA-SMI 510.47.03    Driver Version: 510.47.03    CUDA Version: 11.6     |\n"
CONDA_CPU = (
    "cpuonly                   2.0                           0    pytorch\n"
    "pytorch                   1.11.0              py3.8_cpu_0    pytorch\n"
    "pytorch-mutex             1.0                         cpu    pytorch\n"
)
CONDA_CUDA = "pytorch                   1.11.0          py3.8_cuda11.3_cudnn8.2.0_0    pytorch\n"


def test_conda_rows_without_their_header_are_read():
    p = read_paste(CONDA_CPU)
    assert p.facts["torch_build"]["kind"] == "cpu" and p.facts["torch_build"]["version"] == "1.11.0"
    assert "conda_list" in p.kinds
    assert read_paste(CONDA_CUDA).facts["torch_build"]["cuda"] == "11.3"


def test_a_pip_list_row_with_a_location_is_not_a_conda_row():
    p = read_paste("torch    2.1.0    /home/me/src/torch\n")
    assert "conda_list" not in p.kinds


def test_cpuonly_selects_the_cpu_build_when_the_pytorch_row_does_not_say():
    p = read_paste("pytorch                   1.11.0                 py3.8    pytorch\ncpuonly                   2.0        0    pytorch\n")
    assert p.facts["torch_build"]["kind"] == "cpu"


@pytest.mark.parametrize("torch", [CONDA_CPU, "torch==2.1.0+cpu\n"], ids=["conda cpu build", "+cpu version"])
def test_a_cpu_torch_beside_a_loaded_driver_is_named(torch):
    cause = top(torch + SMI_HEADER)
    assert cause is not None and cause.cause_id == "cpu_torch_on_gpu_machine"


@pytest.mark.parametrize(
    "text",
    [CONDA_CPU, CONDA_CUDA + SMI_HEADER, "torch==2.1.0+cpu\nIs CUDA available: False\nCUDA runtime version: 12.1.105\n"],
    ids=["cpu build, no GPU evidence", "cuda build beside the driver", "cpu build, a toolkit and CUDA unavailable"],
)
def test_no_cpu_build_cause_without_gpu_evidence_or_with_a_cuda_build(text):
    # The project's own CPU box shows a +cpu torch, "Is CUDA available: False" and a CUDA
    # toolkit: none of them is evidence of a GPU.
    cause = top(text)
    assert cause is None or cause.cause_id != "cpu_torch_on_gpu_machine"


# ---- ROCm: the GPU's gfx target against the build's ------------------------------------------

ROCMINFO = "  Name:                    gfx1032\n  Marketing Name:          AMD Radeon RX 6600\n"


def test_a_rocm_build_without_the_gpus_gfx_target_is_named_with_the_override():
    cause = top("torch 2.2.1+rocm5.7\n" + ROCMINFO)
    assert cause.cause_id == "rocm_gfx_unsupported" and cause.check == "torch.rocm_gfx_support"
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in cause.fix
    rdna3 = top("PyTorch version: 2.3.0+rocm6.0\nGPU models and configuration: AMD Radeon RX 7600 (gfx1102)\n")
    assert rdna3.cause_id == "rocm_gfx_unsupported" and "HSA_OVERRIDE_GFX_VERSION=11.0.0" in rdna3.fix


def test_the_error_text_and_the_gfx_check_agree():
    cause = top("torch 2.2.1+rocm5.7\n" + ROCMINFO + "RuntimeError: HIP error: invalid device function\n")
    assert cause.cause_id == "rocm_gfx_unsupported" and cause.confidence == "high" and cause.check == "torch.rocm_gfx_support"


@pytest.mark.parametrize(
    "text",
    [
        "torch 2.2.1+rocm5.7\nName: gfx1030\n",
        "torch 2.2.1+rocm5.7\n" + ROCMINFO + "export HSA_OVERRIDE_GFX_VERSION=10.3.0\n",
        "torch 2.1.0+rocm5.6\n_CudaDeviceProperties(name='AMD Instinct MI250X', gcnArchName='gfx90a:sramecc+:xnack-')\n",
        "torch 2.2.1+rocm5.7\nexport PYTORCH_ROCM_ARCH=gfx900;gfx906\n",  # a target list is no GPU
        "torch 2.1.2+cu121\n" + ROCMINFO,  # not a ROCm build
    ],
    ids=["target in the build", "override set", "MI250X with feature suffixes", "a build target list", "CUDA torch"],
)
def test_a_gpu_the_rocm_build_covers_gives_no_cause(text):
    assert top(text) is None


def test_kfd_gfx_target_versions():
    from envdoctor_checks.rocm import gfx_of

    assert [gfx_of(v) for v in (100302, 90010, 90402, 110001, 0)] == ["gfx1032", "gfx90a", "gfx942", "gfx1101", None]


# ---- the driver against torch's CUDA ----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "driver 450.80, torch 2.1.2+cu121\n",
        "| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |\ntorch==2.3.0+cu121\n",
    ],
    ids=["prose", "nvidia-smi header"],
)
def test_a_driver_older_than_torchs_cuda_is_named(text):
    assert top(text).cause_id == "driver_too_old_for_torch_cuda"


def test_a_driver_new_enough_gives_no_cause():
    assert top("driver 535.104, torch 2.1.2+cu121\n") is None


# ---- error texts retyped or reported from the other side ------------------------------------


@pytest.mark.parametrize(
    ("text", "cause_id"),
    [
        ("ImportError: /lib64/libc.so.6: version 'GLIBC_2.14' not found (required by torch/lib/libshm.so)", "glibc_too_old"),
        ("ImportError: /lib64/libc.so.6: version ‘GLIBC_2.27’ not found", "glibc_too_old"),
        ("/usr/bin/ld: skipping incompatible /usr/lib/i386-linux-gnu/libcuda.so when searching for -lcuda", "libcuda_not_found"),
    ],
)
def test_loader_messages_as_reporters_quote_them(text, cause_id):
    assert top(text).cause_id == cause_id


@pytest.mark.parametrize(
    "text",
    [
        "ldd (GNU libc) 2.35\nGLIBC_2.34 is available",
        "/usr/bin/ld: skipping incompatible /usr/lib/i386-linux-gnu/libm.so when searching for -lm",
    ],
)
def test_loader_lines_that_are_no_error_give_no_cause(text):
    assert top(text) is None


def test_a_cpu_torch_beside_an_amd_gpu_is_named():
    cause = top("torch==2.2.1+cpu\n" + ROCMINFO)
    assert cause.cause_id == "cpu_torch_on_gpu_machine" and "gfx1032" in cause.summary and "rocm" in cause.fix


def test_the_live_amd_gpus_fact_reads_the_kfd_topology(tmp_path, monkeypatch):
    from envdoctor import Unavailable
    from envdoctor_checks import rocm

    for node, version in (("0", 0), ("1", 100302), ("2", 90010)):  # a CPU node, two GPUs
        (tmp_path / node).mkdir()
        (tmp_path / node / "properties").write_text(f"cpu_cores_count 0\ngfx_target_version {version}\nvendor_id 4098\n")
    monkeypatch.setattr(rocm, "KFD", str(tmp_path))
    assert [g["gfx"] for g in rocm.amd_gpus()] == ["gfx1032", "gfx90a"]
    monkeypatch.setattr(rocm, "KFD", str(tmp_path / "none"))
    with pytest.raises(Unavailable):
        rocm.amd_gpus()


def test_a_gpu_mentioned_in_a_sentence_settles_the_arch_question():
    assert top("torch 2.1.2+cu118 fails on my RTX 5090").cause_id == "arch_not_in_torch_build"
    assert top("torch 2.1.2+cu121 runs fine on my RTX 3090") is None


def test_half_of_pips_no_wheel_message_is_enough():
    text = "ERROR: Could not find a version that satisfies the requirement triton==2.0.0 (from versions: none)"
    assert top(text).cause_id == "triton_missing"
    assert top("ERROR: Could not find a version that satisfies the requirement tritonclient==9.9") is None


@pytest.mark.parametrize(
    ("text", "broken"),
    [
        ("torch 2.5.1\nGPU: NVIDIA GeForce RTX 5090\n", True),  # no build of 2.5 has sm_120
        ("torch 2.8.0\nGPU: NVIDIA GeForce RTX 5090\n", False),  # 2.8's cu128 has it
        ("GPU: NVIDIA GeForce RTX 5090\n", False),  # no version: only a GPU below every build is judged
    ],
    ids=["new GPU, old line", "new GPU, a line with a build for it", "no torch version"],
)
def test_a_gpu_newer_than_every_build_of_the_line(text, broken):
    cause = top(text)
    assert (cause is not None and cause.cause_id == "arch_not_in_torch_build" and "newer" in cause.summary) is broken
    assert broken or cause is None


def test_a_jetson_igpu_is_not_judged_against_the_x86_wheels():
    assert top("torch 2.1.0\nGPU: Jetson AGX Orin\n") is None
