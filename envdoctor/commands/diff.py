"""``envdoctor diff A.json B.json``: what changed between two environments; exit 1 on a
regression. Reads the two reports, compares them (``envdoctor.core.diff``), renders the result
(``envdoctor.reporters.diff``)."""

from __future__ import annotations

import os

import click

from envdoctor.console import writable_target, write
from envdoctor.core.diff import compare
from envdoctor.core.exitcode import ExitCode
from envdoctor.core.report import ReportError, load_report  # noqa: F401 - commands import them from here
from envdoctor.reporters.diff import render

__all__ = ["compare", "diff_cmd", "load_report", "render"]


@click.command("diff")
@click.argument("before", metavar="A.json")
@click.argument("after", metavar="B.json")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the comparison to FILE instead of stdout.")
@click.option("--redact", is_flag=True, help="Hide host names, user names, home paths, IP addresses and GPU UUIDs/serials.")
@click.option("--strict", is_flag=True, help="A check that warns in B and did not in A is a regression too (as check --strict fails).")
def diff_cmd(before, after, fmt, output, redact, strict) -> None:
    """What changed from report A to report B (versions, GPUs, check verdicts); exit 1 on a regression."""
    from envdoctor.core.redact import redact_data, scrub_data

    if output:
        writable_target(output)
    try:
        a, b = load_report(before), load_report(after)
    except ReportError as e:
        click.echo(f"envdoctor diff: {e}", err=True)
        raise SystemExit(ExitCode.USAGE) from None
    a, b = scrub_data(a), scrub_data(b)  # files from elsewhere (or older envdoctors) may hold secrets
    if redact:
        a, b = redact_data([a, b])
    d = compare(a, b, os.path.basename(before), os.path.basename(after), strict=strict)
    text = render(d, fmt)
    if output:
        write(output, text)
    else:
        click.echo(text, nl=False)
    raise SystemExit(ExitCode.FAILED if d.regressions else ExitCode.OK)
