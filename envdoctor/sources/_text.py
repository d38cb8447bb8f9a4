"""Turning whatever a user pasted into plain lines the readers can match.

An issue body arrives with Windows line ends, terminal colour codes, ``> `` quoting, markdown
fences and ``<details>`` tags around the tool output. All of it is peeled off here, once, so
every reader sees the tool's own lines. Everything is linear in the input: no regular
expression here can backtrack over a long line.
"""

from __future__ import annotations

import re

MAX_LINE = 4000  # a longer line is no tool output worth reading whole (a minified blob, random bytes)
ANSI = re.compile(r"\x1b\[[0-9;?]{0,40}[ -/]{0,4}[@-~]|\x1b\][^\x07\x1b]{0,400}(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# Control characters other than tab: NUL from a pasted binary, backspaces from a pager.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
TAG = re.compile(r"</?(?:details|summary|pre|code|p|br|b|i|sub|sup|kbd|blockquote)\b[^<>]{0,200}>", re.I)
FENCE = re.compile(r"^\s{0,3}(?:`{3,}|~{3,})\s*[\w+.-]{0,30}\s*$")
FULLWIDTH = str.maketrans({"：": ":", "\u00a0": " ", "\u3000": " "})


def unquote(line: str) -> str:
    """Drop markdown ``> `` quoting (nested too) but keep a Python REPL's ``>>>`` prompt."""
    for _ in range(8):
        s = line.lstrip(" ")
        if not s.startswith(">") or s.startswith(">>>") or len(line) - len(s) > 3:
            return line
        line = s[2:] if s.startswith("> ") else s[1:]
    return line


def _whole(text: str) -> str:
    """What can be cleaned on the whole text at once (C speed): line ends, colour codes,
    control characters, full-width colons and non-breaking spaces."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x1b" in text:
        text = ANSI.sub("", text)
    return CONTROL.sub("", text).translate(FULLWIDTH)


def clean_line(line: str) -> str:
    if len(line) > MAX_LINE:
        line = line[:MAX_LINE]
    if line[:1] in (" ", ">"):
        line = unquote(line)
    if "<" in line:
        line = TAG.sub("", line)
    return line.rstrip()


def split_lines(text: str) -> list[str]:
    """The paste as clean lines; fence lines become empty so block boundaries stay visible."""
    out = []
    for raw in _whole(text).split("\n"):
        line = clean_line(raw)
        out.append("" if line[:1] in (" ", "`", "~") and FENCE.match(line) else line)
    return out


def raw_lines(text: str) -> list[str]:
    """Lines with line ends, colour codes and quoting removed, but HTML and fences kept (the
    markdown report reader needs its ``<summary>`` names and its JSON fences)."""
    out = []
    for raw in _whole(text).split("\n"):
        line = raw[:MAX_LINE] if len(raw) > MAX_LINE else raw
        out.append((unquote(line) if line[:1] in (" ", ">") else line).rstrip())
    return out


def key_value(line: str) -> tuple[str, str] | None:
    """``Key: value`` or vLLM's ``Key   : value`` as (normalised key, value); None without a colon."""
    key, sep, value = line.partition(":")
    if not sep or len(key) > 60:
        return None
    k = " ".join(key.split()).lower()
    return (k, value.strip()) if k else None


UNKNOWN_VALUES = {"", "n/a", "none", "could not collect", "no cuda", "[n/a]", "not supported", "[not supported]", "unknown"}


def known(value: str | None) -> str | None:
    """The value, or None for the ways the tools say "unknown"."""
    if value is None:
        return None
    v = value.strip()
    return None if v.lower() in UNKNOWN_VALUES else v
