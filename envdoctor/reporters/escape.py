"""Untrusted text made inert: for a terminal, and for Markdown that GitHub renders.

Text in a report may come from a paste, from another machine's report or from an environment
variable: it must not move the cursor, rewrite a line, open a hyperlink or flip the reading
order on a terminal (ESC sequences, OSC 8, ``\\r``, backspace, BEL, U+202E), nor render as
something else in a GitHub comment (a closing fence, raw HTML, an @-mention that pings, a link
that hides where it goes, a ``|`` or a newline that splits a table). Every writer of text or
Markdown uses these helpers; the text reaching them has already been scrubbed of secrets.
"""

from __future__ import annotations

import re
from typing import Any

from envdoctor.core.patterns import lazy

MAX_LINE = 600

# C0 controls but tab and newline, DEL, C1 controls; bidirectional overrides and isolates,
# line/paragraph separators, and the zero-width no-break space some terminals draw as nothing.
# Lone surrogates (a non-UTF-8 name read with surrogateescape) cannot be written at all.
_INVISIBLE = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff"
_CONTROL = lazy(f"[\x00-\x08\x0b-\x1f{_INVISIBLE}]")
_CONTROL_NL = lazy(f"[\x00-\x1f{_INVISIBLE}]")
_NAMED = {"\r": "\\r", "\n": "\\n", "\t": "\\t", "\x1b": "\\x1b"}


def _visible(m: re.Match) -> str:
    c = m.group(0)
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def terminal(text: Any, *, newlines: bool = True) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``, ``\\r``,
    ``\\u202e``); newlines (and tabs) are kept when ``newlines``, else shown as ``\\n``."""
    s = str(text)
    return (_CONTROL if newlines else _CONTROL_NL).sub(_visible, s)


def _cap(s: str) -> str:
    return s if len(s) <= MAX_LINE else s[: MAX_LINE - 1] + "…"


# '@' before a user or team name pings it on GitHub; a zero-width space after it does not.
_MENTION = lazy(r"@(?=[A-Za-z0-9])")
_MD_SPECIAL = lazy(r"[\\`*_\[\]|~]")


def md_text(text: Any, *, cap: bool = True) -> str:
    """Plain text for Markdown, one line: inline HTML is live on GitHub (``<details>``,
    ``<img>``, and the placeholders ``<home>`` or ``<redacted>`` would vanish as unknown tags),
    so ``&<>`` become entities; emphasis, code, link and table characters are escaped;
    newlines become spaces and other controls visible escapes; @-mentions do not ping."""
    s = terminal(str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " "))
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), s)
    s = _MENTION.sub("@\u200b", s)
    return _cap(s) if cap else s


_CODE_SPAN = lazy(r"(`+)(.+?)\1")


def md_prose(text: Any) -> str:
    """Text written for Markdown by envdoctor or a check (an ask such as ``run `pip list```)
    whose code spans stay code spans; everything around them is :func:`md_text`."""
    s = str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    out, pos = [], 0
    for m in _CODE_SPAN.finditer(s):
        out.append(md_text(s[pos : m.start()], cap=False))
        out.append(md_code(m.group(2), cap=False))
        pos = m.end()
    out.append(md_text(s[pos:], cap=False))
    return _cap("".join(out))


def md_code(text: Any, *, table: bool = False, cap: bool = True) -> str:
    """A one-line code span that survives backticks, newlines and controls inside the value;
    in a table (``table``), a ``|`` is escaped too (GitHub splits cells on it even in code)."""
    s = terminal(str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " "))
    if cap:
        s = _cap(s)
    if table:
        s = s.replace("|", "\\|")
    fence = "`" * (max((len(m) for m in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or (fence != "`" and s) else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def md_block(body: str, lang: str = "") -> list[str]:
    """A fenced code block no line of ``body`` can close (the fence is longer than any run of
    backticks in it); controls are shown as escapes, so the block's lines are its lines."""
    body = terminal(body)
    fence = "`" * max(3, max((len(m) for m in re.findall(r"`{3,}", body)), default=0) + 1)
    return [f"{fence}{lang}", body, fence]


def md_details(summary: str, body: list[str]) -> list[str]:
    """A collapsible section: the summary is escaped text, the body Markdown lines."""
    return [f"<details><summary>{md_text(summary)}</summary>", "", *body, "", "</details>", ""]
