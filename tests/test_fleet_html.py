"""envdoctor fleet --format html: one self-contained page, checked as HTML without a browser (it
parses, loads nothing from anywhere, stays small for 100 nodes, shows report text inert) and
rendered in a real headless chromium (no console message, every failing node in the DOM, the
hostile node name only as text, a PNG screenshot kept as the test's artefact)."""

from __future__ import annotations

import copy
import html
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from envdoctor.cli import cli
from envdoctor.commands.fleet import summarize
from envdoctor.core.api import Status
from envdoctor.core.report import CheckOutcome, Report
from envdoctor.reporters.fleet_html import csp, read_extras, render_html
from envdoctor.reporters.json import to_dict
from envdoctor.testing import run_check
from envdoctor_checks import health, perf
from envdoctor_checks._xid import KernelLog, parse_lines
from tests.checks.test_health import explored_h200s, health_fact
from tests.checks.test_perf import H200, bandwidth, matmul, result
from tests.components import need

HOSTILE = "<img src=x onerror=alert(1)>"
SECRET = "hf_" + "Fl33tHtmlCanary" * 3
GPUS = 8


def _h200s(n: int = GPUS) -> list[dict]:
    """n H200s as NVML's health query reads them (the explored machine's first GPU, re-indexed)."""
    base = explored_h200s()[0]
    out = []
    for i in range(n):
        g = copy.deepcopy(base)
        g["index"], g["pci_bus_id"], g["uuid"] = i, f"00000000:{0x18 + i:02X}:00.0", f"GPU-{i:08d}-0000-0000-0000-000000000000"
        out.append(g)
    return out


def node_report(
    host: str, *, slow: int | None = None, ecc: int | None = None, xid: int | None = None, fail: str | None = None, driver="580.65.06"
) -> dict:
    """One node's JSON report with the perf checks' and the health checks' real rows: GPU
    ``slow`` at 40 % of its matmul and copy figures, ``ecc`` with 2 uncorrectable errors,
    ``xid`` with Xid 79 twice in the kernel log; ``fail`` a failing check of that id."""
    mm = result(*[matmul({**H200, "index": i}, bf16=300.0 if i == slow else 740.0 + i, tf32=400.0) for i in range(GPUS)])
    bw = result(*[bandwidth({**H200, "index": i}, 1400.0 if i == slow else 3500.0 - i) for i in range(GPUS)])
    gpus = _h200s()
    if ecc is not None:
        gpus[ecc]["ecc"]["volatile"]["uncorrected"] = 2
    lines = []
    if xid is not None:
        pci = gpus[xid]["pci_bus_id"]
        lines = [f"[ 7300.5] NVRM: Xid (PCI:{pci[4:-2]}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."] * 2
    fact = health_fact(gpus, KernelLog("/dev/kmsg", tuple(parse_lines(lines))))
    rows = [
        run_check(perf.matmul_throughput, matmul_perf=mm),
        run_check(perf.memory_bandwidth, bandwidth_perf=bw),
        run_check(health.ecc, gpu_health=fact),
        run_check(health.xid, gpu_health=fact),
    ]
    if fail:
        rows.append(
            CheckOutcome(fail, "the smoke matmul", Status.FAIL, f"GPU 3 fell off the bus; token {SECRET}", hint=f"reseat GPU 3 {HOSTILE}")
        )
    facts = {
        "gpu_health": fact,
        "driver": {"version": driver, "cuda_version": "13.0"},
        "torch_build": {"version": "2.11.0+cu130", "cuda": "13.0", "kind": "cuda"},
        "visible_gpus": [{"name": "NVIDIA H200", "index": i} for i in range(GPUS)],
    }
    return to_dict(Report("0.1.0", "2026-12-01T10:00:00+00:00", 1.0, {"hostname": host}, tuple(rows), facts))


