"""``envdoctor fleet --format html``: the fleet as one self-contained page to look at.

One HTML file that works offline: inline CSS, one small inline script (allowed by its hash in a
strict Content-Security-Policy), inline SVG charts; no external asset, font or CDN. It shows:

* a table of nodes × the checks that failed, errored or warned anywhere, failures first (rows:
  failing, partial, could-not-judge, deviating, warning, healthy nodes; columns: the checks
  failing on most nodes first), with a column for the facts in which a node differs from the
  fleet's majority; every cell links to its row's message, fix and recommended action below;
* the facts a fleet should agree on, with the majority and the nodes that differ;
* per-GPU figures against what they should be: the perf checks' matmul TFLOP/s and copy
  bandwidth as a share of the expected figure of the GPU's model (the line at 100 %, the warning
  threshold at 75 %), and counts that should be zero (uncorrectable ECC errors, remapped rows,
  Xid errors since boot, PCIe lanes below the link's maximum);
* unreadable and partial reports, and a details section per node with something to show.

The nodes × checks come from the fleet's model (:func:`envdoctor.commands.fleet.summarize`);
the titles, fixes, recommended actions and GPU figures, which that model does not keep, are read
again from each node's report, one report at a time, by :func:`read_extras` (the command calls
it); :func:`render_html` is a pure function of the two. Every text from a report is untrusted: it is
scrubbed of secrets (:mod:`envdoctor.core.scrub`), its control and bidirectional characters
shown as escapes (:func:`envdoctor.reporters.escape.terminal`), and HTML-escaped; no attribute
that runs script is ever written, and ids and links are built from indices, never from text.
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from envdoctor.reporters.escape import terminal

if TYPE_CHECKING:
    from envdoctor.commands.fleet import Fleet, Node

PERF_CHECKS = ("perf.matmul", "perf.memory_bandwidth")
WARN_BELOW = 0.75  # the perf checks' threshold (checks/_perf_table.py), drawn on the charts
MAX_GPUS = 64  # per report: a hostile report cannot make the page grow without bound
MAX_METRICS = 8
CELL = {"fail": "FAIL", "error": "ERR", "warn": "warn"}

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:0 1.5em 3em;color:#1d2330;background:#fff}
h1{font-size:1.4em;margin:.8em 0 .2em}h2{font-size:1.15em;margin:1.6em 0 .4em;border-bottom:1px solid #d8dde6}
h3{font-size:1em;margin:1em 0 .3em}code,.mono{font-family:ui-monospace,monospace;font-size:.92em}
.verdict{font-weight:600;padding:.4em .7em;border-radius:4px;display:inline-block}
.verdict.bad{background:#fde2e1;color:#8a1c17}.verdict.good{background:#dff3e4;color:#1c5e2c}
.counts span{margin-right:1.2em}.tools{margin:.8em 0}.tools input{margin-right:.4em}
.wrap{overflow:auto;max-height:75vh;border:1px solid #d8dde6}
table{border-collapse:collapse}th,td{padding:2px 8px;border-bottom:1px solid #eef0f4;text-align:left;white-space:nowrap}
thead th{position:sticky;top:0;background:#f4f6f9;z-index:1}tbody th{position:sticky;left:0;background:#fff;font-weight:500}
td.c{text-align:center}td a,th a{color:inherit}table.gpus thead th{white-space:normal;max-width:10em;vertical-align:bottom;position:static}
.fail{background:#f8d0ce;color:#8a1c17;font-weight:600}.error{background:#e4dcf5;color:#4a2d86;font-weight:600}
.warn{background:#fdf0c8;color:#6b4e00}.ok{color:#1c5e2c}.dev{background:#d7e8fb;color:#123f73}
.row{border-left:4px solid #ccc;padding:.2em .8em;margin:.5em 0}.row.fail{border-color:#c8312a}
.row.error{border-color:#6a45b3}.row.warn{border-color:#d39e00}.row.fail,.row.error,.row.warn{background:none;color:inherit;font-weight:normal}
.msg{white-space:pre-wrap;word-break:break-word}.muted{color:#667085}
section.node{margin-top:1.4em}:target{outline:3px solid #2f6fdb;outline-offset:2px}
svg text{font:11px system-ui,sans-serif;fill:#333}svg .axis{stroke:#98a2b3}svg .exp{stroke:#1c5e2c;stroke-width:2}
svg .thr{stroke:#c8312a;stroke-dasharray:4 3}svg .dot{fill:#2f6fdb;fill-opacity:.75}svg .dot.low{fill:#c8312a;fill-opacity:1}
svg .bar{fill:#c8312a}figure{margin:.6em 0 1.2em}figcaption{color:#667085;font-size:.92em}
"""

