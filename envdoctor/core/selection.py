"""Choosing which checks run: --select/--deselect by id, id prefix, tag or glob, and profiles."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Protocol

from envdoctor.core.api import CheckSpec


@dataclass(frozen=True)
class Profile:
    """What a profile runs. ``leaves_out``: tags left out unless selected explicitly;
    ``needs``: tags one of which a check must carry to run at all (None: any);
    ``gpu``: GPU checks and GPU expectations are judged (False only for ``build``: a
    ``docker build`` has no GPU, and one config serves the build and the running container);
    ``expects_gpu``: at least one visible GPU is expected (unless ``gpus`` says otherwise), so a
    GPU node that lost its GPUs fails instead of skipping every GPU check; ``keeps``: tags that
    keep a check in although a tag of it is left out (``health`` keeps the one smoke it needs)."""

    name: str
    leaves_out: frozenset[str]
    needs: frozenset[str] | None = None
    gpu: bool = True
    expects_gpu: bool = False
    keeps: frozenset[str] = frozenset()


# The one profile table; everything that depends on the profile reads it.
#   default  what a user running it by hand expects: every quick check, GPU checks included
#            (they skip with the reason on a machine without a GPU); perf and distributed
#            are opt-in.
#   build    inside ``docker build``: only checks tagged "build" (verifiable without a GPU or
#            driver). An untagged plugin check might need a GPU, so it is left out: a build
#            must never fail for lack of a GPU.
#   runtime  a running container or GPU node (HEALTHCHECK): the build checks plus the driver,
#            GPU and GPU smoke checks, and at least one GPU.
#   health   a container's HEALTHCHECK, every few minutes: only the checks tagged "health" (the
#            driver and GPUs, GPU hardware health, and ``smoke.matmul``, which proves a kernel runs
#            on every GPU); no compile, no extension loading; at least one GPU.
#   liveness the checks that run every few seconds or minutes (HEALTHCHECK, node-problem-detector,
#            Slurm): only those tagged "liveness" (NVML's driver and hardware health, and a kernel
#            on every GPU through the CUDA driver API); no torch import, no compile; at least one GPU.
#   full     runtime plus perf.
PROFILE_TABLE: dict[str, Profile] = {
    "default": Profile("default", frozenset({"perf", "distributed", "baseline", "rehearsal"})),
    "build": Profile("build", frozenset({"gpu", "perf", "distributed", "baseline", "rehearsal"}), needs=frozenset({"build"}), gpu=False),
    "runtime": Profile("runtime", frozenset({"perf", "distributed", "baseline", "rehearsal"}), expects_gpu=True),
    # A container HEALTHCHECK: only the checks tagged health (driver, GPUs, hardware health, a
    # kernel on every GPU); no compile, no extension loading: at most 5 s on the GPU machine.
    "health": Profile("health", frozenset({"perf", "distributed", "baseline", "rehearsal"}), needs=frozenset({"health"}), expects_gpu=True),
    "liveness": Profile(
        "liveness", frozenset({"perf", "distributed", "baseline", "rehearsal"}), needs=frozenset({"liveness"}), expects_gpu=True
    ),
    "full": Profile("full", frozenset({"distributed", "baseline", "rehearsal"}), expects_gpu=True),
}
# The tags each profile leaves out (kept for `envdoctor list` and plugins that read it).
PROFILES: dict[str, frozenset[str]] = {name: p.leaves_out for name, p in PROFILE_TABLE.items()}


def profile(name: str) -> Profile:
    return PROFILE_TABLE[name]


def judged_here(spec: CheckSpec, profile_name: str) -> bool:
    """False for a GPU check under a profile without GPUs (``build``): never run, never judged."""
    return PROFILE_TABLE[profile_name].gpu or "gpu" not in spec.tags


def in_profile(spec: CheckSpec, profile_name: str) -> bool:
    p = PROFILE_TABLE[profile_name]
    if p.needs is not None and not p.needs.intersection(spec.tags):
        return False
    return bool(p.keeps.intersection(spec.tags)) or not p.leaves_out.intersection(spec.tags)


def split_patterns(values: Iterable[str]) -> list[str]:
    return [p.strip() for v in values for p in v.split(",") if p.strip()]


class Selectable(Protocol):
    """What a pattern is matched against: a check's spec, or the row of a check the registry refused."""

    @property
    def id(self) -> str: ...

    @property
    def tags(self) -> tuple[str, ...]: ...


def matches(spec: Selectable, pattern: str) -> bool:
    return (
        spec.id == pattern
        or spec.id.startswith(pattern.rstrip(".") + ".")
        or pattern in spec.tags
        or (any(ch in pattern for ch in "*?[") and fnmatchcase(spec.id, pattern))
    )


def choose(
    specs: Sequence[CheckSpec], select: Sequence[str] = (), deselect: Sequence[str] = (), profile: str = "default"
) -> list[CheckSpec]:
    """Explicit --select wins over the profile's exclusions; --deselect wins over both."""
    if select:
        chosen = [s for s in specs if any(matches(s, p) for p in select)]
    else:
        chosen = [s for s in specs if in_profile(s, profile)]
    return [s for s in chosen if not any(matches(s, p) for p in deselect)]


def unmatched(specs: Sequence[CheckSpec], patterns: Sequence[str]) -> list[str]:
    return [p for p in patterns if not any(matches(s, p) for s in specs)]


def names(specs: Sequence[CheckSpec]) -> list[str]:
    """Everything a pattern can name: ids, their dotted prefixes (areas) and tags."""
    out: dict[str, None] = {}
    for s in specs:
        parts = s.id.split(".")
        for i in range(1, len(parts) + 1):
            out[".".join(parts[:i])] = None
        out.update(dict.fromkeys(s.tags))
    return list(out)


def no_match_message(what: str, missing: Sequence[str], specs: Sequence[CheckSpec]) -> str:
    """One line: ``--deselect: no check matches 'smok' (did you mean 'smoke'?)``."""
    import difflib  # only a bad --select/--deselect needs it, not every start-up

    known = names(specs)
    parts = []
    for m in missing:
        close = difflib.get_close_matches(m, known, n=1, cutoff=0.6)
        parts.append(repr(m) + (f" (did you mean {close[0]!r}?)" if close else ""))
    return f"{what}: no check matches {', '.join(parts)} (see `envdoctor list`)"
