"""``envdoctor diff A.json B.json``: what changed between two environments.

For migrations ("we moved to the new image and compile is slower / triton broke"): the versions
of the stack, the GPUs, and the checks whose verdict moved. It reads the JSON reports as plain
dicts, leniently, so a report from another schema version is compared on the fields both have.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import click

from envdoctor.commands.output import writable_target, write
from envdoctor.core.exitcode import ExitCode
from envdoctor.core.report import SCHEMA_VERSION, ReportError, load_report  # noqa: F401 - commands import them from here
from envdoctor.core.stack import ABSENT, UNKNOWN, VERSION_GETTERS, _fact, _major

DIFF_SCHEMA_VERSION = "1.0"
SEVERITY = {"pass": 0, "skip": 0, "warn": 1, "fail": 2, "error": 3}


# ------------------------------------------------------------------ the diff


@dataclass(frozen=True)
class Change:
    name: str
    a: Any
    b: Any


@dataclass(frozen=True)
class CheckMove:
    id: str
    title: str
    a: str  # status in A ("" if absent)
    b: str
    message: str  # B's message (A's for a check only in A)
    hint: str = ""


@dataclass
class Diff:
    a_name: str
    b_name: str
    a_meta: dict[str, Any]
    b_meta: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    versions: list[Change] = field(default_factory=list)
    gpus_added: list[dict[str, Any]] = field(default_factory=list)
    gpus_removed: list[dict[str, Any]] = field(default_factory=list)
    gpus_changed: list[Change] = field(default_factory=list)
    env_changed: list[Change] = field(default_factory=list)
    regressed: list[CheckMove] = field(default_factory=list)
    recovered: list[CheckMove] = field(default_factory=list)
    changed: list[CheckMove] = field(default_factory=list)  # same severity, other status (pass <-> skip)
    only_a: list[CheckMove] = field(default_factory=list)
    only_b: list[CheckMove] = field(default_factory=list)
    not_compared: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not any(
            (
                self.versions,
                self.gpus_added,
                self.gpus_removed,
                self.gpus_changed,
                self.env_changed,
                self.regressed,
                self.recovered,
                self.changed,
                self.only_a,
                self.only_b,
            )
        )

    def to_dict(self) -> dict[str, Any]:
        def moves(xs: list[CheckMove]) -> list[dict[str, Any]]:
            return [asdict(x) for x in xs]

        def changes(xs: list[Change]) -> list[dict[str, Any]]:
            return [asdict(x) for x in xs]

        return {
            "kind": "envdoctor-diff",
            "schema_version": DIFF_SCHEMA_VERSION,
            "a": {"file": self.a_name, **self.a_meta},
            "b": {"file": self.b_name, **self.b_meta},
            "identical": self.identical,
            "regressions": len(self.regressed),
            "notes": list(self.notes),
            "versions": changes(self.versions),
            "gpus": {"added": self.gpus_added, "removed": self.gpus_removed, "changed": changes(self.gpus_changed)},
            "environment": changes(self.env_changed),
            "checks": {
                "regressed": moves(self.regressed),
                "recovered": moves(self.recovered),
                "changed": moves(self.changed),
                "only_in_a": moves(self.only_a),
                "only_in_b": moves(self.only_b),
            },
            "not_compared": list(self.not_compared),
        }


def _meta(d: Mapping[str, Any]) -> dict[str, Any]:
    tool = d.get("tool") if isinstance(d.get("tool"), dict) else {}
    plat = d.get("platform") if isinstance(d.get("platform"), dict) else {}
    return {
        "schema_version": str(d.get("schema_version")),
        "tool_version": str(tool.get("version", "")),
        "started_at": str(d.get("started_at", "")),
        "host": str(plat.get("hostname", "")),
    }


GPU_FIELDS = ("name", "cc", "memory_total", "mig_mode", "persistence_mode", "compute_mode")


def _gpus(d: Mapping[str, Any]) -> Any:
    g = _fact(d, "gpus")
    if g == ABSENT:
        return []
    return g if isinstance(g, list) else UNKNOWN


def _gpu_label(g: Mapping[str, Any]) -> str:
    mem = g.get("memory_total")
    mem_s = f", {mem / (1 << 30):.0f} GiB" if isinstance(mem, (int, float)) and mem else ""
    return f"GPU {g.get('index', '?')}: {g.get('name', '?')}{mem_s}"


def _compare_gpus(diff: Diff, a: Mapping[str, Any], b: Mapping[str, Any]) -> None:
    ga, gb = _gpus(a), _gpus(b)
    if ga is UNKNOWN or gb is UNKNOWN:
        if ga is not gb:
            diff.not_compared.append("GPUs (gathered in one report only)")
        return
    # By index: on a new machine every UUID differs, yet "GPU 3 went from A100 to H200" is the news.
    ia = {g.get("index", n): g for n, g in enumerate(ga) if isinstance(g, dict)}
    ib = {g.get("index", n): g for n, g in enumerate(gb) if isinstance(g, dict)}
    for i in sorted(set(ia) - set(ib), key=str):
        diff.gpus_removed.append({"index": i, "name": ia[i].get("name"), "label": _gpu_label(ia[i])})
    for i in sorted(set(ib) - set(ia), key=str):
        diff.gpus_added.append({"index": i, "name": ib[i].get("name"), "label": _gpu_label(ib[i])})
    uuid_changes = 0
    for i in sorted(set(ia) & set(ib), key=str):
        for f in GPU_FIELDS:
            if f in ia[i] and f in ib[i] and ia[i][f] != ib[i][f]:
                diff.gpus_changed.append(Change(f"GPU {i} {f}", ia[i][f], ib[i][f]))
        if ia[i].get("uuid") and ib[i].get("uuid") and ia[i]["uuid"] != ib[i]["uuid"]:
            uuid_changes += 1
    if uuid_changes:
        diff.notes.append(f"{uuid_changes} GPU(s) have a different UUID: different physical devices")


def _compare_env(diff: Diff, a: Mapping[str, Any], b: Mapping[str, Any]) -> None:
    ea, eb = _fact(a, "env_vars"), _fact(b, "env_vars")
    if not isinstance(ea, dict) or not isinstance(eb, dict):
        return
    for name in sorted(set(ea) | set(eb)):
        va, vb = ea.get(name, ABSENT), eb.get(name, ABSENT)
        if va != vb:
            diff.env_changed.append(Change(name, va, vb))


def _status(r: Mapping[str, Any]) -> str:
    return str(r.get("status", ""))


def compare(a: Mapping[str, Any], b: Mapping[str, Any], a_name: str = "A", b_name: str = "B") -> Diff:
    diff = Diff(a_name, b_name, _meta(a), _meta(b))
    va, vb = str(a.get("schema_version")), str(b.get("schema_version"))
    if va != vb:
        diff.notes.append(f"the reports use schema versions {va} and {vb}; compared what both record")
    ours = _major(SCHEMA_VERSION)
    for label, v in ((a_name, va), (b_name, vb)):
        if (_major(v) or 0) > (ours or 0):
            diff.notes.append(
                f"{label} uses schema {v}, newer than this envdoctor reads ({SCHEMA_VERSION}); upgrade envdoctor for a full comparison"
            )

    for label, get in VERSION_GETTERS:
        x, y = get(a), get(b)
        if x is UNKNOWN or y is UNKNOWN:
            known = y if x is UNKNOWN else x
            if known is not UNKNOWN and known != ABSENT:
                diff.not_compared.append(f"{label} (recorded in one report only)")
            continue
        if x != y:
            diff.versions.append(Change(label, x, y))
    _compare_gpus(diff, a, b)
    _compare_env(diff, a, b)

    ra = {r["id"]: r for r in a.get("results", [])}
    rb = {r["id"]: r for r in b.get("results", [])}
    for cid, r in ra.items():
        if cid not in rb:
            diff.only_a.append(CheckMove(cid, str(r.get("title", cid)), _status(r), "", str(r.get("message", ""))))
    for cid, r in rb.items():
        move = CheckMove(
            cid, str(r.get("title", cid)), _status(ra.get(cid, {})), _status(r), str(r.get("message", "")), str(r.get("hint", ""))
        )
        if cid not in ra:
            diff.only_b.append(move)
            continue
        sa, sb = SEVERITY.get(move.a, 0), SEVERITY.get(move.b, 0)
        if sb > sa:
            diff.regressed.append(move)
        elif sb < sa:
            diff.recovered.append(move)
        elif move.a != move.b:
            diff.changed.append(move)
    return diff


# ------------------------------------------------------------------ rendering


def _v(x: Any) -> str:
    return "(none)" if x in (None, ABSENT, "") else str(x)


def _short(x: Any, limit: int = 120) -> str:
    s = _v(x)
    return s if len(s) <= limit else s[: limit - 3] + "..."


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
    if diff.regressed:
        out.append(f"Regressions ({len(diff.regressed)})")
        for m in diff.regressed:
            out.append(f"  ✗ {m.id}: {m.a} → {m.b}: {m.message}")
            if m.hint:
                out.append(f"      → {m.hint}")
        out.append("")
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


def summary(diff: Diff) -> str:
    if diff.identical:
        return "no differences"
    parts = [f"{len(diff.regressed)} regression{'s' if len(diff.regressed) != 1 else ''}"]
    if diff.recovered:
        parts.append(f"{len(diff.recovered)} recovered")
    if diff.versions:
        parts.append(f"{len(diff.versions)} version change{'s' if len(diff.versions) != 1 else ''}")
    gpu = len(diff.gpus_added) + len(diff.gpus_removed) + len(diff.gpus_changed)
    if gpu:
        parts.append(f"{gpu} GPU change{'s' if gpu != 1 else ''}")
    return ("REGRESSED: " if diff.regressed else "CHANGED: ") + ", ".join(parts)


def _md(text: Any) -> str:
    # Inline HTML is live in GitHub markdown: "<home>" would vanish as an unknown tag.
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|").replace("\n", " ")


def _code(text: Any) -> str:
    s = _v(text).replace("\n", " ")
    ticks = "``" if "`" in s else "`"
    return f"{ticks}{s}{ticks}" if ticks == "`" else f"{ticks} {s} {ticks}"


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
    if diff.regressed:
        out += ["#### Regressions", ""]
        for m in diff.regressed:
            out.append(f"- ❌ `{m.id}` {m.a} → **{m.b}**: {_md(m.message)}")
            if m.hint:
                out.append(f"  - fix: {_md(m.hint)}")
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


@click.command("diff")
@click.argument("before", metavar="A.json")
@click.argument("after", metavar="B.json")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the comparison to FILE instead of stdout.")
@click.option("--redact", is_flag=True, help="Hide host names, user names, home paths, IP addresses and GPU UUIDs/serials.")
def diff_cmd(before, after, fmt, output, redact) -> None:
    """What changed from report A to report B (versions, GPUs, check verdicts); exit 1 on a regression."""
    from envdoctor.core.redact import redact_data, scrub_data

    if output:
        writable_target(output)
    try:
        a, b = load_report(before), load_report(after)
    except ReportError as e:
        click.echo(f"envdoctor diff: {e}", err=True)
        raise SystemExit(ExitCode.USAGE) from None
    a, b = scrub_data(a), scrub_data(b)  # files from elsewhere (or older envdoctors) may hold secrets
    if redact:
        a, b = redact_data([a, b])
    d = compare(a, b, os.path.basename(before), os.path.basename(after))
    text = render(d, fmt)
    if output:
        write(output, text)
    else:
        click.echo(text, nl=False)
    raise SystemExit(ExitCode.FAILED if d.regressed else ExitCode.OK)