SCRIPT = (
    "(function(){var q=document.getElementById('filter'),only=document.getElementById('only'),"
    "shown=document.getElementById('shown'),rows=document.querySelectorAll('#matrix tbody tr');"
    "function apply(){var t=q.value.toLowerCase(),n=0;rows.forEach(function(r){"
    "var on=(!only.checked||r.dataset.problem==='1')&&r.dataset.name.indexOf(t)>=0;"
    "r.hidden=!on;if(on){n++;}});shown.textContent=n+' of '+rows.length+' node(s) shown';}"
    "q.addEventListener('input',apply);only.addEventListener('change',apply);apply();"
    "document.documentElement.dataset.ready='1';})();"
)


def csp() -> str:
    """The page's policy: nothing may load; only this page's own style and script run."""
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
    return (
        f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'; img-src data:; base-uri 'none'; form-action 'none'"
    )


# -- what the page shows beyond the fleet's model, read from each report ------------------------


@dataclass
class Row:
    title: str = ""
    hint: str = ""
    action: str = ""


@dataclass
class Gpu:
    index: str
    name: str = ""
    perf: dict[str, tuple[float, float | None, str]] = field(default_factory=dict)  # metric -> (measured, expected, unit)
    counts: dict[str, int] = field(default_factory=dict)  # should-be-zero figure -> value

    @property
    def outlier(self) -> bool:
        low = any(e and m / e < WARN_BELOW for m, e, _ in self.perf.values())
        return low or any(self.counts.values())


@dataclass
class Extra:
    rows: dict[str, Row] = field(default_factory=dict)
    gpus: list[Gpu] = field(default_factory=list)


def _num(v: Any) -> float | None:
    """A finite number from an untrusted report, else None (bools are not numbers here)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _rows(results: list[Any]) -> dict[str, Row]:
    out = {}
    for r in results:
        r = _map(r)
        if isinstance(r.get("id"), str) and r.get("status") in CELL:
            out[r["id"]] = Row(str(r.get("title") or ""), str(r.get("hint") or ""), str(r.get("action") or ""))
    return out


def _perf(results: list[Any], gpus: dict[str, Gpu]) -> None:
    """The perf checks' figures: each device's measured value and its model's expected one."""
    for r in results:
        r = _map(r)
        if r.get("id") not in PERF_CHECKS:
            continue
        for dev in _list(_map(r.get("details")).get("devices"))[:MAX_GPUS]:
            dev = _map(dev)
            gpu = gpus.setdefault(str(dev.get("index", "?")), Gpu(str(dev.get("index", "?"))))
            gpu.name = gpu.name or str(dev.get("name") or "")
            for metric, info in list(_map(dev.get("figures")).items())[:MAX_METRICS]:
                info = _map(info)
                measured = _num(info.get("measured"))
                if measured is not None:
                    expected = _num(info.get("expected"))
                    gpu.perf[str(metric)] = (measured, expected if expected and expected > 0 else None, str(info.get("unit") or ""))


