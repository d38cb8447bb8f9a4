"""The command line as a user drives it: real subprocesses, real entry points, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import REPO, make_plugin, run_cli

CHEAP = ("--select", "system,packages")


def test_help_and_version():
    r = run_cli("--help")
    assert r.returncode == 0
    assert "check" in r.stdout and "list" in r.stdout
    v = run_cli("--version")
    assert v.returncode == 0 and "envdoctor" in v.stdout


def test_check_text_report_grouped_with_summary():
    r = run_cli("check", *CHEAP, "--no-color")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert "system" in lines and "packages" in lines  # area headings
    assert any(line.startswith("HEALTHY") or line.startswith("OK, with warnings") for line in lines)
    assert "passed" in lines[-1] and lines[-1].rstrip().endswith("s")
    assert "\033[" not in r.stdout  # no colour when not a TTY
    assert "Traceback" not in r.stderr


def test_verbose_adds_ids_and_durations():
    r = run_cli("check", "--select", "system.python", "-v")
    assert "[system.python, " in r.stdout


@pytest.mark.slow
def test_json_junit_markdown_in_one_run(tmp_path):
    j, x, m = tmp_path / "r.json", tmp_path / "r.xml", tmp_path / "r.md"
    r = run_cli("check", *CHEAP, "--json", str(j), "--junit-xml", str(x), "--markdown", str(m))
    assert r.returncode == 0, r.stderr
    data = json.loads(j.read_text())
    assert data["schema_version"] and data["tool"]["name"] == "envdoctor"
    assert {row["id"] for row in data["results"]} >= {"system.python", "packages.versions"}
    suite = ET.parse(x).getroot().find("testsuite")
    assert int(suite.get("tests")) == len(data["results"])
    assert m.read_text().startswith("### envdoctor: HEALTHY")


@pytest.mark.slow
def test_format_json_to_stdout_and_output_file(cli_inproc, tmp_path):
    out = tmp_path / "report.json"
    r = cli_inproc("check", *CHEAP, "--format", "json", "--output", str(out))
    assert r.returncode == 0 and r.stdout == ""
    assert json.loads(out.read_text())["summary"]["total"] >= 2


def test_unknown_select_is_a_usage_error():
    r = run_cli("check", "--select", "no.such.check")
    assert r.returncode == 2
    assert "no check matches 'no.such.check'" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("check", "--format", "yaml"),
        ("check", "--timeout", "-3"),
        ("nosuchcommand",),
        ("check", "--output", "/nonexistent-dir/x.json"),
    ],
)
def test_bad_command_lines_exit_2_without_traceback(args):
    r = run_cli(*args)
    assert r.returncode == 2, (args, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and r.stderr.strip()


def test_output_to_a_directory_is_refused(tmp_path):
    r = run_cli("check", *CHEAP, "--output", str(tmp_path))
    assert r.returncode == 2
    assert "is a directory" in r.stderr


@pytest.mark.slow
def test_strict_turns_a_warning_into_exit_1(tmp_path):
    plugin = make_plugin(
        tmp_path / "site",
        "warnplugin",
        "envdoctor_warnplugin",
        """
        from envdoctor import check, warn

        @check("site.always_warns")
        def always_warns():
            '''A site check that warns'''
            return warn("something to look at", hint="look at it")
        """,
    )
    env = {"PYTHONPATH": str(plugin)}
    relaxed = run_cli("check", "--select", "site", env=env)
    assert relaxed.returncode == 0, relaxed.stdout + relaxed.stderr
    assert "→ look at it" in relaxed.stdout
    strict = run_cli("check", "--select", "site", "--strict", env=env)
    assert strict.returncode == 1


def test_failing_check_exits_1_and_shows_hint(tmp_path):
    (tmp_path / "local_fail.py").write_text(
        "from envdoctor import check, fail\n"
        "@check('local.broken')\n"
        "def broken():\n"
        "    '''A local check that fails'''\n"
        "    return fail('the frobnicator is unplugged', hint='plug it in: frob --plug')\n"
    )
    r = run_cli("check", "--checks-path", str(tmp_path), "--select", "local")
    assert r.returncode == 1
    assert "the frobnicator is unplugged" in r.stdout
    assert "→ plug it in: frob --plug" in r.stdout
    assert r.stdout.rstrip().splitlines()[-1].startswith("PROBLEMS FOUND")


@pytest.mark.slow
def test_no_color_env_and_flag(tmp_path):
    # Colour is only ever used on a TTY; neither of these may produce escape codes.
    for args, env in ((("--no-color",), {}), ((), {"NO_COLOR": "1"})):
        r = run_cli("check", "--select", "system.python", *args, env=env)
        assert "\033[" not in r.stdout


@pytest.mark.slow
def test_list_shows_ids_titles_sources(cli_inproc):
    r = cli_inproc("list")
    assert r.returncode == 0
    assert "system.python" in r.stdout and "(built-in)" in r.stdout
    data = json.loads(cli_inproc("list", "--format", "json").stdout)
    assert any(row["id"] == "packages.versions" and row["source"] == "built-in" for row in data)


def test_internal_error_exit_code_and_no_traceback(tmp_path):
    # A reporter crashing is envdoctor's own bug: exit 3, one message, no traceback.
    (tmp_path / "sitecustomize.py").write_text(
        "import envdoctor.reporters.text as t\ndef boom(*a, **k):\n    raise RuntimeError('reporter exploded')\nt.render_text = boom\n"
    )
    r = run_cli("check", "--select", "system.python", env={"PYTHONPATH": str(tmp_path)})
    assert r.returncode == 3
    assert "internal error" in r.stderr and "reporter exploded" in r.stderr
    assert "Traceback" not in r.stderr


SLOW_CHECK = (
    "import time\n"
    "from envdoctor import check, ok\n"
    "@check('local.slow')\n"
    "def slow():\n"
    "    '''A check that takes a while'''\n"
    "    time.sleep(1.5)\n"
    "    return ok('done')\n"
)


@pytest.mark.slow
def test_progress_line_on_a_tty_only(tmp_path):
    import os
    import pty
    import subprocess
    import sys

    (tmp_path / "slow.py").write_text(SLOW_CHECK)
    args = [sys.executable, "-m", "envdoctor", "check", "--checks-path", str(tmp_path), "--select", "local", "--no-color"]
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(args, stdin=secondary, stdout=secondary, stderr=secondary, close_fds=True)
    os.close(secondary)
    chunks = []
    while True:
        try:
            data = os.read(primary, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(60)
    os.close(primary)
    on_tty = b"".join(chunks).decode()
    assert "running local.slow (" in on_tty  # which check runs, and for how long
    assert "A check that takes a while: done" in on_tty
    piped = run_cli("check", "--checks-path", str(tmp_path), "--select", "local", "--no-color")
    assert "running" not in piped.stdout + piped.stderr and "\r" not in piped.stdout + piped.stderr


def test_lazy_command_table_matches_the_commands():
    """`envdoctor --help` lists the commands from a table, without importing them: the table's
    help texts must be the commands' own, and every command must be in it."""
    import importlib

    import click

    from envdoctor.cli import COMMANDS

    for name, (module, attr, text) in COMMANDS.items():
        cmd = getattr(importlib.import_module(module), attr)
        assert cmd.name == name
        stub = click.Command(name, help=text)
        for limit in (20, 45, 70, 200):
            assert stub.get_short_help_str(limit) == cmd.get_short_help_str(limit), (name, limit)
    out = run_cli("--help").stdout
    assert all(f"  {name}  " in out or f"  {name} " in out for name in COMMANDS), out


