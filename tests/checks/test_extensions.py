"""torch.extension_abi: real C extensions compiled here against the venv's libc10, loaded by the
real probe after the real CPU torch: a missing c10 symbol, a good one, and one that segfaults."""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from envdoctor import Status
from envdoctor.core.probe import ProbeClient
from envdoctor.testing import gather, run_check
from envdoctor_checks import _elf, extensions
from envdoctor_checks.packages import package_dir
from tests.conftest import run_cli

TORCH_LIB = os.path.join(package_dir("torch"), "lib")
EXT = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
TORCH_2_13 = {"name": "torch", "version": "2.13.0+cpu", "requires": []}

MODULE = """
#include <Python.h>
%(decl)s
static PyObject *run(PyObject *self, PyObject *args) { %(use)s Py_RETURN_NONE; }
static PyMethodDef methods[] = {{"run", run, METH_NOARGS, ""}, {0}};
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "_C", 0, -1, methods};
PyMODINIT_FUNC PyInit__C(void) { %(init)s return PyModule_Create(&def); }
"""
# c10 exports UndefinedTensorImpl::_singleton in every torch 2.x; NotARealSymbol in none.
GOOD = {
    "decl": "extern char _ZN3c1019UndefinedTensorImpl10_singletonE;",
    "use": "(void)&_ZN3c1019UndefinedTensorImpl10_singletonE;",
    "init": "",
}
MISSING = {"decl": "extern void _ZN3c1014NotARealSymbolEv(void);", "use": "_ZN3c1014NotARealSymbolEv();", "init": ""}
CRASH = {"decl": "extern char _ZN3c1019UndefinedTensorImpl10_singletonE;", "use": "", "init": "*(volatile int *)0 = 0;"}

needs_gcc = pytest.mark.skipif(
    not shutil.which("gcc") or not os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")),
    reason="needs gcc and Python.h to build the fake extensions",
)


def make_extension(site: Path, dist: str, package: str, parts: dict, version: str = "1.0", link: tuple[str, ...] = ()) -> Path:
    """An installed distribution ``dist`` whose package imports its own _C, linked against libc10."""
    pkg = site / package
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import _C\n")
    (site / "src.c").write_text(MODULE % parts)
    so = pkg / f"_C{EXT}"
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-o", str(so), str(site / "src.c"), f"-I{sysconfig.get_paths()['include']}"]
        + [f"-L{TORCH_LIB}", "-Wl,--no-as-needed", "-lc10", *link, "-Wl,--allow-shlib-undefined"],
        check=True,
        capture_output=True,
    )
    (site / "src.c").unlink()
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\nRequires-Dist: torch\n")
    (info / "top_level.txt").write_text(package + "\n")
    (info / "RECORD").write_text(f"{package}/__init__.py,,\n{package}/_C{EXT},,\n{info.name}/METADATA,,\n")
    return so


def judge(site: Path, torch: dict = TORCH_2_13, torch_build: dict | None = None):
    """Scan ``site`` as the orchestrator does, load through a real probe, judge."""
    found = extensions.scan([str(site)])
    client = ProbeClient(extra_path=[str(site)])
    try:
        loads = gather(extensions.extension_loads, probe=client, torch_extensions=found, torch_runtime={"import_error": None})
    finally:
        client.close()
    dists = {"torch": torch, **{e["key"]: {"name": e["name"], "version": e["version"], "requires": ["torch"]} for e in found}}
    return found, run_check(extensions.extension_abi, dists=dists, torch_build=torch_build, torch_extensions=found, extension_loads=loads)


def test_elf_reads_what_torch_links():
    assert "libc10.so" in _elf.needed(os.path.join(TORCH_LIB, "libtorch_cpu.so"))
    assert _elf.links_torch(_elf.needed(os.path.join(TORCH_LIB, "libtorch_cpu.so"))) == ["libc10.so"]
    assert _elf.needed(__file__) is None  # not an ELF file


