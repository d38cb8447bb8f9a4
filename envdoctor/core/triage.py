"""Triage: the static checks and the error-signature catalog run on facts read from a paste.

The engine knows nothing of particular checks. It runs only the checks that declare they can
judge pasted facts (``@check(..., sources=("live", "pasted"))``); every other check is listed as
"cannot be judged from this paste" with what to ask for. Facts enter as the readers produced
them (``envdoctor.sources.read_paste``), through the ``source="pasted"`` adapters the checks
ship (they fill what a paste leaves out from offline tables); a fact the paste lacks is
unavailable with its ``ask`` text; ``probe``, ``env`` and ``options`` do not exist for a paste.
What to ask the reporter for comes from those ``ask`` texts: the readers and the checks name
the facts a paste lacks, and asks merge by fact, never by their wording.

Causes are ranked: a signature found in the error text *and* a failing check that judges the
same cause come first, then a signature with a warning check, a signature alone, a failing
check alone, a warning alone. The first cause is the answer; the rest are listed after it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from envdoctor.core.api import CheckSpec, FactSpec, Fix, Status, Unavailable
from envdoctor.core.facts import FactStore
from envdoctor.core.outcome import CheckOutcome
from envdoctor.core.registry import SPECIALS, Registry
from envdoctor.core.runner import evaluate
from envdoctor.core.signatures import PASTE, Finding, Signature, find, scoped

MAX_SEARCH = 2 * 1024 * 1024  # the signature search reads the head and tail of a huge paste
LIVE_ASK = "the output of `envdoctor check` run on the affected machine"
NO_LIVE = {
    "probe": "a paste has no live torch to probe",
    "env": "a paste has no live environment (only the variables it shows)",
    "options": "a paste has no run options",
}

NOT_IN_PASTE = "not in the paste"  # what a pasted adapter raises when the paste lacks its fact

# rank of a cause: higher first
CORROBORATED, SIGNATURE_WARN, SIGNATURE, SIGNATURE_CONTRADICTED, CHECK_FAIL, CHECK_WARN = 60, 50, 40, 30, 20, 10


@dataclass(frozen=True)
class Ask:
    """One thing to ask a reporter for: ``text``, and the facts its answer shows (by name)."""

    text: str
    facts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unjudged:
    """A check that cannot be judged from this paste, and what would let it be."""

    id: str
    title: str
    ask: str
    why: str  # "live only" or the missing fact's reason


@dataclass(frozen=True)
class Cause:
    """A likely cause of the reported failure: what names it, on what basis, and its fix."""

    cause_id: str  # the catalog's category (e.g. driver_too_old_for_torch_cuda) or the check id
    summary: str
    check: str  # the check that judges it
    status: str  # the check's verdict on the pasted facts: fail, warn, pass, skip, or "" (not judged)
    rank: int
    basis: str  # what shows it: "error text and check", "error text", "check"
    evidence: tuple[str, ...] = ()
    fix: str = ""
    fixes: tuple[Fix, ...] = ()
    ask: str = ""
    signature: str = ""  # the signature id, when an error text shows it
    incidental: bool = False  # a check's finding beside an error text it does not explain

    @property
    def confidence(self) -> str:
        """high: an error text and a check agree; medium: either alone; low: a warning, or a
        failing check beside an error in the paste that no signature explains (the error may
        have another cause: a code bug, a deliberate CPU-only setup)."""
        if self.rank >= SIGNATURE_WARN:
            return "high"
        if self.rank >= CHECK_FAIL and not self.incidental:
            return "medium"
        return "low"

    @property
    def is_problem(self) -> bool:
        """A cause worth exit 1: an error text shows it, or a check fails on the pasted facts."""
        return self.rank >= CHECK_FAIL


@dataclass
class Triage:
    """Triage's answer: the causes ranked, the checks judged, what to ask for, what the paste shows."""

    kinds: tuple[str, ...]
    causes: list[Cause] = field(default_factory=list)
    rows: list[CheckOutcome] = field(default_factory=list)  # the checks judged on the paste
    unjudged: list[Unjudged] = field(default_factory=list)
    asks: list[str] = field(default_factory=list)
    notes: tuple[str, ...] = ()
    seen: dict[str, str] = field(default_factory=dict)  # what the paste shows, one line per fact
    problems: list[CheckOutcome] = field(default_factory=list)  # plugin load problems

    @property
    def found(self) -> bool:
        return any(c.is_problem for c in self.causes)


