"""Triage answers as text, markdown (a reply ready to post) and JSON (schema/triage.schema.json).

Every form says the same, in the same order: the likely cause, the evidence quoted from the
paste, the fix, what to ask the reporter for; or, when nothing is wrong, that no environment
problem was found and what the paste did (not) show.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from envdoctor.core.scrub import scrub, scrubber
from envdoctor.core.triage import Cause, Triage
from envdoctor.core.version import __version__
from envdoctor.reporters.escape import md_block, md_code, md_prose, md_text, terminal

TRIAGE_SCHEMA_VERSION = "1.0"


def scrubbed(t: Triage) -> Triage:
    """The triage with every secret a paste may hold hidden, before any form is written (known
    token shapes, credentials in URLs, secret assignments, this machine's secret values). Not
    the "long random string" rule of reports: a paste's mangled C++ symbols and hashes are the
    evidence."""
    return scrub(t, key_rule=False, random=False)


MAX_ASKS = 5  # the text and markdown answers; JSON has them all


def _cause_dict(c: Cause) -> dict[str, Any]:
    return {
        "cause_id": c.cause_id,
        "summary": c.summary,
        "check": c.check,
        "check_status": c.status or None,
        "signature": c.signature or None,
        "basis": c.basis,
        "confidence": c.confidence,
        "evidence": list(c.evidence),
        "fix": c.fix,
        "fixes": [{"argv": list(f.argv), "command": f.command, "scope": f.scope, "needs_root": f.needs_root} for f in c.fixes],
        "ask": c.ask or None,
    }


def to_dict(t: Triage, source: str) -> dict[str, Any]:
    return {
        "kind": "envdoctor-triage",
        "schema_version": TRIAGE_SCHEMA_VERSION,
        "tool_version": __version__,
        "source": source,
        "problem_found": t.found,
        "read": list(t.kinds),
        "causes": [_cause_dict(c) for c in t.causes],
        "asks": list(t.asks),
        "seen": dict(t.seen),
        "notes": list(t.notes),
        "checks": [{"id": r.id, "status": r.status.value, "message": r.message} for r in t.rows],
        "not_judged": [{"id": u.id, "title": u.title, "ask": u.ask} for u in t.unjudged],
        "problems": [{"id": p.id, "message": p.message} for p in t.problems],
    }


def render_json(t: Triage, source: str) -> str:
    # Scrubbed as data, then serialised: the JSON stays valid whatever a secret's shape.
    return json.dumps(scrub(to_dict(t, source), key_rule=False, random=False), indent=2) + "\n"


def _seen_lines(t: Triage, limit: int = 8, shown: Callable[[str, str], str] | None = None) -> list[str]:
    """The paste's lines the facts were read from: the stack first, package lines last.
    ``shown(line, key)``: each line as printed (scrubbed), applied only to the lines it reaches."""
    out: list[str] = []
    for k in sorted(t.seen, key=lambda k: k.startswith("dists.")):
        if len(out) == limit:
            break
        line = shown(t.seen[k], k) if shown else t.seen[k]
        if line not in out:
            out.append(line)
    return out


def _counts(t: Triage) -> str:
    by: dict[str, int] = {}
    for r in t.rows:
        by[r.status.value] = by.get(r.status.value, 0) + 1
    judged = ", ".join(f"{n} {s}" for s, n in sorted(by.items()))
    return f"{len(t.rows)} checks judged the paste ({judged or 'none'}); {len(t.unjudged)} cannot be judged from a paste (they need the machine)"


def _headline(t: Triage) -> str:
    if not t.kinds and not t.causes and not t.seen:
        return "Nothing recognisable in the paste: no tool output (collect_env, nvidia-smi, pip list) and no known error text."
    if not t.found and not any(r.status.value in ("pass", "warn") for r in t.rows):
        return "No known error text and too little of the environment in the paste to judge it."
    if not t.found:
        return "No environment problem was found in the paste."
    return ""


def render_text(t: Triage, source: str) -> str:
    # the text prints no judged row's or unjudged check's words, only their count by status:
    # only what it prints is scrubbed (the rows are most of the answer's strings)
    # (and of the lines the facts were read from, only the few it prints)
    shown, source = scrubbed(replace(t, rows=[], unjudged=[], seen={})), scrub(source, random=False)
    t = replace(shown, rows=t.rows, unjudged=t.unjudged, seen=t.seen)
    out = [
        f"envdoctor triage: {source}",
        f"Read: {', '.join(t.kinds) or ('facts written by hand' if t.seen else 'a known error text' if t.causes else 'nothing recognisable')}",
        "",
    ]
    head = _headline(t)
    top = [c for c in t.causes if c.is_problem] if t.found else []
    if head:
        out.append(head)
        out += [f"  seen: {line}" for line in _seen_lines(t, shown=scrubber(random=False).text)]
        warns = [c for c in t.causes if not c.is_problem]
        out += [f"  note: {c.summary}" for c in warns[:3]]
    else:
        c = top[0]
        out.append(f"Likely cause ({c.confidence} confidence; {c.basis}): {c.summary}")
        out.append(f"  [{c.cause_id}; judged by {c.check}]")
        if c.evidence:
            out += ["", "Evidence from the paste:"] + [f"  > {line}" for line in c.evidence]
        if c.fix or c.fixes:
            out += ["", "Fix:"] + [f"  {line}" for line in c.fix.splitlines()] + [f"  $ {f.command}" for f in c.fixes]
        others = [x for x in t.causes[1:] if x.is_problem] + [x for x in t.causes if not x.is_problem]
        if others:
            out += ["", "Also seen:"] + [f"  - ({x.confidence}) {x.summary}" for x in others[:4]]
    if t.asks:
        out += ["", "Ask the reporter for:"] + [f"  - {a}" for a in t.asks[:MAX_ASKS]]
    out += ["", _counts(t)]
    out += [f"note: {n}" for n in t.notes]
    out += [f"plugin problem: {p.message}" for p in t.problems]
    return terminal("\n".join(out)) + "\n"  # the paste's text shown inert: no escape sequence acts


def _fence(lines: list[str] | tuple[str, ...], lang: str = "text") -> list[str]:
    return md_block("\n".join(terminal(x, newlines=False) for x in lines), lang)


def render_markdown(t: Triage, source: str) -> str:
    t = scrubbed(t)
    out: list[str] = []
    head = _headline(t)
    if head:
        out += [f"**{head}**", ""]
        if t.seen:
            out += ["What the paste shows:", ""] + _fence(_seen_lines(t)) + [""]
    else:
        c = next(x for x in t.causes if x.is_problem)
        out += [
            f"**Likely cause:** {md_text(c.summary, cap=False)}",
            "",
            f"<sub>{md_text(c.confidence)} confidence ({md_text(c.basis)}); {md_code(c.cause_id)}, judged by {md_code(c.check)}</sub>",
            "",
        ]
        if c.evidence:
            out += ["**Evidence** from the paste:", ""] + _fence(c.evidence) + [""]
        if c.fix or c.fixes:
            lines = [md_prose(x) for x in c.fix.splitlines()]
            out += ["**Fix:**", "", *([f"- {line}" for line in lines] if len(lines) > 1 else lines)]  # Markdown joins bare lines
            out += ([""] + _fence([f.command for f in c.fixes], "bash")) if c.fixes else []
            out += [""]
        others = [x for x in t.causes[1:] if x.is_problem]
        if others:
            out += ["**Also seen:**", ""] + [f"- {md_text(x.summary, cap=False)}" for x in others[:3]] + [""]
    if t.asks:
        lead = "If that does not solve it, please share:" if t.found else "To look further, please share:"
        out += [lead, ""] + [f"- {md_prose(a)}" for a in t.asks[:MAX_ASKS]] + [""]
    out.append(f"<sub>Triaged with `envdoctor triage` {__version__}: {md_text(_counts(t))}.</sub>")
    return "\n".join(out) + "\n"


def render(t: Triage, fmt: str, source: str) -> str:
    return {"json": render_json, "markdown": render_markdown}.get(fmt, render_text)(t, source)
