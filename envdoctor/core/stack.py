"""The shared stack facts, typed: one schema and one accessor for every source.

Facts arrive as plain values: live from this machine (a fact's value, or ``Missing`` when it
could not be had), from a JSON report written months ago (where a missing fact is
``{"unavailable": why}`` or ``{"error": why}``), and next from pasted ``collect_env`` text or an
image-build baseline. :func:`from_facts` turns any of them into one frozen :class:`Stack`, so
diff, fleet, the markdown stack table, the distributed rank summary and expectations never
know a fact's name or shape. It is lenient: a field of the wrong type is treated as not
recorded, never as a crash (old and hand-edited reports must load).

Each component is tri-state: a value; ``None`` with a reason in ``Stack.missing`` (the source
says it is not there: no driver, torch not installed); ``None`` without one (not gathered:
not compared).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from envdoctor.core.api import FACT_ORIGINS as SOURCES  # live | pasted | baseline
from envdoctor.core.names import TRITON_DISTS
from envdoctor.core.names import canonical as _canon

UNKNOWN = None  # not gathered: not compared
ABSENT = "(none)"  # the source says it is not there (package not installed, no driver)


# Distributions known to ship compiled extensions, for reports whose dists fact predates the
# ``compiled`` field: an ABI break (torch or CUDA changed under them) shows up as an undefined
# symbol at import, so a diff must flag them.
KNOWN_COMPILED = frozenset(
    {
        "torch",
        "torchvision",
        "torchaudio",
        "torch-xla",
        "libtpu",
        "numpy",
        "scipy",
        "flash-attn",
        "flash-attn-3",
        "xformers",
        "vllm",
        "apex",
        "bitsandbytes",
        "transformer-engine",
        "mamba-ssm",
        "causal-conv1d",
        "deepspeed",
        "torch-scatter",
        "torch-sparse",
        "torch-cluster",
        "cupy-cuda12x",
        "cupy-cuda13x",
        "jaxlib",
        "onnxruntime-gpu",
        "tensorrt",
        "pandas",
        "triton",
        "pytorch-triton",
    }
)


@dataclass(frozen=True)
class Distribution:
    name: str
    version: str
    location: str = ""
    requires: tuple[str, ...] = ()
    installer: str = ""
    compiled: bool | None = None  # ships extension modules (.so/.pyd); None: the source does not say

    @property
    def has_extensions(self) -> bool:
        """Ships compiled code, from the record or (when unrecorded) by its well-known name."""
        return self.compiled if self.compiled is not None else _canon(self.name) in KNOWN_COMPILED


@dataclass(frozen=True)
class Driver:
    version: str
    cuda_version: str = ""


@dataclass(frozen=True)
class Gpu:
    index: int | str
    name: str
    uuid: str = ""
    cc: str = ""
    memory_total: int | None = None
    mig_mode: Any = None
    persistence_mode: Any = None
    compute_mode: Any = None

    @property
    def label(self) -> str:
        mem = f", {self.memory_total / (1 << 30):.0f} GiB" if self.memory_total else ""
        return f"GPU {self.index}: {self.name}{mem}"


@dataclass(frozen=True)
class TorchInfo:
    version: str
    kind: str = ""  # cuda | rocm | xpu | cpu ("" unknown)
    cuda: str = ""  # "" for a build without CUDA
    hip: str = ""
    cudnn: str | None = None  # decoded ("9.13.0"); "" none; None: torch was not imported (not recorded)
    nccl: str | None = None


@dataclass(frozen=True)
class PythonInfo:
    version: str
    implementation: str = ""
    executable: str = ""
    free_threading: bool = False


@dataclass(frozen=True)
class OsInfo:
    name: str
    id: str = ""
    version: str = ""
    kernel: str = ""
    machine: str = ""


@dataclass(frozen=True)
class Stack:
    source: str = "live"  # live | pasted | baseline
    os: OsInfo | None = None
    python: PythonInfo | None = None
    driver: Driver | None = None
    gpus: tuple[Gpu, ...] | None = None  # every GPU the driver lists (the hardware)
    visible_gpus: tuple[Gpu, ...] | None = None  # what CUDA_VISIBLE_DEVICES leaves the process
    torch: TorchInfo | None = None
    dists: Mapping[str, Distribution] | None = None  # canonical name -> distribution
    missing: Mapping[str, str] = field(default_factory=dict)  # component -> why the source says it is not there

    def dist(self, *names: str) -> Distribution | None:
        """The first of ``names`` installed (canonical names)."""
        if not self.dists:
            return None
        return next((self.dists[n] for n in names if n in self.dists), None)

    @property
    def triton(self) -> Distribution | None:
        return self.dist(*TRITON_DISTS)

    def known(self, component: str) -> bool:
        """Whether the source says anything about ``component`` (present or not)."""
        return getattr(self, component) is not None or component in self.missing

    def version_rows(self) -> tuple[tuple[str, str | None], ...]:
        """(label, version) from the bottom of the stack up, as a migration note lists it:
        a version, ``ABSENT`` or ``UNKNOWN``."""
        return tuple((label, get(self)) for label, get in _ROWS)

    def fleet_facts(self) -> dict[str, str]:
        """The facts a fleet running one image should agree on, as strings (unknown ones left out)."""
        return _fleet_facts(self)


# ------------------------------------------------------------------ reading facts


def missing_reason(v: Any) -> str | None:
    """Why a fact is not there, if ``v`` is a missing-fact marker (live ``Missing``, or a
    report's ``{"unavailable": why}`` / ``{"error": why}``); None for a value."""
    if (not v or isinstance(v, Exception)) and hasattr(v, "reason"):  # Missing, or an Unavailable handed over as is
        return str(v.reason)
    if isinstance(v, Mapping) and v and set(v) <= {"unavailable", "error"}:
        return str(v.get("unavailable") or v.get("error") or "unavailable")
    return None


def _s(v: Any) -> str:
    """A string field: numbers as written, anything else (None, containers) as ""."""
    if isinstance(v, bool) or v is None:
        return ""
    if isinstance(v, float) and not math.isfinite(v):
        return ""
    return str(v) if isinstance(v, (str, int, float)) else ""


def decode_cudnn(v: Any) -> str:
    """``torch.backends.cudnn.version()`` is an int: 91300 is 9.13.0, 8907 is 8.9.7."""
    s = _s(v)
    if not s.isdigit():
        return s
    n = int(s)
    if n >= 10000:
        return f"{n // 10000}.{n % 10000 // 100}.{n % 100}"
    return f"{n // 1000}.{n % 1000 // 100}.{n % 100}"


def _dists(v: Any) -> dict[str, Distribution] | None:
    if not isinstance(v, Mapping):
        return None
    out = {}
    for key, d in v.items():
        if not isinstance(d, Mapping) or not _s(d.get("version")):
            continue
        req = d.get("requires")
        compiled = d.get("compiled")
        out[_canon(str(key))] = Distribution(
            name=_s(d.get("name")) or str(key),
            version=_s(d.get("version")),
            location=_s(d.get("location")),
            requires=tuple(str(r) for r in req) if isinstance(req, list) else (),
            installer=_s(d.get("installer")),
            compiled=compiled if isinstance(compiled, bool) else None,
        )
    return out


def _gpu(n: int, g: Any) -> Gpu | None:
    if not isinstance(g, Mapping):
        return None
    mem = g.get("memory_total")
    index = g.get("index", n)
    return Gpu(
        index=index if isinstance(index, (int, str)) and not isinstance(index, bool) else n,
        name=_s(g.get("name")) or "?",
        uuid=_s(g.get("uuid")),
        cc=_s(g.get("cc")),
        memory_total=int(mem) if isinstance(mem, (int, float)) and not isinstance(mem, bool) and math.isfinite(mem) else None,
        mig_mode=g.get("mig_mode"),
        persistence_mode=g.get("persistence_mode"),
        compute_mode=g.get("compute_mode"),
    )


def _gpus(v: Any) -> tuple[Gpu, ...] | None:
    if not isinstance(v, list):
        return None
    return tuple(g for g in (_gpu(n, x) for n, x in enumerate(v)) if g is not None)


def _torch(build: Any, runtime: Any, dists: Mapping[str, Distribution] | None) -> TorchInfo | None:
    b = build if isinstance(build, Mapping) and missing_reason(build) is None else {}
    r = runtime if isinstance(runtime, Mapping) and missing_reason(runtime) is None and not runtime.get("import_error") else {}
    dist = (dists or {}).get("torch")
    version = (dist.version if dist else "") or _s(b.get("version")) or _s(r.get("version"))
    if not version:
        return None
    cuda = _s(b.get("cuda")) if "cuda" in b else _s(r.get("cuda"))
    hip = _s(b.get("hip"))
    kind = _s(b.get("kind")) or ("cuda" if cuda else "rocm" if hip else "cpu" if "cuda" in r else "")
    if not r:
        return TorchInfo(version, kind, cuda, hip)
    return TorchInfo(version, kind, cuda, hip, decode_cudnn(r.get("cudnn")), _s(r.get("nccl")))


def _mapping(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) and missing_reason(v) is None else {}


def _python(v: Any, platform: Mapping[str, Any]) -> PythonInfo | None:
    p = _mapping(v)
    version = _s(p.get("version")) or _s(platform.get("python"))
    if not version:
        return None
    return PythonInfo(version, _s(p.get("implementation")), _s(p.get("executable")), p.get("free_threading") is True)


def _os(v: Any, platform: Mapping[str, Any]) -> OsInfo | None:
    o = _mapping(v)
    name, kernel = _s(o.get("name")), _s(o.get("kernel")) or _s(platform.get("release"))
    if not (name or kernel):
        return None
    return OsInfo(name, _s(o.get("id")), _s(o.get("version")), kernel, _s(o.get("machine")) or _s(platform.get("machine")))


def from_facts(facts: Mapping[str, Any] | Any, platform: Mapping[str, Any] | Any = None, source: str = "live") -> Stack:
    """The typed stack from fact values (live values or ``Missing``; report JSON with
    ``{"unavailable": why}``). Never raises: what has the wrong shape is not recorded."""
    if source not in SOURCES:
        raise ValueError(f"stack source must be one of {', '.join(SOURCES)}: {source!r}")
    facts = facts if isinstance(facts, Mapping) else {}
    platform = platform if isinstance(platform, Mapping) else {}
    missing = {}
    for component, names in COMPONENT_FACTS.items():
        reasons = [missing_reason(facts.get(n)) for n in names if n in facts]
        if reasons and all(reasons):
            missing[component] = str(reasons[0])
    for one, other in (("gpus", "visible_gpus"), ("visible_gpus", "gpus")):
        if one not in facts and other in missing:
            missing[one] = missing[other]
    dists = _dists(facts.get("dists"))
    drv = _mapping(facts.get("driver"))
    gpus, visible = _gpus(facts.get("gpus")), _gpus(facts.get("visible_gpus"))
    torch = _torch(facts.get("torch_build"), facts.get("torch_runtime"), dists)
    if torch is None and dists is not None and "torch" not in missing:
        missing["torch"] = "torch is not installed"
    return Stack(
        source=source,
        os=_os(facts.get("os_release"), platform),
        python=_python(facts.get("python_info"), platform),
        driver=Driver(_s(drv.get("version")), _s(drv.get("cuda_version"))) if _s(drv.get("version")) else None,
        # A slimmer report (fleet summaries, tests) may record only one of the two lists.
        gpus=visible if "gpus" not in facts else gpus,
        visible_gpus=gpus if "visible_gpus" not in facts else visible,
        torch=torch,
        dists=dists,
        missing=missing,
    )


def facts_for(*components: str) -> tuple[str, ...]:
    """The fact names a consumer must request for ``components`` (what the runner injects)."""
    return tuple(dict.fromkeys(n for c in components for n in COMPONENT_FACTS[c]))


# component -> the facts that say whether it is there (all of them missing: the source says it is not).
COMPONENT_FACTS = {
    "driver": ("driver",),
    "gpus": ("gpus",),
    "visible_gpus": ("visible_gpus",),
    "torch": ("torch_build",),
    "dists": ("dists",),
    "python": ("python_info",),
    "os": ("os_release",),
}


# ------------------------------------------------------------------ views


def _v(stack: Stack, component: str, value: str | None) -> str | None:
    """``value`` if known; else ABSENT when the source says the component is not there."""
    if value:
        return value
    if getattr(stack, component) is not None or component in stack.missing:
        return ABSENT
    return UNKNOWN


def _runtime(s: Stack, name: str) -> str | None:
    value = getattr(s.torch, name) if s.torch else None
    return UNKNOWN if value is None else value or ABSENT


def _dist_row(*names: str):
    def get(s: Stack) -> str | None:
        if s.dists is None:
            return ABSENT if "dists" in s.missing else UNKNOWN
        d = s.dist(*names)
        return d.version if d else ABSENT

    return get


_ROWS = (
    ("OS", lambda s: _v(s, "os", s.os and s.os.name)),
    ("kernel", lambda s: _v(s, "os", s.os and s.os.kernel)),
    ("NVIDIA driver", lambda s: _v(s, "driver", s.driver and s.driver.version)),
    ("driver CUDA (max supported)", lambda s: _v(s, "driver", s.driver and s.driver.cuda_version)),
    ("Python", lambda s: _v(s, "python", s.python and s.python.version)),
    ("torch", lambda s: _v(s, "torch", s.torch and s.torch.version)),
    ("torch CUDA", lambda s: _v(s, "torch", s.torch and s.torch.cuda)),
    ("cuDNN (torch)", lambda s: _runtime(s, "cudnn")),
    ("NCCL (torch)", lambda s: _runtime(s, "nccl")),
    ("triton", _dist_row("triton")),
    ("pytorch-triton", _dist_row("pytorch-triton")),
    ("torch_xla", _dist_row("torch-xla")),
    ("libtpu", _dist_row("libtpu")),
    ("numpy", _dist_row("numpy")),
)

# The facts a fleet should agree on, in report order.
FLEET_FACTS = ("torch", "torch_cuda", "triton", "driver", "cudnn", "nccl", "gpu_model", "gpu_count", "python")


def _fleet_facts(s: Stack) -> dict[str, str]:
    out: dict[str, str] = {}
    if s.torch:
        out["torch"] = s.torch.version
        out["torch_cuda"] = s.torch.cuda or (f"rocm {s.torch.hip}" if s.torch.kind == "rocm" else "none (CPU build)")
        if s.torch.cudnn:
            out["cudnn"] = s.torch.cudnn
        if s.torch.nccl:
            out["nccl"] = s.torch.nccl
    elif "torch" in s.missing:
        out["torch"] = "not installed"
    if s.dists is not None:
        out["triton"] = s.triton.version if s.triton else "not installed"
    if s.driver or "driver" in s.missing:
        out["driver"] = s.driver.version if s.driver else "none"
    if s.gpus is not None or "gpus" in s.missing:
        gpus = s.gpus or ()
        out["gpu_model"] = ", ".join(sorted({g.name for g in gpus})) or "none"
        out["gpu_count"] = str(len(gpus))
    if s.python:
        out["python"] = s.python.version
    return {k: out[k] for k in FLEET_FACTS if k in out}


# The distributions the fleet's facts read (torch's own, Triton's); a report lists every installed one.
_FLEET_DISTS = frozenset(("torch", *TRITON_DISTS))


def _fleet_dist(key: str) -> bool:
    low = key.lower()  # every name in _FLEET_DISTS holds one of these words: the regex runs rarely
    return ("torch" in low or "triton" in low) and _canon(low) in _FLEET_DISTS


def extract_facts(facts: Mapping[str, Any], platform: Mapping[str, Any] | Any = None) -> dict[str, str]:
    """The comparable facts of one report's facts (see :meth:`Stack.fleet_facts`). Only the
    distributions those facts read are typed: a fleet reads thousands of reports, each listing
    every installed distribution (typing them all took about a quarter of ``envdoctor fleet``'s
    time over 1,000 reports under cProfile)."""
    dists = facts.get("dists") if isinstance(facts, Mapping) else None
    if isinstance(dists, Mapping):
        keep = {k: v for k, v in dists.items() if _fleet_dist(str(k))}
        facts = {**facts, "dists": keep}
    return from_facts(facts, platform).fleet_facts()