def write_fleet(d: Path, n: int = 6) -> Path:
    """node-00 fails a check, node-01 has an uncorrectable ECC error and Xids (health.ecc fails),
    node-02 a slow GPU (warns), node-03 an older driver (deviates), node-04 a hostile name
    that fails; the rest are healthy; one file is not a report."""
    d.mkdir(parents=True, exist_ok=True)
    special = {
        0: {"fail": "smoke.matmul"},
        1: {"ecc": 5, "xid": 5},
        2: {"slow": 3},
        3: {"driver": "570.86.15"},
        4: {"fail": "smoke.matmul"},
    }
    for i in range(n):
        host = HOSTILE if i == 4 else f"node-{i:02d}"
        (d / f"n{i:03d}.json").write_text(json.dumps(node_report(host, **special.get(i, {}))), encoding="utf-8")
    (d / "broken.json").write_text('{"schema_version": "1.0", "results": [', encoding="utf-8")
    return d


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text, of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parsed(page: str) -> Tags:
    p = Tags()
    p.feed(page)
    p.close()
    return p


def page_of(reports: Path) -> str:
    fleet = summarize([str(reports)])
    return render_html(fleet, read_extras(fleet))


def _page(tmp_path: Path, n: int = 6) -> str:
    return page_of(write_fleet(tmp_path / "reports", n))


# -- without a browser ---------------------------------------------------------------------------


def test_the_page_parses_loads_nothing_and_keeps_report_text_inert(tmp_path):
    page = _page(tmp_path)
    p = parsed(page)
    names = [t for t, _ in p.tags]
    assert names[:3] == ["html", "head", "meta"] and "img" not in names  # the hostile name made no element
    # Nothing to fetch: no attribute names a URL (only in-page anchors and the empty data: icon),
    # no style imports or loads anything. A URL in a fix's text is text, not a reference.
    refs = [(t, k, v) for t, a in p.tags for k, v in a.items() if k != "xmlns" and re.match(r"\s*[a-z][a-z0-9+.-]*:", v or "", re.I)]
    assert refs == [("link", "href", "data:,")], refs
    assert not [(t, k) for t, a in p.tags for k in a if k in ("src", "srcset", "action", "formaction", "poster", "background")]
    assert not re.search(r"url\(|@import|@font-face", page, re.I), "CSS that loads something"
    assert {a.get("xmlns") for t, a in p.tags if t == "svg"} == {"http://www.w3.org/2000/svg"}  # a namespace name, never fetched
    policy = next(a["content"] for t, a in p.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert policy == csp() and policy.startswith("default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-")
    assert {t for t, _ in p.tags} & {"link", "script", "img", "iframe", "object", "embed", "form", "base"} == {"link", "script"}
    assert not [(t, k) for t, a in p.tags for k in a if k.startswith("on")], "an inline event handler"
    text = "".join(p.text)
    assert HOSTILE in text and "&lt;img src=x onerror=alert(1)&gt;" in page  # shown as text, escaped
    assert SECRET not in page and "<redacted>" in text
    anchors = {a["id"] for _, a in p.tags if "id" in a}
    links = [a["href"][1:] for t, a in p.tags if t == "a" and a.get("href", "").startswith("#")]
    assert links and set(links) <= anchors, "a link to no section"


def test_failures_and_outliers_come_first_and_cells_link_to_message_and_fix(tmp_path):
    page = _page(tmp_path)
    p = parsed(page)
    rows = [(html.unescape(name), flag) for name, flag in re.findall(r'<tr data-name="([^"]*)" data-problem="(\d)">', page)]
    order = [name for name, _ in rows]
    # the three failing nodes (the one failing two checks first), the deviating driver, the slow GPU, the healthy node
    assert order == ["node-01", HOSTILE.lower(), "node-00", "node-03", "node-02", "node-05"]
    assert [flag for _, flag in rows] == ["1"] * 5 + ["0"]
    cell = re.search(r'<td class="c fail"><a href="#(n\d+-\d+)"[^>]*>FAIL</a>', page)
    assert cell
    section = page[page.index(f'id="{cell.group(1)}"') :].split("</div>\n", 1)[0]
    assert "Fix:" in section and "Recommended action:" in section
    assert "driver" in "".join(p.text) and "570.86.15" in page and "580.65.06" in page


def test_gpu_figures_are_drawn_against_their_expected_values(tmp_path):
    page = _page(tmp_path)
    charts = page.split("<h2>GPU figures against what they should be</h2>", 1)[1].split("<h2>", 1)[0]
    for title in (
        "bf16 (TFLOP/s)",
        "tf32 (TFLOP/s)",
        "copy bandwidth (GB/s)",
        "uncorrectable ECC errors (since the driver loaded)",
        "Xid errors since boot",
    ):
        assert f"<h3>{title}</h3>" in charts, title
    bf16 = charts.split("<h3>bf16 (TFLOP/s)</h3>", 1)[1].split("<h3>", 1)[0]
    assert bf16.count("<circle") == 6 * GPUS and bf16.count('class="dot low"') == 1  # node-02's GPU 3
    assert "node-02 GPU 3 (NVIDIA H200): 300 TFLOP/s, 43% of 693 expected" in bf16
    assert "1 below 75% of expected" in bf16 and "expected</text>" in bf16 and "warn below</text>" in bf16
    ecc = charts.split("<h3>uncorrectable ECC errors (since the driver loaded)</h3>", 1)[1].split("<h3>", 1)[0]
    assert ecc.count("<rect") == 1 and ">node-01 GPU 5</text>" in ecc and "Expected 0: 1 of 48 GPU(s) are not." in ecc
    xid = charts.split("<h3>Xid errors since boot</h3>", 1)[1].split("<h3>", 1)[0]
    assert ">node-01 GPU 5</text>" in xid and ">2</text>" in xid


def test_a_hundred_nodes_of_eight_gpus_stay_under_600_kb(tmp_path):
    page = _page(tmp_path, n=100)
    assert len(page.encode()) < 600_000, len(page.encode())  # 370 KB: every GPU a dot in four charts
    assert page.count("<tr data-name=") == 100


def test_fleet_command_writes_the_page_atomically_and_exits_1(tmp_path):
    reports = write_fleet(tmp_path / "reports")
    out = tmp_path / "fleet.html"
    res = CliRunner().invoke(cli, ["fleet", "--format", "html", "-o", str(out), str(reports)])
    assert res.exit_code == 1 and res.output == ""
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".envdoctor-")]
    res = CliRunner().invoke(cli, ["fleet", "--format", "html", "-o", str(tmp_path / "none" / "x.html"), str(reports)])
    assert res.exit_code == 2 and "cannot write" in res.output


