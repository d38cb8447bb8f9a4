"""The catalog names the common error texts of every layer: each line below is the text as a
public thread shows it (the thread is named beside it, with what settled it), pasted alone."""

from __future__ import annotations

import pytest

from envdoctor.core.registry import discover
from envdoctor.core.triage import triage
from envdoctor.sources import read_paste

REG = discover()

TEXTS = [
    # conda-forge/pytorch-cpu-feedstock#350, PetervanLunteren/AddaxAI#111 (patchelf --clear-execstack fixed it)
    ("ImportError: libtorch_cpu.so: cannot enable executable stack as shared object requires: Invalid argument", "execstack_refused"),
    # pytorch/pytorch#123097, open-mmlab/mmpretrain#1900 (conda install mkl==2024.0)
    (
        "ImportError: /home/u/miniforge3/envs/mm/lib/python3.8/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent",
        "mkl_incompatible",
    ),
    # stanford-futuredata/ColBERT#350 (setuptools 70 -> 69.5.1), flashinfer-ai/flashinfer#319
    (
        "    from pkg_resources import packaging  # type: ignore[attr-defined]\nImportError: cannot import name 'packaging' from 'pkg_resources'",
        "setuptools_incompatible",
    ),
    # triton-lang/triton#2971 (driver 470.182.03), #3001 (470.57 -> 535.104 fixed it)
    ("RuntimeError: Triton Error [CUDA]: device kernel image is invalid", "driver_too_old_for_torch_cuda"),
    # pytorch/pytorch#48298 ("the driver is still not up-to-date"), mit-han-lab/inter-operator-scheduler#4
    ("RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.", "driver_too_old_for_torch_cuda"),
    # easydiffusion/easydiffusion#134 (fixed by installing the latest driver), NVIDIA/nvidia-docker#1256
    (
        "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
        "NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda driver combination",
        "driver_library_mismatch",
    ),
    # pytorch/pytorch#107300 ("It definately is the environ var"), xorbitsai/inference#1439
    (
        'RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "../aten/src/ATen/cuda/CUDAContext.cpp":50, '
        "please report a bug to PyTorch.",
        "cuda_visible_devices",
    ),
    # HiLab-git/MIDeepSeg#4 (conda install nomkl), meta-pytorch/csprng#115 (two libiomp5md.dll: Library\bin and torch\lib)
    ("OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.", "duplicate_openmp"),
    (
        "OMP: Error #15: Initializing libomp.dll, but found libiomp5md.dll already initialized.",
        "duplicate_openmp",
    ),  # StanfordVL/BEHAVIOR-1K#1828
    (
        "docker: Error response from daemon: failed to create task for container: OCI runtime create failed: nvidia-container-cli: "
        "initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown.",
        "cuda_not_available_driver",
    ),
    ("RuntimeError: Ninja is required to load C++ extensions", "ninja_missing"),
    ("error: command 'gcc' failed: No such file or directory", "no_c_compiler"),
    ("error: command 'x86_64-linux-gnu-gcc' failed with exit code 1: No such file or directory", "no_c_compiler"),
    ("subprocess.CalledProcessError: Command '['which', 'c++']' returned non-zero exit status 1.", "no_c_compiler"),
    ("torch._inductor.exc.InductorError: RuntimeError: Compiler: cl is not found.", "no_c_compiler"),
    (
        "/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions later than 12 are not supported!",
        "host_compiler_too_new_for_nvcc",
    ),
    (
        "ERROR: Could not find a version that satisfies the requirement torch==2.0.1 (from versions: 2.6.0, 2.7.0)\n"
        "ERROR: No matching distribution found for torch==2.0.1",
        "no_torch_wheel_for_python",
    ),
    ("RuntimeError: Windows not yet supported for torch.compile", "compile_unsupported_platform"),
    ("ModuleNotFoundError: No module named 'triton'", "triton_missing"),
    ("ImportError: DLL load failed while importing _C: The specified module could not be found.", "windows_dll_dependency_missing"),
    ("NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend.", "torchvision_torch_mismatch"),
    ("RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable", "gpu_exclusive_busy"),
]


@pytest.mark.parametrize(("text", "cause_id"), TEXTS, ids=[c for _, c in TEXTS])
def test_a_common_error_text_names_its_cause(text, cause_id):
    t = triage(REG, read_paste(text), text)
    assert t.causes and t.causes[0].is_problem, [c.cause_id for c in t.causes]
    assert t.causes[0].cause_id == cause_id, (t.causes[0].cause_id, t.causes[0].summary)


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: Can't call numpy() on Tensor that requires grad.",  # a code bug
        "pip install ninja  # Ninja is optional here",
        "Successfully installed setuptools-69.5.1 packaging-24.0",
        "import triton  # works: triton 3.6.0",
    ],
)
def test_texts_near_them_name_no_cause(text):
    assert not triage(REG, read_paste(text), text).found
