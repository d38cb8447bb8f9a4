"""The report: what a run produced. Reporters are pure functions of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from envdoctor.api import Item, Status

SCHEMA_VERSION = "1.0"


@dataclass(frozen=True)
class CheckOutcome:
    id: str
    title: str
    status: Status
    message: str = ""
    hint: str = ""
    tags: tuple[str, ...] = ()
    source: str = "built-in"
    details: Mapping[str, Any] = field(default_factory=dict)
    items: tuple[Item, ...] = ()
    duration: float = 0.0

    @property
    def area(self) -> str:
        return self.id.split(".", 1)[0]


@dataclass(frozen=True)
class Report:
    tool_version: str
    started_at: str
    duration: float
    platform: Mapping[str, Any]
    results: tuple[CheckOutcome, ...]
    facts: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    interrupted: bool = False
    timed_out: bool = False
    schema_version: str = SCHEMA_VERSION

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Status}
        for r in self.results:
            out[r.status.value] += 1
        return out

    def problems(self) -> tuple[CheckOutcome, ...]:
        return tuple(r for r in self.results if r.status in (Status.WARN, Status.FAIL, Status.ERROR))

    def healthy(self, strict: bool = False) -> bool:
        bad = {Status.FAIL, Status.ERROR} | ({Status.WARN} if strict else set())
        return not any(r.status in bad for r in self.results)