def _health(facts: Mapping[str, Any], gpus: dict[str, Gpu]) -> None:
    """NVML's counts that a healthy GPU keeps at zero, and the Xid errors since boot."""
    # The Prometheus output reads the same fact; one reading of the kernel log's events.
    from envdoctor.reporters.prometheus import _pci_key, _xids

    health = _map(facts.get("gpu_health"))
    log = _map(health.get("kernel_log"))
    xids = _xids(log) if log and not log.get("reason") else None  # unreadable is unknown, not zero
    for g in _list(_map(health.get("nvml")).get("gpus"))[:MAX_GPUS]:
        g = _map(g)
        gpu = gpus.setdefault(str(g.get("index", "?")), Gpu(str(g.get("index", "?"))))
        gpu.name = gpu.name or str(g.get("name") or "")
        ecc, rows, pcie = _map(g.get("ecc")), _map(g.get("remapped_rows")), _map(g.get("pcie"))
        figures = {
            "uncorrectable ECC errors (since the driver loaded)": _count(_map(ecc.get("volatile")).get("uncorrected")),
            "uncorrectable ECC errors (lifetime)": _count(_map(ecc.get("aggregate")).get("uncorrected")),
            "rows remapped for uncorrectable errors": _count(rows.get("uncorrectable")),
            "Xid errors since boot": xids.get(_pci_key(g.get("pci_bus_id")), (0, 0))[0] if xids is not None else None,
        }
        width, top = _count(pcie.get("width")), _count(pcie.get("max_width"))
        if width is not None and top is not None:
            figures["PCIe lanes below the link's maximum"] = max(0, top - width)
        gpu.counts.update({k: v for k, v in figures.items() if v is not None})


def report_extra(data: Mapping[str, Any]) -> Extra:
    """Titles, fixes and actions of the shown rows, and the GPU figures, of one report."""
    results = _list(data.get("results"))
    gpus: dict[str, Gpu] = {}
    _perf(results, gpus)
    _health(_map(data.get("facts")), gpus)
    return Extra(_rows(results), list(gpus.values()))


def read_extras(fleet: Fleet) -> dict[str, Extra]:
    """Each node's report read again, one at a time; a report that cannot be read again (or
    changed shape since) adds nothing, it does not stop the page."""
    from envdoctor.core.report import ReportError, load_report

    out = {}
    for source in dict.fromkeys(n.source for n in fleet.nodes):
        try:
            out[source] = report_extra(load_report(source))
        except (ReportError, KeyError, ValueError, TypeError, AttributeError):
            out[source] = Extra()
    return out


# -- the page --------------------------------------------------------------------------------

MAX_TEXT = 4000  # characters of one message or fix shown; the report has the rest
METRIC_ORDER = ("bf16", "fp16", "tf32", "copy")
TOP_BARS = 30


def _fmt(value: float, unit: str = "") -> str:
    if unit == "GB/s" or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:,.1f}"