def test_help_imports_no_command_module():
    code = (
        "import sys\nfrom envdoctor.cli import main\nsys.argv = ['envdoctor', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('envdoctor.commands.', 'envdoctor.core.plan', 'envdoctor.core.probe'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr


# ---- standard streams that are closed, full or not UTF-8 (one piece serves every command) ------

REPORTS = REPO / "tests" / "fixtures" / "reports"
PAIR = (str(REPORTS / "v1.0-cpu-box.json"), str(REPORTS / "v1.0-gpu-h200.json"))
STDOUT_COMMANDS = {
    "check": ("check", "--select", "system.python", "--no-color"),
    "check-quiet": ("check", "--select", "system.python", "--quiet"),
    "list": ("list",),
    "diff": ("diff", *PAIR),
    "fleet": ("fleet", *PAIR),
    "triage": ("triage", str(REPO / "tests" / "fixtures" / "triage" / "003-driver-too-old-11000-container-cu121.txt")),
    "help": ("--help",),
    "version": ("--version",),
}


def _run_with_stdout(args, how: str) -> subprocess.CompletedProcess:
    """``how``: "closed" (``>&-``), "full" (``> /dev/full``), "both-closed" (``>&- 2>&-``)."""
    import os

    fds = {"closed": (1,), "both-closed": (1, 2)}.get(how, ())
    with open("/dev/full", "w") as full:
        return subprocess.run(
            [sys.executable, "-m", "envdoctor", *args],
            stdout=full if how == "full" else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            timeout=240,
            preexec_fn=lambda: [os.close(fd) for fd in fds] and None,
        )


@pytest.mark.parametrize("how", ["closed", "full"])
@pytest.mark.parametrize("name", sorted(STDOUT_COMMANDS))
@pytest.mark.slow
def test_a_closed_or_full_stdout_is_one_line_and_exit_2(name, how):
    args = STDOUT_COMMANDS[name]
    r = _run_with_stdout(args, how)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == 2, (name, how, r.returncode, r.stderr)
    assert len(lines) == 1 and "standard output" in lines[0], r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", ["check", "list", "diff", "help"])
def test_closed_stdout_and_stderr_is_just_the_exit_code(name):
    r = _run_with_stdout(STDOUT_COMMANDS[name], "both-closed")
    assert r.returncode == 2 and r.stderr == "", (r.returncode, r.stderr)


def test_a_report_file_is_still_written_with_stdout_closed(tmp_path):
    out = tmp_path / "r.json"
    r = _run_with_stdout(("check", "--select", "system.python", "--format", "json", "--output", str(out)), "closed")
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["results"][0]["id"] == "system.python"


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("name", ["diff", "fleet", "check", "triage", "list"])
@pytest.mark.slow
def test_every_command_follows_the_stdout_encoding(name, encoding):
    import os

    def run(enc: str) -> str:
        args = [sys.executable, "-m", "envdoctor", *STDOUT_COMMANDS[name]]
        r = subprocess.run(args, capture_output=True, env={**os.environ, "PYTHONIOENCODING": enc}, timeout=240)
        assert r.returncode in (0, 1), r.stderr
        return r.stdout.decode(enc)  # raises if a command wrote UTF-8 into an ASCII stream

    out = run(encoding)
    for mark in ("→", "✗", "✓", "—", "…"):
        assert mark not in out, (name, mark)
    assert out.count("?") == run("utf-8").count("?"), out  # no mark lost to '?'
    if name == "diff":
        assert f"{os.path.basename(PAIR[0])} -> {os.path.basename(PAIR[1])}" in out and "  XX " in out
    if name == "fleet":
        assert ("Nodes x failing" if encoding == "ascii" else "Nodes × failing") in out
