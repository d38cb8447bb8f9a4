"""diff's two skins render one section model: every section, in the same order, in both."""

from __future__ import annotations

import json
from pathlib import Path

from envdoctor.core.diff import compare
from envdoctor.core.regressions import Dependencies
from envdoctor.reporters.diff import render_markdown, render_text, sections

FIXTURES = Path(__file__).parent / "fixtures" / "reports"


def test_text_and_markdown_show_the_same_sections_in_order():
    a = json.loads((FIXTURES / "v1.0-gpu-h200.json").read_text())
    b = json.loads((FIXTURES / "v1.0-cpu-box.json").read_text())
    d = compare(a, b, "a.json", "b.json", deps=Dependencies())
    found = sections(d)
    assert len(found) >= 5
    text, md = render_text(d), render_markdown(d)
    at_text = [text.index(s.title) for s in found]
    at_md = [md.index(s.title) for s in found]
    assert at_text == sorted(at_text) and at_md == sorted(at_md)
    for s in found:
        for r in s.rows:
            assert r.text in text  # each row once, in its text form
