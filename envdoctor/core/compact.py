"""Small reports by default: facts shortened at the report boundary, by rules their owners give.

A GPU node's full facts (the shared-library cache, every mount, every package's requirements)
made a 300 KB JSON report and a Markdown paste at GitHub's size limit. Checks judge the full
values; the report keeps what checks and readers use (``diff``, ``fleet``, triage), as each
fact's provider declares with ``@fact(..., compact=...)``. The engine knows no fact by name:
a fact without a rule is kept as it is, unless it is too large to belong in a small report.
``--full-facts`` keeps every value whole.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from envdoctor.core.api import FactSpec
from envdoctor.core.report import Report

# A fact without a compact rule larger than this (as JSON) is left out of the default report:
# a plugin's dump must not undo the size bound. Its dependents already judged it.
MAX_FACT_CHARS = 16_384


def _size(value: Any) -> int:
    return len(json.dumps(value, default=str))


def _missing(value: Any) -> bool:
    """A fact that could not be had is kept: its reason is the finding."""
    return isinstance(value, Mapping) and bool(value) and set(value) <= {"unavailable", "error"}


def compact_fact(name: str, value: Any, spec: FactSpec | None) -> tuple[Any, bool]:
    """(value for the report, whether it was shortened)."""
    if _missing(value):
        return value, False
    if spec is not None and spec.compact is not None:
        try:
            short = spec.compact(value)
        except Exception as e:  # noqa: BLE001 - a broken rule must not cost the report
            short = {"omitted": f"its compact rule failed ({type(e).__name__}: {e}); rerun with --full-facts"}
            return (value, False) if _size(value) <= MAX_FACT_CHARS else (short, True)
        return short, short != value
    size = _size(value)
    if size > MAX_FACT_CHARS:
        return {"omitted": f"{size} characters; rerun with --full-facts to keep it"}, True
    return value, False


def _same_as_fact(details: Mapping[str, Any], facts: Mapping[str, Any]) -> str | None:
    """The fact a check's details merely repeat (system.environment lists env_vars), if any."""
    if not details:
        return None
    return next((name for name, value in facts.items() if isinstance(value, Mapping) and value == details), None)


def compact_report(report: Report, providers: Mapping[str, FactSpec]) -> Report:
    """The report with each fact shortened by its provider's rule (``facts_compacted`` names
    those that were), and a check's details that repeat a fact stored once, as
    ``{"same_as_fact": name}``."""
    facts: dict[str, Any] = {}
    shortened = []
    for name, value in report.facts.items():
        facts[name], short = compact_fact(name, value, providers.get(name))
        if short:
            shortened.append(name)
    results = []
    for r in report.results:
        same = _same_as_fact(r.details, report.facts)
        results.append(dataclasses.replace(r, details={"same_as_fact": same}) if same else r)
    return dataclasses.replace(report, facts=facts, facts_compacted=tuple(sorted(shortened)), results=tuple(results))