class _Page:
    """The fleet, the extras and one scrubber; ``t`` makes any text safe to write."""

    def __init__(self, fleet: Fleet, extras: Mapping[str, Extra], strict: bool) -> None:
        from envdoctor.core.scrub import scrubber

        self.fleet, self.strict = fleet, strict
        self.scrub: Callable[[str], str] = lru_cache(maxsize=8192)(scrubber().text)
        self.differs: dict[str, dict[str, tuple[str, str | None]]] = {}
        for row in fleet.facts:
            for name, value in row.differing.items():
                self.differs.setdefault(name, {})[row.fact] = (value, row.majority)
        per_source: dict[str, int] = {}
        for n in fleet.nodes:
            per_source[n.source] = per_source.get(n.source, 0) + 1
        # A combined --distributed report's GPU figures are one host's: no rank gets them.
        self.gpus = {n.name: extras[n.source].gpus for n in fleet.nodes if n.source in extras and per_source[n.source] == 1}
        self.rows = {n.name: extras[n.source].rows if n.source in extras else {} for n in fleet.nodes}
        self.nodes = sorted(fleet.nodes, key=self._rank)
        self.index = {n.name: i for i, n in enumerate(self.nodes)}
        fails: dict[str, list[int]] = {}
        for n in fleet.nodes:
            for cid, status in n.checks.items():
                tally = fails.setdefault(cid, [0, 0, 0])
                tally[("fail", "error", "warn").index(status) if status in CELL else 2] += 1
        self.ids = sorted(fails, key=lambda c: (-fails[c][0], -fails[c][1], -fails[c][2], c))
        self.detailed = {n.name for n in fleet.nodes if self._problem(n) or any(g.outlier for g in self.gpus.get(n.name, ()))}

    def t(self, s: Any, *, newlines: bool = False, cap: int = MAX_TEXT) -> str:
        text = terminal(self.scrub(str(s)), newlines=newlines)
        if len(text) > cap:
            text = text[: cap - 1] + "…"
        return html.escape(text, quote=True)

    def _problem(self, n: Node) -> bool:
        return bool(n.checks or n.partial or n.name in self.differs)

    def _rank(self, n: Node) -> tuple[int, int, str]:
        s = set(n.checks.values())
        outlier = any(g.outlier for g in self.gpus.get(n.name, ()))
        order = [
            "fail" in s,
            bool(n.partial),
            "error" in s,
            n.name in self.differs,
            outlier,
            "warn" in s,
        ]
        first = next((i for i, hit in enumerate(order) if hit), len(order))
        return first, -(len(n.checks) + len(self.differs.get(n.name, {}))), n.name

    def node_link(self, name: str, text: str | None = None) -> str:
        shown = text if text is not None else self.t(name)
        return f'<a href="#n{self.index[name]}">{shown}</a>' if name in self.detailed else shown


def render_html(fleet: Fleet, extras: Mapping[str, Extra], strict: bool = False) -> str:
    """The whole page, a pure function of the fleet and each report's extras (:func:`read_extras`)."""
    page = _Page(fleet, extras, strict)
    parts = [
        _head(page),
        _summary(page),
        _matrix(page),
        _facts(page),
        _gpu_charts(page),
        _unreadable(page),
        _details(page),
        f"<script>{SCRIPT}</script>\n</body>\n</html>\n",
    ]
    return "".join(parts)


def _head(page: _Page) -> str:
    n = len(page.fleet.nodes)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(csp(), quote=True)}">\n'
        '<meta name="referrer" content="no-referrer">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<link rel="icon" href="data:,">\n<title>envdoctor fleet: {n} node(s)</title>\n<style>{STYLE}</style>\n</head>\n<body>\n'
    )


def _summary(page: _Page) -> str:
    fleet = page.fleet
    problems = [
        (len(fleet.failing), "failing"),
        (len(fleet.deviating), "deviating"),
        (len(fleet.partial), "partial"),
        (len(fleet.unreadable), "unreadable"),
    ]
    warned = sum(1 for n in fleet.nodes if n.status == "warn")
    healthy = fleet.healthy(page.strict)
    said = "; ".join(f"{k} {what}" for k, what in problems if k) or ("no readable report" if not fleet.nodes else "")
    verdict = f"HEALTHY: {len(fleet.nodes)} node(s) pass and agree" if healthy else f"PROBLEMS FOUND: {said or 'warnings (--strict)'}"
    sources = len({n.source for n in fleet.nodes})
    counts = "".join(
        f"<span>{k} {label}</span>"
        for k, label in (
            (len(fleet.nodes), "node(s)"),
            (sources, "report(s)"),
            (len(fleet.failing), "failing"),
            (warned, "with warnings"),
            (len(fleet.deviating), "deviating"),
        )
    )
    return (
        f'<h1>envdoctor fleet</h1>\n<p class="verdict {"good" if healthy else "bad"}" id="verdict">{html.escape(verdict)}</p>\n'
        f'<p class="counts">{counts}</p>\n'
    )


