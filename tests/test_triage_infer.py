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
    assert cause.check in ("torch.arch_support", "torch.gpu_below_builds")


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
