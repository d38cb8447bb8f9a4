"""What counts as a regression between two reports, beyond a check's verdict getting worse.

A migration diff exists to say "the new machine is worse, and probably because of this". So
besides checks whose severity rose, these are regressions: something the old environment had
and the new one lacks (a GPU, the NVIDIA driver, CUDA in torch, torch, Triton, torch_xla), and
measured numbers that got worse by more than the noise of a run explains. Each regression names
the changed facts on a path to it: the facts the check (or the measurement) is derived from, as
the registry knows them, and the distributions the check declares it depends on (``blame=``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from envdoctor.core.stack import TRITON_DISTS, Stack


@dataclass(frozen=True)
class Regression:
    kind: str  # "check" (verdict worse), "lost" (a component gone), "perf" (a number worse)
    name: str  # check id, component, or metric
    message: str
    causes: tuple[str, ...] = ()  # the changed facts most likely responsible ("triton 3.6.0 → 3.5.0")


@dataclass(frozen=True)
class Metric:
    name: str
    a: float
    b: float
    unit: str
    change: float  # relative: (b - a) / a
    threshold: float  # the relative change in the bad direction (of ``judged``) that makes it a regression
    regressed: bool
    source: str = ""  # the check that judges it: where a cause's path must lead
    cpu: tuple[float, float] | None = None  # host seconds: the CPU seconds of the same work in A and B
    judged: float = 0.0  # the change judged: of ``cpu`` when both reports have it, else ``change``

    @property
    def shown(self) -> bool:
        """Worth a line: beyond the rounding of a "+0%" (the JSON keeps every number)."""
        return self.regressed or abs(self.judged) >= SHOWN_CHANGE


# ------------------------------------------------------------------ components lost


def lost_components(a: Stack, b: Stack) -> list[Regression]:
    """What A had and B, by its own account, does not (unknown in B is not a loss)."""
    out = []
    if a.driver and b.driver is None and "driver" in b.missing:
        out.append(Regression("lost", "NVIDIA driver", f"the NVIDIA driver is gone ({a.driver.version} → none): {b.missing['driver']}"))
    if a.torch and a.torch.cuda and b.torch and not b.torch.cuda:
        out.append(
            Regression(
                "lost",
                "torch CUDA",
                f"torch lost CUDA: {a.torch.version} (CUDA {a.torch.cuda}) → {b.torch.version} ({b.torch.kind or 'non-CUDA'} build)",
            )
        )
    for label, names in (("torch", ("torch",)), ("Triton", TRITON_DISTS), ("torch_xla", ("torch-xla",))):
        had, has = a.dist(*names), b.dist(*names)
        if had and not has and b.dists is not None:
            out.append(Regression("lost", label, f"{label} is no longer installed (was {had.name} {had.version})"))
    return out


def lost_gpus(removed: list[dict[str, Any]]) -> list[Regression]:
    return [Regression("lost", f"GPU {g['index']}", f"{g['label']} is gone") for g in removed]


# ------------------------------------------------------------------ numbers

PERF_DROP = 0.10  # matmul TFLOP/s and memory bandwidth: more than 10 % lower is a regression
TIME_RISE = 0.20  # bench ms/step (CUDA events time the GPU, not the host): more than 20 % higher
# A compile's wall-clock seconds follow the host's load, not the stack: two runs of one unchanged
# venv on a loaded 2-core machine took 8.6 s and 34.3 s (+299 %), and the same run's import of
# torch is no yardstick for it (5.0 -> 5.8 s while a compile went 8.6 -> 19.2 s). The CPU time
# the compile used (``cpu_seconds``: the worker's and its C++ compiler's) is what it cost, and
# load does not inflate it: that is judged, more than 50 % and a second more being a
# regression. A report without it (older ones) is judged by wall-clock seconds against a
# factor wider than the load was seen to cause: more than 5 times as long.
SECONDS_RISE = 0.50
SECONDS_RISE_WALL = 4.0
COMPILE_NOISE_S = 1.0  # a compile that took 0.3 s and now 0.4 s is noise, not a regression
SHOWN_CHANGE = 0.05  # a text or Markdown line for a number that moved by 5 % or more


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) and v > 0 else None


def _devices(facts: Mapping[str, Any], fact: str) -> dict[str, Mapping[str, Any]]:
    v = facts.get(fact)
    devs = v.get("devices") if isinstance(v, Mapping) else None
    if not isinstance(devs, list):
        return {}
    return {str(d.get("index", n)): d for n, d in enumerate(devs) if isinstance(d, Mapping)}


@dataclass(frozen=True)
class _Number:
    value: float
    unit: str
    better: str  # "higher" | "lower"
    source: str
    cpu: float | None = None  # host seconds: the CPU seconds of the same work


def _perf_numbers(facts: Mapping[str, Any]) -> dict[str, _Number]:
    """name -> number from the perf facts."""
    out: dict[str, _Number] = {}
    for idx, d in _devices(facts, "matmul_perf").items():
        mm = v if isinstance(v := d.get("matmul"), Mapping) else {}
        for dtype, m in sorted(mm.items()):
            v = _num(m.get("tflops")) if isinstance(m, Mapping) else None
            if v is not None:
                out[f"GPU {idx} matmul {dtype}"] = _Number(v, "TFLOP/s", "higher", "perf.matmul")
    for idx, d in _devices(facts, "bandwidth_perf").items():
        bw = d.get("bandwidth")
        v = _num(bw.get("gbps")) if isinstance(bw, Mapping) else None
        if v is not None:
            out[f"GPU {idx} memory bandwidth"] = _Number(v, "GB/s", "higher", "perf.memory_bandwidth")
    bench = facts.get("bench")
    rows = bench.get("results") if isinstance(bench, Mapping) else None
    for r in rows if isinstance(rows, list) else ():
        v = _num(r.get("step_ms")) if isinstance(r, Mapping) else None
        if v is not None:
            out[f"bench {r.get('mode', '?')} step"] = _Number(v, "ms/step", "lower", "bench")
    return out


def _compile_seconds(results: list[Mapping[str, Any]]) -> dict[str, _Number]:
    """Compile times the smoke tests record in their details (``seconds``, per part, with the
    part's ``cpu_seconds`` where the report has them)."""
    out: dict[str, _Number] = {}
    for r in results:
        details = r.get("details") if isinstance(r, Mapping) else None
        cid = str(r.get("id", "")) if isinstance(r, Mapping) else ""
        if not cid.startswith("smoke.") or not isinstance(details, Mapping):
            continue
        v = _num(details.get("seconds"))
        if v is not None:
            out[f"{cid} time"] = _Number(v, "s", "lower", cid, _num(details.get("cpu_seconds")))
        parts = details.get("parts")
        for part, p in sorted(parts.items()) if isinstance(parts, Mapping) else ():
            v = _num(p.get("seconds")) if isinstance(p, Mapping) else None
            if v is not None:
                out[f"{cid} {part} time"] = _Number(v, "s", "lower", cid, _num(p.get("cpu_seconds")))
    return out


def _judge(x: _Number, y: _Number) -> tuple[float, float, bool]:
    """(judged change, its threshold, regressed) of one number from A (x) to B (y)."""
    change = (y.value - x.value) / x.value
    if x.better == "higher":
        return change, PERF_DROP, change < -PERF_DROP
    if x.unit != "s":
        return change, TIME_RISE, change > TIME_RISE
    if x.cpu is not None and y.cpu is not None:
        judged = (y.cpu - x.cpu) / x.cpu
        return judged, SECONDS_RISE, judged > SECONDS_RISE and y.cpu - x.cpu >= COMPILE_NOISE_S
    return change, SECONDS_RISE_WALL, change > SECONDS_RISE_WALL and y.value - x.value >= COMPILE_NOISE_S


def compare_numbers(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Metric]:
    """Every number both reports measured, with its change and whether that is a regression."""
    fa, fb = a.get("facts") or {}, b.get("facts") or {}
    na = {**_perf_numbers(fa), **_compile_seconds(a.get("results") or [])}
    nb = {**_perf_numbers(fb), **_compile_seconds(b.get("results") or [])}
    out = []
    for name in sorted(set(na) & set(nb)):
        x, y = na[name], nb[name]
        judged, threshold, bad = _judge(x, y)
        cpu = (x.cpu, y.cpu) if x.cpu is not None and y.cpu is not None else None
        out.append(Metric(name, x.value, y.value, x.unit, (y.value - x.value) / x.value, threshold, bad, x.source, cpu, judged))
    return out


# ------------------------------------------------------------------ likely causes

# Which facts carry each version row of Stack.version_rows(), and the distribution it names:
# a row's change reaches a check through those facts, or through a distribution the check blames.
ROW_FACTS: Mapping[str, tuple[tuple[str, ...], str]] = {
    "OS": (("os_release",), ""),
    "kernel": (("os_release",), ""),
    "NVIDIA driver": (("driver",), ""),
    "driver CUDA (max supported)": (("driver",), ""),
    "Python": (("python_info",), ""),
    "torch": (("torch_build", "torch_runtime", "torch_spec"), "torch"),
    "torch CUDA": (("torch_build", "torch_runtime"), "torch"),
    "cuDNN (torch)": (("torch_runtime",), ""),
    "NCCL (torch)": (("torch_runtime",), ""),
    "triton": (("triton_pkg",), "triton"),
    "pytorch-triton": (("triton_pkg",), "pytorch-triton"),
    "torch_xla": (("torch_xla",), "torch-xla"),
    "libtpu": ((), "libtpu"),
    "numpy": ((), "numpy"),
}
GPU_FACTS = ("gpus", "visible_gpus", "pci_gpus")
COMPILED = "compiled"  # a check's blame= entry for "any distribution that ships extension modules"
MAX_CAUSES = 3  # the nearest three: more is a list, not a diagnosis


@dataclass(frozen=True)
class Changed:
    """One change between the reports, as a possible cause: what it reads as, the facts that
    carry it, and the distribution it is (a check can blame that by name)."""

    text: str  # "triton 3.6.0 → 3.5.0"
    facts: tuple[str, ...] = ()
    package: str = ""
    compiled: bool = False
    direct_only: bool = False  # an environment variable: only a check that reads ``env`` itself


@dataclass(frozen=True)
class Dependencies:
    """What every check and fact is derived from (their parameters, from the registry) and the
    distributions each check blames: the paths along which a change can cause a regression."""

    checks: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)  # id -> (params, blame)
    facts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # fact -> params

    @classmethod
    def of(cls, registry: Any) -> Dependencies:
        checks = {c.id: (tuple(p.name for p in c.params), tuple(c.blame)) for c in registry.checks}
        return cls(checks, {n: tuple(p.name for p in f.params) for n, f in registry.facts.items()})

    def depths(self, name: str) -> tuple[dict[str, int], tuple[str, ...]]:
        """(fact -> how far from check ``name``: 0 a parameter or a fact it blames; the
        distributions it blames); nothing for a check the registry does not know."""
        params, blame = self.checks.get(name, ((), ()))
        seen: dict[str, int] = {}
        frontier, depth = [*params, *(b for b in blame if b in self.facts)], 0
        while frontier:
            nxt: list[str] = []
            for f in frontier:
                if f not in seen:
                    seen[f] = depth
                    nxt += self.facts.get(f, ())
            frontier, depth = nxt, depth + 1
        return seen, blame


@lru_cache(maxsize=1)
def installed_dependencies() -> Dependencies:
    """The dependencies of the installed checks (built-ins and entry-point plugins)."""
    from envdoctor.core.registry import discover

    return Dependencies.of(discover())


def _distance(c: Changed, depths: Mapping[str, int], blame: Iterable[str]) -> int | None:
    blamed = set(blame)
    if c.package and (c.package in blamed or (c.compiled and COMPILED in blamed)):
        return 0
    if c.direct_only:
        return 0 if depths.get("env") == 0 else None
    near = [depths[f] for f in c.facts if f in depths]
    return min(near) if near else None


def causes_for(name: str, changed: Iterable[Changed], deps: Dependencies) -> tuple[str, ...]:
    """The changes with a path to check ``name`` (a regressed check, or the one that judges a
    measurement), nearest first."""
    depths, blame = deps.depths(name)
    found = []
    for n, c in enumerate(changed):
        d = _distance(c, depths, blame)
        if d is not None:
            found.append((d, n, c.text))
    return tuple(dict.fromkeys(text for _, _, text in sorted(found)))[:MAX_CAUSES]