@needs_gcc
@pytest.mark.slow
def test_missing_c10_symbol_fails_naming_the_distribution_and_the_demangled_symbol(tmp_path):
    make_extension(tmp_path, "fake-ext", "fakeext", MISSING, version="1.0+cu122torch2.3")
    found, row = judge(tmp_path)
    assert [e["key"] for e in found] == ["fake-ext"] and found[0]["modules"] == ["fakeext"]
    assert row.status is Status.FAIL
    assert "fake-ext 1.0+cu122torch2.3 (built for torch 2.3)" in row.message
    assert "import fakeext fails" in row.message and f"_C{EXT}: undefined symbol" in row.message
    if shutil.which("c++filt"):
        assert "c10::NotARealSymbol() (_ZN3c1014NotARealSymbolEv)" in row.message
    else:
        assert "_ZN3c1014NotARealSymbolEv" in row.message
    assert "pip install --no-build-isolation --no-cache-dir --force-reinstall fake-ext" in row.hint


@needs_gcc
@pytest.mark.slow
def test_extension_built_against_this_torch_passes(tmp_path):
    make_extension(tmp_path, "fake-ext", "fakeext", GOOD)
    _, row = judge(tmp_path)
    assert row.status is Status.PASS, row.message
    assert "fake-ext 1.0: import fakeext loads its 1 torch-linked object(s)" in row.message


@needs_gcc
@pytest.mark.slow
def test_a_segfault_at_import_does_not_hide_the_others(tmp_path):
    make_extension(tmp_path, "crash-ext", "crashext", CRASH)
    make_extension(tmp_path, "bad-ext", "badext", MISSING)
    make_extension(tmp_path, "good-ext", "goodext", GOOD)
    _, row = judge(tmp_path)
    by_name = {i.name: i for i in row.items}
    assert row.status is Status.FAIL
    assert by_name["crash-ext"].status is Status.FAIL and "segmentation fault" in by_name["crash-ext"].message.lower()
    assert "while importing crashext" in by_name["crash-ext"].message
    assert by_name["bad-ext"].status is Status.FAIL and "NotARealSymbol" in by_name["bad-ext"].message
    assert by_name["good-ext"].status is Status.PASS


@needs_gcc
@pytest.mark.slow
def test_an_object_the_import_does_not_load_is_checked_by_its_symbols(tmp_path):
    # torchvision's import swallows a _C that fails to load; the symbol check still names it.
    make_extension(tmp_path, "lazy-ext", "lazyext", MISSING)
    (tmp_path / "lazyext" / "__init__.py").write_text("try:\n    from . import _C\nexcept ImportError:\n    _C = None\n")
    _, row = judge(tmp_path)
    assert row.status is Status.FAIL
    assert f"lazyext/_C{EXT} needs c10::NotARealSymbol()" in row.message or "needs _ZN3c1014NotARealSymbolEv" in row.message


def _torch_has_cuda_libs() -> bool:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    return bool(
        spec and spec.submodule_search_locations and (Path(list(spec.submodule_search_locations)[0]) / "lib" / "libtorch_cuda.so").exists()
    )


