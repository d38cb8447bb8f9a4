"""Text from a paste, another machine's report or the environment is shown inert: no control
character reaches a terminal, and nothing renders as something else in a GitHub comment."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from envdoctor.core.api import Item, Status
from envdoctor.core.report import CheckOutcome, Report
from envdoctor.reporters.escape import md_block, md_code, md_prose, md_text, terminal
from tests.secret_shapes import write_report

# An OSC 8 hyperlink, a screen clear, a title change, a carriage-return overwrite, BEL,
# backspaces, a bidi override, a C1 CSI and a lone surrogate.
HOSTILE = "\x1b]8;;http://evil.example/\x07click\x1b]8;;\x07 \x1b[2J\x1b]0;pwned\x07 ok\rHEALTHY\x08\x08 \u202eexe.txt \x9b31m \udcff"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
MD_ATTACK = "``` </details> <img src=x onerror=alert(1)> <script>x</script> @maintainer [docs](http://evil.example) a|b"


def test_terminal_shows_every_control_as_an_escape_and_keeps_ordinary_text():
    out = terminal(HOSTILE)
    assert not RAW.search(out)
    for shown in ("\\x1b]8;;", "\\x07", "\\r", "\\x08", "\\u202e", "\\x9b", "\\udcff"):
        assert shown in out
    assert terminal("✓ torch 2.5.1 — é 中文\n\tnext") == "✓ torch 2.5.1 — é 中文\n\tnext"
    assert terminal("a\nb", newlines=False) == "a\\nb"


def _outside_code(md: str) -> str:
    """The Markdown with fenced blocks and code spans removed: what GitHub would render."""
    md = re.sub(r"^(`{3,})[^\n]*\n.*?^\1\s*$", "", md, flags=re.M | re.S)
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", md)


def _assert_inert_markdown(md: str) -> None:
    assert not RAW.search(md)
    rendered = _outside_code(md)
    for tag in ("<img", "<script", "</details> <", "<details> <"):
        assert tag not in rendered
    assert "@maintainer" not in rendered
    assert "](http://evil.example)" not in rendered.replace("\\]", "")


def test_md_helpers_neutralise_html_mentions_links_and_tables():
    out = md_text(MD_ATTACK + "\nnext line")
    assert "\n" not in out and "&lt;img" in out and "&lt;script&gt;" in out and "@\u200bmaintainer" in out
    assert "\\[docs\\]" in out and "a\\|b" in out
    assert md_code("a\nb | c", table=True) == "`a b \\| c`"
    assert md_code("x `y` z") == "`` x `y` z ``"
    assert md_prose("run `env | grep X` for <package>") == "run `env | grep X` for &lt;package&gt;"
    block = md_block("````\nstill inside\n" + HOSTILE, "text")
    assert block[0] == "`````text" and block[-1] == "`````" and not RAW.search("\n".join(block))


def test_the_table_code_span_escapes_newlines_and_pipes():
    """reporters/markdown.py once defined _code twice; the second, which won, let a newline or a
    bare '|' through and broke the stack and GPU tables."""
    from envdoctor.reporters.markdown import _code, _gpu_table

    assert _code("a\nb | c") == "`a b \\| c`"
    rows = _gpu_table([{"index": 0, "name": "H200 | x\ny", "cc": "9.0", "uuid": "GPU-1|2\n3", "mig_mode": "off"}])
    assert len(rows) == 3
    for row in rows[2:]:
        assert len(re.findall(r"(?<!\\)\|", row)) == 7, row


def _paste(tmp_path: Path) -> Path:
    p = tmp_path / "paste.txt"
    error = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    p.write_text(f"{error} {HOSTILE} {MD_ATTACK}\nnvidia-smi {HOSTILE}\n", encoding="utf-8", errors="surrogatepass")
    return p


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_triage_shows_a_hostile_paste_inert(fmt, tmp_path):
    from envdoctor.cli import cli

    result = CliRunner().invoke(cli, ["triage", str(_paste(tmp_path)), "-f", fmt])
    assert result.exit_code == 1, result.output
    out = result.output
    if fmt == "markdown":
        _assert_inert_markdown(out)
        assert "\\x1b]8;;" in out  # the evidence is still quoted, visibly
    elif fmt == "text":
        assert not RAW.search(out) and "\\x1b]8;;" in out and "\\r" in out
    else:
        data = json.loads(out)
        assert any("\x1b" in line for c in data["causes"] for line in c["evidence"])  # data kept, as JSON escapes
        assert "\x1b" not in out and "\u202e" not in out


def test_check_verbose_shows_environment_values_inert():
    from envdoctor.cli import cli

    result = CliRunner().invoke(
        cli, ["check", "-s", "system.environment", "-v", "-f", "text"], env={"TORCH_LOGS": HOSTILE.replace("\udcff", "")}
    )
    assert result.exit_code in (0, 1), result.output
    assert "TORCH_LOGS" in result.output and "\\x1b]8;;" in result.output
    assert not RAW.search(result.output)


@pytest.fixture()
def hostile_reports(tmp_path) -> tuple[str, str]:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_report(a, "n1", ["fine"], {"TORCH_LOGS": "+dynamo"})
    write_report(b, f"n2{HOSTILE}", [f"{HOSTILE} {MD_ATTACK}"], {"TORCH_LOGS": f"{HOSTILE}\n| x | y |"})
    return str(a), str(b)


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_diff_shows_other_machines_text_inert(fmt, hostile_reports):
    from envdoctor.cli import cli

    result = CliRunner().invoke(cli, ["diff", *hostile_reports, "-f", fmt])
    assert result.exit_code in (0, 1), result.output
    assert not RAW.search(result.output)
    if fmt == "markdown":
        _assert_inert_markdown(result.output)
        env_rows = [line for line in result.output.splitlines() if line.startswith("| ") and "TORCH_LOGS" in line]
        assert len(env_rows) == 1 and len(re.findall(r"(?<!\\)\|", env_rows[0])) == 4, env_rows


def test_fleet_shows_other_machines_text_inert(hostile_reports):
    from envdoctor.cli import cli

    result = CliRunner().invoke(cli, ["fleet", *hostile_reports])
    assert result.exit_code == 1, result.output
    assert not RAW.search(result.output) and "\\x1b" in result.output


def test_fleet_page_shows_other_machines_text_inert(hostile_reports):
    import html

    from envdoctor.cli import cli

    result = CliRunner().invoke(cli, ["fleet", "-f", "html", *hostile_reports])
    assert result.exit_code == 1, result.output
    assert not RAW.search(html.unescape(result.output)) and "\\x1b" in result.output
    assert "<img" not in result.output and "&lt;img src=x onerror=alert(1)&gt;" in result.output


def test_text_markdown_and_junit_reports_show_check_text_inert():
    from envdoctor.reporters.junit import render_junit
    from envdoctor.reporters.markdown import render_markdown
    from envdoctor.reporters.text import render_text

    r = Report(
        "0",
        "t",
        0.0,
        {"summary": "Linux"},
        (CheckOutcome("x.y", "T", Status.FAIL, f"{HOSTILE} {MD_ATTACK}", hint=HOSTILE, items=(Item(HOSTILE, Status.FAIL, MD_ATTACK),)),),
        facts={"env_vars": {"TORCH_LOGS": f"{HOSTILE}\nFAKE=1"}},
    )
    assert not RAW.search(render_text(r, verbose=True))
    md = render_markdown(r)
    _assert_inert_markdown(md)
    assert "\nFAKE=1" not in md  # a value's newline does not make a variable of its own
    ET.fromstring(render_junit(r).split("\n", 1)[1])  # control characters would make the XML unparseable
