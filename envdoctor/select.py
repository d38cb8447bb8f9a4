"""Choosing which checks run: --select/--deselect by id, id prefix, tag or glob, and profiles."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

from envdoctor.api import CheckSpec

# Tags left out unless selected explicitly, per profile.
PROFILES: dict[str, frozenset[str]] = {
    # What a user running it by hand expects: everything that is quick enough, GPU smokes included.
    "default": frozenset({"perf", "distributed"}),
    # docker build: nothing that needs a GPU or a driver.
    "build": frozenset({"gpu", "perf", "distributed"}),
    # container health check / a GPU node: driver, GPUs and GPU smokes.
    "runtime": frozenset({"perf", "distributed"}),
    # everything, performance included.
    "full": frozenset({"distributed"}),
}


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
        hidden = PROFILES[profile]
        chosen = [s for s in specs if not hidden.intersection(s.tags)]
    return [s for s in chosen if not any(matches(s, p) for p in deselect)]


def unmatched(specs: Sequence[CheckSpec], patterns: Sequence[str]) -> list[str]:
    return [p for p in patterns if not any(matches(s, p) for s in specs)]
