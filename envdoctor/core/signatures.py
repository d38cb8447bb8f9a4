"""Error signatures: known error texts mapped to a cause, the check that judges it, and the fix.

One catalog serves the live run (a smoke whose body raised names its cause from it) and
``envdoctor triage`` (a pasted traceback or error line). The catalog itself is data that the
built-in checks ship (``envdoctor_checks.signatures``) and plugins may extend: the registry
collects every module-level ``SIGNATURES`` tuple, as it collects checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property


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
    source: str = "built-in"

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern, re.I if self.ignore_case else 0)


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


def find(text: str, signatures: Sequence[Signature]) -> list[Finding]:
    """Every signature found in ``text``, one finding per signature, in catalog order (the
    catalog lists specific causes before generic ones, so the first finding is the best)."""
    out = []
    for sig in signatures:
        m = sig.regex.search(text)
        if m is None:
            continue
        groups = {k: v for k, v in m.groupdict().items() if v}
        out.append(Finding(sig, _fill(sig.cause, m), _fill(sig.fix, m), _line_of(text, m.start(), m.end()), m.start(), groups))
    return out


def best(text: str, signatures: Sequence[Signature]) -> Finding | None:
    found = find(text, signatures)
    return found[0] if found else None


def validate(signatures: Iterable[object], *, taken: Iterable[str] = (), patterns: bool = True) -> list[str]:
    """Problems with a catalog (for the registry): not a Signature, a duplicate id (also of one in
    ``taken``), a bad regex (compiled only with ``patterns``)."""
    problems, seen = [], set(taken)
    for sig in signatures:
        if not isinstance(sig, Signature):
            problems.append(f"{sig!r} is not an envdoctor Signature")
            continue
        if sig.id in seen:
            problems.append(f"duplicate signature id {sig.id!r}")
        seen.add(sig.id)
        if not patterns:
            continue
        try:
            sig.regex  # noqa: B018 - compiling is the validation
        except re.error as e:
            problems.append(f"signature {sig.id!r}: bad pattern: {e}")
    return problems


def _probe(id: str, pattern: str, cause: str = "{0}") -> Signature:
    return Signature(id=f"probe.{id}", pattern=pattern, cause=cause, cause_id=id, check="probe", fix="", source="engine")


# What killed a probe worker, from its output (the engine's own few: it names no built-in check).
# A cause of ``{0}`` quotes the error itself.
PROBE_SIGNATURES: tuple[Signature, ...] = (
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
