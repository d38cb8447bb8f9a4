"""``envdoctor fleet``'s renderers: the text table and the JSON form."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from envdoctor.core.fleet import Fleet

CELL = {"fail": "FAIL", "error": "ERR", "warn": "warn"}


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def render_text(fleet: Fleet, strict: bool = False) -> str:
    lines = [f"envdoctor fleet: {len(fleet.nodes)} node(s) from {len({n.source for n in fleet.nodes})} report(s)"]
    if fleet.unreadable:
        lines[0] += f", {len(fleet.unreadable)} unreadable"
    lines.append("")
    ids = sorted({cid for n in fleet.nodes for cid in n.checks})
    if fleet.nodes:
        lines.append("Nodes × failing checks" + ("" if ids else " (none)"))
        head = ["node", "status", *[f"[{i + 1}]" for i in range(len(ids))]]
        body = [
            [n.name, n.status.upper() if n.status != "ok" else "ok", *[CELL.get(n.checks.get(c, ""), ".") for c in ids]]
            for n in fleet.nodes
        ]
        lines += ["  " + line for line in _table([head, *body])]
        for i, cid in enumerate(ids):
            lines.append(f"  [{i + 1}] {cid}")
        lines.append("")
    if fleet.facts:
        lines.append("Facts that should agree")
        rows = [["fact", "majority", "nodes", "differing"]]
        for row in fleet.facts:
            major = row.majority if row.majority is not None else "(no majority)"
            diff = ", ".join(f"{n}: {v}" for n, v in sorted(row.differing.items())) or "-"
            rows.append([row.fact, major, f"{row.agreeing}/{row.known}", diff])
        lines += ["  " + line for line in _table(rows)]
        lines.append("")
    if fleet.unreadable or fleet.partial:
        lines.append("Unreadable or partial reports")
        for u in fleet.unreadable:
            lines.append(f"  {u.source}: {u.reason}")
        for n in fleet.partial:
            lines.append(f"  {n.source} ({n.name}): partial: {n.partial}")
        lines.append("")
    problems = []
    if fleet.failing:
        problems.append(f"{len(fleet.failing)} node(s) failing: {', '.join(n.name for n in fleet.failing)}")
    if fleet.deviating:
        problems.append(f"{len(fleet.deviating)} node(s) deviating: {', '.join(fleet.deviating)}")
    if fleet.unreadable:
        problems.append(f"{len(fleet.unreadable)} unreadable report(s)")
    if fleet.partial:
        problems.append(f"{len(fleet.partial)} partial report(s)")
    if not fleet.nodes:
        problems.append("no readable report")
    if strict and any(n.status == "warn" for n in fleet.nodes):
        problems.append("warnings (--strict)")
    lines.append(("PROBLEMS FOUND: " + "; ".join(problems)) if problems else f"HEALTHY: {len(fleet.nodes)} node(s) pass and agree")
    return "\n".join(lines) + "\n"


def to_dict(fleet: Fleet, strict: bool = False) -> dict[str, Any]:
    return {
        "healthy": fleet.healthy(strict),
        "nodes": [
            {
                "name": n.name,
                "source": n.source,
                "status": n.status,
                "checks": n.checks,
                "messages": n.messages,
                "facts": n.facts,
                "partial": n.partial,
            }
            for n in fleet.nodes
        ],
        "facts": [
            {
                "fact": r.fact,
                "majority": r.majority,
                "agreeing": r.agreeing,
                "known": r.known,
                "differing": r.differing,
                "unknown": r.unknown,
            }
            for r in fleet.facts
        ],
        "unreadable": [{"source": u.source, "reason": u.reason} for u in fleet.unreadable],
        "failing": [n.name for n in fleet.failing],
        "deviating": fleet.deviating,
    }


def render_json(fleet: Fleet, strict: bool = False) -> str:
    return json.dumps(to_dict(fleet, strict), indent=2) + "\n"
