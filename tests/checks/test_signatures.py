"""The error-signature catalog: every signature names a real error text, specific before generic."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib

from envdoctor.core import signatures as engine
from envdoctor.core.signatures import Signature, best, find, scoped, validate
from envdoctor_checks.signatures import SIGNATURES as CATALOG
from envdoctor_checks.signatures import hints_for

SIGNATURES = scoped(CATALOG, "paste")  # what triage and the smokes search

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "triage"

# Error texts as users posted them (shared/knowledge/failure-catalog.md quotes their threads).
REAL = {
    "triton.triton_key": "ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' (/usr/lib/python3/triton/compiler/compiler.py)",
    "triton.pip_conflict": 'torch 2.11.0 requires triton==3.6.0; platform_system == "Linux", but you have triton 3.5.1 which is incompatible.',
    "triton.missing": "torch._inductor.exc.TritonMissing: Cannot find a working triton installation. Either the package is not installed or it is too old.",
    "triton.ptxas_arch": "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'",
    "triton.ptxas_version": "ptxas /tmp/tmpx.ptx, line 5; fatal   : Unsupported .version 8.6; current version is '8.5'",
    "triton.libcuda_assert": "AssertionError: libcuda.so cannot found!",
    "triton.lcuda": "/usr/bin/ld: cannot find -lcuda: No such file or directory\ncollect2: error: ld returned 1 exit status",
    "toolchain.python_h": "/tmp/tmps1rkq3y3/main.c:5:10: fatal error: Python.h: No such file or directory",
    "triton.no_c_compiler": "RuntimeError: Failed to find C compiler. Please specify via CC environment variable.",
    "torch.nvidia_lib_symbol": "OSError: /usr/local/lib/python3.10/dist-packages/nvidia/cublas/lib/libcublas.so.11: "
    "undefined symbol: cublasLtHSHMatmulAlgoInit, version libcublasLt.so.11",
    # a CUDA-versioned nvJitLink symbol: an older libnvJitLink (a toolkit's, on LD_LIBRARY_PATH) is loaded first (failure-catalog B6)
    "torch.cuda_symbol_too_new": "ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: "
    "undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12",
    "torch.nccl_symbol": "ImportError: /opt/venv/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister",
    "torch.cudnn_sublibrary_mismatch": "RuntimeError: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH in F.conv2d on PyTorch nightly (cu130)",
    "torch.torchvision_cuda": "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA versions. PyTorch has CUDA "
    "Version=11.7 and torchvision has CUDA Version=11.8. Please reinstall the torchvision that matches your PyTorch install.",
    "torch.deserialize_without_cuda": "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
    "If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.",
    "conda.cpu_variant_for_cuda": "conda install pytorch-nightly cudatoolkit=10.0 -c pytorch\n\nThe following NEW packages will be INSTALLED:\n\n"
    "  cpu-only           pytorch/linux-64::cpu-only-1.0-0\n"
    "  pytorch-nightly    pytorch/linux-64::pytorch-nightly-1.2.0.dev20190805+cpu-py3.7_cpu_0",
    "torch.extension_abi": "ImportError: /usr/local/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
    "undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
    "torch.cuda_lib_missing": "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory",
    "torch.numpy_abi": "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may crash.",
    "torch.driver_too_old": "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
    "torch.no_kernel_image": "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "toolchain.libgomp": "OSError: libgomp.so.1: cannot open shared object file: No such file or directory",
    "system.shm": "RuntimeError: DataLoader worker (pid 11011) is killed by signal: Bus error.",
    # From the generalization corpus (tests/fixtures/triage_corpus), one thread each.
    "nccl.shm_segment": "include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-250a7cc850ba9298-0-1-3 (size 9637888)",
    "nccl.shm_permission": "node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied",
    "nccl.system_error": "RuntimeError: NCCL Error 2: unhandled system error",
    "nccl.p2p_workaround": "all_reduce_perf works fine only with those linked through SYS.\nSetting NCCL_P2P_DISABLE=1 did workaround but got really low speed.",
    "rocm.no_code_object": '"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"',
    "gpu.below_required_cc": "RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
    "torch.gpu_too_old": "Found GPU0 GeForce GTX 670M which is of cuda capability 2.1.\n    PyTorch no longer supports this GPU because it is too old.",
    "torch.supported_archs": "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.",
    "torch.cudnn_incompatible": "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 3, 2) but found runtime version (8, 0, 3).",
    "torch.system_cuda_lib_shadows": "\tlibnvJitLink.so.12 => /usr/local/cuda-12.1/lib64/libnvJitLink.so.12 (0x000070ddad800000)",
    "torch.torchaudio_symbol": "OSError: /opt/conda/lib/python3.7/site-packages/torchaudio/_torchaudio.so: undefined symbol: _ZNK2at6Tensor6deviceEv",
    "torch.windows_dll": 'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\venv\\lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.',
    "torch.cublas_path": "ValueError: libcublas.so.*[0-9] not found in the system path ['main.py', '']",
    "wsl.libcuda": "RuntimeError: Failed to dlopen libcuda.so",
    "system.libstdcxx": "ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by .../libtorch_python.so)",
    "build.toolkit_mismatch": "RuntimeError:\nThe detected CUDA version (12.4) mismatches the version that was used to compile\nPyTorch (11.8). Please make sure to use the same CUDA versions.",
    "build.cuda_home_missing": "op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)",
    "build.nvcc_arch": "nvcc fatal   : Unsupported gpu architecture 'compute_35'",
    "build.unknown_arch": "ValueError: Unknown CUDA arch (8.6) or GPU not supported",
    "docker.no_gpu_runtime": 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
    "docker.nvml_unknown": "Failed to initialize NVML: Unknown Error",
    "compile.dynamo_python": "RuntimeError: Dynamo is not supported on Python 3.12+",
    "compile.getuser_keyerror": "`getpass.getuser()` in PyTorch's inductor cache init calls `pwd.getpwuid()` which fails with `KeyError`",
    "torch.no_cuda_gpus": "RuntimeError: No CUDA GPUs are available",
    "triton.cc_cmd": "Failed to compile. cc_cmd",
}


def test_the_catalog_is_valid():
    assert validate(CATALOG) == []
    assert all(s.fix and s.cause and s.check and s.cause_id for s in CATALOG)


def test_a_check_hint_is_searched_only_within_that_check():
    # "numpy" or "802" alone mean something only inside torch's import error or CUDA's warning
    assert best("ImportError: numpy.core.multiarray failed to import", hints_for("torch.importable")).signature.id == "hint.torch_numpy"
    assert best("pip install numpy==1.26.4  # Error 802", CATALOG, scope="paste") is None
    assert hints_for("torch.cuda_available") and hints_for("no.such_check") == []
    assert not any(s.scope.startswith("check:") for s in SIGNATURES) and len(SIGNATURES) > 30


def test_validate_names_a_bad_scope():
    rows = (
        Signature("a.paste", "x", "c", "x", "a.b", "f"),
        Signature("a.check", "x", "c", "x", "a.b", "f", scope="check:a.b"),
        Signature("a.empty", "x", "c", "x", "a.b", "f", scope="check:"),
        Signature("a.typo", "x", "c", "x", "a.b", "f", scope="pastes"),
        Signature("a.probe", "x", "c", "x", "a.b", "f", scope="probe"),
    )
    problems = validate(rows)
    assert [p.split("'")[1] for p in problems] == ["a.empty", "a.typo", "a.probe"]
    assert "the engine's own" in problems[2] and validate(rows[4:], engine=True) == []


def test_validate_names_bad_entries():
    bad = (Signature("a.b", "(", "c", "x", "a.b", "f"), Signature("a.b", "x", "c", "x", "a.b", "f"), "text")
    problems = validate(bad)
    assert (
        any("bad pattern" in p for p in problems)
        and any("duplicate" in p for p in problems)
        and any("not an envdoctor" in p for p in problems)
    )


@pytest.mark.parametrize(("sig_id", "text"), sorted(REAL.items()))
def test_each_real_error_text_finds_its_signature_first(sig_id, text):
    found = best(text, SIGNATURES)
    assert found is not None and found.signature.id == sig_id, [f.signature.id for f in find(text, SIGNATURES)]
    assert "{" not in found.cause and found.evidence in text


def test_specific_before_generic_undefined_symbol():
    # A CUDA library's undefined symbol is mismatched wheels, an extension's is a build for another torch.
    assert best(REAL["torch.nvidia_lib_symbol"], SIGNATURES).signature.cause_id == "nvidia_pip_lib_mismatch"
    assert best(REAL["torch.cuda_symbol_too_new"], SIGNATURES).signature.cause_id == "system_lib_shadows_wheel"
    ext = best(REAL["torch.extension_abi"], SIGNATURES)
    assert ext.signature.cause_id == "extension_abi_mismatch" and "flash_attn_2_cuda" in ext.cause


def test_a_cpu_torch_under_an_extension_built_for_cuda():
    text = "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n    PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.1.0+cpu)"
    assert best(text, SIGNATURES).signature.cause_id == "cpu_torch_on_gpu_machine"


def test_a_pip_conflict_wrapped_over_lines():
    text = 'torch 2.5.1+cu121 requires triton==3.1.0; \nplatform_system == "Linux" and python_version < "3.13",\n\nbut you have triton 3.0.0+gite82dfd99 which is incompatible.'
    found = best(text, SIGNATURES)
    assert found.signature.id == "triton.pip_conflict" and "triton==3.1.0" in found.cause


def test_clean_text_finds_nothing():
    assert find("Collecting environment information...\nPyTorch version: 2.5.1+cu124\nIs debug build: False\n", SIGNATURES) == []


def _corpus():
    cases = tomllib.loads((CORPUS / "cases.toml").read_text())["case"]
    return [c for c in cases if c.get("confidence", "confirmed") == "confirmed"]


def test_no_signature_contradicts_an_established_cause_in_the_corpus():
    """Where a signature speaks about a real paste, it names the cause the thread established
    (signatures alone need not settle every case: the fact checks of triage do the rest)."""
    wrong = []
    for case in _corpus():
        text = (CORPUS / case["file"]).read_text(encoding="utf-8", errors="replace")
        found = best(text, SIGNATURES)
        if found is not None and case["cause_id"] != "not_environment" and found.signature.cause_id != case["cause_id"]:
            wrong.append((case["file"], case["cause_id"], found.signature.id))
    assert not wrong


def test_every_signature_names_a_check_that_exists():
    from envdoctor.core.registry import discover

    ids = {c.id for c in discover().checks}
    assert sorted({s.check for s in CATALOG} - ids) == []


def test_the_check_hints_and_the_probe_causes_are_rows_of_the_one_catalog():
    """torch's import/CUDA hints and a dead probe's causes are rows of the registry's one catalog,
    told apart by scope: valid, ids unique across it, a check's rows scoped to a check that
    exists, the probe's the engine's own."""
    from envdoctor.core.registry import discover

    reg = discover(plugins=False)
    assert validate(reg.signatures, engine=True) == [] and reg.problems == []
    ids = {c.id for c in reg.checks}
    scopes = {s.scope for s in reg.signatures}
    assert {"paste", "probe", "check:torch.importable", "check:torch.cuda_available"} <= scopes
    assert {s.scope[len("check:") :] for s in reg.signatures if s.scope.startswith("check:")} <= ids
    probe = scoped(reg.signatures, "probe")
    assert probe == list(engine.SIGNATURES) and {s.check for s in probe} == {"probe"} and reg.signatures[: len(probe)] == probe
    assert {f for s in reg.signatures for f in s.ask_facts} <= set(reg.facts)  # what an ask shows: facts that exist
    assert [s.id for s in hints_for("torch.importable")] == [s.id for s in reg.signatures if s.scope == "check:torch.importable"]
    assert (
        best("ImportError: libcudnn.so.9: cannot open shared object file", hints_for("torch.importable"))
        .fix.format(v="2.5.1")
        .count("torch==2.5.1")
    )
    assert best("Error 802: system not yet initialized", hints_for("torch.cuda_available")).signature.id == "hint.cuda_fabric_not_ready"


@pytest.mark.parametrize(
    ("output", "cause"),
    [
        ("x.c:1:10: fatal error: Python.h: No such file or directory", "Python.h is missing (install python3-dev)"),
        (
            "RuntimeError: CUDA error: an illegal memory access was encountered\nmore",
            "CUDA error: an illegal memory access was encountered",
        ),
        ("OSError: [Errno 28] No space left on device", "No space left on device"),
        ("ERROR: Bus error (core dumped)", "shared memory (/dev/shm) exhausted"),
        ("all fine", ""),
    ],
)
def test_a_dead_probe_is_explained_from_the_catalog(output, cause):
    from envdoctor.core.probe import explain_output

    assert explain_output(output) == cause


def _ids(text: str) -> list[str]:
    return [f.signature.id for f in find(text, SIGNATURES)]


def test_a_shadowed_or_doubled_nvidia_library_by_its_bare_undefined_symbol():
    # pytorch#152783, #157381: the symbol names the library (and CUDA minor) it needs; only an older copy lacks it
    bare = best("undefined symbol: __nvJitLinkCreate_12_8, version libnvJitLink.so.12", SIGNATURES)
    assert bare.signature.id == "torch.cuda_symbol_too_new" and "__nvJitLinkCreate_12_8" in bare.cause
    # pytorch#186591 (nvidia-nccl-cu12 beside -cu13): NCCL older than torch's, a second NCCL wheel
    assert best("Importing Pytorch results in undefined symbol ncclCommResume", SIGNATURES).signature.cause_id == "nvidia_pip_lib_mismatch"
    # near misses: a healthy ldd line, an unversioned CUPTI symbol, NCCL named without a missing symbol
    assert _ids("\tlibnvJitLink.so.12 => /venv/lib/python3.12/site-packages/nvidia/nvjitlink/lib/libnvJitLink.so.12 (0x7f00)") == []
    assert "torch.cuda_symbol_too_new" not in _ids("undefined symbol: cuptiActivityEnableDriverApi")
    assert _ids("ncclCommRegister is used when NCCL >= 2.19: NCCL version 2.21.5+cuda12.4") == []


def test_cudnn_sub_libraries_of_two_versions():
    assert best("cudnn_frontend: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", SIGNATURES).signature.cause_id == "system_lib_shadows_wheel"
    for other in ("CUDNN_STATUS_NOT_SUPPORTED", "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED", "cuDNN version: 90100"):
        assert "torch.cudnn_sublibrary_mismatch" not in _ids(other), other


def test_torchvision_built_for_another_cuda():
    # wrapped, and the "major" form of newer torchvision releases
    text = "RuntimeError: Detected that PyTorch and torchvision were compiled with different\nCUDA major versions. PyTorch has CUDA Version=12.1"
    assert best(text, SIGNATURES).signature.id == "torch.torchvision_cuda"
    audio = "Detected that PyTorch and TorchAudio were compiled with different CUDA versions"
    assert best(audio, SIGNATURES).signature.id == "torch.torchaudio_symbol"
    assert _ids("torchvision==0.16.0+cu118\ntorch==2.1.0+cu118") == []


def test_windows_dll_wrapped_retyped_or_in_prose():
    # kohya-ss/sd-scripts#1597: a log formatter wraps torch's message, in a German Windows
    wrapped = (
        "02:54:18-197331 ERROR    Could not load torch: [WinError 126] Das angegebene Modul wurde nicht gefunden. Error loading\n"
        '                         "P:\\AI\\kohya_ss\\venv\\lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.'
    )
    for text in (
        wrapped,
        "[Bug]: error loading fbgemm.dll",
        "fbgemm.dll missing while running benchmark.py",
        "libomp140.x86_64.dll  MISSING",
    ):
        assert best(text, SIGNATURES).signature.id == "torch.windows_dll", text
    for healthy in (
        "C:\\venv\\Lib\\site-packages\\torch\\lib\\fbgemm.dll",
        "copied fbgemm.dll and it loads fine",
        "error loading config.json",
    ):
        assert _ids(healthy) == [], healthy


def test_a_cpu_build_shown_by_torch_load_or_a_conda_plan():
    assert best(REAL["torch.deserialize_without_cuda"], SIGNATURES).signature.cause_id == "cpu_torch_on_gpu_machine"
    assert _ids("model = torch.load(path, map_location=torch.device('cpu'))\ntorch.cuda.is_available() is False") == []
    plan = best("conda install pytorch cudatoolkit=11.3 -c pytorch\n  pytorch  1.11.0  py3.8_cpu_0  pytorch", SIGNATURES)
    assert plan.signature.id == "conda.cpu_variant_for_cuda" and "py3.8_cpu_0" in plan.cause
    # a CPU variant nobody asked CUDA of is a CPU machine's healthy install; a CUDA variant beside cudatoolkit is healthy too
    cpu_box = "cpuonly                   2.0        0    pytorch\npytorch                   1.11.0     py3.8_cpu_0    pytorch\npytorch-mutex  1.0  cpu  pytorch"
    assert _ids(cpu_box) == []
    assert (
        _ids(
            "cudatoolkit               11.8.0     h6a678d5_0\npytorch                   2.0.1      py3.10_cuda11.8_cudnn8.7.0_0    pytorch"
        )
        == []
    )