def _store(reg: Registry, facts: Mapping[str, Any], unavailable: Mapping[str, str]) -> FactStore:
    given: dict[str, Any] = {name: Unavailable(why) for name, why in NO_LIVE.items()}
    given["pasted"] = dict(facts)
    for name, spec in reg.facts.items():
        if name in reg.pasted_facts:
            continue  # its adapter reads it from ``pasted``
        if name in facts:
            given[name] = facts[name]
        elif name in unavailable:
            given[name] = Unavailable(f"the pasted report says: {unavailable[name]}")
        else:
            given[name] = Unavailable(f"{NOT_IN_PASTE} ({_ask_of(spec.ask)})")
    for name, value in facts.items():  # a pasted fact no plugin provides still reaches the checks
        if name not in given and name not in reg.pasted_facts:
            given[name] = value
    adapters = {name: replace(spec, func=_asking(spec.func, reg.facts.get(name))) for name, spec in reg.pasted_facts.items()}
    return FactStore(adapters, given)


def _asking(func: Callable[..., Any], live: FactSpec | None) -> Callable[..., Any]:
    """An adapter whose "not in the paste" names what to ask for: its live fact's ``ask``."""

    @functools.wraps(func)
    def adapted(**kwargs: Any) -> Any:
        try:
            return func(**kwargs)
        except Unavailable as e:
            if e.reason != NOT_IN_PASTE:
                raise
            raise Unavailable(f"{NOT_IN_PASTE} ({_ask_of(live.ask if live else '')})") from None

    return adapted


def _ask_of(ask: str) -> str:
    return f"ask for {ask}" if ask else "a live run shows it"


def _fact_ask(reg: Registry, name: str) -> Ask:
    """What to ask for to get fact ``name``: its ``ask=`` text (the one source), else a live run.
    The answer shows every fact that asks for the same (`nvidia-smi`: the driver and the GPUs)."""
    f = reg.facts.get(name) or reg.pasted_facts.get(name)
    if not (f and f.ask):
        return Ask(LIVE_ASK, (name,))
    return Ask(f.ask, (name, *(n for n, g in reg.facts.items() if g.ask == f.ask and n != name)))


def _missing_asks(spec: CheckSpec, reg: Registry, store: FactStore) -> list[Ask]:
    """What to ask for of the facts ``spec`` needs and the paste lacks; a fact the paste shows
    cannot exist (an adapter's other reason: no NVIDIA driver beside a ROCm build) is not asked for."""
    return [_fact_ask(reg, p.name) for p in spec.params if not p.optional and p.name not in SPECIALS and _lacking(store.outcome(p.name))]


def _lacking(outcome: Any) -> bool:
    """The paste lacks this fact (or its adapter failed): worth asking for."""
    return not outcome.available and (bool(outcome.error) or outcome.reason.startswith(NOT_IN_PASTE))


def judge(reg: Registry, facts: Mapping[str, Any], unavailable: Mapping[str, str] | None = None) -> tuple[list, list, list, FactStore]:
    """Run the pasted-capable checks on ``facts``: (rows, unjudged, asks of skipped checks, the
    facts as the checks saw them)."""
    store = _store(reg, facts, unavailable or {})
    rows, unjudged, asks = [], [], []
    for spec in reg.checks:
        if "pasted" not in spec.sources:
            live = any(p.name in ("probe", "env") and not p.optional for p in spec.params)
            missing = [] if live else _missing_asks(spec, reg, store)
            ask = missing[0].text if missing else LIVE_ASK
            unjudged.append(Unjudged(spec.id, spec.title, ask, "needs the live machine"))
            continue
        row = evaluate(spec, store)
        rows.append(row)
        if row.status is Status.SKIP:
            missing = _missing_asks(spec, reg, store)
            if len(missing) == 1:  # one fact away from a verdict: worth asking for
                asks.extend(missing)
    return rows, unjudged, asks, store


