"""``envdoctor diff``'s renderers: one section model (``sections``), two skins (text and Markdown),
and the JSON form (``Diff.to_dict``)."""

from __future__ import annotations

import json
from typing import Any

from envdoctor.core.diff import Diff, DistChange, _canon, _num, _short, _v, metric_line


def render_text(diff: Diff) -> str:
    out = [f"envdoctor diff: {diff.a_name} → {diff.b_name}"]
    for side, meta in (("A", diff.a_meta), ("B", diff.b_meta)):
        host = f" on {meta['host']}" if meta.get("host") else ""
        out.append(
            f"  {side}: {meta.get('started_at') or '?'}{host} (envdoctor {meta.get('tool_version') or '?'}, schema {meta['schema_version']})"
        )
    out.append("")
    for n in diff.notes:
        out.append(f"note: {n}")
    if diff.notes:
        out.append("")
    if diff.identical:
        out.append("no differences: same versions, GPUs and check results")
        return "\n".join(out) + "\n"
    if diff.regressions:
        out += _text_regressions(diff)
    if diff.versions:
        out.append("Versions")
        width = max(len(c.name) for c in diff.versions)
        for c in diff.versions:
            out.append(f"  {c.name:<{width}}  {_v(c.a)} → {_v(c.b)}")
        out.append("")
    if diff.gpus_added or diff.gpus_removed or diff.gpus_changed:
        out.append("GPUs")
        out += [f"  - removed {g['label']}" for g in diff.gpus_removed]
        out += [f"  + added {g['label']}" for g in diff.gpus_added]
        out += [f"  ~ {c.name}: {_v(c.a)} → {_v(c.b)}" for c in diff.gpus_changed]
        out.append("")
    out += _text_dists(diff)
    shown = [m for m in diff.metrics if m.shown]
    if shown:
        out.append("Measured")
        out += [f"  {'✗' if m.regressed else ' '} {metric_line(m)}" for m in shown]
        out.append("")
    if diff.recovered:
        out.append(f"Recovered ({len(diff.recovered)})")
        out += [f"  ✓ {m.id}: {m.a} → {m.b}: {m.message}" for m in diff.recovered]
        out.append("")
    if diff.changed:
        out.append("Other status changes")
        out += [f"  ~ {m.id}: {m.a} → {m.b}: {m.message}" for m in diff.changed]
        out.append("")
    if diff.only_a or diff.only_b:
        out.append("Checks in one report only")
        out += [f"  - {m.id} ({m.a}) only in {diff.a_name}" for m in diff.only_a]
        out += [f"  + {m.id} ({m.b}) only in {diff.b_name}: {m.message}" for m in diff.only_b]
        out.append("")
    if diff.env_changed:
        out.append("Environment variables")
        out += [f"  {c.name}: {_short(c.a)} → {_short(c.b)}" for c in diff.env_changed]
        out.append("")
    if diff.not_compared:
        out.append("Not compared: " + "; ".join(diff.not_compared))
        out.append("")
    out.append(summary(diff))
    return "\n".join(out) + "\n"


def _text_regressions(diff: Diff) -> list[str]:
    out = [f"Regressions ({len(diff.regressions)})"]
    hints = {m.id: m.hint for m in diff.regressed}
    for r in diff.regressions:
        out.append(f"  ✗ {r.message}")
        if r.causes:
            out.append(f"      likely cause: {'; '.join(r.causes)}")
        if hints.get(r.name) and r.kind == "check":
            out.append(f"      → {hints[r.name]}")
    return [*out, ""]


def _dist_line(c: DistChange) -> str:
    mark = "" if not c.compiled else " [compiled]" if c.compiled_from == "record" else " [compiled, by name]"
    return f"{c.name} {c.a or '(none)'} → {c.b or '(none)'}{mark}"


def _dists_compiled_note(diff: Diff) -> str:
    by_name = any(c.compiled and c.compiled_from == "name" for c in diff.dists_changed + diff.dists_added + diff.dists_removed)
    return (
        "[compiled]: ships extension modules (.so), per the report; [compiled, by name]: a well-known compiled package "
        "(this report does not record it). A changed torch or CUDA breaks their ABI: reinstall or rebuild them."
        if by_name
        else "[compiled]: ships extension modules (.so): a changed torch or CUDA breaks their ABI: reinstall or rebuild them."
    )


def _text_dists(diff: Diff) -> list[str]:
    rows = [("~", c) for c in diff.dists_changed] + [("+", c) for c in diff.dists_added] + [("-", c) for c in diff.dists_removed]
    if not rows:
        return []
    out = [f"Distributions ({len(diff.dists_changed)} changed, {len(diff.dists_added)} added, {len(diff.dists_removed)} removed)"]
    out += [f"  {sign} {_dist_line(c)}" for sign, c in rows]
    if any(c.compiled for _, c in rows):
        out.append("  " + _dists_compiled_note(diff))
    return [*out, ""]


