"""torch.compile: enabled, on a Python its Dynamo supports, with a C++ compiler, Triton where
GPUs need it, and a usable Inductor cache directory.

torch is never imported here: what this torch supports is read from its own source files
(``torch/_dynamo/eval_frame.py``, ``torch/_inductor/runtime/cache_dir_utils.py``).
"""

from __future__ import annotations

import os
import re

from envdoctor import Status, check, compile_locations, env_fix, fact, fail, ok, skip, user_name, warn
from envdoctor_checks._dirs import DirProbe, judge_cache_dir, probe_dir
from envdoctor_checks._fixes import directory_fix, system_package
from envdoctor_checks.triton import torch_triton_requirement

# torch release -> first Python its Dynamo refuses (catalog C5); used only when torch's own
# check_if_dynamo_supported() cannot be read.
DYNAMO_MAX_PYTHON = (
    ((2, 0), (3, 11)),
    ((2, 1), (3, 12)),
    ((2, 4), (3, 13)),
    ((2, 6), (3, 14)),
    ((2, 10), (3, 15)),
)


def read_text(path: str, limit: int = 512 * 1024) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(limit)
    except OSError:
        return ""


def dynamo_limits(torch_dir: str) -> dict | None:
    """What ``check_if_dynamo_supported()`` in this torch refuses, read from its source."""
    text = read_text(os.path.join(torch_dir, "_dynamo", "eval_frame.py"), 2 * 1024 * 1024)
    start = text.find("def check_if_dynamo_supported")
    if start < 0:
        return None
    end = text.find("\ndef ", start + 10)
    body = text[start : end if end > 0 else None]
    m = re.search(r"sys\.version_info\s*>=\s*\((\d+),\s*(\d+)\)", body)
    if not m:
        return None
    out: dict = {"refuses_from": [int(m.group(1)), int(m.group(2))], "free_threaded_min": None, "free_threaded": True}
    gil = body.find("Py_GIL_DISABLED")
    if gil >= 0:
        ft = re.search(r"sys\.version_info\s*<\s*\(\s*(\d+),\s*(\d+)(?:,\s*(\d+))?\s*,?\s*\)", body[gil:])
        if ft:
            out["free_threaded_min"] = [int(x) for x in ft.groups() if x is not None]
        else:
            out["free_threaded"] = False
    return out


def table_limit(torch_version: tuple[int, int]) -> list[int] | None:
    found = None
    for since, refuses in DYNAMO_MAX_PYTHON:
        if torch_version >= since:
            found = list(refuses)
    return found


@check("compile.python_version", tags=("build",))
def python_version(python_info, torch_build):
    """This Python is supported by torch.compile in this torch"""
    from envdoctor_checks.triton import major_minor

    py = list(python_info["version_info"][:3])
    pyname = python_info["version"] + ("t (free-threaded)" if python_info.get("free_threading") else "")
    limits = dynamo_limits(torch_build["location"])
    source = "torch's check_if_dynamo_supported()"
    if limits is None:
        tv = major_minor(torch_build["version"])
        refuses = table_limit(tv) if tv else None
        if refuses is None:
            return skip(f"cannot tell which Pythons torch {torch_build['version']}'s Dynamo supports")
        limits, source = {"refuses_from": refuses, "free_threaded_min": None, "free_threaded": True}, "envdoctor's table"
    refuses = limits["refuses_from"]
    torch_v = torch_build["version"]
    if py[:2] >= refuses:
        return fail(
            f"torch.compile in torch {torch_v} does not support Python {pyname} ('Python {refuses[0]}.{refuses[1]}+ not yet supported "
            "for torch.compile')",
            f"use Python < {refuses[0]}.{refuses[1]} (e.g. uv venv --python 3.12), or a newer torch",
            details={"limit_from": source},
        )
    if python_info.get("free_threading"):
        if not limits["free_threaded"]:
            return fail(
                f"torch.compile in torch {torch_v} does not support free-threaded Python ({pyname})",
                "use the regular (GIL) build of Python, or a newer torch",
            )
        need = limits["free_threaded_min"]
        if need and py < need:
            want = ".".join(map(str, need))
            return fail(
                f"torch.compile in torch {torch_v} needs free-threaded Python >= {want}; this is {pyname}",
                f"use Python {want}+ (free-threaded) or the regular GIL build",
            )
    return ok(f"Python {pyname} is supported by torch.compile in torch {torch_v} (refused from {refuses[0]}.{refuses[1]})")


@check("compile.disabled_by_env", tags=("build",))
def disabled_by_env(env, torch_build):
    """torch.compile is not switched off by the environment"""
    # torch/_dynamo/config.py: disable = TORCH_COMPILE_DISABLE == "1"; torch._dynamo.optimize()
    # also returns a no-op for TORCHDYNAMO_DISABLE == "1". Only "1" counts: "true" is ignored.
    on = [v for v in ("TORCH_COMPILE_DISABLE", "TORCHDYNAMO_DISABLE") if env.get(v) == "1"]
    ignored = [f"{v}={env[v]!r}" for v in ("TORCH_COMPILE_DISABLE", "TORCHDYNAMO_DISABLE") if v in env and env[v] != "1"]
    if on:
        return warn(
            f"{' and '.join(v + '=1' for v in on)} set: torch.compile silently runs the model eagerly (no error, no speed-up)",
            f"unset {' '.join(on)}   # if you want torch.compile",
        )
    note = f" ({', '.join(ignored)} set, but torch only honours '1')" if ignored else ""
    return ok(f"torch.compile is enabled{note}")


