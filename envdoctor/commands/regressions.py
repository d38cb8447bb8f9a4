"""What counts as a regression between two reports, beyond a check's verdict getting worse.

A migration diff exists to say "the new machine is worse, and probably because of this". So
besides checks whose severity rose, these are regressions: something the old environment had
and the new one lacks (a GPU, the NVIDIA driver, CUDA in torch, torch, Triton, torch_xla), and
measured numbers that got worse by more than a threshold. Each regression names the changed
facts most likely responsible, from a small rule table (never tuned per report).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
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
    threshold: float  # the relative change in the bad direction that makes it a regression
    regressed: bool


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
TIME_RISE = 0.20  # compile seconds and bench ms/step: more than 20 % higher is a regression
COMPILE_NOISE_S = 1.0  # a compile that took 0.3 s and now 0.4 s is noise, not a regression


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


def _perf_numbers(facts: Mapping[str, Any]) -> dict[str, tuple[float, str, str]]:
    """name -> (value, unit, "higher"|"lower" is better) from the perf facts."""
    out: dict[str, tuple[float, str, str]] = {}
    for idx, d in _devices(facts, "matmul_perf").items():
        mm = d.get("matmul") if isinstance(d.get("matmul"), Mapping) else {}
        for dtype, m in sorted(mm.items()):
            v = _num(m.get("tflops")) if isinstance(m, Mapping) else None
            if v is not None:
                out[f"GPU {idx} matmul {dtype}"] = (v, "TFLOP/s", "higher")
    for idx, d in _devices(facts, "bandwidth_perf").items():
        bw = d.get("bandwidth")
        v = _num(bw.get("gbps")) if isinstance(bw, Mapping) else None
        if v is not None:
            out[f"GPU {idx} memory bandwidth"] = (v, "GB/s", "higher")
    bench = facts.get("bench")
    rows = bench.get("results") if isinstance(bench, Mapping) else None
    for r in rows if isinstance(rows, list) else ():
        v = _num(r.get("step_ms")) if isinstance(r, Mapping) else None
        if v is not None:
            out[f"bench {r.get('mode', '?')} step"] = (v, "ms/step", "lower")
    return out


def _compile_seconds(results: list[Mapping[str, Any]]) -> dict[str, tuple[float, str, str]]:
    """Compile times the smoke tests record in their details (``seconds``, per part)."""
    out: dict[str, tuple[float, str, str]] = {}
    for r in results:
        details = r.get("details")
        if not str(r.get("id", "")).startswith("smoke.") or not isinstance(details, Mapping):
            continue
        if _num(details.get("seconds")) is not None:
            out[f"{r['id']} time"] = (float(details["seconds"]), "s", "lower")
        parts = details.get("parts")
        for part, p in sorted(parts.items()) if isinstance(parts, Mapping) else ():
            v = _num(p.get("seconds")) if isinstance(p, Mapping) else None
            if v is not None:
                out[f"{r['id']} {part} time"] = (v, "s", "lower")
    return out


def compare_numbers(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Metric]:
    """Every number both reports measured, with its change and whether that is a regression."""
    fa, fb = a.get("facts") or {}, b.get("facts") or {}
    na = {**_perf_numbers(fa), **_compile_seconds(a.get("results") or [])}
    nb = {**_perf_numbers(fb), **_compile_seconds(b.get("results") or [])}
    out = []
    for name in sorted(set(na) & set(nb)):
        (va, unit, better), (vb, _, _) = na[name], nb[name]
        change = (vb - va) / va
        if better == "higher":
            threshold, bad = PERF_DROP, change < -PERF_DROP
        else:
            threshold, bad = TIME_RISE, change > TIME_RISE and (unit != "s" or vb - va >= COMPILE_NOISE_S)
        out.append(Metric(name, va, vb, unit, change, threshold, bad))
    return out


# ------------------------------------------------------------------ likely causes

# (check ids or prefixes, changed facts to blame first): the first matching row wins. The facts
# are version labels of Stack.version_rows(), "GPUs", or "compiled distributions".
CAUSE_RULES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("triton.", "smoke.triton", "compile.triton_available"), ("triton", "pytorch-triton", "torch", "NVIDIA driver")),
    (("torch.extension_abi",), ("torch", "torch CUDA", "compiled distributions", "Python")),
    (("torch.numpy_abi",), ("numpy", "torch")),
    (("xla.", "smoke.xla"), ("torch_xla", "libtpu", "torch", "Python")),
    (
        ("nvidia.", "torch.driver_supports_cuda", "torch.cuda_available", "torch.forward_compat", "smoke.matmul", "torch.arch_support"),
        ("NVIDIA driver", "driver CUDA (max supported)", "GPUs", "torch CUDA", "torch"),
    ),
    (("smoke.", "compile."), ("torch", "triton", "pytorch-triton", "Python", "NVIDIA driver", "compiled distributions")),
    (("toolchain.",), ("Python", "OS", "torch")),
    (("torch.",), ("torch", "torch CUDA", "cuDNN (torch)", "NCCL (torch)", "NVIDIA driver", "Python")),
    (("perf.", "GPU "), ("GPUs", "NVIDIA driver", "torch", "torch CUDA")),
    (("bench ",), ("torch", "triton", "GPUs", "NVIDIA driver", "Python")),
    (("system.", "packages."), ("OS", "kernel", "Python")),
)


MAX_CAUSES = 3  # the first three by the rule's order: more is a list, not a diagnosis


def causes_for(name: str, changed: Mapping[str, str]) -> tuple[str, ...]:
    """The changed facts (``changed``: fact -> "fact a → b") the rule table blames for ``name``."""
    for patterns, facts in CAUSE_RULES:
        if any(name == p or (p.endswith((".", " ")) and name.startswith(p)) for p in patterns):
            return tuple(changed[f] for f in facts if f in changed)[:MAX_CAUSES]
    return ()