# -- in a real browser ---------------------------------------------------------------------------

CHROMIUM = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update")
CHROMIUM += ("--disable-sync", "--no-first-run", "--disable-extensions", "--enable-logging=stderr", "--v=0")


def chromium(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "chromium-profile"
    cmd = [shutil.which("chromium") or "chromium", *CHROMIUM, f"--user-data-dir={profile}", *args, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})


def console(stderr: str) -> list[str]:
    """What the page wrote to the console: chromium logs each message as a CONSOLE line (an
    uncaught error, a blocked script or style, a refused load, a console.* call alike)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


@pytest.fixture
def browser_page(tmp_path):
    need("chromium", package="chromium")
    page = tmp_path / "fleet.html"
    res = CliRunner().invoke(cli, ["fleet", "--format", "html", "-o", str(page), str(write_fleet(tmp_path / "reports"))])
    assert res.exit_code == 1, res.output
    return page


@pytest.mark.slow
def test_the_page_renders_in_chromium_without_console_messages_and_with_every_failing_node(tmp_path, browser_page):
    run = chromium(tmp_path, browser_page.as_uri(), "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    assert not console(run.stderr), console(run.stderr)
    dom = parsed(run.stdout)
    html_tag = next(a for t, a in dom.tags if t == "html")
    assert html_tag.get("data-ready") == "1"  # the inline script ran: its hash matches the policy
    assert "img" not in [t for t, _ in dom.tags]  # the hostile node name is text, not an element
    text = "".join(dom.text)
    for name in summarize([str(tmp_path / "reports")]).failing:
        assert name.name in text, name.name
    assert HOSTILE in text and "3 failing" in text
    assert "of 7 node(s) shown" not in text and "6 of 6 node(s) shown" in text  # the script filled it in


@pytest.mark.slow
def test_the_console_check_sees_a_blocked_script(tmp_path):
    """The check above can fail: a page whose script the policy refuses logs a CONSOLE line."""
    need("chromium", package="chromium")
    page = tmp_path / "blocked.html"
    page.write_text(
        f'<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="{csp()}"></head>'
        "<body><script>document.body.dataset.x='1'</script></body></html>",
        encoding="utf-8",
    )
    run = chromium(tmp_path, page.as_uri(), "--dump-dom")
    assert console(run.stderr) and "data-x" not in run.stdout


@pytest.mark.slow
def test_a_screenshot_of_the_page_is_kept(tmp_path, browser_page):
    shot = tmp_path / "fleet.png"
    run = chromium(tmp_path, browser_page.as_uri(), f"--screenshot={shot}", "--window-size=1400,900", "--hide-scrollbars")
    assert run.returncode == 0, run.stderr[-2000:]
    assert not console(run.stderr), console(run.stderr)
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    print(f"fleet page screenshot: {shot}")


EVIL = [
    HOSTILE,
    "</title><script>alert(1)</script>",
    '"><svg onload=alert(1)>',
    "' onmouseover='alert(1)",
    "</style><style>*{background:url(https://evil.example/x)}</style>",
    "]]><!-- -->\u202eevil\u2066",
]


def test_every_text_a_report_carries_is_inert_in_every_place_the_page_shows_it(tmp_path):
    """Check ids, titles, messages, fixes, actions, GPU names, metric names, units, indices
    and host names: hostile in every field, the page still has only its own elements."""
    evil = " ".join(EVIL)
    data = node_report("node-x", slow=0, ecc=1, fail="smoke.matmul")
    for r in data["results"]:
        if r["status"] in ("fail", "warn"):
            r.update(id=f"{r['id']}{evil}", title=evil, message=evil, hint=evil, action=evil)
        for dev in (r.get("details") or {}).get("devices", ()):
            dev["name"], dev["index"] = evil, evil
            dev["figures"][evil] = {"measured": 1.0, "expected": 10.0, "unit": evil}
    for g in data["facts"]["gpu_health"]["nvml"]["gpus"]:
        g["name"] = evil
    data["platform"]["hostname"] = evil
    (tmp_path / "evil.json").write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "ok.json").write_text(json.dumps(node_report("node-y")), encoding="utf-8")
    page = page_of(tmp_path)
    p = parsed(page)
    assert [t for t, _ in p.tags].count("script") == 1 and [t for t, _ in p.tags].count("style") == 1
    assert {t for t, _ in p.tags} <= {
        *"html head meta link title style script body h1 h2 h3 p span div input label table thead tbody tr th td a code".split(),
        *"ul li b section svg line text circle rect figure figcaption".split(),
    }
    assert not [(t, k) for t, a in p.tags for k in a if k.startswith("on")]
    assert "evil.example" not in "".join(a.get("href") or "" for _, a in p.tags)
    assert "\u202e" not in page and "\u2066" not in page and "\\u202eevil\\u2066" in page  # shown as escapes
    assert page.count(HOSTILE) == 0 and "".join(p.text).count(HOSTILE) > 10


def test_a_report_gone_before_the_page_is_drawn_leaves_its_node_without_extras(tmp_path):
    d = write_fleet(tmp_path / "reports")
    fleet = summarize([str(d)])
    (d / "n000.json").unlink()  # node-00: its fix and figures cannot be read again
    page = render_html(fleet, read_extras(fleet))
    node00 = next(s for s in page.split('<section class="node"')[1:] if "<h3>node-00 " in s)
    assert "GPU 3 fell off the bus" in node00 and "Fix:" not in node00 and "<table" not in node00
    assert "Fix:" in next(s for s in page.split('<section class="node"')[1:] if "<h3>node-01 " in s)


def test_could_not_judge_and_partial_nodes_are_shown_as_such_not_as_failing(tmp_path):
    err = CheckOutcome("smoke.matmul", "matmul", Status.ERROR, "the probe hung")
    for name, rows, kw in (("judged-not", (err,), {}), ("cut-short", (), {"interrupted": True}), ("fine", (), {})):
        report = Report("0.1.0", "2026-12-01T10:00:00+00:00", 1.0, {"hostname": name}, rows, {}, **kw)
        (tmp_path / f"{name}.json").write_text(json.dumps(to_dict(report)), encoding="utf-8")
    page = page_of(tmp_path)
    status = dict(re.findall(r'<tr data-name="([^"]*)"[^>]*><th>.*?</th><td class="[a-z]+">([A-Za-z]+)</td>', page))
    assert status == {"cut-short": "PARTIAL", "judged-not": "ERR", "fine": "ok"}
    assert '<td class="c error"><a href="#n' in page and ">ERR</a>" in page
    assert "No report carries per-GPU figures" in page
