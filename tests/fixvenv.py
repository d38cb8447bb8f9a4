"""Throwaway venvs for the fixer tests (tests/test_fix*.py): hand-built wheels, a torch stand-in
(metadata, ``torch/version.py`` and a few modules: what the static checks read, no 2 GB wheel),
the whole distribution list and a directory's files with their bytes, and the one round every
fixer is tested by: plan only, ``--yes`` and its re-check, ``--undo`` back to the identical lists."""

from __future__ import annotations

import json
import os
import re
import subprocess
import venv
import zipfile
from collections.abc import Callable
from pathlib import Path

from tests.conftest import run_cli

_WHEEL = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
TORCH_MODULES = ("__init__.py", "nn/__init__.py", "nn/functional.py", "utils/__init__.py", "utils/cpp_extension.py")


def wheel(out: Path, name: str, version: str, files: dict[str, str] | None = None, requires: tuple[str, ...] = ()) -> Path:
    """A real (hand-built) wheel: pip installs and uninstalls it like any other. ``files``: its
    package's files (default: ``NAME/__init__.py``); ``requires``: its Requires-Dist lines."""
    info = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    body = {f"{name}/__init__.py": f"VERSION = {version!r}\n"} if files is None else files
    body = {**body, f"{info}/METADATA": meta, f"{info}/WHEEL": _WHEEL}
    body[f"{info}/RECORD"] = "".join(f"{p},,\n" for p in body) + f"{info}/RECORD,,\n"
    path = out / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for p, text in body.items():
            z.writestr(p, text)
    return path


def torch_standin(out: Path, version: str, requires: tuple[str, ...] = ()) -> Path:
    """torch as the static checks see it: its metadata (``requires``: e.g. a CUDA build's Triton
    pin), ``torch/version.py`` (a CPU build) and a few modules; importing it does nothing."""
    files = {f"torch/{m}": f"# stand-in for torch {version}: {m}\n" for m in TORCH_MODULES}
    files["torch/version.py"] = f"__version__ = {version!r}\ncuda = None\nhip = None\ngit_version = 'stand-in'\n"
    return wheel(out, "torch", version, files, requires)


def make_venv(root: Path, *installs: str | Path, compile_bytecode: bool = True) -> Path:
    """A fresh venv under ``root`` with ``installs`` (wheel paths or requirements from pip's
    configured index) installed without dependencies; returns its python."""
    venv.create(root / "venv", with_pip=True)
    python = root / "venv" / "bin" / "python"
    if installs:
        flags = () if compile_bytecode else ("--no-compile",)
        pip = [str(python), "-m", "pip", "install", "-q", "--no-deps", *flags, *map(str, installs)]
        subprocess.run(pip, check=True, capture_output=True, timeout=600)
    return python


_VERSIONS = (
    "import importlib.metadata as m, json; print(json.dumps(sorted((d.metadata['Name'].lower(), d.version) for d in m.distributions())))"
)


def dist_list(python: Path) -> list:
    """Every distribution and its version, as the venv's own Python sees them."""
    return json.loads(subprocess.run([str(python), "-c", _VERSIONS], capture_output=True, text=True, check=True).stdout)


def pip_freeze(python: Path) -> str:
    """``pip list --format=freeze`` of the venv: what a user compares."""
    cmd = [str(python), "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"]
    return subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=120).stdout


def tree(top: Path, exact: bool = False) -> dict:
    """Every path under ``top`` (relative) with its bytes ("dir" for a directory). A ``.pyc``
    that pip wrote when it (re)installed a package records the source's mtime, i.e. the install's
    time: only its presence counts, unless ``exact``."""

    def content(p: Path):
        return "dir" if not p.is_file() else "bytecode" if p.suffix == ".pyc" and not exact else p.read_bytes()

    return {str(p.relative_to(top)): content(p) for p in sorted(top.rglob("*"))}


def site_packages(python: Path) -> Path:
    (site,) = python.parents[1].glob("lib/python*/site-packages")
    return site


def fix_round(
    python: Path, check: str, env: dict, broken: str, *, plan_code: int = 1, watched: Path | None = None, fixed: Callable | None = None
) -> dict:
    """The round every fixer passes: ``fix`` without --yes and without a terminal changes
    nothing (the row fails or warns with ``broken`` in its message; the exit code is the checks'
    verdict, ``plan_code``: 0 for a warning, as `check`); ``--yes`` fixes it
    and the re-check passes (exit 0); ``--undo`` restores the identical distribution list and
    files under ``watched`` (default: the venv's site-packages), and its re-check fails again.
    ``fixed(python)`` asserts what the fix changed. Returns the three runs' outputs."""
    args = ("fix", "--python", str(python), "--select", check)
    top = watched or site_packages(python)
    before, files, freeze = dist_list(python), tree(top), pip_freeze(python)

    plan = run_cli(*args, env=env, timeout=600)
    assert plan.returncode == plan_code, plan.stdout + plan.stderr
    assert broken in plan.stdout and "Nothing changed: not a terminal" in plan.stdout, plan.stdout
    assert dist_list(python) == before and tree(top) == files

    done = run_cli(*args, "--yes", env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"fixed        {check}" in done.stdout, done.stdout
    if fixed is not None:
        fixed(python)

    undo = run_cli(*args, "--undo", env=env, timeout=600)
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert "Restored: the distributions and files are as they were" in undo.stdout
    assert dist_list(python) == before and pip_freeze(python) == freeze  # the whole list, versions included
    assert tree(top) == files  # every file, byte for byte
    assert re.search(rf"\n  (fail|warn) +{re.escape(check)}: .*{re.escape(broken)}", undo.stdout), undo.stdout  # re-checked: broken again
    return {"plan": plan.stdout, "done": done.stdout, "undo": undo.stdout}


def state_env(tmp_path: Path, **extra: str) -> dict:
    """The environment of a fix run whose journal lives under ``tmp_path``."""
    return {"XDG_STATE_HOME": str(tmp_path / "state"), **extra}


def on_path(python: Path) -> str:
    """PATH of an activated venv with no other tool on it (a system ninja must not answer)."""
    return os.pathsep.join([str(python.parent), "/nonexistent"])
