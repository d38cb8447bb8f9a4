"""Markdown for a GitHub issue: verdict, the stack's versions and the problems first; every
check and the environment facts in collapsible sections.

Bounded: 20,000 bytes by default, so a paste leaves room in an issue for the user's own words
and a comment or two; a --full-facts run may use what GitHub allows (an issue or comment body
over 65,536 characters is refused). Sections are added in order of usefulness and shortened or
left out (with a note) when the budget runs out. The
report it gets has already been scrubbed of secrets (and, with --redact, of identities).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from envdoctor.core.api import Status
from envdoctor.core.report import CheckOutcome, Report
from envdoctor.reporters.escape import md_block, md_code, md_details, md_text, terminal
from envdoctor.reporters.text import summary_line, verdict

ICON = {Status.PASS: "✅", Status.WARN: "⚠️", Status.FAIL: "❌", Status.SKIP: "⏭️", Status.ERROR: "💥"}
GITHUB_LIMIT = 65_536
MAX_CHARS = 64_000  # --full-facts: headroom for the user's own words around the paste
DEFAULT_BYTES = 20_000  # the default report (docs/DESIGN: markdown <= 20 KB)
MAX_ITEMS = 20  # per problem; a node with 8 bad GPUs fits, a list of 500 libraries does not
# Facts shown first, and how; the rest follow alphabetically as JSON.
FACT_ORDER = ("gpus", "driver", "torch_build", "torch_runtime", "python_info", "env_vars", "os_release", "container", "dists")
STACK_DISTS = ("torch", "triton", "pytorch-triton", "torch-xla", "libtpu", "numpy", "torchvision", "torchaudio")


def _md(text: Any) -> str:
    return md_text(text)


def _code(text: Any) -> str:
    """A code span in a table cell."""
    return md_code(text, table=True)


_block = md_block
_details = md_details


def _problem(r: CheckOutcome) -> list[str]:
    lines = [f"- {ICON[r.status]} **{r.status.value}** {md_code(r.id)} {_md(r.title)}: {_md(r.message)}"]
    bad = [i for i in r.items if i.status is not Status.PASS]
    for i in bad[:MAX_ITEMS]:
        lines.append(f"  - {ICON[i.status]} {_md(i.name)}" + (f": {_md(i.message)}" if i.message else ""))
    if len(bad) > MAX_ITEMS:
        lines.append(f"  - … and {len(bad) - MAX_ITEMS} more")
    if r.hint:
        lines.append(f"  - **Fix:** {_md(r.hint)}")
    for f in r.fixes:
        lines.append(f"    - {md_code(f.command)}" + (" (as root)" if f.needs_root else ""))
    if r.judged:
        lines.append(f"  - **Recommended action:** `{r.recommended}`")
    else:
        lines.append("  - **Could not judge:** envdoctor could not run this check; no verdict on the machine, no action")
    return lines


def _stack(report: Report) -> list[str]:
    """The versions a maintainer asks for first, read from the facts the run gathered."""
    from envdoctor.core.stack import ABSENT, UNKNOWN, from_facts

    stack = from_facts(report.facts, report.platform)
    rows = []
    for label, v in stack.version_rows():
        if v is UNKNOWN or (v == ABSENT and label not in ("torch", "NVIDIA driver")):
            continue
        rows.append(f"| {_md(label)} | {_code('not installed' if v == ABSENT and label == 'torch' else 'none' if v == ABSENT else v)} |")
    if stack.gpus:
        names: dict[str, int] = {}
        for g in stack.gpus:
            names[g.name] = names.get(g.name, 0) + 1
        rows.append(f"| GPUs | {_md(', '.join(f'{n} × {name}' for name, n in names.items()))} |")
    return ["| component | version |", "|---|---|", *rows, ""] if rows else []


def _gpu_table(gpus: list) -> list[str]:
    rows = ["| # | name | CC | memory | MIG | UUID |", "|---|---|---|---|---|---|"]
    for g in gpus:
        if not isinstance(g, Mapping):
            continue
        mem = g.get("memory_total")
        mem_s = f"{mem / (1 << 30):.0f} GiB" if isinstance(mem, (int, float)) else "?"
        rows.append(
            f"| {_md(g.get('index', '?'))} | {_md(g.get('name', '?'))} | {_md(g.get('cc', '?'))} | {mem_s} | "
            f"{_md(g.get('mig_mode', '?'))} | {_code(g.get('uuid', ''))} |"
        )
    return rows


def _fact_section(name: str, value: Any) -> list[str]:
    if name == "dists" and isinstance(value, Mapping):
        ordered = [k for k in STACK_DISTS if k in value] + sorted(k for k in value if k not in STACK_DISTS)
        lines = []
        for k in ordered:
            d = value[k] if isinstance(value[k], Mapping) else {}
            extra = f"  # also {', '.join(str(o.get('version')) for o in d['others'])} elsewhere" if d.get("others") else ""
            lines.append(f"{d.get('name', k)}=={d.get('version', '?')}{extra}")
        return _details(f"Installed packages ({len(lines)})", _block("\n".join(lines), "text"))
    if name == "env_vars" and isinstance(value, Mapping) and "unavailable" not in value:
        body = "\n".join(f"{terminal(k, newlines=False)}={terminal(v, newlines=False)}" for k, v in value.items())
        body = body or "(none of the captured variables is set)"
        return _details(f"Environment variables ({len(value)})", _block(body, "sh"))
    if name == "gpus" and isinstance(value, list) and value:
        return _details(f"GPUs ({len(value)})", [*_gpu_table(value), "", *_block(json.dumps(value, indent=1, default=str), "json")])
    return _details(name, _block(json.dumps(value, indent=1, default=str), "json"))


def _size(lines: list[str]) -> int:
    """Bytes, not characters: the bound is on what is pasted and stored (an icon is 3-6 bytes)."""
    return sum(len(x.encode("utf-8", "replace")) + 1 for x in lines)


def _fit(section: list[str], budget: int) -> list[str] | None:
    """The section if it fits; a cut-down code block if a useful part fits; else None."""
    if _size(section) <= budget:
        return section
    if budget < 800:
        return None
    # Cut inside the code block, keep the closing fence and </details> intact.
    if len(section) != 8 or not section[2].startswith("```") or not section[4].startswith("```"):
        return None
    head, tail = section[:3], section[4:]
    body = section[3]
    room = budget - _size(head + tail) - 120
    return [
        *head,
        body.encode("utf-8", "replace")[: max(0, room)].decode("utf-8", "ignore")
        + "\n… (cut to fit a GitHub issue; the --format json report has it all)",
        *tail,
    ]


def render_markdown(report: Report, *, verbose: bool = False, color: bool = False, strict: bool = False) -> str:
    head = [f"### envdoctor: {verdict(report, strict)}", ""]
    head.append(f"**{_md(summary_line(report))}** · envdoctor {_md(report.tool_version)} · {_md(report.platform.get('summary', ''))}")
    head.append("")
    head += _stack(report)
    out = head
    problems = report.problems()
    budget = (MAX_CHARS if report.options.get("full_facts") else DEFAULT_BYTES) - 400  # the closing notes
    if problems:
        out += [f"#### Problems ({len(problems)})", ""]
        shown = 0
        for r in problems:
            lines = _problem(r)
            if _size(out + lines) > budget * 0.6:
                break
            out += lines
            shown += 1
        if shown < len(problems):
            out.append(f"- … and {len(problems) - shown} more problems (attach the `--format json` report)")
        out.append("")
    else:
        out += ["No problems found.", ""]

    used = _size(out)
    rows = ["| | check | result |", "|---|---|---|"]
    for r in report.results:
        row = f"| {ICON[r.status]} | {_code(r.id)} | {_md(r.message or r.title)} |"
        if used + _size(rows) + _size([row]) + 200 > budget * 0.75:
            rows.append(f"| | … | {len(report.results) - (len(rows) - 2)} more checks |")
            break
        rows.append(row)
    out += _details(f"All checks ({len(report.results)})", rows)

    out += ["#### Environment", ""]
    names = [n for n in FACT_ORDER if n in report.facts] + sorted(n for n in report.facts if n not in FACT_ORDER)
    missing = {n: v for n, v in report.facts.items() if isinstance(v, Mapping) and set(v) <= {"unavailable", "error"} and v}
    if missing:
        lines = [f"- {md_code(n)}: {_md(v.get('unavailable') or v.get('error'))}" for n, v in missing.items()]
        out += _details(f"Not available ({len(missing)})", lines)
    left_out = []
    for name in (n for n in names if n not in missing):
        used = _size(out)
        section = _fit(_fact_section(name, report.facts[name]), budget - used)
        if section is None:
            left_out.append(name)
        else:
            out += section
    if left_out:
        out.append(f"Left out to fit a GitHub issue: {_md(', '.join(left_out))} (the `--format json` report has them).")
        out.append("")
    text = "\n".join(out)
    if len(text) > GITHUB_LIMIT - 100:  # never: the budget above holds; a last guard all the same
        text = text[: GITHUB_LIMIT - 200] + "\n\n… (cut to fit a GitHub issue)\n"
    return text
