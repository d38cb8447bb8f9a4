"""The native toolchain torch and Triton reach for at run time and for extension builds.

Compilers are picked the way their users pick them: Triton's launcher build takes ``CC`` as
one program, else ``gcc``, else ``clang`` (``triton/runtime/build.py``); Inductor's C++ backend
takes ``CXX``, else ``g++`` (``torch._inductor.config.cpp.cxx``, no clang++ fallback on Linux).
``torch.utils.cpp_extension`` finds CUDA through ``CUDA_HOME``/``CUDA_PATH``, then the ``nvcc``
on ``PATH``, then ``/usr/local/cuda``, and compares its release with torch's CUDA.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import stat
import sys
from collections.abc import Mapping

from envdoctor import TRITON_DISTS, Unavailable, check, env_fix, fact, fail, last_line, ok, pip_fix, skip, warn
from envdoctor import run_command as run
from envdoctor_checks._fixes import system_package
from envdoctor_checks.packages import canonical, marker_applies, requirements
from envdoctor_checks.triton import major_minor, parse_release


def resolve_program(value: str, path_var: str | None) -> tuple[str | None, str]:
    """(absolute path, problem) for a program named the way ``subprocess`` would run it."""
    if not value.strip():
        return None, "is set but empty"
    if " " in value.strip() and not os.path.exists(value):
        # Both Triton and Inductor pass it as ONE argv element: "ccache gcc" is not a program.
        return None, f"is '{value}', a command line, but it is run as one program name"
    if os.sep in value:
        path = value
    else:
        found = shutil.which(value, path=path_var)
        if found is None:
            where = (
                "a directory" if any(os.path.isdir(os.path.join(d, value)) for d in (path_var or "").split(os.pathsep) if d) else "missing"
            )
            return None, f"names '{value}', which is not an executable on PATH ({where})"
        path = found
    if not os.path.exists(path):
        return None, f"points to {path}, which does not exist"
    if os.path.isdir(path):
        return None, f"points to {path}, a directory, not the compiler executable in it"
    if not stat.S_ISREG(os.stat(path).st_mode) or not os.access(path, os.X_OK):
        return None, f"points to {path}, which is not an executable file"
    return path, ""


def program_version(path: str) -> tuple[str, str]:
    """(first line of ``--version``, problem): a compiler that cannot even say its version is broken."""
    done = run([path, "--version"], timeout=15)
    if not done.ok:
        return "", done.describe()
    out = (done.stdout or done.stderr).strip().splitlines()
    return (out[0].strip()[:200] if out else ""), ""


def pick_compiler(env: Mapping[str, str], var: str, search: tuple[str, ...]) -> dict:
    path_var = env.get("PATH", "")
    if var in env:
        # os.environ.get(var) is used as-is when set, even when empty.
        path, problem = resolve_program(env[var], path_var)
        entry = {"source": var, "value": env[var], "path": path, "problem": f"{var} {problem}" if problem else ""}
    else:
        path = next((p for p in (shutil.which(n, path=path_var) for n in search) if p), None)
        problem = "" if path else f"no {' or '.join(search)} on PATH"
        entry = {"source": "PATH", "value": None, "path": path, "problem": problem}
    entry["version"] = ""
    if entry["path"]:
        entry["version"], vproblem = program_version(entry["path"])
        if vproblem:
            entry["problem"] = f"{entry['path']} does not run: {vproblem}"
    return entry


@fact("c_compiler", ask="the output of `gcc --version` (or `cc --version`) and the value of CC")
def c_compiler(env) -> dict:
    """The C compiler Triton's launcher build would use: CC, else gcc, else clang."""
    return pick_compiler(env, "CC", ("gcc", "clang"))


@fact("cxx_compiler", ask="the output of `g++ --version` and the value of CXX")
def cxx_compiler(env) -> dict:
    """The C++ compiler CPU Inductor would use: CXX, else g++ (torch._inductor.config.cpp.cxx)."""
    return pick_compiler(env, "CXX", ("g++",))


# ---------------------------------------------------------------- Python.h (A2, and Inductor's C++ kernels)