@needs_gcc
@pytest.mark.skipif(_torch_has_cuda_libs(), reason="this torch is a CUDA build: it has libtorch_cuda.so (seen on the GPU machine)")
@pytest.mark.slow
def test_a_cuda_build_beside_a_cpu_torch_names_the_torch_library_it_lacks(tmp_path):
    # Seen here with torchvision 0.29.1 from PyPI (a CUDA wheel) beside CPU torch 2.13.0.
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "empty.c").write_text("int envdoctor_stub;\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(stub / "libtorch_cuda.so"), str(stub / "empty.c")], check=True)
    site = tmp_path / "site"
    make_extension(site, "cuda-ext", "cudaext", GOOD, link=(f"-L{stub}", "-ltorch_cuda"))
    _, row = judge(site)
    assert row.status is Status.FAIL and "libtorch_cuda.so" in row.message
    assert f"cudaext/_C{EXT} needs libtorch_cuda.so, which this torch does not have" in row.message


@pytest.mark.slow
def test_the_cli_reports_a_broken_extension_on_pythonpath(tmp_path):
    make_extension(tmp_path, "fake-ext", "fakeext", MISSING)
    done = run_cli("check", "--select", "torch.extension_abi", "--format", "json", env={"PYTHONPATH": str(tmp_path)})
    import json

    row = next(r for r in json.loads(done.stdout)["results"] if r["id"] == "torch.extension_abi")
    assert row["status"] == "fail" and "fake-ext" in row["message"] and "NotARealSymbol" in done.stdout, done.stdout + done.stderr


@pytest.mark.slow
def test_a_healthy_machine_has_no_extension_to_complain_about():
    # This venv: CPU torch, no torchvision. torch itself is not an extension of itself.
    assert all(e["key"] != "torch" for e in extensions.scan())
    assert run_check(extensions.extension_abi, dists={"torch": TORCH_2_13}, torch_extensions=[], extension_loads={}).status is Status.SKIP


def test_metadata_only_when_nothing_could_be_loaded():
    dists = {"torch": TORCH_2_13, "flash-attn": {"name": "flash-attn", "version": "2.5.8+cu122torch2.3", "requires": ["torch"]}}
    row = run_check(extensions.extension_abi, dists=dists)
    assert row.status is Status.FAIL and "cu122torch2.3 build" in row.message
    assert "--no-build-isolation" in row.hint


def _flash(version: str) -> dict:
    return {"name": "flash-attn", "version": version, "requires": ["torch"]}


@pytest.mark.parametrize(
    ("wheel", "torch", "verdict"),
    [
        # flash-attn's release wheels: one per CUDA major, torch release and C++ ABI
        ("2.5.8+cu122torch2.3cxx11abiFALSE", "2.3.1+cu121", ""),  # a cu12 wheel serves every CUDA 12.x torch
        ("2.5.8+cu122torch2.3cxx11abiFALSE", "2.3.1", ""),
        ("2.5.5+cu118torch2.2cxx11abiTRUE", "2.2.0", "old ABI"),  # pytorch.org's torch <= 2.6: the old ABI
        ("2.7.4+cu12torch2.7cxx11abiFALSE", "2.7.1+cu126", "C++11 ABI"),  # from 2.7: the C++11 ABI
        ("2.7.4+cu12torch2.7cxx11abiTRUE", "2.7.1+cu126", ""),
        ("2.5.5+cu118torch2.2cxx11abiFALSE", "2.2.0+cu121", "is a cu121 build"),
        ("2.5.8+cu122torch2.3cxx11abiFALSE", "2.4.0+cu121", "torch 2.4.0+cu121 is installed"),
        ("2.5.8+cu122torch2.3cxx11abiTRUE", "2.3.0a0+6ddf5cf", ""),  # an NGC / source torch: its own ABI, not judged
    ],
)
def test_a_release_wheel_tag_is_judged_by_its_parts(wheel, torch, verdict):
    problem = extensions.metadata_problem(_flash(wheel), torch)
    assert (verdict in problem) if verdict else problem == "", problem


def test_a_pasted_wheel_name_with_the_wrong_abi_is_named_an_extension_mismatch():
    from envdoctor.core.registry import discover
    from envdoctor.core.triage import triage
    from envdoctor.sources import read_paste

    paste = (
        "PyTorch version: 2.3.1+cu121\n"
        "$ pip install flash_attn-2.5.8+cu122torch2.3cxx11abiTRUE-cp310-cp310-linux_x86_64.whl\n"
        "Successfully installed flash-attn-2.5.8\n"
    )
    facts = read_paste(paste).facts
    assert facts["dists"]["flash-attn"]["version"] == "2.5.8+cu122torch2.3cxx11abiTRUE"
    top = triage(discover(), read_paste(paste), paste).causes[0]
    assert top.is_problem and top.cause_id == "extension_abi_mismatch" and "cxx11abiFALSE" in top.summary
    healthy = paste.replace("abiTRUE", "abiFALSE")
    assert not triage(discover(), read_paste(healthy), healthy).found


def _cu12_extension(tmp_path: Path, loadable: bool) -> Path:
    """A site with an extension built for CUDA 12: it links libcudart.so.12 (a stand-in with that
    soname), found at load time only when ``loadable`` (an rpath to it)."""
    where = tmp_path / "cuda12"
    where.mkdir()
    (where / "c.c").write_text("int cudart_stub(void) { return 0; }\n")
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-o", str(where / "libcudart.so.12"), str(where / "c.c"), "-Wl,-soname,libcudart.so.12"], check=True
    )
    site = tmp_path / "site"
    site.mkdir()
    link = (f"-L{where}", "-l:libcudart.so.12", *([f"-Wl,-rpath,{where}"] if loadable else []))
    make_extension(site, "cu12-ext", "cu12ext", GOOD, link=link)
    return site


