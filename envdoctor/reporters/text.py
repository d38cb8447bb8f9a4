"""Human-readable report: grouped by area, a mark per check, hints under problems, one summary."""

from __future__ import annotations

import json
import sys

from envdoctor.core import builtins
from envdoctor.core.api import Status
from envdoctor.core.report import Report
from envdoctor.reporters.escape import terminal

MARKS = {Status.PASS: "✓", Status.WARN: "!", Status.FAIL: "✗", Status.SKIP: "-", Status.ERROR: "E"}
ASCII_MARKS = {Status.PASS: "ok", Status.WARN: "!!", Status.FAIL: "XX", Status.SKIP: "--", Status.ERROR: "EE"}
COLORS = {Status.PASS: "32", Status.WARN: "33", Status.FAIL: "31", Status.SKIP: "2", Status.ERROR: "35"}


def unicode_ok(stream=None) -> bool:
    """Whether the stream's encoding can show the marks (a latin-1 or ASCII stdout cannot)."""
    enc = getattr(stream or sys.stdout, "encoding", None) or "ascii"
    try:
        "✓✗→—".encode(enc)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _marks() -> dict:
    return MARKS if unicode_ok() else ASCII_MARKS


def _paint(text: str, code: str, color: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if color else text


def summary_line(report: Report) -> str:
    c = report.counts()

    def n(count: int, word: str) -> str:
        return f"{count} {word}{'' if count == 1 else 's'}"

    parts = [f"{c['pass']} passed"]
    if c["warn"]:
        parts.append(n(c["warn"], "warning"))
    if c["fail"]:
        parts.append(f"{c['fail']} failed")
    if c["error"]:
        parts.append(n(c["error"], "error"))
    if c["skip"]:
        parts.append(f"{c['skip']} skipped")
    tail = " (interrupted)" if report.interrupted else " (stopped at --timeout)" if report.timed_out else ""
    return f"{', '.join(parts)} in {report.duration:.1f}s{tail}"


def verdict(report: Report, strict: bool = False) -> str:
    from envdoctor.core.report import verdict as judge

    return judge(report, strict).label


def config_line(report: Report) -> list[str]:
    """The header's config line (options.config): the file used, and any left unread; none
    when no config file was there at all."""
    conf = report.options.get("config")
    if not isinstance(conf, dict) or not (conf.get("path") or conf.get("not_read")):
        return []
    unread = [terminal(str(x)) for x in conf.get("not_read") or ()]
    line = f"config: {terminal(str(conf['path']))} ({terminal(str(conf.get('from')))})" if conf.get("path") else "config: none"
    return [line + "".join(f"; not read: {x}" for x in unread)]


def render_text(report: Report, *, verbose: bool = False, color: bool = False, strict: bool = False) -> str:
    marks = _marks()
    arrow, dash = ("→", "—") if marks is MARKS else ("->", "-")
    order = {a: i for i, a in enumerate(builtins.declared("AREA_ORDER", ()))}  # the built-ins' own order
    areas: dict[str, list] = {}
    for r in report.results:
        areas.setdefault(r.area, []).append(r)
    lines = [
        f"envdoctor {report.tool_version} {dash} {terminal(report.platform.get('summary', ''))}".rstrip(f" {dash}"),
        *config_line(report),
        "",
    ]
    for area in sorted(areas, key=lambda a: (order.get(a, len(order)), a)):
        lines.append(_paint(area, "1", color))
        for r in areas[area]:
            mark = _paint(marks[r.status], COLORS[r.status], color)
            line = f"  {mark} {terminal(r.title)}" + (f": {terminal(r.message)}" if r.message else "")
            if verbose:
                line += f"  [{r.id}, {r.duration:.2f}s]"
            lines.append(line)
            for item in r.items:
                if verbose or item.status is not Status.PASS or r.status is not Status.PASS:
                    imark = _paint(marks[item.status], COLORS[item.status], color)
                    lines.append(f"      {imark} {terminal(item.name)}" + (f": {terminal(item.message)}" if item.message else ""))
            if r.hint and r.status in (Status.WARN, Status.FAIL, Status.ERROR):
                lines.append(f"      {arrow} {terminal(r.hint)}")
            if r.status in (Status.WARN, Status.FAIL, Status.ERROR):
                lines += [f"        $ {terminal(f.command)}" + ("  (as root)" if f.needs_root else "") for f in r.fixes]
                lines.append(f"      {action_line(r)}")
            if verbose and r.details:
                for k, v in details_of(r, report).items():
                    val = terminal(v if isinstance(v, str) else json.dumps(v, default=str), newlines=False)
                    if len(val) > 300:
                        val = val[:297] + "..."
                    lines.append(_paint(f"      {terminal(k, newlines=False)}: {val}", "2", color))
        lines.append("")
    head = verdict(report, strict)
    code = "31" if head == "PROBLEMS FOUND" else "33" if "WARN" in head else "32"
    lines.append(_paint(head, "1;" + code, color) + ": " + summary_line(report))
    return "\n".join(lines) + "\n"


def action_line(r) -> str:
    """The recommended action of a warn/fail row; an error row says it is no verdict."""
    if not r.judged:
        return "could not judge: envdoctor could not run this check; no verdict on the machine, no action"
    return f"recommended action: {r.recommended}"


def details_of(r, report) -> dict:
    """A result's details; where the report stored them as the fact they repeat
    (``{"same_as_fact": name}``, see envdoctor.core.compact), that fact's value."""
    name = r.details.get("same_as_fact") if len(r.details) == 1 else None
    if isinstance(name, str) and isinstance(report.facts.get(name), dict):
        return report.facts[name]
    return dict(r.details)