@check("toolchain.python_h", tags=("build",))
def python_h(python_info, dists, os_release=None):
    """Python.h is present for the code torch.compile and Triton build at run time"""
    users = []
    if "torch" in dists:
        users.append("Inductor's C++ kernels (#include <Python.h>)")
    if any(n in dists for n in TRITON_DISTS):
        users.append("Triton's launcher")
    if not users:
        return skip("neither torch nor triton is installed")
    inc = python_info.get("include_dir")
    if python_info.get("python_h"):
        return ok(f"{os.path.join(inc, 'Python.h')} (needed by {' and '.join(users)})")
    v = python_info.get("version_info") or [3, 0]
    return fail(
        f"Python.h is missing from {inc}: {' and '.join(users)} fail with 'fatal error: Python.h: No such file or directory'",
        f"apt-get install python{v[0]}.{v[1]}-dev   # or: dnf install python3-devel; or use a Python that ships its headers",
        fixes=system_package(os_release, apt=f"python{v[0]}.{v[1]}-dev", dnf="python3-devel"),
    )


# ---------------------------------------------------------------- nvcc vs torch's CUDA (B13)


@fact("cuda_toolkit", ask="the output of `nvcc --version`")
def cuda_toolkit(env) -> dict:
    """The CUDA toolkit torch.utils.cpp_extension would build with, and its release."""
    home = env.get("CUDA_HOME") or env.get("CUDA_PATH")
    source = "CUDA_HOME" if env.get("CUDA_HOME") else "CUDA_PATH"
    if not home:
        nvcc = shutil.which("nvcc", path=env.get("PATH", ""))
        if nvcc:
            home, source = os.path.dirname(os.path.dirname(nvcc)), f"nvcc on PATH ({nvcc})"
        elif os.path.exists("/usr/local/cuda"):
            home, source = "/usr/local/cuda", "default /usr/local/cuda"
        else:
            raise Unavailable("no CUDA toolkit (no CUDA_HOME, no nvcc on PATH, no /usr/local/cuda)")
    nvcc = os.path.join(home, "bin", "nvcc")
    out = {"home": home, "source": source, "nvcc": nvcc, "version": None, "problem": ""}
    if not os.path.isfile(nvcc):
        out["problem"] = f"{nvcc} does not exist"
        return out
    done = run([nvcc, "--version"], timeout=20)
    out["version"] = parse_release(done.stdout) if done.ok else None
    if out["version"] is None:
        try:
            with open(os.path.join(home, "version.json"), encoding="utf-8") as f:
                v = json.load(f).get("cuda", {}).get("version")
            out["version"] = ".".join(str(v).split(".")[:2]) if v else None
        except (OSError, ValueError, AttributeError):
            pass
    if out["version"] is None:
        out["problem"] = f"{nvcc} --version gave no release ({done.describe()})"
    return out


@check("toolchain.nvcc", tags=("build",))
def nvcc(torch_build, cuda_toolkit=None):
    """nvcc matches torch's CUDA (for building CUDA extensions from source)"""
    if torch_build.get("kind") != "cuda" or not torch_build.get("cuda"):
        return skip(f"torch {torch_build.get('version')} is a {torch_build.get('kind')} build; nvcc only matters for CUDA extensions")
    tc = torch_build["cuda"]
    if not cuda_toolkit:
        return ok(f"no CUDA toolkit found; only needed to build CUDA extensions from source (torch is built with CUDA {tc})")
    where = f"{cuda_toolkit['home']} (from {cuda_toolkit['source']})"
    if cuda_toolkit["problem"]:
        return warn(
            f"the CUDA toolkit at {where} is unusable: {cuda_toolkit['problem']}; building CUDA extensions from source will fail",
            f"export CUDA_HOME=/usr/local/cuda-{tc}   # a toolkit with bin/nvcc, matching torch's CUDA {tc}",
            fixes=[env_fix("CUDA_HOME", f"/usr/local/cuda-{tc}")],
        )
    have, want = major_minor(cuda_toolkit["version"]), major_minor(tc)
    details = {"nvcc": cuda_toolkit["version"], "torch_cuda": tc, "cuda_home": cuda_toolkit["home"]}
    if have and want and have[0] != want[0]:
        return warn(
            f"nvcc {cuda_toolkit['version']} at {where} but torch is built with CUDA {tc}: building CUDA extensions from "
            f"source (flash-attn, apex, ...) fails with 'The detected CUDA version ({cuda_toolkit['version']}) mismatches the "
            "version that was used to compile PyTorch'; prebuilt wheels are unaffected",
            f"export CUDA_HOME=/usr/local/cuda-{tc}   # install it with e.g. apt-get install cuda-toolkit-{tc.replace('.', '-')}",
            details=details,
            fixes=[env_fix("CUDA_HOME", f"/usr/local/cuda-{tc}")],
        )
    note = "" if have == want else " (minor versions differ: torch only warns, extension builds work)"
    return ok(f"nvcc {cuda_toolkit['version']} at {where}; torch CUDA {tc}{note}", details=details)


