"""The report: what a run produced, its verdict and exit code, and its JSON form (to_dict,
from_dict: the distributed mode and fleet read and write reports without a reporter).
Reporters are pure functions of it."""

from __future__ import annotations

import enum
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from envdoctor.core.api import ACTIONS, Fix, Item, Status
from envdoctor.core.exitcode import ExitCode
from envdoctor.core.outcome import CheckOutcome, fix_action, recommended_action  # noqa: F401 - part of this module's interface

SCHEMA_VERSION = (
    "1.3"  # 1.1: results carry "fixes"; 1.2: "facts_compacted" (default reports keep facts short); 1.3: "action", options.config
)


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
    # Set by the distributed executor on ranks other than 0: {"rank", "world_size", "delivered"}.
    # Such a rank's verdict is in rank 0's report; its own exit says only whether it got there.
    worker: Mapping[str, Any] | None = None
    # Facts whose value is the short form their provider declared (envdoctor.core.compact);
    # empty: every fact is whole (--full-facts, or a report from before schema 1.2).
    facts_compacted: tuple[str, ...] = ()

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Status}
        for r in self.results:
            out[r.status.value] += 1
        return out

    def problems(self) -> tuple[CheckOutcome, ...]:
        return tuple(r for r in self.results if r.status in (Status.WARN, Status.FAIL, Status.ERROR))

    def healthy(self, strict: bool = False) -> bool:
        return verdict(self, strict).healthy


class Verdict(enum.Enum):
    """The one verdict on a report; every reporter, the quiet line and the exit code read it."""

    HEALTHY = "HEALTHY"
    WARNINGS_ALLOWED = "OK, with warnings"
    WARNINGS = "WARNINGS"  # warnings under --strict
    PROBLEMS = "PROBLEMS FOUND"

    @property
    def healthy(self) -> bool:
        return self in (Verdict.HEALTHY, Verdict.WARNINGS_ALLOWED)

    @property
    def label(self) -> str:
        return self.value


FAILING = frozenset({Status.FAIL, Status.ERROR})  # a run with one of these is not healthy (exit 1)


def failing(status: Status | str, strict: bool = False) -> bool:
    """Whether a check's status makes the run fail: the rule of verdict() and exit_code(), which
    ``envdoctor diff`` applies to each check ("warn" only under --strict)."""
    try:
        s = Status(status)
    except (ValueError, TypeError):
        return False
    return s in FAILING or (strict and s is Status.WARN)


def verdict(report: Report, strict: bool = False) -> Verdict:
    statuses = {r.status for r in report.results}
    if statuses & FAILING:
        return Verdict.PROBLEMS
    if Status.WARN in statuses:
        return Verdict.WARNINGS if strict else Verdict.WARNINGS_ALLOWED
    return Verdict.HEALTHY


def exit_code(report: Report, strict: bool = False) -> ExitCode:
    """The one mapping from a report to the process's exit code."""
    if report.interrupted:
        return ExitCode.INTERRUPTED
    if report.worker is not None:
        # Under torchrun one worker's non-zero exit stops every other worker, rank 0 included:
        # a rank other than 0 fails only when its report never reached rank 0.
        return ExitCode.OK if report.worker.get("delivered") else ExitCode.FAILED
    if not report.results:
        return ExitCode.NO_CHECKS  # a run in which nothing ran is never healthy
    return ExitCode.OK if verdict(report, strict).healthy else ExitCode.FAILED