def _under(torch_cuda: str) -> dict:
    """A pasted-shape torch and its build for ``torch_cuda`` ('13.0')."""
    version = f"2.11.0+cu{torch_cuda.replace('.', '')}"
    return {
        "torch": {"name": "torch", "version": version, "requires": []},
        "torch_build": {"version": version, "kind": "cuda", "cuda": torch_cuda},
    }


@needs_gcc
@pytest.mark.slow
def test_an_extension_linked_with_another_cuda_major_is_named(tmp_path):
    # Built for CUDA 12 beside a CUDA 13 torch: where CUDA 12's runtime is absent it fails to load,
    # and the check says which CUDA it was built for.
    site = _cu12_extension(tmp_path, loadable=False)
    found, row = judge(site, **_under("13.0"))
    assert found[0]["objects"][0]["cuda"] == ["libcudart.so.12"]
    assert row.status is Status.FAIL and "needs libcudart.so.12 (CUDA 12)" in row.message and "CUDA 13 build" in row.message, row.message
    assert row.details["cause_id"] == "extension_abi_mismatch"
    # the same object under a CUDA 12 torch: no CUDA complaint (its load error stays)
    _, row = judge(site, **_under("12.8"))
    assert "CUDA 12)" not in row.message and "cannot open shared object file" in row.message, row.message


@needs_gcc
@pytest.mark.slow
def test_an_extension_of_another_cuda_that_loads_is_a_warning(tmp_path):
    _, row = judge(_cu12_extension(tmp_path, loadable=True), **_under("13.0"))
    assert row.status is Status.WARN and "loads here" in row.message, row.message


def test_a_paste_naming_another_cuda_majors_runtime():
    from envdoctor.core.registry import discover
    from envdoctor.core.triage import triage
    from envdoctor.sources import read_paste

    reg = discover()

    def top(paste: str) -> str:
        t = triage(reg, read_paste(paste), paste)
        return t.causes[0].cause_id if t.causes and t.causes[0].is_problem else "-"

    vllm = "ImportError: /venv/lib/python3.12/site-packages/vllm/_C.abi3.so: libcudart.so.13: cannot open shared object file: No such file or directory"
    assert top("PyTorch version: 2.9.1+cu128\n" + vllm) == "extension_abi_mismatch"  # a CUDA 13 vllm beside a CUDA 12 torch
    assert top("PyTorch version: 2.11.0+cu130\n" + vllm) == "nvidia_lib_missing"  # the same major: the runtime itself is missing
    assert top(vllm) == "nvidia_lib_missing"  # no torch to compare with: the text alone does not say
    own = "ImportError: /venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: libcudart.so.13: cannot open shared object file"
    assert top("PyTorch version: 2.9.1+cu128\n" + own) == "nvidia_lib_missing"  # torch's own library is no package's