@check("compile.cxx_compiler", tags=("build",))
def cxx_compiler_check(cxx_compiler, torch_build, env, os_release=None):
    """A C++ compiler for Inductor's CPU backend"""
    if cxx_compiler["problem"]:
        import shutil

        clang = shutil.which("clang++", path=env.get("PATH", ""))
        if cxx_compiler["source"] == "CXX":
            hint, fixes = "export CXX=/usr/bin/g++   # one executable; or unset CXX", [env_fix("CXX", "/usr/bin/g++")]
        elif clang:
            hint, fixes = f"export CXX={clang}   # Inductor only looks for g++ unless CXX is set", [env_fix("CXX", clang)]
        else:
            hint = 'apt-get install g++   # or: dnf install gcc-c++; or torch.compile(backend="aot_eager")'
            fixes = system_package(os_release, apt="g++", dnf="gcc-c++")
        return fail(
            f"{cxx_compiler['problem']}: torch.compile on CPU fails with 'InvalidCxxCompiler: No working C++ compiler found'",
            hint,
            details=cxx_compiler,
            fixes=fixes,
        )
    version = f": {cxx_compiler['version']}" if cxx_compiler.get("version") else ""
    return ok(f"{cxx_compiler['path']} (from {cxx_compiler['source']}){version}")


@check("compile.triton_available", tags=("build",))
def triton_available(torch_build, dists, triton_pkg=None):
    """Triton is there for torch.compile on GPUs"""
    kind = torch_build.get("kind")
    if kind == "cpu":
        return skip("torch is a CPU build: torch.compile uses Inductor's C++ backend, not Triton")
    if triton_pkg:
        return ok(f"triton {triton_pkg.get('version') or ''} at {triton_pkg['location']}".replace("  ", " "))
    req = torch_triton_requirement(dists.get("torch") or {})
    if req and req.applies:
        return skip(f"triton is missing although torch requires {req.name}{req.specifier}: see triton.torch_pin")
    why = f" (torch requires it only where `{req.marker}`)" if req else ""
    return warn(
        f"no Triton for this {kind} torch{why}: torch.compile on the GPU raises 'TritonMissing: Cannot find a working triton installation'",
        'pip install triton   # Windows: pip install triton-windows; or torch.compile(backend="aot_eager")',
    )


# ---------------------------------------------------------------- the Inductor cache dir (C4)


def tolerates_missing_user(torch_dir: str) -> bool:
    """Whether this torch's default_cache_dir() survives getpass.getuser() failing (newer
    torch falls back to ``uid_<n>``; older ones raise "KeyError: 'getpwuid(): uid not found'")."""
    for rel in ("_inductor/runtime/cache_dir_utils.py", "_inductor/runtime/runtime_utils.py", "_inductor/codecache.py"):
        text = read_text(os.path.join(torch_dir, rel), 4 * 1024 * 1024)
        i = text.find("def default_cache_dir")
        if i >= 0:
            end = text.find("\ndef ", i + 10)
            return "uid_" in text[i : end if end > 0 else None]
    return False


INDUCTOR_SUGGESTION = "/tmp/torchinductor-$(id -u)"


@fact("inductor_cache", ask="the value of TORCHINDUCTOR_CACHE_DIR, HOME and the user name (`id`)")
def inductor_cache(env, torch_build) -> dict:
    """Inductor's cache dir resolved as cache_dir_utils does, and whether getpass.getuser() works."""
    user, user_source = user_name(env)
    tolerant = tolerates_missing_user(torch_build["location"])
    where = compile_locations(env)["inductor"]
    assert where.path is not None, "Inductor's default lies in the temporary directory, which always resolves"
    p = probe_dir(where.path)
    return {
        "path": p.path,
        "source": where.source,
        "chosen_by": where.chosen_by(),
        "user": user,
        "user_source": user_source,
        "tolerant": tolerant,
        "probe": p.__dict__,
    }


@check("compile.inductor_cache", tags=("build",))
def inductor_cache_check(inductor_cache, mounts=None):
    """Inductor's cache directory is usable"""
    c = inductor_cache
    if c["user"] is None and c["source"] == "default" and not c["tolerant"]:
        return fail(
            f"getpass.getuser() fails ({c['user_source']}): Inductor's default_cache_dir() raises "
            f"\"KeyError: 'getpwuid(): uid not found: {os.getuid()}'\" (typical for docker --user / OpenShift)",
            "export TORCHINDUCTOR_CACHE_DIR=/tmp/torchinductor-$(id -u) USER=$(id -u)   # or add a passwd entry",
            fixes=[*directory_fix("TORCHINDUCTOR_CACHE_DIR", "/tmp/torchinductor-$(id -u)"), env_fix("USER", str(os.getuid()))],
        )
    probe = DirProbe(**c["probe"])
    status, message, hint = judge_cache_dir(
        f"Inductor cache ({c.get('chosen_by') or c['source']})",
        probe,
        mounts,
        env_var="TORCHINDUCTOR_CACHE_DIR",
        suggest=INDUCTOR_SUGGESTION,
        needs_exec=True,
    )
    if status is Status.PASS:
        note = f"; getpass.getuser() fails ({c['user_source']}) but this torch falls back to uid_<n>" if c["user"] is None else ""
        return ok(message + note, details={"path": probe.path})
    fixes = directory_fix("TORCHINDUCTOR_CACHE_DIR", INDUCTOR_SUGGESTION)
    return (fail if status is Status.FAIL else warn)(message, hint, details={"path": probe.path}, fixes=fixes)
