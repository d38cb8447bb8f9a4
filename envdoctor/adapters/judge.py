"""One ``envdoctor check`` run in a child, bounded, and its report read as a node verdict."""

from __future__ import annotations

import enum
import json
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from envdoctor.core.api import ACTIONS
from envdoctor.core.subproc import run

GRACE = 5.0  # seconds the child gets beyond its own --timeout before it is killed


class NodeState(enum.Enum):
    OK = "ok"  # nothing failed, and every check could be judged
    PROBLEM = "problem"  # a check failed: a finding about this node
    UNKNOWN = "unknown"  # envdoctor could not judge (an error row, a run that hung or died)


@dataclass(frozen=True)
class Verdict:
    state: NodeState
    check: str = ""  # the row behind a PROBLEM or UNKNOWN ("envdoctor" for the run itself)
    message: str = ""
    action: str = "none"
    counts: Mapping[str, int] = field(default_factory=dict)


def _worst_failure(rows: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The failing row to name: the strongest recommended action, then run order."""
    rank: dict[Any, int] = {a: i for i, a in enumerate(ACTIONS)}  # a row's action may be missing
    return max(enumerate(rows), key=lambda nr: (rank.get(nr[1].get("action"), 0), -nr[0]))[1]


def judge_report(data: Mapping[str, Any]) -> Verdict:
    """PROBLEM when a check failed (whatever else happened); else UNKNOWN when one could not be
    judged or the run was cut short; else OK (warnings are not a node problem)."""
    rows = [r for r in data.get("results") or () if isinstance(r, Mapping)]
    counts = dict(data.get("summary") or {})
    failed = [r for r in rows if r.get("status") == "fail"]
    if failed:
        r = _worst_failure(failed)
        return Verdict(NodeState.PROBLEM, str(r.get("id")), str(r.get("message", "")), str(r.get("action") or "fix-environment"), counts)
    errors = [r for r in rows if r.get("status") == "error"]
    if errors:
        return Verdict(NodeState.UNKNOWN, str(errors[0].get("id")), str(errors[0].get("message", "")), counts=counts)
    summary = data.get("summary") or {}
    if summary.get("interrupted") or summary.get("timed_out"):
        return Verdict(NodeState.UNKNOWN, "envdoctor", "the run was cut short", counts=counts)
    return Verdict(NodeState.OK, counts=counts)


def check_node(args: Sequence[str], timeout: float, env: Mapping[str, str] | None = None) -> Verdict:
    """Run ``envdoctor check ARGS --timeout TIMEOUT`` in a child (killed GRACE seconds later)
    and judge its JSON report; a child that hung, died or wrote no report is UNKNOWN."""
    fd, path = tempfile.mkstemp(prefix="envdoctor-node-", suffix=".json")
    os.close(fd)
    try:
        argv = [sys.executable, "-m", "envdoctor", "check", *args, "--timeout", f"{timeout:g}", "--json", path, "--quiet"]
        res = run(argv, timeout=timeout + GRACE, env=env)
        if res.timed_out or res.error:
            return Verdict(NodeState.UNKNOWN, "envdoctor", f"the check run: {res.describe()}")
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            line = (res.stderr.strip().splitlines() or [f"exit {res.returncode}"])[-1]
            return Verdict(NodeState.UNKNOWN, "envdoctor", f"no report ({line})")
        return judge_report(data)
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def one_line(text: str, limit: int) -> str:
    """``text`` on one line, cut to at most ``limit`` UTF-8 bytes (with "..." when cut)."""
    flat = " ".join(str(text).split())
    data = flat.encode("utf-8")
    if len(data) <= limit:
        return flat
    return data[: max(limit - 3, 0)].decode("utf-8", "ignore").rstrip() + "..."