# ---------------------------------------------------------------- libgomp (B12), ninja


@check("toolchain.libgomp", tags=("build",))
def libgomp(torch_build, env, ldconfig=None, os_release=None, interpreter=None):
    """libgomp.so.1 (OpenMP) is available to torch"""
    loc = torch_build["location"]
    bundled = sorted(
        glob.glob(os.path.join(loc, "lib", "libgomp*.so*")) + glob.glob(os.path.join(os.path.dirname(loc), "torch.libs", "libgomp*.so*"))
    )
    if bundled:
        return ok(f"torch bundles its own OpenMP runtime: {bundled[0]}")
    # conda's torch finds the environment's own libgomp through its RPATH, not the linker cache.
    for prefix in {env.get("CONDA_PREFIX"), interpreter.prefix if interpreter else sys.prefix} - {None, ""}:
        if os.path.exists(os.path.join(prefix, "lib", "libgomp.so.1")):
            return ok(f"libgomp.so.1 in the environment: {os.path.join(prefix, 'lib')}")
    if ldconfig:
        found = (ldconfig.get("libs") or {}).get("libgomp.so.1") or []
        if found:
            return ok(f"libgomp.so.1 in the linker cache: {found[0]}")
    for d in (env.get("LD_LIBRARY_PATH") or "").split(":"):
        if d and os.path.exists(os.path.join(d, "libgomp.so.1")):
            return ok(f"libgomp.so.1 on LD_LIBRARY_PATH: {d}")
    if not ldconfig and not bundled:
        return skip(f"cannot tell: torch bundles no libgomp and the linker cache is unreadable ({getattr(ldconfig, 'reason', '')})")
    if torch_build.get("kind") == "rocm" or any(glob.glob(os.path.join(loc, "lib", p)) for p in ("libiomp5*.so*", "libomp*.so*")):
        return skip("this torch uses another OpenMP runtime (libomp/libiomp5)")
    return fail(
        "libgomp.so.1 is neither bundled with torch nor installed: 'OSError: libgomp.so.1: cannot open shared object file'",
        "apt-get install libgomp1   # or: dnf install libgomp",
        fixes=system_package(os_release, apt="libgomp1", dnf="libgomp"),
    )


@check("toolchain.ninja", tags=("build",), blame=("ninja",))
def ninja(env, dists, python_info=None):
    """ninja, used by torch.utils.cpp_extension to build extensions"""
    path = shutil.which("ninja", path=env.get("PATH", ""))
    if path:
        done = run([path, "--version"], timeout=10)
        version = last_line(done.stdout) if done.ok else ""
        return ok(f"ninja {version} at {path}".replace("  ", " "))
    if "ninja" in dists:
        return ok(f"ninja {dists['ninja']['version']} is installed but not on PATH (cpp_extension looks on PATH)")
    needing = sorted(
        d.get("name") or k for k, d in dists.items() if any(canonical(r.name) == "ninja" and marker_applies(r) for r in requirements(d))
    )
    if needing:
        return warn(
            f"ninja is not installed, but {', '.join(needing[:3])} requires it: building its C++/CUDA extensions fails with "
            "'RuntimeError: Ninja is required to load C++ extensions'",
            "pip install ninja   # in this environment; its bin/ must be on PATH where the extension is built",
            fixes=[pip_fix(python_info, "install", "ninja")],
        )
    return ok("ninja not found; only needed to build C++/CUDA extensions (cpp_extension.load raises 'Ninja is required')")
