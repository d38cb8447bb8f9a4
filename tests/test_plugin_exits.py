"""Issue 14: plugins that raise SystemExit or KeyboardInterrupt themselves, with real plugin
files in a subprocess. They become error rows naming the plugin; the user's own Ctrl-C (a real
SIGINT) still stops envdoctor."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from tests.conftest import make_plugin, run_cli


def _rows(r: subprocess.CompletedProcess) -> dict:
    assert r.stdout.strip(), f"no report; rc={r.returncode} stderr={r.stderr}"
    return {x["id"]: x for x in json.loads(r.stdout)["results"]}


def test_sys_exit_at_import_is_an_error_row_and_expectations_still_fail(tmp_path):
    site = make_plugin(tmp_path / "site", "envdoctor-exiter", "envdoctor_exiter", "import sys\nsys.exit(0)\n")
    env = {"PYTHONPATH": str(site)}
    r = run_cli("check", "--select", "system.python", "--expect", "gpus=8", "--format", "json", env=env)
    rows = _rows(r)
    row = rows["plugin.envdoctor_exiter"]
    assert row["status"] == "error"
    assert "envdoctor-exiter 1.0 [envdoctor_exiter]" in row["message"] and "SystemExit(0)" in row["message"]
    assert rows["system.python"]["status"] == "pass"
    assert r.returncode == 1  # the plugin error and the failing expectation both count
    listing = run_cli("list", env=env)
    assert listing.returncode == 0 and "SystemExit(0)" in listing.stdout and "system.python" in listing.stdout


def test_keyboard_interrupt_and_exit_in_checks_path_file_at_import(tmp_path):
    (tmp_path / "kbd.py").write_text("raise KeyboardInterrupt\n")
    (tmp_path / "exit3.py").write_text("raise SystemExit(3)\n")
    r = run_cli("check", "--checks-path", str(tmp_path), "--select", "system.python", "--format", "json")
    rows = _rows(r)
    assert rows["plugin.path.kbd"]["status"] == "error" and "KeyboardInterrupt" in rows["plugin.path.kbd"]["message"]
    assert str(tmp_path / "kbd.py") in rows["plugin.path.kbd"]["message"]
    assert "SystemExit(3)" in rows["plugin.path.exit3"]["message"]
    assert r.returncode == 1


CHECKS = """
import sys
from envdoctor import check, fact, ok

@fact("local_leaving")
def local_leaving():
    raise KeyboardInterrupt("plugin's own")

@check("local.exits", tags=("build",))
def exits():
    '''A check that calls sys.exit'''
    sys.exit(0)

@check("local.uses_fact", tags=("build",))
def uses_fact(local_leaving):
    '''A check whose fact raises KeyboardInterrupt'''
    return ok("never")

@check("local.fine", tags=("build",))
def fine():
    '''A check after them'''
    return ok("still here")
"""


def test_sys_exit_and_keyboard_interrupt_in_checks_and_facts_are_error_rows(tmp_path):
    (tmp_path / "leaving.py").write_text(CHECKS)
    r = run_cli("check", "--checks-path", str(tmp_path), "--select", "local", "--format", "json")
    rows = _rows(r)
    assert rows["local.exits"]["status"] == "error" and "SystemExit(0)" in rows["local.exits"]["message"]
    assert rows["local.uses_fact"]["status"] == "error" and "KeyboardInterrupt(plugin's own)" in rows["local.uses_fact"]["message"]
    assert rows["local.fine"]["status"] == "pass"
    assert r.returncode == 1


def test_the_users_ctrl_c_during_plugin_import_still_stops_envdoctor(tmp_path):
    (tmp_path / "slow.py").write_text(f"import time\nopen({str(tmp_path / 'started')!r}, 'w').close()\ntime.sleep(30)\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "envdoctor", "check", "--checks-path", str(tmp_path), "--select", "system.python"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        end = time.monotonic() + 60
        while not (tmp_path / "started").exists() and time.monotonic() < end and proc.poll() is None:
            time.sleep(0.05)
        assert (tmp_path / "started").exists()
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill() if proc.poll() is None else None
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err and "Traceback" not in err
