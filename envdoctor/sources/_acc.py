"""What the readers found, before it becomes facts: one accumulator all readers write to.

Several readers may see the same field (the torch version is in collect_env, in ``[pip3]``
lines and in a pip list); each value carries the rank of its source and the best one wins
(lower rank = more direct evidence), ties going to the first seen. The line each value came
from is kept for quoting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from envdoctor.core.names import canonical
from envdoctor.core.patterns import lazy

# Source ranks: the tool that measured a thing beats one that merely lists it.
RANK_REPORT = 0  # envdoctor's own report: the live facts themselves
RANK_SMI_Q = 1
RANK_SMI = 2
RANK_COLLECT_ENV = 3
RANK_PIP = 4  # pip list / pip freeze
RANK_PIP3 = 5  # collect_env's [pip3] lines
RANK_CONDA = 6
RANK_ERROR = 7  # derived from an error message or a path in a traceback

# The facts a collect_env shows (their ``ask=`` is its output): what a cut or edited one lacks.
COLLECT_ENV_FACTS = ("torch_build", "torch_runtime", "python_info", "os_release")


@dataclass(frozen=True)
class Want:
    """What a paste lacks: ``facts`` a reporter could add (triage asks for them in each fact's
    own ``ask=`` words), or ``text``, the reader's own words where the paste itself says more (a
    collect_env cut after a named line, a traceback without its exception), covering ``facts``."""

    facts: tuple[str, ...] = ()
    text: str = ""


LOCAL_CUDA = lazy(r"^cu(\d{2,3})$")
LOCAL_ROCM = lazy(r"^rocm(\d+(?:\.\d+)*)$")


def cuda_from_tag(tag: str) -> str | None:
    """``cu124`` -> ``12.4``, ``cu92`` -> ``9.2``, ``cu130`` -> ``13.0`` (the wheel's local tag)."""
    m = LOCAL_CUDA.match(tag.lower())
    if not m:
        return None
    digits = m.group(1)
    return f"{digits[:-1]}.{digits[-1]}"


def build_of_local(local: str) -> dict[str, Any]:
    """What a torch version's local part says about the build: kind and CUDA/ROCm version."""
    low = local.lower()
    cuda = cuda_from_tag(low)
    if cuda:
        return {"kind": "cuda", "cuda": cuda}
    m = LOCAL_ROCM.match(low)
    if m:
        return {"kind": "rocm", "hip": m.group(1)}
    if low == "cpu" or low.startswith("cpu."):
        return {"kind": "cpu"}
    if low.startswith("xpu"):
        return {"kind": "xpu"}
    return {}


CONDA_CUDA_DOTTED = lazy(r"cuda(\d{1,2})\.(\d{1,2})")
CONDA_CUDA_PACKED = lazy(r"cuda(\d{2,3})(?![\d.])")


def build_of_conda(build: str) -> dict[str, Any]:
    """A conda build string: ``py3.10_cuda12.1_cudnn8.9.2_0`` (pytorch channel), ``cuda118py310h…``
    (conda-forge), ``py3.9_cpu_0`` / ``cpu_py39h…`` (CPU builds)."""
    low = build.lower()
    m = CONDA_CUDA_DOTTED.search(low)
    if m:
        return {"kind": "cuda", "cuda": f"{int(m.group(1))}.{int(m.group(2))}"}
    m = CONDA_CUDA_PACKED.search(low)
    if m:
        return {"kind": "cuda", "cuda": cuda_from_tag("cu" + m.group(1))}
    if low.startswith("cpu_") or "_cpu_" in low or low.endswith("_cpu") or low == "cpu":
        return {"kind": "cpu"}
    return {}


@dataclass
class Acc:
    """What the readers have read from a paste so far, each value with its rank and line."""

    kinds: list[str] = field(default_factory=list)
    fields: dict[tuple[str, str], tuple[int, Any]] = field(default_factory=dict)
    evidence: dict[str, str] = field(default_factory=dict)
    gpu_sets: list[tuple[int, list[dict]]] = field(default_factory=list)
    amd_gpus: list[dict] = field(default_factory=list)  # AMD GPUs by gfx target (rocminfo, gcnArchName)
    dists: dict[str, dict] = field(default_factory=dict)
    env_vars: dict[str, str] = field(default_factory=dict)
    fabric: dict[str, dict] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: list[Want] = field(default_factory=list)
    whole: dict[str, Any] = field(default_factory=dict)  # facts taken as they are (envdoctor's report)
    unavailable: dict[str, str] = field(default_factory=dict)
    consumed: set[int] = field(default_factory=set)  # line numbers a reader has claimed
    cuda_needs: list[tuple[str, str]] = field(default_factory=list)  # (package or "", CUDA library) an error names

    def kind(self, name: str) -> None:
        if name not in self.kinds:
            self.kinds.append(name)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def want(self, *facts: str, text: str = "") -> None:
        """The paste lacks ``facts`` (or what ``text`` says, covering ``facts``)."""
        wanted = Want(facts, text)
        if wanted not in self.missing:
            self.missing.append(wanted)

    def put(self, fact: str, name: str, value: Any, line: str, rank: int) -> None:
        if value is None:
            return
        old = self.fields.get((fact, name))
        if old is None or rank < old[0]:
            self.fields[(fact, name)] = (rank, value)
            self.evidence[f"{fact}.{name}"] = line.strip()[:300]

    def get(self, fact: str, name: str, default: Any = None) -> Any:
        v = self.fields.get((fact, name))
        return default if v is None else v[1]

    def has(self, fact: str, name: str) -> bool:
        return (fact, name) in self.fields

    def add_gpus(self, gpus: list[dict], rank: int, line: str) -> None:
        if gpus:
            self.gpu_sets.append((rank, gpus))
            self.evidence.setdefault(f"gpus@{rank}", line.strip()[:300])

    def put_dist(self, name: str, version: str, line: str, rank: int, installer: str = "") -> None:
        """One installed distribution; a second copy of another version is kept in ``others``."""
        if not name or not version:
            return
        key = canonical(name)
        entry = {"name": name, "version": version, "installer": installer, "_rank": rank}
        old = self.dists.get(key)
        if old is None or rank < old["_rank"]:
            if old is not None and old["version"] != version:
                entry["_others"] = [
                    *old.get("_others", []),
                    {"version": old["version"], "location": f"(pasted {old['installer'] or 'list'})"},
                ]
            self.dists[key] = entry
            self.evidence[f"dists.{key}"] = line.strip()[:300]
        elif old["version"] != version and version not in {o["version"] for o in old.get("_others", [])}:
            old.setdefault("_others", []).append({"version": version, "location": f"(pasted {installer or 'list'})"})
