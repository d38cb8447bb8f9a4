"""Choosing which checks run: --select/--deselect by id, id prefix, tag or glob, and profiles."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

from envdoctor.core.api import CheckSpec

# Profiles. A profile is the tags it leaves out (unless selected explicitly) and, for
# ``build``, the tags one of which a check must carry to run at all.
#   default  what a user running it by hand expects: every quick check, GPU checks included
#            (they skip with the reason on a machine without a GPU); perf and distributed
#            are opt-in.
#   build    inside ``docker build``: only checks tagged "build" (verifiable without a GPU or
#            driver: versions and pins, torch's CUDA vs the image, toolchain, Python.h, cache
#            dirs, CPU compile smoke). An untagged plugin check might need a GPU, so it is
#            left out: a build must never fail for lack of a GPU.
#   runtime  a running container or GPU node (HEALTHCHECK): the build checks plus the driver,
#            GPU and GPU smoke checks; the CLI also expects at least one GPU (expect.gpus).
#   full     runtime plus perf.
PROFILES: dict[str, frozenset[str]] = {
    "default": frozenset({"perf", "distributed", "baseline", "rehearsal"}),
    "build": frozenset({"gpu", "perf", "distributed", "baseline", "rehearsal"}),
    "runtime": frozenset({"perf", "distributed", "baseline", "rehearsal"}),
    "full": frozenset({"distributed", "baseline", "rehearsal"}),
}
PROFILE_NEEDS: dict[str, frozenset[str]] = {"build": frozenset({"build"})}


def in_profile(spec: CheckSpec, profile: str) -> bool:
    needs = PROFILE_NEEDS.get(profile)
    if needs is not None and not needs.intersection(spec.tags):
        return False
    return not PROFILES[profile].intersection(spec.tags)


def split_patterns(values: Iterable[str]) -> list[str]:
    return [p.strip() for v in values for p in v.split(",") if p.strip()]


def matches(spec: CheckSpec, pattern: str) -> bool:
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
