"""Toolchain checks: compilers picked from real PATHs, a fake nvcc, Python.h, libgomp, ninja."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from envdoctor import Status
from envdoctor.testing import Unavailable, gather, run_check
from envdoctor_checks import toolchain, triton

CUDA_BUILD = {"version": "2.11.0+cu130", "kind": "cuda", "cuda": "13.0", "location": "/nonexistent/torch"}
TRITON = {"location": "/x/triton", "version": "3.6.0", "nvidia_backend": True, "bundled": {}}


def write_script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


def python_only_path(tmp_path: Path) -> str:
    """A PATH holding only the Python interpreter: no C or C++ compiler."""
    d = tmp_path / "bin"
    d.mkdir()
    (d / "python3").symlink_to(sys.executable)
    return str(d)


# ---------------------------------------------------------------- C compiler for Triton (A3)


def test_no_compiler_on_path(tmp_path):
    cc = gather(toolchain.c_compiler, env={"PATH": python_only_path(tmp_path)})
    assert cc["path"] is None and cc["problem"] == "no gcc or clang on PATH"
    r = run_check(triton.c_compiler_check, c_compiler=cc, triton_pkg=TRITON)
    assert r.status is Status.FAIL and "no gcc or clang" in r.message and "apt-get install gcc" in r.hint


def test_cc_pointing_to_a_directory(tmp_path):
    cc = gather(toolchain.c_compiler, env={"PATH": "/usr/bin:/bin", "CC": str(tmp_path)})
    r = run_check(triton.c_compiler_check, c_compiler=cc, triton_pkg=TRITON)
    assert r.status is Status.FAIL and f"CC points to {tmp_path}, a directory" in r.message and r.hint.startswith("export CC=")


def test_cc_problems_triton_would_hit(tmp_path):
    env = {"PATH": python_only_path(tmp_path)}
    assert "is set but empty" in gather(toolchain.c_compiler, env={**env, "CC": ""})["problem"]
    assert "command line" in gather(toolchain.c_compiler, env={**env, "CC": "ccache gcc"})["problem"]
    assert "not an executable on PATH" in gather(toolchain.c_compiler, env={**env, "CC": "gcc-99"})["problem"]
    broken = write_script(tmp_path / "gcc-broken", "echo 'gcc: fatal error: cannot execute cc1' >&2; exit 4")
    cc = gather(toolchain.c_compiler, env={**env, "CC": str(broken)})
    assert "does not run" in cc["problem"] and "cannot execute cc1" in cc["problem"]


def test_compiler_found_on_path_in_tritons_order(tmp_path):
    d = tmp_path / "bin"
    write_script(d / "clang", "echo 'clang version 18.1.0'")
    cc = gather(toolchain.c_compiler, env={"PATH": str(d)})
    assert cc["path"] == str(d / "clang") and cc["version"] == "clang version 18.1.0"
    write_script(d / "gcc", "echo 'gcc (GCC) 13.2.0'")
    cc = gather(toolchain.c_compiler, env={"PATH": str(d)})
    assert cc["path"] == str(d / "gcc")  # gcc is preferred over clang
    r = run_check(triton.c_compiler_check, c_compiler=cc, triton_pkg=TRITON)
    assert r.status is Status.PASS and "gcc (GCC) 13.2.0" in r.message


def test_real_compiler_here():
    cc = gather(toolchain.c_compiler, env=dict(os.environ))
    if cc["path"]:
        assert cc["problem"] == "" and cc["version"]


# ---------------------------------------------------------------- Python.h (A2)


def test_python_h():
    info = {"version": "3.12.3", "version_info": [3, 12, 3], "include_dir": "/usr/include/python3.12", "python_h": False}
    r = run_check(toolchain.python_h, python_info=info, dists={"torch": {}, "triton": {}})
    assert r.status is Status.FAIL and "Python.h: No such file or directory" in r.message and "Triton's launcher" in r.message
    assert r.hint.startswith("apt-get install python3.12-dev")
    assert run_check(toolchain.python_h, python_info={**info, "python_h": True}, dists={"torch": {}}).status is Status.PASS
    assert run_check(toolchain.python_h, python_info=info, dists={}).status is Status.SKIP


# ---------------------------------------------------------------- nvcc vs torch's CUDA (B13)


def fake_cuda(root: Path, release: str) -> Path:
    write_script(root / "bin" / "nvcc", f"echo 'Cuda compilation tools, release {release}, V{release}.131'")
    return root


def test_fake_nvcc_major_mismatch(tmp_path):
    home = fake_cuda(tmp_path / "cuda-12.4", "12.4")
    tk = gather(toolchain.cuda_toolkit, env={"CUDA_HOME": str(home), "PATH": "/nonexistent"})
    assert tk["version"] == "12.4" and tk["source"] == "CUDA_HOME"
    r = run_check(toolchain.nvcc, torch_build=CUDA_BUILD, cuda_toolkit=tk)
    assert r.status is Status.WARN
    assert "The detected CUDA version (12.4) mismatches" in r.message and "prebuilt wheels are unaffected" in r.message
    assert "CUDA_HOME=/usr/local/cuda-13.0" in r.hint


def test_nvcc_found_on_path_and_minor_mismatch(tmp_path):
    home = fake_cuda(tmp_path / "cuda-13.1", "13.1")
    tk = gather(toolchain.cuda_toolkit, env={"PATH": str(home / "bin")})
    assert tk["home"] == str(home) and tk["source"].startswith("nvcc on PATH")
    r = run_check(toolchain.nvcc, torch_build=CUDA_BUILD, cuda_toolkit=tk)
    assert r.status is Status.PASS and "minor versions differ" in r.message


def test_version_json_when_nvcc_prints_nothing(tmp_path):
    home = tmp_path / "cuda"
    write_script(home / "bin" / "nvcc", "exit 0")
    (home / "version.json").write_text('{"cuda": {"name": "CUDA SDK", "version": "13.0.2"}}')
    assert gather(toolchain.cuda_toolkit, env={"CUDA_HOME": str(home)})["version"] == "13.0"


def test_cuda_home_without_nvcc(tmp_path):
    tk = gather(toolchain.cuda_toolkit, env={"CUDA_HOME": str(tmp_path)})
    r = run_check(toolchain.nvcc, torch_build=CUDA_BUILD, cuda_toolkit=tk)
    assert r.status is Status.WARN and "does not exist" in r.message


def test_no_toolkit_and_cpu_torch():
    r = run_check(toolchain.nvcc, torch_build=CUDA_BUILD, cuda_toolkit=Unavailable("no CUDA toolkit"))
    assert r.status is Status.PASS and "only needed to build CUDA extensions" in r.message
    r = run_check(toolchain.nvcc, torch_build={**CUDA_BUILD, "kind": "cpu", "cuda": None})
    assert r.status is Status.SKIP and "cpu build" in r.message


# ---------------------------------------------------------------- libgomp (B12), ninja


def test_libgomp(tmp_path):
    torch_dir = tmp_path / "site" / "torch"
    (torch_dir / "lib").mkdir(parents=True)
    build = {**CUDA_BUILD, "location": str(torch_dir)}
    empty = {"path": "/sbin/ldconfig", "libs": {}}
    env = {"CONDA_PREFIX": str(tmp_path / "noconda")}
    r = run_check(toolchain.libgomp, torch_build=build, env=env, ldconfig=empty)
    if not os.path.exists(os.path.join(sys.prefix, "lib", "libgomp.so.1")):
        assert r.status is Status.FAIL and "libgomp.so.1: cannot open shared object file" in r.message and "libgomp1" in r.hint
    r = run_check(toolchain.libgomp, torch_build=build, env=env, ldconfig={"libs": {"libgomp.so.1": ["/usr/lib/libgomp.so.1"]}})
    assert r.status is Status.PASS and "linker cache" in r.message
    (tmp_path / "site" / "torch.libs").mkdir()
    (tmp_path / "site" / "torch.libs" / "libgomp-a34b3233.so.1.0.0").write_bytes(b"")
    r = run_check(toolchain.libgomp, torch_build=build, env=env, ldconfig=empty)
    assert r.status is Status.PASS and "bundles" in r.message


def test_ninja(tmp_path):
    write_script(tmp_path / "ninja", "echo 1.11.1")
    r = run_check(toolchain.ninja, env={"PATH": str(tmp_path)}, dists={})
    assert r.status is Status.PASS and "ninja 1.11.1" in r.message
    r = run_check(toolchain.ninja, env={"PATH": "/nonexistent"}, dists={})
    assert r.status is Status.PASS and "only needed to build" in r.message


def test_ninja_missing_where_an_installed_package_requires_it_warns_with_pip():
    dists = {"deepspeed": {"name": "DeepSpeed", "version": "0.16.0", "requires": ["ninja", "numpy"]}}
    py = {"executable": "/v/bin/python"}
    r = run_check(toolchain.ninja, env={"PATH": "/nonexistent"}, dists=dists, python_info=py)
    assert r.status is Status.WARN and "DeepSpeed requires it" in r.message and "Ninja is required" in r.message
    assert [f.argv for f in r.fixes] == [("/v/bin/python", "-m", "pip", "install", "ninja")]
    optional = {"x": {"name": "x", "version": "1", "requires": ['ninja; extra == "build"']}}
    assert run_check(toolchain.ninja, env={"PATH": "/nonexistent"}, dists=optional, python_info=py).status is Status.PASS
