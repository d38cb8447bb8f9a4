"""Regular expressions compiled on first use.

A module-level ``re.compile`` costs every process that imports the module, whether or not the
pattern is ever used: triage loads the readers of a dozen tools and the secret rules for every
paste, and most patterns find no use in any one paste. ``lazy(...)`` stands for the compiled
pattern and compiles it (the same text, the same flags) the first time one of its methods or
attributes is used.
"""

from __future__ import annotations

import re


class LazyPattern:
    """``re.compile(pattern, flags)`` on first use: a reader whose tool's output is not in the
    paste never pays for compiling its patterns. Behaves as the compiled pattern for its methods
    and attributes (``match``, ``search``, ``finditer``, ``pattern``...)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str):
        if name.startswith("_"):  # not a pattern's attribute (and no recursion before __init__)
            raise AttributeError(name)
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        value = getattr(self._compiled, name)
        setattr(self, name, value)  # later look-ups find it on the instance
        return value


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern compiled when first used (see LazyPattern); typed as the pattern it stands for."""
    return LazyPattern(pattern, flags)  # type: ignore[return-value]
