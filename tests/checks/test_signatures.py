"""The error-signature catalog: every signature names a real error text, specific before generic."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib

from envdoctor.core.signatures import Signature, best, find, validate
from envdoctor_checks.signatures import SIGNATURES

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
    "torch.nvidia_lib_symbol": "ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: "
    "undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12",
    "torch.extension_abi": "ImportError: /usr/local/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
    "undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
    "torch.cuda_lib_missing": "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory",
    "torch.numpy_abi": "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may crash.",
    "torch.driver_too_old": "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
    "torch.no_kernel_image": "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "toolchain.libgomp": "OSError: libgomp.so.1: cannot open shared object file: No such file or directory",
    "system.shm": "RuntimeError: DataLoader worker (pid 11011) is killed by signal: Bus error.",
}


def test_the_catalog_is_valid():
    assert validate(SIGNATURES) == []
    assert all(s.fix and s.cause and s.check and s.cause_id for s in SIGNATURES)


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
    ext = best(REAL["torch.extension_abi"], SIGNATURES)
    assert ext.signature.cause_id == "extension_abi_mismatch" and "flash_attn_2_cuda" in ext.cause


def test_a_cpu_torch_under_an_extension_built_for_cuda():
    text = "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n    PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.1.0+cpu)"
    assert best(text, SIGNATURES).signature.cause_id == "cpu_torch_on_gpu_machine"


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