def _matrix(page: _Page) -> str:
    if not page.nodes:
        return "<h2>Nodes × checks</h2>\n<p>No readable report.</p>\n"
    head = "".join(f'<th title="{page.t(c)}"><code>{page.t(c)}</code></th>' for c in page.ids)
    body = [_matrix_row(page, i, n) for i, n in enumerate(page.nodes)]
    note = "" if page.ids else '<p class="muted">No check failed, errored or warned on any node.</p>\n'
    return (
        "<h2>Nodes × checks</h2>\n"
        '<p class="muted">Failures first; every marked cell links to its message and fix. '
        "ERR: envdoctor could not judge (not a finding about the node).</p>\n"
        f"{note}"
        '<div class="tools"><input id="filter" type="search" placeholder="filter nodes by name" aria-label="filter nodes">'
        '<label><input id="only" type="checkbox">only nodes with problems</label> <span id="shown" class="muted"></span></div>\n'
        f'<div class="wrap"><table id="matrix">\n<thead><tr><th>node</th><th>status</th>{head}<th>differs from the fleet</th></tr></thead>\n'
        f"<tbody>\n{''.join(body)}</tbody></table></div>\n"
    )


def _matrix_row(page: _Page, i: int, n: Node) -> str:
    cells = []
    for j, cid in enumerate(page.ids):
        status = n.checks.get(cid)
        if status is None:
            cells.append('<td class="c muted">·</td>')
            continue
        cls = status if status in CELL else "warn"
        tip = page.t(n.messages.get(cid, ""), cap=300)
        cells.append(f'<td class="c {cls}"><a href="#n{i}-{j}" title="{tip}">{CELL.get(status, page.t(status))}</a></td>')
    differs = page.differs.get(n.name)
    if differs:
        cells.append(f'<td class="dev"><a href="#n{i}-f">{page.t(", ".join(differs))}</a></td>')
    else:
        cells.append("<td></td>")
    cls, label = _node_status(n)
    problem = "1" if n.name in page.detailed else "0"
    return (
        f'<tr data-name="{page.t(n.name.lower(), cap=1000)}" data-problem="{problem}"><th>{page.node_link(n.name)}</th>'
        f'<td class="{cls}">{label}</td>{"".join(cells)}</tr>\n'
    )


def _node_status(n: Node) -> tuple[str, str]:
    """(class, label): a node whose only bad rows are errors is shown as ERR, not FAIL:
    envdoctor could not judge it, which says nothing about the node."""
    if n.partial:
        return "fail", "PARTIAL"
    if n.status == "fail" and "fail" not in n.checks.values():
        return "error", "ERR"
    return {"ok": ("ok", "ok"), "warn": ("warn", "WARN")}.get(n.status, ("fail", "FAIL"))


def _facts(page: _Page) -> str:
    if not page.fleet.facts:
        return ""
    rows = []
    for row in page.fleet.facts:
        major = page.t(row.majority) if row.majority is not None else '<span class="muted">(no majority)</span>'
        diff = ", ".join(f"{page.node_link(name)}: <code>{page.t(v)}</code>" for name, v in sorted(row.differing.items())) or "—"
        cls = ' class="dev"' if row.differing else ""
        rows.append(
            f"<tr{cls}><th>{page.t(row.fact)}</th><td><code>{major}</code></td><td>{row.agreeing}/{row.known}</td><td>{diff}</td></tr>\n"
        )
    return (
        "<h2>Facts that should agree</h2>\n<table>\n<thead><tr><th>fact</th><th>majority</th><th>nodes</th><th>differing</th></tr></thead>\n"
        f"<tbody>\n{''.join(rows)}</tbody></table>\n"
    )


def _unreadable(page: _Page) -> str:
    fleet = page.fleet
    if not (fleet.unreadable or fleet.partial):
        return ""
    items = [f"<li><code>{page.t(u.source)}</code>: {page.t(u.reason)}</li>\n" for u in fleet.unreadable]
    items += [f"<li><code>{page.t(n.source)}</code> ({page.node_link(n.name)}): partial: {page.t(n.partial)}</li>\n" for n in fleet.partial]
    return f"<h2>Unreadable or partial reports</h2>\n<ul>\n{''.join(items)}</ul>\n"


