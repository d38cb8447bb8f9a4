"""Reporters: pure functions from a Report to text. They compute nothing about checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from envdoctor.core.report import Report

FORMATS = ("text", "json", "markdown", "junit", "prometheus")


def render(report: Report, fmt: str, *, verbose: bool = False, color: bool = False, strict: bool = False) -> str:
    renderer = get(fmt)
    return renderer(report, verbose=verbose, color=color, strict=strict)


def get(fmt: str) -> Callable[..., str]:
    if fmt == "text":
        from envdoctor.reporters.text import render_text as r
    elif fmt == "json":
        from envdoctor.reporters.json import render_json as r
    elif fmt == "markdown":
        from envdoctor.reporters.markdown import render_markdown as r
    elif fmt == "junit":
        from envdoctor.reporters.junit import render_junit as r
    elif fmt == "prometheus":
        from envdoctor.reporters.prometheus import render_prometheus as r
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return r
