"""The markdown report: paste-ready for a GitHub issue, problems first, bounded in size."""

from __future__ import annotations

import json
from pathlib import Path

from envdoctor.core.api import Item, Status
from envdoctor.core.redact import Identity, redact_report
from envdoctor.core.report import CheckOutcome, Report
from envdoctor.reporters.json import from_dict
from envdoctor.reporters.markdown import GITHUB_LIMIT, render_markdown

FIXTURES = Path(__file__).parent / "fixtures" / "reports"


def _gpu_report() -> Report:
    return from_dict(json.loads((FIXTURES / "v1.0-gpu-h200-triton-mismatch.json").read_text()))


def test_summary_then_problems_with_hints_then_collapsible_facts():
    md = render_markdown(_gpu_report())
    lines = md.splitlines()
    assert lines[0] == "### envdoctor: PROBLEMS FOUND"
    assert "1 failed" in lines[2]
    problems = md.index("#### Problems (1)")
    fix = md.index('**Fix:** pip install "triton==3.6.0"')
    checks = md.index("<details><summary>All checks (8)</summary>")
    facts = md.index("#### Environment")
    assert problems < fix < checks < facts
    assert "| torch | `2.11.0+cu130` |" in md and "| NVIDIA driver | `580.65.06` |" in md  # the stack at a glance
    assert "<details><summary>GPUs (1)</summary>" in md
    assert "<details><summary>Installed packages (3)</summary>" in md
    assert "torch==2.11.0+cu130" in md
    assert "<details><summary>Environment variables (3)</summary>" in md
    assert md.count("<details>") == md.count("</details>")


def test_placeholders_are_escaped_so_github_shows_them():
    ident = Identity(hostnames=("<host>",), users=("nobody-at-all",), homes=("/home/alice",))
    r = Report(
        "0",
        "t",
        0.0,
        {},
        (CheckOutcome("x.cache", "Cache", Status.WARN, "cache /home/alice/.triton is on NFS", hint="export TRITON_CACHE_DIR=/tmp/t | x"),),
    )
    md = render_markdown(redact_report(r, ident))
    assert "&lt;home&gt;/.triton" in md  # a raw <home> would be swallowed as an HTML tag
    assert "/tmp/t \\| x" in md


def test_huge_report_fits_a_github_issue():
    items = tuple(Item(f"lib{i}.so", Status.FAIL, "x" * 300) for i in range(200))
    results = tuple(
        CheckOutcome(f"area{i % 7}.check{i}", f"Check {i}", Status.FAIL if i % 3 else Status.PASS, "m" * 400, hint="h" * 200, items=items)
        for i in range(3000)
    )
    facts = {f"fact{i}": {"k": ["v" * 100] * 200} for i in range(50)}
    facts["dists"] = {f"pkg{i}": {"name": f"pkg{i}", "version": "1.0"} for i in range(5000)}
    md = render_markdown(Report("0", "t", 1.0, {"summary": "Linux"}, results, facts=facts))
    assert len(md) < GITHUB_LIMIT
    assert md.startswith("### envdoctor: PROBLEMS FOUND")
    assert "more problems (attach the `--format json` report)" in md
    assert "Left out to fit a GitHub issue" in md or "cut to fit a GitHub issue" in md
    assert md.count("<details>") == md.count("</details>")
    assert md.count("```") % 2 == 0


def test_backticks_in_values_do_not_break_code_blocks():
    r = Report("0", "t", 0.0, {}, (), facts={"weird": {"v": "```\n</details>"}})
    md = render_markdown(r)
    assert "````json" in md  # a longer fence than any run of backticks inside
