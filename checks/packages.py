"""Installed packages, read from their metadata without importing them.

Facts shared by every area: ``dists`` (every installed distribution), ``torch_build`` (what
``torch/version.py`` says, parsed, never imported).
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.metadata as md
import os
import re
import sys

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envdoctor import Unavailable, check, fact, fail, ok, skip

# What envdoctor diagnoses; reported in this order.
STACK = ("torch", "triton", "pytorch-triton", "torch-xla", "libtpu", "numpy", "torchvision", "torchaudio")


# Requirements the checks read from package metadata: torch's nvidia-* and Triton pins, the torch
# pins of extensions, every package's numpy range, torch_xla's libtpu pin.
_CHECKED_REQUIREMENTS = re.compile(r"^(torch|triton|pytorch-triton(-\w+)?|numpy|nvidia-.+|libtpu(-nightly)?|torch-xla)$")
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _checked_requirement(text: str) -> bool:
    m = _REQUIREMENT_NAME.match(str(text))
    return bool(m) and bool(_CHECKED_REQUIREMENTS.match(canonicalize_name(m.group(1))))


def _derivable(key: str, field: str, value, stack: bool) -> bool:
    """A name that is its key (readers fall back to the key), and pip as the installer of a
    package outside the stack (most are; a conda one stays)."""
    if field == "name":
        return value == key
    return field == "installer" and value == "pip" and not stack


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


@fact("dists", source="live", compact=compact_dists)  # a shared stack fact: envdoctor.Stack reads it
def dists() -> dict:
    """{canonical name: {name, version, location, requires, installer, compiled}} for the first copy on
    sys.path of every installed distribution (what ``import`` would see), plus ``others``
    listing further copies (B9: shadowed installs)."""
    out: dict[str, dict] = {}
    for d in md.distributions():
        try:
            name = d.metadata["Name"]
        except Exception:  # noqa: BLE001 - a broken dist-info must not stop the scan
            continue
        if not name:
            continue
        key = canonicalize_name(name)
        location = str(getattr(d, "_path", "") or "")
        if key in out:
            out[key].setdefault("others", []).append({"version": d.version, "location": location})
            continue
        try:
            installer = (d.read_text("INSTALLER") or "").strip()
        except Exception:  # noqa: BLE001
            installer = ""
        out[key] = {
            "name": name,
            "version": d.version,
            "location": location,
            "requires": list(d.requires or []),
            "installer": installer,
        }
        compiled = ships_extensions(d)
        if compiled is not None:
            out[key]["compiled"] = compiled
    return out


# An extension module in RECORD: foo.cpython-312-x86_64-linux-gnu.so, libbar.so.12, baz.pyd.
_EXTENSION = re.compile(r"\.(?:so|pyd|dylib)(?:\.\d+)*,")


def ships_extensions(d: md.Distribution) -> bool | None:
    """Whether a distribution installs compiled code (from its RECORD; None when it has none,
    as conda and egg installs may). A torch or CUDA change breaks such a package's ABI: the
    user sees "undefined symbol" at import, so ``envdoctor diff`` flags them."""
    try:
        record = d.read_text("RECORD")
    except Exception:  # noqa: BLE001 - an unreadable dist-info must not stop the scan
        return None
    if record is None:
        return None
    # The substring test first: it is C-fast and rules out most pure-Python packages at once.
    return any(ext in record for ext in (".so", ".pyd", ".dylib")) and bool(_EXTENSION.search(record))


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


def package_dir(name: str) -> str:
    """The directory ``import name`` would load, found on sys.path without importing anything.

    PathFinder searches sys.path as the import system would, without consulting sys.modules.
    Raises Unavailable when the package is not installed or cannot be located."""
    try:
        spec = importlib.machinery.PathFinder.find_spec(name)
    except (ImportError, ValueError) as e:
        raise Unavailable(f"{name} cannot be located: {e}") from e
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable(f"{name} is not installed")
    return list(spec.submodule_search_locations)[0]


@fact("torch_build", source="live")  # a shared stack fact: envdoctor.Stack reads it
def torch_build() -> dict:
    """torch's build as ``torch/version.py`` records it: version, cuda, hip, git_version."""
    pkg_dir = package_dir("torch")
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
def versions(dists, options=None):
    """torch, Triton and torch_xla versions (from package metadata)"""
    found = {k: dists[k]["version"] for k in STACK if k in dists}
    if "torch" not in found:
        details = {"python": sys.version.split()[0], "executable": sys.executable, **found}
        if options and options.get("torch_expected") is False:
            return skip(f"torch is not installed in {sys.executable} (not expected: torch=none)", details=details)
        # The subject of the examination is missing: nothing below can say the stack works.
        return fail(
            f"torch is not installed in the interpreter examined ({sys.executable})",
            hint=f"{sys.executable} -m pip install torch   # or, if torch is not expected here: --expect torch=none",
            details=details,
        )
    parts = [f"{dists[k]['name']} {v}" for k, v in found.items() if k in ("torch", "triton", "pytorch-triton", "torch-xla")]
    return ok(", ".join(parts), details=found)
