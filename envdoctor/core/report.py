"""The report: what a run produced. Reporters are pure functions of it."""

from __future__ import annotations

import enum
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from envdoctor.core.api import Item, Status
from envdoctor.core.exitcode import ExitCode

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
    # Set by the distributed executor on ranks other than 0: {"rank", "world_size", "delivered"}.
    # Such a rank's verdict is in rank 0's report; its own exit says only whether it got there.
    worker: Mapping[str, Any] | None = None

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


def verdict(report: Report, strict: bool = False) -> Verdict:
    statuses = {r.status for r in report.results}
    if statuses & {Status.FAIL, Status.ERROR}:
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
    return ExitCode.OK if verdict(report, strict).healthy else ExitCode.FAILED


class ReportError(Exception):
    """A file that cannot be used as a report; ``str()`` is one line for the user
    ("FILE: why"), ``reason`` the part after the file name."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def load_report(path: str) -> dict[str, Any]:
    name = os.path.basename(path) or path
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise ReportError(path, "no such file") from None
    except IsADirectoryError:
        raise ReportError(path, "is a directory, not a report") from None
    except UnicodeDecodeError:
        raise ReportError(path, "is not an envdoctor JSON report (binary data)") from None
    except OSError as e:
        raise ReportError(path, f"cannot read it ({e.strerror or e})") from None
    if not text.strip():
        raise ReportError(path, "is empty, not an envdoctor JSON report")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        hint = " (the file looks truncated)" if text.lstrip().startswith(("{", "[")) and e.pos >= len(text.rstrip()) - 1 else ""
        raise ReportError(path, f"is not valid JSON{hint}: {e.msg} at line {e.lineno}, column {e.colno}") from None
    problem = _not_a_report(data)
    if problem:
        raise ReportError(name, f"is not an envdoctor report ({problem}); make one with `envdoctor check --format json -o FILE`")
    return data


def _not_a_report(d: Any) -> str:
    if not isinstance(d, dict):
        return f"the JSON is {type(d).__name__}, not an object"
    missing = [k for k in ("schema_version", "results") if k not in d]
    if missing:
        return "no " + " or ".join(repr(k) for k in missing)
    if not isinstance(d["results"], list) or not all(isinstance(r, dict) and isinstance(r.get("id"), str) for r in d["results"]):
        return "'results' is not a list of check results"
    if not isinstance(d.get("facts", {}), dict):
        return "'facts' is not an object"
    return ""