def _search_text(text: str) -> str:
    if len(text) <= MAX_SEARCH:
        return text
    return text[: MAX_SEARCH // 2] + "\n" + text[-MAX_SEARCH // 2 :]


# A line break inside a sentence, as a reporter's editor or a terminal wraps it: the next line
# goes on in lower case ("undefined\n symbol: _ZN3c10...", "cannot be run in\nNumPy 2").
_WRAP = re.compile(r"(?<=[\w,:;'\"])[ \t]{0,4}\n[ \t]{0,8}(?=[a-z_(\[])")


def _findings(text: str, signatures: Sequence[Signature]) -> list[Finding]:
    """Every signature found in the paste as written, then those found only once wrapped lines
    are joined again; catalog order (specific before generic) is kept."""
    found = find(text, signatures)
    have = {f.signature.id for f in found}
    rest = [s for s in signatures if s.id not in have]
    if rest and "\n" in text:
        joined = _WRAP.sub(" ", text)
        if joined != text:
            found += find(joined, rest)
            order = {s.id: i for i, s in enumerate(signatures)}
            found.sort(key=lambda f: order[f.signature.id])
    return found


def _check_causes(signatures: Sequence[Signature]) -> dict[str, str]:
    """check id -> the catalog's cause category (the first signature naming that check)."""
    out: dict[str, str] = {}
    for s in signatures:
        out.setdefault(s.check, s.cause_id)
    return out


def _row_evidence(row: CheckOutcome, spec: CheckSpec | None, evidence: Mapping[str, str]) -> tuple[str, ...]:
    names = [p.name for p in spec.params] if spec else []
    lines = [v for k, v in evidence.items() if k.split(".", 1)[0] in names]
    return tuple(dict.fromkeys(lines))[:6]


def _finding_cause(f: Finding, row: CheckOutcome | None, evidence: Mapping[str, str], spec: CheckSpec | None) -> Cause:
    status = row.status.value if row else ""
    rank = {"fail": CORROBORATED, "warn": SIGNATURE_WARN, "pass": SIGNATURE_CONTRADICTED}.get(status, SIGNATURE)
    basis = "error text and check" if status in ("fail", "warn") else "error text"
    lines = (f.evidence,) + (_row_evidence(row, spec, evidence) if row and status in ("fail", "warn") else ())
    fix = f.fix
    if row and status in ("fail", "warn") and row.hint:
        # The check judged the pasted facts: its fix first (the catalog's is for any machine:
        # "a build for the newest CUDA" is wrong for a Pascal GPU under the cu128 build).
        fix = f"{row.hint}" if row.fixes else f"{row.hint}\n{f.fix}"
    summary = f.cause
    if row and status in ("fail", "warn"):
        summary += f" — confirmed by the pasted facts: {row.message}"
    elif row and status == "pass":
        summary += f" (but {row.id} passes on the pasted facts: {row.message})"
    return Cause(
        cause_id=f.signature.cause_id,
        summary=summary,
        check=row.id if row and status in ("fail", "warn") else f.signature.check,
        status=status,
        rank=rank,
        basis=basis,
        evidence=tuple(dict.fromkeys(lines)),
        fix=fix,
        fixes=row.fixes if row and status in ("fail", "warn") else (),
        ask=f.signature.ask,
        signature=f.signature.id,
    )


def rank_causes(
    findings: Sequence[Finding], rows: Sequence[CheckOutcome], reg: Registry, evidence: Mapping[str, str], errors: Sequence[str] = ()
) -> list[Cause]:
    by_id = {r.id: r for r in rows}
    specs = {s.id: s for s in reg.checks}
    causes: list[Cause] = []
    used_checks: set[str] = set()
    seen_causes: set[str] = set()
    quoted: set[str] = set()
    for f in findings:
        # catalog order is specific first: a generic signature on a line a specific one explained adds nothing
        if f.signature.cause_id in seen_causes or f.evidence in quoted:
            continue
        row = by_id.get(f.signature.check)
        if row is None or row.status not in (Status.FAIL, Status.WARN):
            # another check whose result names this cause judges the same thing (details["cause_id"])
            row = next((r for r in rows if r.status is Status.FAIL and r.details.get("cause_id") == f.signature.cause_id), row)
        if f.signature.confirm and not (row and row.status is Status.FAIL):
            continue  # its text names this cause only with the facts' agreement: the next row may explain the line
        seen_causes.add(f.signature.cause_id)
        quoted.add(f.evidence)
        causes.append(_finding_cause(f, row, evidence, specs.get(row.id if row else f.signature.check)))
        used_checks.add(row.id if row and row.status is Status.FAIL else f.signature.check)
    paste_rows = scoped(reg.signatures, PASTE)
    categories = _check_causes(paste_rows)
    known_causes = {s.cause_id for s in paste_rows}
    for r in rows:
        if r.id in used_checks or r.status not in (Status.FAIL, Status.WARN):
            continue
        named = r.details.get("cause_id") if isinstance(r.details.get("cause_id"), str) else None
        cause_id = named or categories.get(r.id, r.id)
        if cause_id in seen_causes:
            continue
        seen_causes.add(cause_id)
        # a check whose failure is a known root cause (the catalog names the check, or the result
        # names a catalog cause in details["cause_id"]) before a symptom check
        # (torch.cuda_available is False: why?)
        root = r.id in categories or cause_id in known_causes
        rank = (CHECK_FAIL if r.status is Status.FAIL else CHECK_WARN) + (2 if root else 0)
        lines = _row_evidence(r, specs.get(r.id), evidence)
        incidental = bool(errors) and not findings
        causes.append(
            Cause(
                cause_id=cause_id,
                summary=r.message,
                check=r.id,
                status=r.status.value,
                rank=rank,
                basis="check",
                evidence=lines,
                fix=r.hint,
                fixes=r.fixes,
                incidental=incidental,
            )
        )
    order = {id(c): i for i, c in enumerate(causes)}
    causes.sort(key=lambda c: (-c.rank, order[id(c)]))
    return causes


def _merged(asks: Iterable[Ask]) -> list[str]:
    """Each ask once, in order: one already said, or whose facts an earlier answer shows, goes."""
    said: dict[str, None] = {}
    shown: set[str] = set()
    for a in asks:
        if a.text and a.text not in said and not (a.facts and shown.issuperset(a.facts)):
            said[a.text] = None
        shown.update(a.facts)
    return list(said)


def _asks(
    reg: Registry, paste: Any, store: FactStore, causes: Sequence[Cause], check_asks: Sequence[Ask], unjudged: Sequence[Unjudged]
) -> list[str]:
    """Most useful first: what the top cause needs, what the readers saw missing (a fact, in its
    ``ask`` words, or the readers' own: a cut collect_env), what the skipped checks need, then the
    live run for everything a paste cannot show. A fact is asked for only where the paste lacks
    it (:func:`_lacking`), not where an adapter says it cannot exist."""
    out: list[Ask] = []
    if causes and causes[0].ask:
        sig = next((s for s in reg.signatures if s.id == causes[0].signature), None)
        out.append(Ask(causes[0].ask, sig.ask_facts if sig else ()))
    for want in paste.missing:
        if want.text:
            out.append(Ask(want.text, want.facts))
        else:
            out += [_fact_ask(reg, name) for name in want.facts if _lacking(store.outcome(name))]
    out += check_asks
    if unjudged:  # each one's own ask is in the JSON answer; one line covers them here
        out.append(Ask(LIVE_ASK))
    return _merged(out)


def triage(reg: Registry, paste: Any, text: str) -> Triage:
    """Judge ``paste`` (an ``envdoctor.sources.Paste`` read from ``text``)."""
    rows, unjudged, check_asks, store = judge(reg, paste.facts, paste.unavailable)
    findings = _findings(_search_text(text), scoped(reg.signatures, PASTE))  # not a check's own hints, nor the probe's
    causes = rank_causes(findings, rows, reg, paste.evidence, paste.errors)
    asks = _asks(reg, paste, store, causes, check_asks, unjudged)
    seen = {k: v for k, v in paste.evidence.items()}
    return Triage(paste.kinds, causes, rows, unjudged, asks, paste.notes, seen, list(reg.problems))
