"""Installed packages, read from their metadata without importing them.

Facts shared by every area: ``dists`` (every installed distribution), ``torch_build`` (what
``torch/version.py`` says, parsed, never imported).
"""

from __future__ import annotations

import ast
import importlib.machinery
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from envdoctor import Unavailable, check, fact, fail, lazy_pattern, ok, skip
from envdoctor import canonical_name as canonical  # the other check modules import it from here

if TYPE_CHECKING:
    from packaging.requirements import Requirement

# What envdoctor diagnoses; reported in this order.
STACK = ("torch", "triton", "pytorch-triton", "torch-xla", "libtpu", "numpy", "torchvision", "torchaudio")


def examined(interpreter) -> dict | None:
    """What ``--python`` read in another interpreter (the ``interpreter`` special's facts), or
    None when envdoctor examines its own: then facts read this process, as they always did."""
    return interpreter.facts if interpreter else None


def search_path(interpreter) -> list[str]:
    """The examined interpreter's sys.path."""
    other = examined(interpreter)
    return list(interpreter.sys_path) if other is not None else list(sys.path)


def dist_path(interpreter) -> dict:
    """Keyword arguments for ``importlib.metadata.distributions`` that search the examined
    interpreter's sys.path (none for envdoctor's own)."""
    return {"path": list(interpreter.sys_path)} if examined(interpreter) is not None else {}


def executable(interpreter) -> str:
    """The examined interpreter's path."""
    return interpreter.executable if interpreter else sys.executable


