"""The model of ``envdoctor fleet``: nodes, the facts a fleet should agree on, and the
comparison (majority and the nodes that differ). Reading the reports is the command's
(``envdoctor.commands.fleet``), rendering ``envdoctor.reporters.fleet``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from envdoctor.core.stack import FLEET_FACTS

BAD = ("fail", "error")
SHOWN = ("fail", "error", "warn")


@dataclass(slots=True)  # thousands of nodes: no per-node __dict__
class Node:
    name: str
    source: str
    status: str  # "ok" | "fail" | "warn"
    checks: dict[str, str] = field(default_factory=dict)  # check id -> status, for fail/error/warn
    messages: dict[str, str] = field(default_factory=dict)
    facts: dict[str, str] = field(default_factory=dict)
    partial: str = ""  # why the report is incomplete, if it is


@dataclass
class Unreadable:
    source: str
    reason: str


@dataclass
class FactRow:
    fact: str
    majority: str | None  # None: no majority (a tie)
    agreeing: int
    known: int
    differing: dict[str, str]  # node -> value
    unknown: list[str]


@dataclass
class Fleet:
    nodes: list[Node]
    unreadable: list[Unreadable]
    facts: list[FactRow]

    @property
    def failing(self) -> list[Node]:
        return [n for n in self.nodes if n.status == "fail"]

    @property
    def deviating(self) -> list[str]:
        return sorted({name for row in self.facts for name in row.differing})

    @property
    def partial(self) -> list[Node]:
        return [n for n in self.nodes if n.partial]

    def healthy(self, strict: bool = False) -> bool:
        warned = strict and any(n.status == "warn" for n in self.nodes)
        return not (self.failing or self.deviating or self.unreadable or self.partial or warned) and bool(self.nodes)


def node_status(statuses: Iterable[str]) -> str:
    s = set(statuses)
    return "fail" if s & set(BAD) else "warn" if "warn" in s else "ok"


def compare(nodes: Sequence[Node]) -> list[FactRow]:
    rows = []
    for key in FLEET_FACTS:
        values = {n.name: n.facts[key] for n in nodes if key in n.facts}
        if not values:
            continue
        ranked = Counter(values.values()).most_common()
        tie = len(ranked) > 1 and ranked[0][1] == ranked[1][1]
        majority = None if tie else ranked[0][0]
        differing = {name: v for name, v in values.items() if v != majority}
        unknown = [n.name for n in nodes if key not in n.facts]
        rows.append(FactRow(key, majority, ranked[0][1] if not tie else 0, len(values), differing, unknown))
    return rows
