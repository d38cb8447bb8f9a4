"""Compiling torch's bytecode side by side when the installation has none.

Installers that skip bytecode (``uv pip install`` does by default, ``pip install --no-compile``,
images slimmed of ``__pycache__``) together with ``PYTHONDONTWRITEBYTECODE=1`` (common in
Dockerfiles) or a read-only site-packages leave Python to compile every module from source in
every process: on the GPU machine ``import torch`` plus torch.compile's modules spent most of
their 9-10 s compiling (docs/benchmarks.md). Nothing is wrong, but the doctor would pay it on its
critical path, serially.

So when torch has no bytecode, the run's first preloading worker starts helper processes
(``_probe_child.start_helpers``, ``precompile``) that compile torch and the packages it imports
into a directory of the run, side by side on the spare CPUs (at idle scheduling priority: a
busy machine's work comes first), while it imports torch; the workers read bytecode from there
(``_probe_child.read_bytecode_from``). The helpers live in that worker's process group and the
directory inside its temporary directory, so both go with it, before the directory is removed,
even when envdoctor is killed. The user's own tree is never written to. ``torch.bytecode``
reports the missing bytecode as a finding. This module decides whether and what to compile.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping

# torch and what ``import torch`` plus torch.compile's first compile import (measured with
# python -X importtime on the GPU machine: 2,554 modules, these packages hold 95 % of them).
ROOTS = (
    "torch",
    "sympy",
    "networkx",
    "numpy",
    "mpmath",
    "triton",
    "jinja2",
    "markupsafe",
    "filelock",
    "fsspec",
    "opt_einsum",
    "functorch",
    "torchgen",
    "typing_extensions",
)
MAX_HELPERS = 12
# ENVDOCTOR_PRECOMPILE: unset, "auto" or "": by the CPU count; "0": never (to measure without
# it); a number: that many helpers.
HELPERS_ENV = "ENVDOCTOR_PRECOMPILE"


def _location(name: str) -> tuple[str, str] | None:
    """(what to compile: the package directory or the module file, its __init__/module source)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    if spec.submodule_search_locations:
        return os.path.dirname(spec.origin), spec.origin
    return spec.origin, spec.origin


def installed(name: str) -> bool:
    """Whether ``name`` is importable here (found, not imported)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def has_bytecode(source: str) -> bool:
    """Whether Python finds bytecode for ``source`` where it looks (``__pycache__``, or
    PYTHONPYCACHEPREFIX when that is set)."""
    try:
        return os.path.exists(importlib.util.cache_from_source(source))
    except (NotImplementedError, ValueError):
        return True  # no bytecode cache in this Python: nothing to do


def missing_roots() -> list[str]:
    """The directories (and single modules) to precompile: none when torch has bytecode or is
    not installed in this interpreter, or when PYTHONPYCACHEPREFIX already redirects bytecode."""
    if sys.pycache_prefix is not None:
        return []
    torch = _location("torch")
    if torch is None or has_bytecode(torch[1]):
        return []
    roots = []
    for name in ROOTS:
        found = _location(name)
        if found is not None and not has_bytecode(found[1]):
            roots.append(found[0])
    return roots


def helper_count(env: Mapping[str, str], cpus: int | None = None) -> int:
    """Helpers to start: as ENVDOCTOR_PRECOMPILE says, else the CPUs beyond three (the worker
    importing torch, envdoctor's own checks, the GPU and driver probes), at most MAX_HELPERS;
    none on a machine of four or fewer, where they would slow the import they are meant to
    speed up."""
    asked = env.get(HELPERS_ENV, "").strip()
    if asked.isdigit():
        return min(int(asked), 64)
    if cpus is None:
        try:
            cpus = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = os.cpu_count() or 1
    return max(0, min(MAX_HELPERS, cpus - 3)) if cpus > 4 else 0