def summary(diff: Diff) -> str:
    if diff.identical:
        return "no differences"
    parts = [f"{len(diff.regressions)} regression{'s' if len(diff.regressions) != 1 else ''}"]
    if diff.recovered:
        parts.append(f"{len(diff.recovered)} recovered")
    if diff.versions:
        parts.append(f"{len(diff.versions)} version change{'s' if len(diff.versions) != 1 else ''}")
    gpu = len(diff.gpus_added) + len(diff.gpus_removed) + len(diff.gpus_changed)
    if gpu:
        parts.append(f"{gpu} GPU change{'s' if gpu != 1 else ''}")
    # The stack's own packages are counted as version changes already.
    shown = {c.name for c in diff.versions}
    dists = len([c for c in diff.dists_added + diff.dists_removed + diff.dists_changed if _canon(c.name) not in shown])
    if dists:
        parts.append(f"{dists} other distribution change{'s' if dists != 1 else ''}")
    return ("REGRESSED: " if diff.regressions else "CHANGED: ") + ", ".join(parts)


def _md(text: Any) -> str:
    # Inline HTML is live in GitHub markdown: "<home>" would vanish as an unknown tag.
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|").replace("\n", " ")


def _code(text: Any) -> str:
    s = _v(text).replace("\n", " ")
    ticks = "``" if "`" in s else "`"
    return f"{ticks}{s}{ticks}" if ticks == "`" else f"{ticks} {s} {ticks}"


def _md_dists_and_metrics(diff: Diff) -> list[str]:
    out = []
    dist_lines = _text_dists(diff)
    if dist_lines:
        out += [f"<details><summary>{_md(dist_lines[0])}</summary>", ""]
        out += [f"- {_md(line.strip())}" for line in dist_lines[1:-1]]
        out += ["", "</details>", ""]
    shown = [m for m in diff.metrics if m.shown]
    if shown:
        out += ["#### Measured", "", "| metric | before | after | change | judged |", "|---|---|---|---|---|"]
        out += [
            f"| {'❌ ' if m.regressed else ''}{_md(m.name)} | {_num(m.a)} {m.unit} | {_num(m.b)} {m.unit} | {m.change:+.0%} | "
            f"{f'CPU {m.judged:+.0%}' if m.cpu else '-'} |"
            for m in shown
        ]
        out.append("")
    return out


def render_markdown(diff: Diff) -> str:
    out = [f"### envdoctor diff: {summary(diff)}", ""]
    out.append(f"`{_md(diff.a_name)}` ({_md(diff.a_meta.get('started_at'))}) → `{_md(diff.b_name)}` ({_md(diff.b_meta.get('started_at'))})")
    out.append("")
    for n in diff.notes:
        out.append(f"> **Note:** {_md(n)}")
    if diff.notes:
        out.append("")
    if diff.identical:
        out.append("No differences: same versions, GPUs and check results.")
        return "\n".join(out) + "\n"
    if diff.regressions:
        out += ["#### Regressions", ""]
        hints = {m.id: m.hint for m in diff.regressed}
        for r in diff.regressions:
            out.append(f"- ❌ {_md(r.message)}")
            if r.causes:
                out.append(f"  - likely cause: {_md('; '.join(r.causes))}")
            if hints.get(r.name) and r.kind == "check":
                out.append(f"  - fix: {_md(hints[r.name])}")
        out.append("")
    if diff.versions:
        out += ["#### Versions", "", "| component | before | after |", "|---|---|---|"]
        out += [f"| {_md(c.name)} | {_code(c.a)} | {_code(c.b)} |" for c in diff.versions]
        out.append("")
    if diff.gpus_added or diff.gpus_removed or diff.gpus_changed:
        out += ["#### GPUs", ""]
        out += [f"- removed {_md(g['label'])}" for g in diff.gpus_removed]
        out += [f"- added {_md(g['label'])}" for g in diff.gpus_added]
        out += [f"- {_md(c.name)}: {_code(c.a)} → {_code(c.b)}" for c in diff.gpus_changed]
        out.append("")
    out += _md_dists_and_metrics(diff)
    if diff.recovered:
        out += ["#### Recovered", ""]
        out += [f"- ✅ `{m.id}` {m.a} → **{m.b}**: {_md(m.message)}" for m in diff.recovered]
        out.append("")
    rest = [f"| `{m.id}` | {m.a} | {m.b} | {_md(m.message)} |" for m in diff.changed]
    rest += [f"| `{m.id}` | {m.a} | (absent) | |" for m in diff.only_a]
    rest += [f"| `{m.id}` | (absent) | {m.b} | {_md(m.message)} |" for m in diff.only_b]
    if rest:
        out += [
            "<details><summary>Other check changes</summary>",
            "",
            "| check | before | after | message |",
            "|---|---|---|---|",
            *rest,
            "",
            "</details>",
            "",
        ]
    if diff.env_changed:
        out += ["<details><summary>Environment variables</summary>", "", "| variable | before | after |", "|---|---|---|"]
        out += [f"| `{c.name}` | {_code(_short(c.a))} | {_code(_short(c.b))} |" for c in diff.env_changed]
        out += ["", "</details>", ""]
    if diff.not_compared:
        out += [f"Not compared: {_md('; '.join(diff.not_compared))}", ""]
    return "\n".join(out) + "\n"


def render_json(diff: Diff) -> str:
    return json.dumps(diff.to_dict(), indent=2) + "\n"


def render(diff: Diff, fmt: str) -> str:
    return {"text": render_text, "json": render_json, "markdown": render_markdown}[fmt](diff)
