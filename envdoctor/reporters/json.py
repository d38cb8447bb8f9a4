"""Machine-readable report. The shape is a public contract: envdoctor/schema/report.schema.json;
the data is the Report's own (``envdoctor.core.report.to_dict``), laid out here."""

from __future__ import annotations

import json
from typing import Any

from envdoctor.core.report import Report, from_dict, to_dict  # noqa: F401 - the report's own serialisation


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
