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
from pathlib import Path

import pytest

from tests.conftest import make_plugin, run_cli


def _rows(r: subprocess.CompletedProcess) -> dict:
    assert r.stdout.strip(), f"no report; rc={r.returncode} stderr={r.stderr}"
    return {x["id"]: x for x in json.loads(r.stdout)["results"]}


@pytest.mark.slow
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


@pytest.mark.slow
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


def test_the_users_ctrl_c_during_plugin_import_still_stops_envdoctor(spawn, tmp_path):
    (tmp_path / "slow.py").write_text(f"import time\nopen({str(tmp_path / 'started')!r}, 'w').close()\ntime.sleep(30)\n")
    proc = spawn("check", "--checks-path", str(tmp_path), "--select", "system.python")
    end = time.monotonic() + 60
    while not (tmp_path / "started").exists() and time.monotonic() < end and proc.poll() is None:
        time.sleep(0.05)
    assert (tmp_path / "started").exists()
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err and "Traceback" not in err


# -- issue 31 item 4: installed plugins run contained (core.plugin_host) --------------------------

FAULTS = Path(__file__).resolve().parent / "probe_plugins"


def _hostile(tmp_path, source: str, name: str = "hostile") -> dict:
    site = make_plugin(tmp_path / "site", f"envdoctor-{name}", f"envdoctor_{name}", source)
    return {"PYTHONPATH": os.pathsep.join([str(site), str(FAULTS)])}


CHECK = """
import ctypes, os, sys
from envdoctor import check, ok, fail

@check("hostile.bad", tags=("build",))
def bad():
    '''A check that misbehaves'''
    {body}
    return ok("survived")
"""


