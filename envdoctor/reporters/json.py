"""Machine-readable report. The shape is a public contract: envdoctor/schema/report.schema.json."""

from __future__ import annotations

import json
from typing import Any

from envdoctor.core.api import ACTIONS, Fix, Item, Status
from envdoctor.core.report import CheckOutcome, Report


def result_to_dict(r: CheckOutcome) -> dict[str, Any]:
    return {
        "id": r.id,
        "title": r.title,
        "area": r.area,
        "status": r.status.value,
        "message": r.message,
        "hint": r.hint,
        "tags": list(r.tags),
        "source": r.source,
        "duration_s": round(r.duration, 4),
        "details": _plain(r.details),
        "items": [{"name": i.name, "status": i.status.value, "message": i.message} for i in r.items],
        "fixes": [fix_to_dict(f) for f in r.fixes],
        "action": r.recommended,
    }


def fix_to_dict(f: Fix) -> dict[str, Any]:
    return {"argv": list(f.argv), "command": f.command, "scope": f.scope, "needs_root": f.needs_root}


def _fixes_from(raw: Any) -> tuple[Fix, ...]:
    """Fixes of a 1.1+ report; a 1.0 report has none, and a malformed one is left out."""
    out = []
    for f in raw if isinstance(raw, list) else ():
        try:
            out.append(Fix(tuple(f["argv"]), scope=str(f.get("scope", "system")), needs_root=bool(f.get("needs_root", False))))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return tuple(out)


def _plain(value: Any) -> Any:
    """JSON-safe copy (facts may hold tuples, paths or odd objects)."""
    return json.loads(json.dumps(value, default=str))


def to_dict(report: Report, *, strict: bool = False) -> dict[str, Any]:
    counts = report.counts()
    return {
        "schema_version": report.schema_version,
        "tool": {"name": "envdoctor", "version": report.tool_version},
        "started_at": report.started_at,
        "duration_s": round(report.duration, 3),
        "platform": _plain(report.platform),
        "options": _plain(report.options),
        "summary": {
            **counts,
            "total": len(report.results),
            "healthy": report.healthy(strict),
            "interrupted": report.interrupted,
            "timed_out": report.timed_out,
        },
        "results": [result_to_dict(r) for r in report.results],
        "facts": _plain(report.facts),
        "facts_compacted": list(report.facts_compacted),
    }


def render_json(report: Report, *, verbose: bool = False, color: bool = False, strict: bool = False) -> str:
    # One result per line (grep finds a check's whole row); each fact's entries one per line.
    fields = [f"  {json.dumps(k)}: {dumps(v, 1, 2 if k == 'results' else 3)}" for k, v in to_dict(report, strict=strict).items()]
    return "{\n" + ",\n".join(fields) + "\n}\n"


INLINE_WIDTH = 100


def dumps(value: Any, depth: int = 0, inline_from: int = 3) -> str:
    """JSON indented by two spaces per level, down to ``inline_from`` levels; below that, and
    wherever the one-line form fits in INLINE_WIDTH characters, a value is one line. A GPU node's
    report is a third of its fully indented size, and a package or a mount is one line, not
    seven. Same data as json.dumps (readers parse it as any JSON)."""
    flat = json.dumps(value, separators=(",", ":"))  # one-line values carry no padding: reports stay small
    if not isinstance(value, (dict, list)) or not value or depth >= inline_from or 2 * depth + len(flat) <= INLINE_WIDTH:
        return flat
    inner = "  " * (depth + 1)
    if isinstance(value, dict):
        parts = [f"{inner}{json.dumps(str(k))}: {dumps(v, depth + 1, inline_from)}" for k, v in value.items()]
        return "{\n" + ",\n".join(parts) + "\n" + "  " * depth + "}"
    parts = [f"{inner}{dumps(v, depth + 1, inline_from)}" for v in value]
    return "[\n" + ",\n".join(parts) + "\n" + "  " * depth + "]"


def result_from_dict(d: dict[str, Any]) -> CheckOutcome:
    return CheckOutcome(
        id=str(d["id"]),
        title=str(d.get("title", d["id"])),
        status=Status(d["status"]),
        message=str(d.get("message", "")),
        hint=str(d.get("hint", "")),
        tags=tuple(d.get("tags", ())),
        source=str(d.get("source", "")),
        details=d.get("details") or {},
        items=tuple(Item(str(i.get("name", "")), Status(i.get("status", "pass")), str(i.get("message", ""))) for i in d.get("items", ())),
        duration=float(d.get("duration_s", 0.0)),
        fixes=_fixes_from(d.get("fixes")),
        action=d["action"] if d.get("action") in ACTIONS else "",
    )


def from_dict(d: dict[str, Any]) -> Report:
    """Rebuild a Report from its JSON form (raises KeyError/ValueError/TypeError if malformed)."""
    return Report(
        tool_version=str(d["tool"]["version"]),
        started_at=str(d["started_at"]),
        duration=float(d["duration_s"]),
        platform=d.get("platform") or {},
        results=tuple(result_from_dict(r) for r in d["results"]),
        facts=d.get("facts") or {},
        options=d.get("options") or {},
        interrupted=bool(d.get("summary", {}).get("interrupted", False)),
        timed_out=bool(d.get("summary", {}).get("timed_out", False)),
        schema_version=str(d["schema_version"]),
        facts_compacted=tuple(str(n) for n in d.get("facts_compacted") or () if isinstance(n, str)),
    )