# -- per-GPU figures against what they should be ------------------------------------------------

W, LEFT, RIGHT, STEP = 860, 44, 24, 7  # chart width, margins, one dot's slot in pixels
MAX_STACK = 24  # dots stacked in one slot before they overlap


@dataclass
class Point:
    node: str
    gpu: Gpu
    value: float
    expected: float | None = None
    unit: str = ""


def _metrics(page: _Page) -> dict[str, list[Point]]:
    out: dict[str, list[Point]] = {}
    for n in page.nodes:
        for g in page.gpus.get(n.name, ()):
            for metric, (measured, expected, unit) in g.perf.items():
                out.setdefault(metric, []).append(Point(n.name, g, measured, expected, unit))
    order = {m: i for i, m in enumerate(METRIC_ORDER)}
    return dict(sorted(out.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))


def _counts(page: _Page) -> dict[str, list[Point]]:
    out: dict[str, list[Point]] = {}
    for n in page.nodes:
        for g in page.gpus.get(n.name, ()):
            for label, value in g.counts.items():
                out.setdefault(label, []).append(Point(n.name, g, float(value)))
    return out


def _gpu_charts(page: _Page) -> str:
    metrics, counts = _metrics(page), _counts(page)
    if not metrics and not counts:
        return (
            '<h2>GPU figures</h2>\n<p class="muted">No report carries per-GPU figures: the perf checks run with '
            "<code>--profile full</code> (or <code>--select perf</code>), NVML's health figures with the health checks.</p>\n"
        )
    parts = ["<h2>GPU figures against what they should be</h2>\n"]
    for metric, points in metrics.items():
        parts.append(_perf_chart(page, metric, points))
    for label, points in counts.items():
        parts.append(_count_chart(page, label, points))
    return "".join(parts)


def _gpu_name(page: _Page, p: Point) -> str:
    return f"{page.t(p.node)} GPU {page.t(p.gpu.index)}"


