"""Error signatures: known error texts mapped to a cause, the check that judges it, and the fix.

One catalog serves the live run (a smoke whose body raised names its cause from it),
``envdoctor triage`` (a pasted traceback or error line), the checks that explain their own
error (torch's import error) and the probe (what killed a worker). Each row's ``scope`` says
where its text is searched. The catalog is data: the engine's own few rows (``SIGNATURES``
here, the probe's), then the built-in checks' (``envdoctor_checks.signatures``) and the
plugins': the registry collects every module-level ``SIGNATURES`` tuple, as it collects checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from envdoctor.core.patterns import lazy

PASTE, PROBE, CHECK_SCOPE = "paste", "probe", "check:"


@dataclass(frozen=True)
class Signature:
    """One known error text. ``pattern`` is a regular expression searched in the text; ``cause``
    and ``fix`` may name its groups as ``{group}`` (``{0}`` is the whole match)."""

    id: str
    pattern: str
    cause: str
    cause_id: str  # the category, e.g. "extension_abi_mismatch"
    check: str  # the check that judges this cause on a live machine
    fix: str
    ask: str = ""  # what to ask a reporter for when a paste shows only this error
    ignore_case: bool = False
    # Where the text is searched: PASTE (a paste and a smoke's error), "check:<id>" (only within
    # that check's own error: a bare "numpy" or "802" in a paste is no cause), PROBE (a dead
    # probe worker's output: the engine's own rows).
    scope: str = "paste"
    # The facts the answer to ``ask`` shows (by name): a fact's own ask for one of them goes
    # unsaid (`pip list | grep torch` covers "dists", `nvidia-smi` "driver" and "gpus").
    ask_facts: tuple[str, ...] = ()
    # Named only when its check fails on the facts: the text alone does not tell this cause from
    # another (libcudart.so.13 missing is a CUDA 13 package beside a CUDA 12 torch, or torch's own
    # library gone). Triage drops the finding otherwise; a live smoke's error never uses the row.
    confirm: bool = False
    source: str = "built-in"

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern, re.I if self.ignore_case else 0)

    @cached_property
    def needles(self) -> tuple[str, ...]:
        """Literal texts one of which every match contains (lower-cased when the pattern ignores
        case), or ``()`` when none can be told: :func:`find` skips the pattern, without compiling
        it, in a text that holds none of them (a paste's start-up pays for the few that can match)."""
        known = _KNOWN_NEEDLES.get(needle_key(self.pattern, self.ignore_case))
        return tuple(known) if known is not None else _needles(self.pattern, self.ignore_case)


# Needles computed once, shipped with the built-ins (their live index: core.live_index), so a
# paste's start-up does not parse every pattern again; a pattern not listed is parsed here.
_KNOWN_NEEDLES: dict[str, Sequence[str]] = {}


def needle_key(pattern: str, ignore_case: bool) -> str:
    return ("i:" if ignore_case else "c:") + pattern


def needles_of(sig: Signature) -> tuple[str, ...]:
    """The needles parsed from the pattern itself, whatever was seeded."""
    return _needles(sig.pattern, sig.ignore_case)


def seed_needles(known: Mapping[str, Sequence[str]]) -> None:
    """Needles computed elsewhere by :func:`needle_key` (the built-ins' live index)."""
    _KNOWN_NEEDLES.update(
        {k: v for k, v in known.items() if isinstance(k, str) and isinstance(v, list) and all(isinstance(n, str) for n in v)}
    )


_ESCAPED = {
    "\\.": ".",
    "\\(": "(",
    "\\)": ")",
    "\\[": "[",
    "\\]": "]",
    "\\+": "+",
    "\\*": "*",
    "\\?": "?",
    '\\"': '"',
    "\\'": "'",
    "\\\\": "\\",
    "\\/": "/",
    "\\-": "-",
    "\\{": "{",
    "\\}": "}",
    "\\|": "|",
}
_PLAIN = lazy(r"[\w ,:;'\"<>=!%@#&/`~-]")
_PLAIN_RUN = lazy(r"[\w ,:;'\"<>=!%@#&/`~-]+")
_SHORTEST = 4
_BOUNDS = lazy(r"\d*,?\d*")


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class that opens at ``pattern[i]`` (``[``), or -1."""
    j = i + 1
    if pattern[j : j + 1] == "^":
        j += 1
    if pattern[j : j + 1] == "]":
        j += 1
    while j < len(pattern):
        if pattern[j] == "\\":
            j += 2
        elif pattern[j] == "]":
            return j + 1
        else:
            j += 1
    return -1


def _branches(pattern: str) -> list[str] | None:
    """The pattern split at its top-level ``|``; None when a bracket is left open."""
    out, depth, start, i = [], 0, 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "[":
            i = _class_end(pattern, i)
            if i < 0:
                return None
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 2 if c == "\\" else 1
    return None if depth else [*out, pattern[start:]]


def _runs(branch: str) -> list[str]:
    """The literal runs every match of a branch contains: outside groups and classes, each run
    cut before a character that a quantifier makes optional or repeats."""
    runs, run, i, depth = [], "", 0, 0
    while i < len(branch):
        c = branch[i]
        plain = _PLAIN_RUN.match(branch, i)  # a stretch of plain characters at once, not one by one
        end = plain.end() if plain else i
        if branch[end : end + 1] in ("?", "*", "{", "+"):
            end -= 1  # the stretch's last character is quantified: the step below takes it
        if end > i:
            if depth == 0:
                run += branch[i:end]
            else:
                runs.append(run)
                run = ""
            i = end
            continue
        step = 2 if c == "\\" else 1
        lit = _ESCAPED.get(branch[i : i + 2]) if c == "\\" else (c if _PLAIN.match(c) else None)
        if depth == 0 and lit is not None and branch[i + step : i + step + 1] not in ("?", "*", "{", "+"):
            run += lit
            i += step
            continue
        runs.append(run)
        run = ""
        if c == "[":
            i = _class_end(branch, i)
            continue
        close = branch.find("}", i) if c == "{" else -1
        if close > 0 and _BOUNDS.fullmatch(branch, i + 1, close):
            i = close + 1  # a quantifier's {m,n}: its digits are no literal
            continue
        depth += 1 if c == "(" else -1 if c == ")" else 0
        i += step
    return [*runs, run]


def _needles(pattern: str, ignore_case: bool) -> tuple[str, ...]:
    if "(?" in pattern.replace("(?:", "").replace("(?P<", "").replace("(?<!", "").replace("(?=", "").replace("(?!", "").replace("(?<=", ""):
        return ()  # an inline flag (or another construct) changes what a literal means
    branches = _branches(pattern)
    if branches is None:
        return ()
    out: list[str] = []
    for b in branches:
        best = max(_runs(b), key=len)
        found = [best] if len(best) >= _SHORTEST else _group_needles(b)
        if not found:
            return ()
        out.extend(n.lower() if ignore_case else n for n in found)
    return tuple(dict.fromkeys(out))


_GROUP_OPEN = lazy(r"(?:\\b)?\((?:\?:|\?P<\w+>)?")


def _group_needles(branch: str) -> list[str]:
    """A branch that opens with a group of alternatives, ``(?:No matching…|Could not find…) …``:
    every match goes through one alternative, so each alternative's longest literal run is a
    needle (all of them, or none when one has no run long enough)."""
    m = _GROUP_OPEN.match(branch)
    if not m:
        return []
    depth, i = 1, m.end()
    while i < len(branch) and depth:
        c = branch[i]
        if c == "[":
            i = _class_end(branch, i)
            if i < 0:
                return []
            continue
        depth += 1 if c == "(" else -1 if c == ")" else 0
        i += 2 if c == "\\" else 1
    if depth or branch[i : i + 1] in ("?", "*", "{"):
        return []  # unclosed, or the group itself is optional
    inner = _branches(branch[m.end() : i - 1])
    if not inner:
        return []
    out = []
    for alt in inner:
        best = max(_runs(alt), key=len)
        if len(best) < _SHORTEST:
            return []
        out.append(best)
    return out


@dataclass(frozen=True)
class Finding:
    """A signature found in a text: the cause and fix filled in, and the line that shows it."""

    signature: Signature
    cause: str
    fix: str
    evidence: str
    position: int = 0
    groups: dict[str, str] = field(default_factory=dict)


def _fill(template: str, match: re.Match[str]) -> str:
    values = {k: (v or "") for k, v in match.groupdict().items()}
    values["0"] = match.group(0)
    try:
        return template.format(*[match.group(0)], **values)
    except (KeyError, IndexError, ValueError):
        return template


def _line_of(text: str, start: int, end: int, limit: int = 300) -> str:
    """The whole line(s) around a match: what a maintainer would quote."""
    lo = text.rfind("\n", 0, start) + 1
    hi = text.find("\n", end)
    line = text[lo : hi if hi != -1 else len(text)].strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


def scoped(signatures: Iterable[Signature], scope: str) -> list[Signature]:
    """The rows searched in ``scope`` (PASTE, PROBE or ``"check:<id>"``), in catalog order."""
    return [s for s in signatures if s.scope == scope]


def find(text: str, signatures: Sequence[Signature], scope: str | None = None) -> list[Finding]:
    """Every signature found in ``text``, one finding per signature, in catalog order (the
    catalog lists specific causes before generic ones, so the first finding is the best);
    with ``scope``, only the rows of that scope."""
    if scope is not None:
        signatures = scoped(signatures, scope)
    out: list[Finding] = []
    lower: str | None = None
    for sig in signatures:
        if sig.needles:
            if sig.ignore_case and lower is None:
                lower = text.lower() if text.isascii() else ""  # case folding beyond ASCII: no shortcut
            hay = (lower or "") if sig.ignore_case else text
            if (hay or not sig.ignore_case) and not any(n in hay for n in sig.needles):
                continue
        m = sig.regex.search(text)
        if m is None:
            continue
        groups = {k: v for k, v in m.groupdict().items() if v}
        out.append(Finding(sig, _fill(sig.cause, m), _fill(sig.fix, m), _line_of(text, m.start(), m.end()), m.start(), groups))
    return out


def best(text: str, signatures: Sequence[Signature], scope: str | None = None) -> Finding | None:
    found = find(text, signatures, scope)
    return found[0] if found else None


def row_problem(sig: Signature, engine: bool = False) -> str:
    """What is wrong with a row's scope or ask_facts, or ''."""
    if not isinstance(sig.ask_facts, tuple) or not all(isinstance(f, str) for f in sig.ask_facts):
        return f"signature {sig.id!r}: ask_facts must be a tuple of fact names"
    scope = sig.scope
    if scope == PASTE or (isinstance(scope, str) and scope.startswith(CHECK_SCOPE) and scope[len(CHECK_SCOPE) :].strip()):
        return ""
    if scope == PROBE:
        return "" if engine else f"signature {sig.id!r}: scope 'probe' is the engine's own (the probe reads only its rows)"
    return f"signature {sig.id!r}: bad scope {scope!r:.80} (use 'paste' or 'check:<check id>')"


def validate(signatures: Iterable[object], *, taken: Iterable[str] = (), patterns: bool = True, engine: bool = False) -> list[str]:
    """Problems with a catalog (for the registry): not a Signature, a duplicate id (also of one in
    ``taken``), a bad scope (PROBE only for the ``engine``'s rows) or ask_facts, a bad regex (compiled only
    with ``patterns``)."""
    problems, seen = [], set(taken)
    for sig in signatures:
        if not isinstance(sig, Signature):
            problems.append(f"{sig!r} is not an envdoctor Signature")
            continue
        if sig.id in seen:
            problems.append(f"duplicate signature id {sig.id!r}")
        seen.add(sig.id)
        problem = row_problem(sig, engine)
        if problem:
            problems.append(problem)
        if not patterns:
            continue
        try:
            sig.regex  # noqa: B018 - compiling is the validation
        except re.error as e:
            problems.append(f"signature {sig.id!r}: bad pattern: {e}")
    return problems


def _probe(id: str, pattern: str, cause: str = "{0}") -> Signature:
    return Signature(id=f"probe.{id}", pattern=pattern, cause=cause, cause_id=id, check="probe", fix="", scope=PROBE, source="engine")


# The engine's own rows, first in every registry's catalog: what killed a probe worker, from its
# output (they name no built-in check). A cause of ``{0}`` quotes the error itself.
SIGNATURES: tuple[Signature, ...] = (
    _probe("python_headers_missing", r"fatal error: Python\.h: No such file or directory", "Python.h is missing (install python3-dev)"),
    _probe("no_c_compiler", r"Failed to find C compiler", "no C compiler found (install gcc or set CC)"),
    _probe("no_cxx_compiler", r"InvalidCxxCompiler|No working C\+\+ compiler", "no working C++ compiler (install g++ or set CXX)"),
    _probe("cuda_error", r"CUDA error: [^\n]+"),
    _probe("cuda_error_code", r"cudaError\w+|CUDA_ERROR_\w+"),
    _probe("disk_full", r"No space left on device"),
    _probe("shm_exhausted", r"out of shared memory|Bus error", "shared memory (/dev/shm) exhausted"),
    _probe("permission_denied", r"Permission denied: [^\n]+"),
    _probe("read_only", r"[Cc]annot create temporary file[^\n]*|Read-only file system[^\n]*"),
)
