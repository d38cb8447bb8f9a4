"""``envdoctor diff``'s renderers: one section model (``sections``: what is shown, in which
order, each row once) and two skins of it, text and Markdown; JSON is ``Diff.to_dict``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from envdoctor.core.diff import Diff, DistChange, _canon, _num, _short, _v, metric_line
from envdoctor.reporters.escape import md_code, md_text, terminal


@dataclass(frozen=True)
class Row:
    text: str  # the row as a line ("triton 3.6.0 → 3.5.0")
    mark: str = ""  # "bad", "good", "add", "remove", "change", "none" (a blank mark) or "" (no mark)
    cells: tuple[str, ...] = ()  # the same row as table cells (a section with columns)
    subs: tuple[tuple[str, str], ...] = ()  # ("likely cause", ...), ("fix", ...): lines under the row


@dataclass(frozen=True)
class Section:
    title: str
    rows: tuple[Row, ...] = ()
    columns: tuple[str, ...] = ()  # a table in Markdown
    code: frozenset[int] = frozenset()  # the columns Markdown shows as code
    folded: bool = False  # Markdown: inside <details>
    foot: str = ""
    plain: bool = False  # a line of its own, no heading


def _regressions(diff: Diff) -> Section | None:
    if not diff.regressions:
        return None
    hints = {m.id: m.hint for m in diff.regressed}
    rows = []
    for r in diff.regressions:
        subs = [("likely cause", "; ".join(r.causes))] if r.causes else []
        if hints.get(r.name) and r.kind == "check":
            subs.append(("fix", hints[r.name]))
        rows.append(Row(r.message, "bad", subs=tuple(subs)))
    return Section(f"Regressions ({len(diff.regressions)})", tuple(rows))


def _versions(diff: Diff) -> Section | None:
    if not diff.versions:
        return None
    width = max(len(c.name) for c in diff.versions)
    rows = tuple(Row(f"{c.name:<{width}}  {_v(c.a)} → {_v(c.b)}", cells=(c.name, _v(c.a), _v(c.b))) for c in diff.versions)
    return Section("Versions", rows, ("component", "before", "after"), frozenset({1, 2}))


def _gpus(diff: Diff) -> Section | None:
    rows = [Row(f"removed {g['label']}", "remove") for g in diff.gpus_removed]
    rows += [Row(f"added {g['label']}", "add") for g in diff.gpus_added]
    rows += [Row(f"{c.name}: {_v(c.a)} → {_v(c.b)}", "change") for c in diff.gpus_changed]
    return Section("GPUs", tuple(rows)) if rows else None


def _dists(diff: Diff) -> Section | None:
    marked = [("change", c) for c in diff.dists_changed] + [("add", c) for c in diff.dists_added]
    marked += [("remove", c) for c in diff.dists_removed]
    if not marked:
        return None
    title = f"Distributions ({len(diff.dists_changed)} changed, {len(diff.dists_added)} added, {len(diff.dists_removed)} removed)"
    foot = _dists_compiled_note(diff) if any(c.compiled for _, c in marked) else ""
    return Section(title, tuple(Row(_dist_line(c), mark) for mark, c in marked), folded=True, foot=foot)


def _metrics(diff: Diff) -> Section | None:
    shown = [m for m in diff.metrics if m.shown]
    if not shown:
        return None
    rows = tuple(
        Row(
            metric_line(m),
            "bad" if m.regressed else "none",
            (m.name, f"{_num(m.a)} {m.unit}", f"{_num(m.b)} {m.unit}", f"{m.change:+.0%}", f"CPU {m.judged:+.0%}" if m.cpu else "-"),
        )
        for m in shown
    )
    return Section("Measured", rows, ("metric", "before", "after", "change", "judged"))


def _checks(diff: Diff) -> list[Section | None]:
    out: list[Section | None] = []
    if diff.recovered:
        rows = tuple(Row(f"{m.id}: {m.a} → {m.b}: {m.message}", "good") for m in diff.recovered)
        out.append(Section(f"Recovered ({len(diff.recovered)})", rows))
    columns, code = ("check", "before", "after", "message"), frozenset({0})
    if diff.changed:
        rows = tuple(Row(f"{m.id}: {m.a} → {m.b}: {m.message}", "change", (m.id, m.a, m.b, m.message)) for m in diff.changed)
        out.append(Section("Other status changes", rows, columns, code, folded=True))
    rows_one = [Row(f"{m.id} ({m.a}) only in {diff.a_name}", "remove", (m.id, m.a, "(absent)", "")) for m in diff.only_a]
    rows_one += [Row(f"{m.id} ({m.b}) only in {diff.b_name}: {m.message}", "add", (m.id, "(absent)", m.b, m.message)) for m in diff.only_b]
    if rows_one:
        out.append(Section("Checks in one report only", tuple(rows_one), columns, code, folded=True))
    return out


def _env(diff: Diff) -> Section | None:
    if not diff.env_changed:
        return None
    rows = tuple(Row(f"{c.name}: {_short(c.a)} → {_short(c.b)}", cells=(c.name, _short(c.a), _short(c.b))) for c in diff.env_changed)
    return Section("Environment variables", rows, ("variable", "before", "after"), frozenset({0, 1, 2}), folded=True)


def sections(diff: Diff) -> list[Section]:
    """What a diff shows, in order: both skins render this list."""
    found = [_regressions(diff), _versions(diff), _gpus(diff), _dists(diff), _metrics(diff), *_checks(diff), _env(diff)]
    if diff.not_compared:
        found.append(Section("Not compared: " + "; ".join(diff.not_compared), plain=True))
    return [s for s in found if s is not None]


# ------------------------------------------------------------------ the text skin

TEXT_MARK = {"bad": "✗ ", "good": "✓ ", "add": "+ ", "remove": "- ", "change": "~ ", "none": "  ", "": ""}


def _text_section(s: Section) -> list[str]:
    if s.plain:
        return [s.title, ""]
    out = [s.title]
    for r in s.rows:
        out.append(f"  {TEXT_MARK[r.mark]}{r.text}")
        out += [f"      {'→ ' if label == 'fix' else label + ': '}{text}" for label, text in r.subs]
    if s.foot:
        out.append(f"  {s.foot}")
    return [*out, ""]


def render_text(diff: Diff) -> str:
    out = [f"envdoctor diff: {diff.a_name} → {diff.b_name}"]
    for side, meta in (("A", diff.a_meta), ("B", diff.b_meta)):
        host = f" on {meta['host']}" if meta.get("host") else ""
        out.append(
            f"  {side}: {meta.get('started_at') or '?'}{host} (envdoctor {meta.get('tool_version') or '?'}, schema {meta['schema_version']})"
        )
    out.append("")
    out += [f"note: {n}" for n in diff.notes] + ([""] if diff.notes else [])
    if diff.identical:
        return "\n".join([*out, "no differences: same versions, GPUs and check results"]) + "\n"
    for s in sections(diff):
        out += _text_section(s)
    out.append(summary(diff))
    return "\n".join(out) + "\n"


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
    return md_text(text)


def _code(text: Any) -> str:
    return md_code(_v(text), table=True)


# ------------------------------------------------------------------ the Markdown skin

MD_MARK = {"bad": "❌ ", "good": "✅ "}


def _md_cell(s: Section, i: int, value: str) -> str:
    return _code(value) if i in s.code else _md(value)


def _md_section(s: Section) -> list[str]:
    if s.plain:
        return [_md(s.title), ""]
    out = [f"<details><summary>{_md(s.title)}</summary>", ""] if s.folded else [f"#### {_md(s.title)}", ""]
    if s.columns:
        out += ["| " + " | ".join(s.columns) + " |", "|" + "---|" * len(s.columns)]
        for r in s.rows:
            cells = [_md_cell(s, i, c) for i, c in enumerate(r.cells)]
            cells[0] = MD_MARK.get(r.mark, "") + cells[0]
            out.append("| " + " | ".join(cells) + " |")
    else:
        for r in s.rows:
            out.append(f"- {MD_MARK.get(r.mark, '')}{_md(r.text)}")
            out += [f"  - {label}: {_md(text)}" for label, text in r.subs]
    if s.foot:
        out += ["", _md(s.foot)]
    return [*out, "", "</details>", ""] if s.folded else [*out, ""]


def render_markdown(diff: Diff) -> str:
    out = [f"### envdoctor diff: {summary(diff)}", ""]
    out.append(
        f"{md_code(diff.a_name)} ({_md(diff.a_meta.get('started_at'))}) → {md_code(diff.b_name)} ({_md(diff.b_meta.get('started_at'))})"
    )
    out.append("")
    out += [f"> **Note:** {_md(n)}" for n in diff.notes] + ([""] if diff.notes else [])
    if diff.identical:
        return "\n".join([*out, "No differences: same versions, GPUs and check results."]) + "\n"
    for s in sections(diff):
        out += _md_section(s)
    return "\n".join(out) + "\n"


def render_json(diff: Diff) -> str:
    return json.dumps(diff.to_dict(), indent=2) + "\n"


def render(diff: Diff, fmt: str) -> str:
    out = {"text": render_text, "json": render_json, "markdown": render_markdown}[fmt](diff)
    return terminal(out) if fmt == "text" else out  # reports from elsewhere are shown inert