def _one(tmp_path, body: str, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    env = _hostile(tmp_path, CHECK.replace("{body}", body))
    r = run_cli("check", "--select", "system.python,hostile", "--format", "json", *extra, env=env)
    return r, _rows(r)


@pytest.mark.slow
def test_a_segfaulting_check_is_an_error_row_in_a_complete_report(tmp_path):
    r, rows = _one(tmp_path, "ctypes.string_at(0)")
    assert rows["hostile.bad"]["status"] == "error" and "SIGSEGV" in rows["hostile.bad"]["message"]
    assert rows["system.python"]["status"] == "pass"
    assert r.returncode == 1


@pytest.mark.slow
def test_os_exit_zero_in_a_check_is_an_error_not_exit_zero(tmp_path):
    r, rows = _one(tmp_path, "os._exit(0)")
    assert rows["hostile.bad"]["status"] == "error" and "exited with status 0" in rows["hostile.bad"]["message"]
    assert r.returncode == 1
    q = run_cli("check", "--select", "hostile", "--quiet", env=_hostile(tmp_path, CHECK.replace("{body}", "os._exit(0)")))
    assert q.returncode == 1 and q.stdout.strip() and "HEALTHY" not in q.stdout


@pytest.mark.slow
def test_os_exit_and_a_segfault_at_import_are_error_rows(tmp_path):
    for i, body in enumerate(("import os\nos._exit(0)\n", "import ctypes\nctypes.string_at(0)\n")):
        env = _hostile(tmp_path / str(i), body, name=f"dies{i}")
        r = run_cli("check", "--select", "system.python", "--format", "json", env=env)
        rows = _rows(r)
        row = rows[f"plugin.envdoctor-dies{i}"]
        assert row["status"] == "error" and f"envdoctor-dies{i}" in row["message"], row
        assert rows["system.python"]["status"] == "pass" and r.returncode == 1


@pytest.mark.slow
def test_a_plugin_that_hangs_at_import_does_not_hang_check_list_or_triage(tmp_path):
    env = {**_hostile(tmp_path, "import time\nwhile True:\n    time.sleep(1)\n"), "ENVDOCTOR_PLUGIN_LOAD_TIMEOUT": "3"}
    r = run_cli("check", "--select", "system.python", "--format", "json", env=env, timeout=120)
    row = _rows(r)["plugin.envdoctor-hostile"]
    assert row["status"] == "error" and "did not finish within 3s" in row["message"]
    assert r.returncode == 1
    listing = run_cli("list", env=env, timeout=120)
    assert listing.returncode == 0 and "system.python" in listing.stdout and "envdoctor-hostile" in listing.stdout
    paste = tmp_path / "paste.txt"
    paste.write_text("RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    tri = run_cli("triage", str(paste), env=env, timeout=120)
    assert tri.returncode in (0, 1) and tri.stdout.strip(), tri.stderr


@pytest.mark.slow
def test_stdout_spam_does_not_break_json(tmp_path):
    source = "print('spam at import ' * 100)\n" + CHECK.replace("{body}", "print('{not json'); sys.stdout.flush()")
    env = _hostile(tmp_path, source)
    r = run_cli("check", "--select", "system.python,hostile", "--format", "json", env=env)
    rows = _rows(r)  # parses
    assert rows["hostile.bad"]["status"] == "pass" and "spam" not in r.stdout and r.returncode == 0


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/stat") as f:  # a zombie is gone too
        return f.read().split(")")[-1].split()[0] == "Z"


@pytest.mark.slow
def test_a_daemon_forked_by_a_check_or_its_probe_body_does_not_outlive_the_run(tmp_path):
    in_check = tmp_path / "check.pid"
    in_body = tmp_path / "body.pid"
    source = f"""
from envdoctor import check, ok
import faults

@check("hostile.daemons", tags=("build",))
def daemons(probe):
    '''Leaves daemons behind'''
    faults.daemon({str(in_check)!r})
    probe.call("faults:daemon", {{"pid_file": {str(in_body)!r}}}, timeout=60)
    return ok("left two daemons")
"""
    r = run_cli("check", "--select", "hostile", "--format", "json", env=_hostile(tmp_path, source))
    assert _rows(r)["hostile.daemons"]["status"] == "pass", r.stdout
    pids = [int(p.read_text()) for p in (in_check, in_body)]
    assert all(_gone(p) for p in pids), pids


MONKEY = """
import envdoctor.core.redact as redact
import envdoctor.core.report as report
from envdoctor import check, fail
from envdoctor.core.report import Verdict

redact.protect = lambda rep, *a, **k: rep
redact.scrub_report = lambda rep, *a, **k: rep
report.exit_code = lambda *a, **k: 0
report.verdict = lambda *a, **k: Verdict.HEALTHY

@check("hostile.leak", tags=("build",))
def leak(env):
    '''Tries to leak a secret'''
    return fail("the token is " + env["MY_API_TOKEN"])
"""


@pytest.mark.slow
def test_monkeypatching_envdoctor_internals_reaches_neither_scrubbing_nor_the_verdict(tmp_path):
    env = {**_hostile(tmp_path, MONKEY), "MY_API_TOKEN": "s3cr3t-value-4f9a1c"}
    for fmt in ("json", "text"):
        r = run_cli("check", "--select", "system.python,hostile", "--format", fmt, env=env)
        assert "s3cr3t-value-4f9a1c" not in r.stdout + r.stderr
        assert r.returncode == 1 and "HEALTHY" not in r.stdout


@pytest.mark.slow
def test_no_plugins_and_the_autoload_switch_run_the_builtins_alone(tmp_path):
    marker = tmp_path / "imported"
    source = f"open({str(marker)!r}, 'w').close()\n" + CHECK.replace("{body}", "pass")
    env = _hostile(tmp_path, source)
    for extra, more in ((("--no-plugins",), {}), ((), {"ENVDOCTOR_DISABLE_PLUGIN_AUTOLOAD": "1"})):
        r = run_cli("check", "--select", "system.python", "--format", "json", *extra, env={**env, **more})
        assert set(_rows(r)) == {"system.python"} and r.returncode == 0
        listing = run_cli("list", *extra, env={**env, **more})
        assert "hostile" not in listing.stdout and "system.python" in listing.stdout
    assert not marker.exists()
    r = run_cli("list", env=env)
    assert "hostile.bad" in r.stdout and marker.exists()


@pytest.mark.slow
def test_the_parent_never_imports_an_installed_plugin(tmp_path):
    pids = tmp_path / "pids"
    source = f"import os\nopen({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n')\n" + CHECK.replace("{body}", "pass")
    env = {**os.environ, **_hostile(tmp_path, source)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "envdoctor", "check", "--select", "hostile", "--format", "json"], env=env, stdout=subprocess.PIPE, text=True
    )
    out, _ = proc.communicate(timeout=240)
    assert json.loads(out)["results"][0]["status"] == "pass"
    seen = {int(x) for x in pids.read_text().split()}
    assert seen and proc.pid not in seen


@pytest.mark.slow
def test_a_contained_plugin_runs_under_python_too(tmp_path):
    """--python boots probe workers in the examined interpreter, which has no envdoctor: a plugin's
    host stays in envdoctor's own (core.plugin_host._own), and its check sees the examined one."""
    target = tmp_path / "target"
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", "--without-pip", str(target)], check=True, timeout=120)
    source = "from envdoctor import check, ok\n\n@check('hostile.where', tags=('build',))\ndef where(interpreter):\n    '''Which interpreter'''\n    return ok(interpreter.executable)\n"
    r = run_cli(
        "check", "--select", "hostile", "--python", str(target / "bin" / "python"), "--format", "json", env=_hostile(tmp_path, source)
    )
    row = _rows(r)["hostile.where"]
    assert row["status"] == "pass" and row["message"] == str(target / "bin" / "python"), row
    assert r.returncode == 0


def test_the_reaper_sees_an_orphan_through_the_kernels_child_lists():
    # reap() skips psutil when /proc/self/task/*/children are all empty: an orphan re-parented
    # to the subreaper must show there, or the fast path would let it live
    import os
    import subprocess
    import sys

    if not os.path.exists(f"/proc/self/task/{os.getpid()}/children"):
        pytest.skip("this kernel keeps no child lists (CONFIG_PROC_CHILDREN): reap() walks /proc with psutil")
    code = (
        "import os, subprocess, sys, time\n"
        "from envdoctor.core import reaper\n"
        "assert reaper.install()\n"
        "assert reaper._no_children()\n"
        "subprocess.Popen(['sh', '-c', 'sleep 30 & exit 0']).wait()\n"  # the sleep is orphaned: ours now
        "time.sleep(0.2)\n"
        "assert not reaper._no_children()\n"
        "print(len(reaper.reap(grace=2)))\n"
        "assert reaper._no_children()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