def _perf_chart(page: _Page, metric: str, points: list[Point]) -> str:
    """A strip of dots, one per GPU, at its share of the expected figure of its model."""
    judged = [p for p in points if p.expected]
    unit = page.t(next((p.unit for p in points if p.unit), ""))
    title = f"{page.t(metric)} ({unit})" if metric != "copy" else f"copy bandwidth ({unit})"
    unjudged = len(points) - len(judged)
    note = f"; {unjudged} GPU(s) of a model without reference figures are not drawn" if unjudged else ""
    expected = sorted({(p.gpu.name, p.expected) for p in judged}, key=lambda e: (e[0], e[1] or 0))[:8]
    models = "; ".join(f"{page.t(name or '?')}: {_fmt(e or 0, points[0].unit)} {unit} expected" for name, e in expected)
    if not judged:
        return f'<h3>{title}</h3>\n<p class="muted">{len(points)} GPU(s) measured, none of a model with reference figures.</p>\n'
    top = max(1.25, min(3.0, max(p.value / (p.expected or 1) for p in judged) * 1.05))
    plot = W - LEFT - RIGHT

    def x(ratio: float) -> float:
        return LEFT + plot * min(ratio, top) / top

    stacks: dict[int, int] = {}
    dots = []
    for p in judged:
        ratio = p.value / (p.expected or 1)
        slot = int(x(ratio) // STEP)
        k = min(stacks.get(slot, 0), MAX_STACK)
        stacks[slot] = k + 1
        dots.append((p, ratio, x(ratio), ((k + 1) // 2) * STEP * (1 if k % 2 else -1)))
    half = (min(max(stacks.values()), MAX_STACK + 1) // 2 + 1) * STEP
    mid, height = 18 + half, 18 + 2 * half + 30  # the lines' labels above the dots
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" role="img">']
    svg += _ratio_axis(x, top, mid, half, height)
    for p, ratio, cx, dy in dots:
        cls = "dot low" if ratio < WARN_BELOW else "dot"
        tip = f"{_gpu_name(page, p)} ({page.t(p.gpu.name)}): {_fmt(p.value, p.unit)} {unit}, {ratio:.0%} of {_fmt(p.expected or 0, p.unit)} expected"
        dot = f'<circle class="{cls}" cx="{cx:.1f}" cy="{mid + dy}" r="3.5"><title>{tip}</title></circle>'
        svg.append(f'<a href="#n{page.index[p.node]}">{dot}</a>' if p.node in page.detailed else dot)
    svg.append("</svg>")
    low = sum(1 for _, ratio, _, _ in dots if ratio < WARN_BELOW)
    caption = f"{len(judged)} GPU(s); {low} below {WARN_BELOW:.0%} of expected (red){note}. {models}."
    return f"<h3>{title}</h3>\n<figure>{''.join(svg)}<figcaption>{caption}</figcaption></figure>\n"


def _ratio_axis(x: Callable[[float], float], top: float, mid: int, half: int, height: int) -> list[str]:
    base = height - 24
    out = [f'<line class="axis" x1="{LEFT}" y1="{base}" x2="{W - RIGHT}" y2="{base}"/>']
    tick = 0.0
    while tick <= top + 1e-9:
        out.append(f'<line class="axis" x1="{x(tick):.1f}" y1="{base}" x2="{x(tick):.1f}" y2="{base + 4}"/>')
        out.append(f'<text x="{x(tick):.1f}" y="{base + 16}" text-anchor="middle">{tick:.0%}</text>')
        tick += 0.25
    for ratio, cls, label in ((1.0, "exp", "expected"), (WARN_BELOW, "thr", "warn below")):
        out.append(f'<line class="{cls}" x1="{x(ratio):.1f}" y1="{mid - half}" x2="{x(ratio):.1f}" y2="{base}"/>')
        out.append(f'<text x="{x(ratio) + 3:.1f}" y="{mid - half - 4}">{label}</text>')
    return out


def _count_chart(page: _Page, label: str, points: list[Point]) -> str:
    """Figures that should be zero: the GPUs that are not, as bars (most first)."""
    bad = sorted((p for p in points if p.value), key=lambda p: (-p.value, p.node, p.gpu.index))
    head = f"<h3>{page.t(label)}</h3>\n"
    if not bad:
        return f'{head}<p class="ok">All {len(points)} GPU(s) at 0 (expected 0).</p>\n'
    shown = bad[:TOP_BARS]
    row, label_w = 18, 260
    height = row * len(shown) + 8
    scale = (W - label_w - 80) / max(p.value for p in shown)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" role="img">']
    for k, p in enumerate(shown):
        y = 4 + k * row
        text = f'<text x="{label_w - 6}" y="{y + 12}" text-anchor="end">{page.t(p.node, cap=40)} GPU {page.t(p.gpu.index, cap=8)}</text>'
        bar = f'<rect class="bar" x="{label_w}" y="{y + 2}" width="{max(2.0, p.value * scale):.1f}" height="{row - 5}"/>'
        value = f'<text x="{label_w + max(2.0, p.value * scale) + 5:.1f}" y="{y + 12}">{p.value:,.0f}</text>'
        svg.append(f'<a href="#n{page.index[p.node]}">{text}{bar}{value}</a>' if p.node in page.detailed else text + bar + value)
    svg.append("</svg>")
    more = f"; the {TOP_BARS} largest shown" if len(bad) > TOP_BARS else ""
    caption = f"Expected 0: {len(bad)} of {len(points)} GPU(s) are not{more}."
    return f"{head}<figure>{''.join(svg)}<figcaption>{caption}</figcaption></figure>\n"


# -- details: each node's rows, differences and GPUs --------------------------------------------


def _details(page: _Page) -> str:
    nodes = [(i, n) for i, n in enumerate(page.nodes) if n.name in page.detailed]
    if not nodes:
        return ""
    return "<h2>Details</h2>\n" + "".join(_node_section(page, i, n) for i, n in nodes)


def _node_section(page: _Page, i: int, n: Node) -> str:
    cls, label = _node_status(n)
    out = [
        f'<section class="node" id="n{i}"><h3>{page.t(n.name)} <span class="{cls}">{label}</span></h3>\n',
        f'<p class="muted">report: <code>{page.t(n.source)}</code></p>\n',
    ]
    if n.partial:
        out.append(f'<div class="row fail"><b>partial</b>: {page.t(n.partial)}</div>\n')
    rows = page.rows.get(n.name, {})
    for j, cid in enumerate(page.ids):
        if cid in n.checks:
            out.append(_check_row(page, f"n{i}-{j}", cid, n.checks[cid], n.messages.get(cid, ""), rows.get(cid)))
    differs = page.differs.get(n.name)
    if differs:
        items = "".join(
            f"<li>{page.t(fact)}: <code>{page.t(v)}</code>"
            + (f" (the fleet's majority: <code>{page.t(m)}</code>)" if m is not None else " (no majority)")
            + "</li>"
            for fact, (v, m) in differs.items()
        )
        out.append(f'<div class="row warn" id="n{i}-f"><b>differs from the fleet</b><ul>{items}</ul></div>\n')
    out.append(_gpu_table(page, page.gpus.get(n.name, [])))
    out.append("</section>\n")
    return "".join(out)


def _check_row(page: _Page, anchor: str, cid: str, status: str, message: str, row: Row | None) -> str:
    cls = status if status in CELL else "warn"
    title = f" {page.t(row.title)}" if row and row.title and row.title != cid else ""
    parts = [f'<div class="row {cls}" id="{anchor}"><b>{CELL.get(status, page.t(status))}</b> <code>{page.t(cid)}</code>{title}']
    parts.append(f'<div class="msg">{page.t(message, newlines=True)}</div>')
    if row and row.hint:
        parts.append(f'<div>Fix: <span class="msg">{page.t(row.hint, newlines=True)}</span></div>')
    if row and row.action and row.action != "none":
        parts.append(f"<div>Recommended action: <code>{page.t(row.action)}</code></div>")
    parts.append("</div>\n")
    return "".join(parts)


def _gpu_table(page: _Page, gpus: Sequence[Gpu]) -> str:
    if not gpus:
        return ""
    metrics = sorted({m for g in gpus for m in g.perf}, key=lambda m: (METRIC_ORDER.index(m) if m in METRIC_ORDER else 99, m))
    counts = sorted({c for g in gpus for c in g.counts})
    head = "".join(f"<th>{page.t(m)}</th>" for m in metrics) + "".join(f"<th>{page.t(c)}</th>" for c in counts)
    rows = []
    for g in gpus:
        cells = []
        for m in metrics:
            if m not in g.perf:
                cells.append("<td></td>")
                continue
            value, expected, unit = g.perf[m]
            shown = f"{_fmt(value, unit)} {page.t(unit)}"
            if expected:
                low = ' class="fail"' if value / expected < WARN_BELOW else ""
                cells.append(f"<td{low}>{shown} ({value / expected:.0%} of {_fmt(expected, unit)})</td>")
            else:
                cells.append(f"<td>{shown}</td>")
        for c in counts:
            v = g.counts.get(c)
            cells.append("<td></td>" if v is None else f"<td{' class=fail' if v else ''}>{v:,}</td>")
        rows.append(f"<tr><th>GPU {page.t(g.index)}</th><td>{page.t(g.name)}</td>{''.join(cells)}</tr>")
    return f'<table class="gpus"><thead><tr><th>GPU</th><th>model</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>\n'
