"""Fleet summary: many per-node JSON reports → which node fails what, and which node is different.

``envdoctor fleet reports/*.json`` reads the reports written by ``envdoctor check --json
reports/{host}.json`` on every node (or the combined report of ``--distributed``, whose ranks
count as nodes). It prints a table of nodes × failing checks and, for every fact a fleet running
one image should agree on (torch and its CUDA, Triton, driver, cuDNN, NCCL, GPU model and count,
Python), the majority value and the nodes that differ: the node with the older driver or the
one missing a GPU is what a migration usually gets wrong. Unreadable, malformed or partial
reports are listed as such; they never stop the summary.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import click

from envdoctor.console import writable_target, write
from envdoctor.core.fleet import BAD, SHOWN, FactRow, Fleet, Node, Unreadable, compare, node_status  # noqa: F401 - the model, as before
from envdoctor.core.redact import scrubber
from envdoctor.core.report import ReportError, load_report
from envdoctor.core.stack import FLEET_FACTS, extract_facts
from envdoctor.reporters.escape import terminal
from envdoctor.reporters.fleet import render_json, render_text, to_dict  # noqa: F401 - the renderers, as before


def _expand(files: Iterable[str], bad: list[Unreadable] | None = None) -> list[str]:
    """The report files: directories listed (``*.json``); one that cannot be listed is a row of
    ``bad``."""
    out: list[str] = []
    for f in files:
        if os.path.isdir(f):
            try:
                out += sorted(os.path.join(f, n) for n in os.listdir(f) if n.endswith(".json"))
            except OSError as e:
                if bad is not None:
                    bad.append(Unreadable(f, f"cannot list the directory ({e.strerror or e})"))
        else:
            out.append(f)
    return out


def missing_inputs(files: Iterable[str]) -> list[str]:
    """The paths named on the command line that do not exist: a typo, not a node (exit 2, as diff)."""
    return [f for f in files if not os.path.lexists(f)]


def _nodes_from(data: Mapping[str, Any], source: str) -> list[Node]:
    """One node per report; a combined ``--distributed`` report gives one node per rank."""
    from envdoctor.core.report import from_dict

    report = from_dict(dict(data))  # raises on a malformed report
    partial = "interrupted" if report.interrupted else "stopped at --timeout" if report.timed_out else ""
    host = str(report.platform.get("hostname") or os.path.splitext(os.path.basename(source))[0])
    dist = report.facts.get("distributed") if isinstance(report.facts, Mapping) else None
    ranks = dist.get("ranks") if isinstance(dist, Mapping) else None
    if isinstance(ranks, list) and ranks:
        nodes = []
        for r in ranks:
            failing = {f["id"]: f["status"] for f in r.get("failing") or ()}
            messages = {f["id"]: f.get("message", "") for f in r.get("failing") or ()}
            state = r.get("state")
            why = "" if state == "reported" else f"rank sent no report ({r.get('note') or state})"
            status = "fail" if why else node_status(failing.values())
            nodes.append(
                Node(f"{r.get('host') or '?'}/rank{r.get('rank')}", source, status, failing, messages, dict(r.get("fleet") or {}), why)
            )
        return nodes
    checks: dict[str, str] = {r.id: r.status.value for r in report.results if r.status.value in SHOWN}
    messages = {r.id: r.message for r in report.results if r.status.value in SHOWN}
    facts = extract_facts(report.facts, report.platform)
    return [Node(host, source, node_status(checks.values()), checks, messages, facts, partial)]


def _scrub_nodes(nodes: Sequence[Node], scrub: Any, shared: dict[tuple, dict[str, str]]) -> list[Node]:
    """Every string a node shows, scrubbed. Reports come from other machines (or older
    envdoctors), so they may carry secrets; the fleet shows only these few strings of each.
    Nodes with the same facts (most of a fleet) share one dict of them (``shared``)."""

    def text(v: Any) -> Any:
        return scrub(v) if isinstance(v, str) else v  # a rank's summary is not shape-checked

    for n in nodes:
        n.name = text(n.name)
        n.partial = text(n.partial)
        n.checks = {text(k): text(v) for k, v in n.checks.items()}
        n.messages = {text(k): text(v) for k, v in n.messages.items()}
        # Only the compared facts: a rank's summary could carry any key (a secret-named one too).
        facts = {k: text(v) for k, v in n.facts.items() if k in FLEET_FACTS}
        key = tuple(facts.items())
        n.facts = shared.setdefault(key, facts) if len(shared) < 4096 or key in shared else facts
    return list(nodes)


def load(files: Sequence[str]) -> tuple[list[Node], list[Unreadable]]:
    """One file at a time, keeping only each node's summary: memory does not grow with the
    size of the reports, only with the number of nodes."""
    nodes: list[Node] = []
    bad: list[Unreadable] = []
    # Fact values repeat on every node of a fleet: scrub each distinct one once (and share it).
    text = lru_cache(maxsize=4096)(scrubber().text)
    shared: dict[tuple, dict[str, str]] = {}
    for path in _expand(files, bad):
        try:
            data = load_report(path)
        except ReportError as e:
            bad.append(Unreadable(path, text(e.reason)))
            continue
        try:
            found = _scrub_nodes(_nodes_from(data, path), text, shared)
        except Exception as e:  # noqa: BLE001 - another machine's file: whatever it holds is one row, never the end of the summary
            bad.append(Unreadable(path, text(f"malformed report: {type(e).__name__}: {str(e)[:200]}")))
            continue
        del data  # before the next file is read: one report in memory at a time
        nodes += found
    # Two reports from one host (a rerun) must not merge into one row.
    counts = Counter(n.name for n in nodes)
    for n in nodes:
        if counts[n.name] > 1:
            n.name = f"{n.name} ({os.path.basename(n.source)})"
    return nodes, bad


def summarize(files: Sequence[str]) -> Fleet:
    nodes, bad = load(files)
    return Fleet(nodes, bad, compare([n for n in nodes if n.facts]))


@click.command("fleet")
@click.argument("reports", nargs=-1, required=True, type=click.Path())
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json", "html"]), default="text", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the summary to FILE instead of stdout.")
@click.option("--strict", is_flag=True, help="Nodes with warnings count as problems too.")
def fleet_cmd(reports, fmt, output, strict) -> None:
    """Summarise per-node JSON reports (files or directories): failing checks, and nodes that differ.

    Exit 0 when every node passes and agrees; 1 when a node fails or deviates, or a report is
    unreadable or partial; 2 when a named file does not exist.
    """
    from envdoctor.core.exitcode import ExitCode

    missing = missing_inputs(reports)
    if missing:
        click.echo(f"envdoctor fleet: {missing[0]}: no such file or directory", err=True)
        raise SystemExit(ExitCode.USAGE)
    if output:
        writable_target(output)
    fleet = summarize(reports)
    if fmt == "html":  # one self-contained page (docs/fleet.md)
        from envdoctor.reporters.fleet_html import read_extras, render_html

        text = render_html(fleet, read_extras(fleet), strict)
    else:
        text = render_json(fleet, strict) if fmt == "json" else terminal(render_text(fleet, strict))  # other machines' text, inert
    if output:
        write(output, text)  # atomically; exit 2 when it cannot be written
    else:
        click.echo(text, nl=False)
    raise SystemExit(0 if fleet.healthy(strict) else 1)
