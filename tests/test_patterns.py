"""envdoctor.core.patterns: a lazily compiled pattern behaves as re.compile's, compiling on first use."""

from __future__ import annotations

import re

from envdoctor.core.patterns import LazyPattern, lazy


def test_not_compiled_until_used_then_same_as_re_compile():
    p = lazy(r"(?P<v>\d+)\.(\d+)", re.I)
    assert isinstance(p, LazyPattern) and p._compiled is None
    want = re.compile(r"(?P<v>\d+)\.(\d+)", re.I)
    assert p.match("12.3").groups() == want.match("12.3").groups()
    assert p._compiled is not None and p._compiled.pattern == want.pattern and p._compiled.flags == want.flags
    assert p.sub("x", "a 1.2 b 3.4") == want.sub("x", "a 1.2 b 3.4")
    assert [m.span() for m in p.finditer("1.2 3.4")] == [m.span() for m in want.finditer("1.2 3.4")]
    assert p.pattern == want.pattern and p.groupindex == want.groupindex


def test_private_names_are_not_forwarded():
    p = lazy("a")
    try:
        p._missing  # noqa: B018
    except AttributeError:
        pass
    else:
        raise AssertionError("a private name reached the compiled pattern")
    assert p._compiled is None


def test_a_bad_pattern_fails_when_used():
    p = lazy("(")
    try:
        p.match("x")
    except re.error:
        return
    raise AssertionError("an invalid pattern compiled")
