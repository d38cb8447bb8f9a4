"""Reading the stack out of a report's facts: the one accessor commands and reporters use.

A report's facts are plain JSON. ``UNKNOWN`` means the report did not gather a fact (not
compared); ``ABSENT`` means the report says it is not there (package not installed, no driver).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

UNKNOWN = None  # the report did not gather it: not compared
ABSENT = "(none)"  # the report says it is not there (package not installed, no driver)


def _major(version: Any) -> int | None:
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        return None


# ------------------------------------------------------------------ versions


def _fact(d: Mapping[str, Any], name: str) -> Any:
    """A fact's value, ABSENT if the report says it is unavailable, UNKNOWN if not gathered."""
    facts = d.get("facts") or {}
    if name not in facts:
        return UNKNOWN
    v = facts[name]
    if isinstance(v, dict) and set(v) <= {"unavailable", "error"} and v:
        return ABSENT
    return v


def _field(d: Mapping[str, Any], fact: str, key: str) -> Any:
    v = _fact(d, fact)
    if v is UNKNOWN or v == ABSENT:
        return v
    if isinstance(v, dict):
        x = v.get(key)
        return ABSENT if x in (None, "") else str(x)
    return UNKNOWN


def _dist(d: Mapping[str, Any], *names: str) -> Any:
    dists = _fact(d, "dists")
    if not isinstance(dists, dict):
        return dists if dists == ABSENT else UNKNOWN
    for n in names:
        if isinstance(dists.get(n), dict) and dists[n].get("version"):
            return str(dists[n]["version"])
    return ABSENT


def _first(*vals: Any) -> Any:
    known = [v for v in vals if v is not UNKNOWN]
    return next((v for v in known if v != ABSENT), known[0] if known else UNKNOWN)


def _cudnn(d: Mapping[str, Any]) -> Any:
    """torch.backends.cudnn.version() is an int: 91300 is 9.13.0, 8907 is 8.9.7."""
    v = _field(d, "torch_runtime", "cudnn")
    if isinstance(v, str) and v.isdigit():
        n = int(v)
        return f"{n // 10000}.{n % 10000 // 100}.{n % 100}" if n >= 10000 else f"{n // 1000}.{n % 1000 // 100}.{n % 100}"
    return v


def _python(d: Mapping[str, Any]) -> Any:
    return _first(_field(d, "python_info", "version"), (d.get("platform") or {}).get("python") or UNKNOWN)


def _os(d: Mapping[str, Any]) -> Any:
    return _field(d, "os_release", "name")


def _kernel(d: Mapping[str, Any]) -> Any:
    return _first(_field(d, "os_release", "kernel"), (d.get("platform") or {}).get("release") or UNKNOWN)


# (label, getter): the stack from the bottom up, as a migration note would list it.
VERSION_GETTERS = (
    ("OS", _os),
    ("kernel", _kernel),
    ("NVIDIA driver", lambda d: _field(d, "driver", "version")),
    ("driver CUDA (max supported)", lambda d: _field(d, "driver", "cuda_version")),
    ("Python", _python),
    ("torch", lambda d: _first(_dist(d, "torch"), _field(d, "torch_build", "version"), _field(d, "torch_runtime", "version"))),
    ("torch CUDA", lambda d: _first(_field(d, "torch_build", "cuda"), _field(d, "torch_runtime", "cuda"))),
    ("cuDNN (torch)", _cudnn),
    ("NCCL (torch)", lambda d: _field(d, "torch_runtime", "nccl")),
    ("triton", lambda d: _dist(d, "triton")),
    ("pytorch-triton", lambda d: _dist(d, "pytorch-triton")),
    ("torch_xla", lambda d: _dist(d, "torch-xla")),
    ("libtpu", lambda d: _dist(d, "libtpu")),
    ("numpy", lambda d: _dist(d, "numpy")),
)


# The facts a fleet should agree on, in report order.
FLEET_FACTS = ("torch", "torch_cuda", "triton", "driver", "cudnn", "nccl", "gpu_model", "gpu_count", "python")


def _available(value: Any) -> bool:
    return not (isinstance(value, dict) and ("unavailable" in value or "error" in value) and len(value) == 1)


def extract_facts(facts: Mapping[str, Any]) -> dict[str, str]:
    """The comparable facts of one report, as strings. A fact the run did not gather is left out
    (unknown, not a deviation); one the node does not have (no driver) becomes ``"none"``."""
    out: dict[str, str] = {}

    def put(key: str, value: Any) -> None:
        if key not in out and value is not None and value != "":
            out[key] = str(value)

    dists = facts.get("dists")
    build = facts.get("torch_build")
    runtime = facts.get("torch_runtime")
    if isinstance(dists, dict) and _available(dists):
        torch = dists.get("torch")
        put("torch", torch.get("version") if isinstance(torch, dict) else "not installed")
        triton = dists.get("triton") or dists.get("pytorch-triton")
        put("triton", triton.get("version") if isinstance(triton, dict) else "not installed")
    if isinstance(build, dict):
        if _available(build):
            put("torch", build.get("version"))
            put("torch_cuda", build.get("cuda") or "none (CPU build)" if build.get("kind") != "rocm" else f"rocm {build.get('hip')}")
        else:
            put("torch", "not installed")
    if isinstance(runtime, dict) and _available(runtime):
        put("torch", runtime.get("version"))
        if "cuda" in runtime:
            put("torch_cuda", runtime.get("cuda") or "none (CPU build)")
        if runtime.get("cuda"):
            put("cudnn", runtime.get("cudnn"))
            put("nccl", runtime.get("nccl"))
    driver = facts.get("driver")
    if isinstance(driver, dict):
        put("driver", driver.get("version") if _available(driver) else "none")
    gpus = facts.get("visible_gpus", facts.get("gpus"))
    if isinstance(gpus, list):
        names = sorted({str(g.get("name", "?")) for g in gpus if isinstance(g, dict)})
        put("gpu_model", ", ".join(names) or "none")
        put("gpu_count", len(gpus))
    elif isinstance(gpus, dict) and not _available(gpus):
        put("gpu_model", "none")
        put("gpu_count", 0)
    py = facts.get("python_info")
    if isinstance(py, dict) and _available(py):
        put("python", py.get("version"))
    return {k: out[k] for k in FLEET_FACTS if k in out}
