"""Markdown for a GitHub issue: verdict and problems first, everything else collapsible."""

from __future__ import annotations

import json

from envdoctor.api import Status
from envdoctor.report import Report
from envdoctor.reporters.text import summary_line, verdict

ICON = {Status.PASS: "✅", Status.WARN: "⚠️", Status.FAIL: "❌", Status.SKIP: "⏭️", Status.ERROR: "💥"}
MAX_CHARS = 60_000  # GitHub rejects issue bodies over 65,536 characters


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report, *, verbose: bool = False, color: bool = False, strict: bool = False) -> str:
    out = [f"### envdoctor report: {verdict(report, strict)}", "", f"{summary_line(report)} · envdoctor {report.tool_version}", ""]
    if report.platform.get("summary"):
        out += [f"**Platform:** {report.platform['summary']}", ""]
    problems = report.problems()
    if problems:
        out += ["#### Problems", ""]
        for r in problems:
            out.append(f"- {ICON[r.status]} **{r.status.value}** `{r.id}` {r.title}: {r.message}")
            for i in r.items:
                if i.status is not Status.PASS:
                    out.append(f"  - {ICON[i.status]} {i.name}: {i.message}")
            if r.hint:
                out.append(f"  - fix: {r.hint}")
        out.append("")
    out += ["<details><summary>All checks</summary>", "", "| | check | result |", "|---|---|---|"]
    for r in report.results:
        out.append(f"| {ICON[r.status]} | `{r.id}` | {_cell(r.message or r.title)} |")
    out += ["", "</details>", ""]
    facts_json = json.dumps(report.facts, indent=1, default=str)
    budget = MAX_CHARS - sum(len(x) + 1 for x in out) - 200
    if len(facts_json) > budget:
        facts_json = facts_json[: max(0, budget)] + "\n... (truncated; attach the --format json report for everything)"
    out += ["<details><summary>Environment facts</summary>", "", "```json", facts_json, "```", "", "</details>", ""]
    return "\n".join(out)