# Requirements the checks read from package metadata: torch's nvidia-* and Triton pins, the torch
# pins of extensions, every package's numpy range, torch_xla's libtpu pin, who requires ninja.
_CHECKED_REQUIREMENTS = lazy_pattern(r"^(torch|triton|pytorch-triton(-\w+)?|numpy|nvidia-.+|libtpu(-nightly)?|torch-xla|ninja)$")
_REQUIREMENT_NAME = lazy_pattern(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _checked_requirement(text: str) -> bool:
    if "extra ==" in str(text):  # an optional extra's requirement: not installed with the package
        return False
    m = _REQUIREMENT_NAME.match(str(text))
    return m is not None and bool(_CHECKED_REQUIREMENTS.match(canonical(m.group(1))))


def _derivable(key: str, field: str, value, stack: bool) -> bool:
    """A name that is its key (readers fall back to the key), the installer of a package outside
    the stack (pip, uv: no check judges it there), and a false ``compiled`` (readers treat a
    missing flag as false)."""
    if field == "name":
        return value == key
    if field == "compiled":
        return value is False
    return field == "installer" and not stack


def compact_dists(value: dict) -> dict:
    """Every distribution stays (``envdoctor diff`` compares them all: version, compiled); the
    report drops what no reader uses: names and installers a reader can infer, the location of
    packages outside the stack, and requirements on packages no check judges (--full-facts: all)."""
    if not isinstance(value, dict):
        return value
    out: dict = {}
    for key, d in value.items():
        if not isinstance(d, dict):
            out[key] = d
            continue
        stack = key in STACK or bool(d.get("others"))
        short = {k: v for k, v in d.items() if not _derivable(key, k, v, stack) and k not in ("location", "requires")}
        if d.get("location") and stack:
            short["location"] = d["location"]
        requires = [r for r in d.get("requires") or [] if _checked_requirement(r)]
        if requires:
            short["requires"] = requires
        out[key] = short
    return out


def version_or_none(text: str | None) -> Version | None:
    """``text`` as a PEP 440 version; None when it is empty or not one."""
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


# a shared stack fact: envdoctor.Stack reads it
@fact("dists", source="live", ask="the output of `pip list` (or `conda list`) in the environment that fails", compact=compact_dists)
def dists(interpreter=None) -> dict:
    """{canonical name: {name, version, location, requires, installer, compiled}} for the first copy on
    sys.path of every installed distribution (what ``import`` would see), plus ``others``
    listing further copies (B9: shadowed installs)."""
    other = examined(interpreter)
    if other is not None:  # read there by the same code (envdoctor/core/_interpreter_query.py)
        return dict(other.get("dists") or {})
    # The same scan that --python runs inside another interpreter: one piece of code for both
    # (imported here: it loads importlib.metadata, which triage and `list` need not pay for).
    from envdoctor import installed_distributions

    return installed_distributions()


def parse_version_py(text: str) -> dict:
    """Pull the simple assignments out of torch/version.py without executing it."""
    values: dict = {}
    for node in ast.parse(text).body:
        target = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        if isinstance(target, ast.Name):
            try:
                values[target.id] = ast.literal_eval(value)
            except ValueError:
                continue
    return values


def package_dir(name: str, interpreter=None) -> str:
    """The directory ``import name`` would load, found on sys.path without importing anything
    (the examined interpreter's sys.path under --python).

    PathFinder searches sys.path as the import system would, without consulting sys.modules.
    Raises Unavailable when the package is not installed or cannot be located."""
    path = list(interpreter.sys_path) if examined(interpreter) is not None else None
    try:
        spec = importlib.machinery.PathFinder.find_spec(name, path)
    except (ImportError, ValueError) as e:
        raise Unavailable(f"{name} cannot be located: {e}") from e
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable(f"{name} is not installed")
    return list(spec.submodule_search_locations)[0]


# a shared stack fact: envdoctor.Stack reads it
@fact("torch_build", source="live", ask="the output of `python -m torch.utils.collect_env`")
def torch_build(interpreter=None) -> dict:
    """torch's build as ``torch/version.py`` records it: version, cuda, hip, git_version."""
    pkg_dir = package_dir("torch", interpreter)
    path = os.path.join(pkg_dir, "version.py")
    try:
        with open(path, encoding="utf-8") as f:
            values = parse_version_py(f.read())
    except (OSError, SyntaxError, ValueError) as e:
        # A partial install, or a directory named torch shadowing the real one on sys.path.
        raise Unavailable(f"the torch that `import torch` finds ({pkg_dir}) is incomplete: no readable torch/version.py") from e
    version = str(values.get("__version__", ""))
    local = version.partition("+")[2]
    cuda, hip = values.get("cuda"), values.get("hip")
    kind = "cuda" if cuda else "rocm" if hip else "xpu" if values.get("xpu") else "cpu"
    return {
        "version": version,
        "local": local,
        "cuda": cuda,
        "hip": hip,
        "git_version": values.get("git_version"),
        "kind": kind,
        "location": pkg_dir,
    }


def release(version: str) -> Version | None:
    """The release part of a version string (``2.11.0+cu130`` -> 2.11.0), or None."""
    try:
        return Version(Version(version).base_version)
    except InvalidVersion:
        return None


@check("packages.versions", tags=("build",))
def versions(dists, options=None, interpreter=None):
    """torch, Triton and torch_xla versions (from package metadata)"""
    found = {k: dists[k]["version"] for k in STACK if k in dists}
    if "torch" not in found:
        exe = executable(interpreter)
        python = interpreter.version if interpreter else sys.version.split()[0]
        details = {"python": python, "executable": exe, **found}
        if options and options.get("torch_expected") is False:
            return skip(f"torch is not installed in {exe} (not expected: torch=none)", details=details)
        # The subject of the examination is missing: nothing below can say the stack works.
        return fail(
            f"torch is not installed in the interpreter examined ({exe})",
            hint=f"{exe} -m pip install torch   # or, if torch is not expected here: --expect torch=none",
            details=details,
        )
    parts = [f"{dists[k]['name']} {v}" for k, v in found.items() if k in ("torch", "triton", "pytorch-triton", "torch-xla")]
    return ok(", ".join(parts), details=found)


def marker_applies(req: Requirement, extras: tuple[str, ...] = ("",)) -> bool:
    from packaging.markers import UndefinedComparison, UndefinedEnvironmentName

    if req.marker is None:
        return True
    for extra in extras:
        try:
            if req.marker.evaluate({"extra": extra}):
                return True
        except (UndefinedComparison, UndefinedEnvironmentName):
            continue
    return False


def requires(dist: Mapping) -> list[tuple[str, Requirement]]:
    """A distribution's ``Requires-Dist`` (its ``requires``): each line with its parse; the one
    reader of it for every check (a line packaging cannot read is left out)."""
    texts = dist.get("requires") or []
    if not texts:
        return []  # a pasted listing has none: triage need not load the parser
    # packaging's requirements and markers load here, not when `envdoctor list` imports this module.
    from packaging.requirements import InvalidRequirement, Requirement

    out = []
    for text in texts:
        try:
            out.append((text, Requirement(text)))
        except InvalidRequirement:
            continue
    return out


def requirements(dist: Mapping) -> list[Requirement]:
    return [req for _, req in requires(dist)]