class ReportError(Exception):
    """A file that cannot be used as a report; ``str()`` is one line for the user
    ("FILE: why"), ``reason`` the part after the file name."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def load_report(path: str) -> dict[str, Any]:
    """A report file (or the report.json of a bundle that ``envdoctor bundle`` wrote), read
    within its size limit and checked for a report's shape; raises :class:`ReportError` (one
    line) for anything else."""
    from envdoctor.core.untrusted import LIMITS, InputError, load_json, read_bytes

    name = os.path.basename(path) or path
    try:
        text = _report_text(path, read_bytes(path, LIMITS["report"]))
    except InputError as e:
        if e.reason.startswith("is not UTF-8"):
            raise ReportError(path, "is not an envdoctor JSON report (binary data)") from None
        raise ReportError(path, e.reason) from None
    if not text.strip():
        raise ReportError(path, "is empty, not an envdoctor JSON report")
    try:
        data = load_json(text)
    except InputError as e:
        raise ReportError(path if e.syntax else name, e.reason if e.syntax else f"is not an envdoctor report ({e.reason})") from None
    problem = _not_a_report(data)
    if problem:
        raise ReportError(name, f"is not an envdoctor report ({problem}); make one with `envdoctor check --format json -o FILE`")
    return data


def _report_text(path: str, data: bytes) -> str:
    """The text of a report file's bytes: UTF-8, or a bundle's report.json (``envdoctor bundle``)."""
    from envdoctor.core.untrusted import decode_utf8
    from envdoctor.sources.bundle import BundleError, is_bundle, report_text

    if not is_bundle(data):
        return decode_utf8(data)
    try:
        return report_text(data)
    except BundleError as e:
        raise ReportError(path, str(e)) from None


_OBJECTS = ("tool", "platform", "options", "summary", "facts")
_RESULT_STRINGS = ("title", "status", "message", "hint", "source")
# The facts diff, fleet and the typed stack read, and the JSON type each has (an object
# {"unavailable": why} stands for any of them): a report whose dists is "oops" is malformed,
# not a machine without packages.
FACT_TYPES: dict[str, type] = {
    "dists": dict,
    "driver": dict,
    "torch_build": dict,
    "torch_runtime": dict,
    "python_info": dict,
    "os_release": dict,
    "env_vars": dict,
    "gpus": list,
    "visible_gpus": list,
}


def bad_facts(facts: Mapping[str, Any]) -> str:
    """Why the facts others read do not have their shape ("" when they do)."""
    for key, want in FACT_TYPES.items():
        if key not in facts:
            continue
        v = facts[key]
        if isinstance(v, dict) and v and set(v) <= {"unavailable", "error"}:
            continue
        if not isinstance(v, want):
            return f"'facts.{key}' is a {type(v).__name__}, not {'an object' if want is dict else 'a list'}"
        entries = v.values() if key == "dists" and isinstance(v, dict) else v if isinstance(v, list) else ()  # (as want says)
        odd = next((e for e in entries if not isinstance(e, dict)), None)
        if odd is not None:
            return f"'facts.{key}' holds a {type(odd).__name__}, not an object per entry"
        if key == "env_vars" and isinstance(v, dict) and not all(isinstance(x, str) for x in v.values()):
            return "'facts.env_vars' holds a value that is not a string"
    return ""


def _bad_result(n: int, r: Any) -> str:
    if not isinstance(r, dict) or not isinstance(r.get("id"), str):
        return f"'results' item {n} is not a check result with a string 'id'"
    for k in _RESULT_STRINGS:
        if k in r and not isinstance(r[k], str):
            return f"check {r['id'][:60]!r} has a {type(r[k]).__name__} '{k}', not a string"
    if "details" in r and not isinstance(r["details"], dict):
        return f"check {r['id'][:60]!r} has '{type(r['details']).__name__}' details, not an object"
    return ""


def _not_a_report(d: Any) -> str:
    """Why ``d`` does not have a report's shape ("" when it does): what diff, fleet and the
    reporters index into must be what they expect, so a hand-edited or foreign file is one
    clear line, never a crash."""
    if not isinstance(d, dict):
        return f"the JSON is {type(d).__name__}, not an object"
    missing = [k for k in ("schema_version", "results") if k not in d]
    if missing:
        return "no " + " or ".join(repr(k) for k in missing)
    if not isinstance(d["schema_version"], str):
        return f"'schema_version' is a {type(d['schema_version']).__name__}, not a string"
    if not isinstance(d["results"], list):
        return "'results' is not a list of check results"
    for k in _OBJECTS:
        if k in d and not isinstance(d[k], dict):
            return f"'{k}' is a {type(d[k]).__name__}, not an object"
    bad = next((p for p in (_bad_result(n, r) for n, r in enumerate(d["results"])) if p), "")
    return bad or (bad_facts(d["facts"]) if isinstance(d.get("facts"), dict) else "")


# ------------------------------------------------------------------ serialisation (the JSON shape)


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


_STATUSES = frozenset(s.value for s in Status)
_FLEET_VALUE = (str, int, float, bool, type(None))


def _bad_summary_row(n: int, r: Any) -> str:
    if not isinstance(r, dict) or not isinstance(r.get("id"), str) or not isinstance(r.get("message"), str):
        return f"result {n} is not a check result with a string 'id' and 'message'"
    if not isinstance(r.get("status"), str) or r["status"] not in _STATUSES:
        return f"check {r['id'][:60]!r} has no known status"
    if any(k in r and not isinstance(r[k], str) for k in _RESULT_STRINGS):
        return f"check {r['id'][:60]!r} has a field that is not a string"
    tags = r.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        return f"check {r['id'][:60]!r} has tags that are not a list of strings"
    return ""


def bad_rank_summary(s: Any) -> str:
    """Why a rank's summary (what it sends rank 0, ``modes.distributed.rank_summary``) cannot be
    merged ("" when it can): it comes from another machine, so it is checked as a report is."""
    from envdoctor.core.untrusted import too_deep

    if not isinstance(s, dict):
        return f"the summary is a {type(s).__name__}, not an object"
    problem = too_deep(s)
    if problem:
        return problem
    if not isinstance(s.get("results", []), list):
        return "'results' is not a list"
    fleet = s.get("fleet", {})
    if fleet is not None and (not isinstance(fleet, dict) or not all(isinstance(v, _FLEET_VALUE) for v in fleet.values())):
        return "'fleet' is not an object of plain values"
    return next((p for p in (_bad_summary_row(n, r) for n, r in enumerate(s.get("results", []))) if p), "")


def rank_summaries(raw: Any) -> tuple[dict[int, dict[str, Any]], list[CheckOutcome]]:
    """The summaries rank 0 gathered, by rank: those that can be merged, and one error row per
    rank whose summary cannot ("rank N: unreadable: why"), never the end of the merge."""
    good: dict[int, dict[str, Any]] = {}
    bad: list[CheckOutcome] = []
    for key, s in raw.items() if isinstance(raw, dict) else ():
        rank = int(key) if isinstance(key, (int, str)) and str(key).isdigit() and len(str(key)) < 10 else None
        problem = "its rank is not a number" if rank is None else bad_rank_summary(s)
        if problem or rank is None:
            why = f"rank {str(key)[:20]}: unreadable: {problem}"
            bad.append(CheckOutcome("distributed.rank_summary", "A rank's summary", Status.ERROR, why))
        else:
            good[rank] = s
    return good, bad
