"""`envdoctor fix` for real: a throwaway venv whose tinypkg is at version 1, a plugin check that
fails unless it is at 2 and whose fix is `pip install tinypkg==2 --no-index --find-links WHEELS`.
Plan only, apply + re-check, undo to the identical distribution list, a half-way failure that
rolls back, the lock, system and driver/reboot fixes, a corrupt journal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.fixvenv import dist_list, make_venv, tree, wheel

PLUGIN = '''
import os
from envdoctor import Fix, check, fail, ok

def _pip(interpreter, env, *extra):
    return Fix((interpreter.executable, "-m", "pip", "install", "--no-index", "--find-links", env["TINY_WHEELS"],
                "tinypkg==2", *extra), scope="venv")

@check("tiny.version")
def version(dists, interpreter, env):
    """tinypkg is at version 2"""
    v = (dists.get("tinypkg") or {}).get("version")
    if v == "2":
        return ok("tinypkg 2")
    return fail(f"tinypkg is {v}, needs 2", "install tinypkg 2", fixes=[_pip(interpreter, env)])

@check("tiny.halfway")
def halfway(dists, interpreter, env):
    """tinypkg 2, by a fix whose second command fails"""
    v = (dists.get("tinypkg") or {}).get("version")
    if v == "2":
        return ok("tinypkg 2")
    broken = Fix((interpreter.executable, "-c", "raise SystemExit('second command fails')"), scope="venv")
    return fail(f"tinypkg is {v}, needs 2", "install tinypkg 2", fixes=[_pip(interpreter, env, "tinydep==1"), broken])

def _waiter(interpreter, d):
    code = ("import os,time,sys; d=sys.argv[1]; open(os.path.join(d,'inside'),'w').close()\\n"
            "while not os.path.exists(os.path.join(d,'go')): time.sleep(0.05)\\n"
            "open(os.path.join(d,'done'),'w').close()")
    return Fix((interpreter.executable, "-c", code, d), scope="venv")

@check("tiny.wait")
def wait(interpreter, env):
    """a fix that waits for the test (the lock)"""
    if os.path.exists(os.path.join(env["TINY_DIR"], "done")):
        return ok("done")
    return fail("not done", "wait", fixes=[_waiter(interpreter, env["TINY_DIR"])])

@check("tiny.interrupt")
def interrupt(dists, interpreter, env):
    """tinypkg 2, by a fix interrupted in its second command"""
    v = (dists.get("tinypkg") or {}).get("version")
    return fail(f"tinypkg is {v}", "install 2", fixes=[_pip(interpreter, env), _waiter(interpreter, env["TINY_DIR"])])

@check("tiny.bytecode")
def bytecode(interpreter, env):
    """src/a.py has bytecode"""
    import glob
    src = os.path.join(env["TINY_DIR"], "src")
    if glob.glob(os.path.join(src, "__pycache__", "a.*.pyc")):
        return ok("compiled")
    return fail("a.py has no bytecode", "compile it", fixes=[Fix((interpreter.executable, "-m", "compileall", "-q", "-j", "0", src), scope="venv")])

@check("tiny.secret")
def secret(interpreter):
    """a fix whose index URL holds a password"""
    url = "https://me:hf_Qx7Lk2Vb9Zp4Rt8Wm3Ns6Yc1Hd5Jf0Ga@example.invalid/simple"
    return fail("needs a private index", "use it", fixes=[Fix((interpreter.executable, "-m", "pip", "install", "--index-url", url, "x"), scope="venv")])

@check("tiny.conflict")
def conflict(dists, interpreter, env):
    """tinypkg 2, by a fix that asks pip for two things that conflict"""
    v = (dists.get("tinypkg") or {}).get("version")
    if v == "2":
        return ok("tinypkg 2")
    return fail(f"tinypkg is {v}, needs 2", "install 2", fixes=[_pip(interpreter, env, "tinyold==1")])

@check("tiny.stubborn")
def stubborn(interpreter):
    """a fix that runs and does not help"""
    return fail("still broken", "try this", fixes=[Fix((interpreter.executable, "-c", "pass"), scope="venv")])

@check("tiny.system")
def system(env):
    """fixes that are not the doctor's to run"""
    d = env["TINY_DIR"]
    if os.path.exists(os.path.join(d, "system-ran")):
        return ok("system fix ran")
    return fail("needs the system", "run them", fixes=[
        Fix(("touch", os.path.join(d, "system-ran")), scope="system"),
        Fix(("touch", os.path.join(d, "venv-ran")), scope="venv"),  # not the venv's interpreter: the system's
        Fix(("reboot",), scope="system", needs_root=True),
        Fix(("apt-get", "install", "-y", "nvidia-driver-550"), scope="system", needs_root=True),
        Fix(("export", "TINY_VAR=1"), scope="environment"),
        Fix(("unset", "TINY_OLD"), scope="environment"),
    ])
'''


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("fix")
    wheels = root / "wheels"
    wheels.mkdir()
    for name, v in (("tinypkg", "1"), ("tinypkg", "2"), ("tinydep", "1")):
        wheel(wheels, name, v)
    wheel(wheels, "tinyold", "1", requires=("tinypkg==1",))  # cannot be installed with tinypkg 2
    python = make_venv(root, "--no-index", "--find-links", wheels, "tinypkg==1")
    plugins = root / "plugins"
    plugins.mkdir()
    (plugins / "tinychecks.py").write_text(textwrap.dedent(PLUGIN))
    return root, python


@pytest.fixture
def fix(world, tmp_path):
    root, python = world
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "TINY_WHEELS": str(root / "wheels"), "TINY_DIR": str(tmp_path)}

    def run(*args, extra_env=None):
        base = ("fix", "--python", str(python), "--checks-path", str(root / "plugins"))
        return run_cli(*base, *args, env={**env, **(extra_env or {})})

    yield run, python
    # leave the shared venv as the next test expects it
    subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "-q", "tinydep"], capture_output=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(root / "wheels"), "tinypkg==1"], capture_output=True
    )


def tiny_version(python: Path) -> str | None:
    return dict(dist_list(python)).get("tinypkg")


@pytest.mark.slow
def test_plan_without_yes_changes_nothing(fix):
    run, python = fix
    before = dist_list(python)
    r = run("--select", "tiny.version")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "tiny.version: tinypkg is 1, needs 2" in r.stdout
    assert "tinypkg==2" in r.stdout and "(venv; runs)" in r.stdout
    assert "Nothing changed: not a terminal" in r.stdout
    assert dist_list(python) == before


@pytest.mark.slow
def test_plan_hides_secrets(fix):
    run, _ = fix
    r = run("--select", "tiny.secret")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "--index-url" in r.stdout and "Qx7Lk2Vb9Zp4" not in r.stdout + r.stderr


def _yes(fix, check: str, code: int):
    """(run, python, the distribution list before, the result) of `fix --select CHECK --yes`, which exits ``code``."""
    run, python = fix
    before = dist_list(python)
    r = run("--select", check, "--yes")
    assert r.returncode == code, r.stdout + r.stderr
    return run, python, before, r


@pytest.mark.slow
def test_yes_applies_rechecks_and_undo_restores(fix):
    run, python, before, r = _yes(fix, "tiny.version", 0)
    assert "fixed        tiny.version: tinypkg 2" in r.stdout
    assert tiny_version(python) == "2"
    u = run("--select", "tiny.version", "--undo")
    assert u.returncode == 0, u.stdout + u.stderr
    assert tiny_version(python) == "1"
    assert dist_list(python) == before  # the identical distribution list
    assert "fail   tiny.version: tinypkg is 1, needs 2" in u.stdout  # the re-check fails again
    again = run("--select", "tiny.version", "--undo")
    assert again.returncode == 2 and "nothing to undo" in again.stderr


@pytest.mark.slow
def test_half_way_failure_rolls_back(fix):
    run, python, before, r = _yes(fix, "tiny.halfway", 1)
    assert "second command fails; rolled back" in r.stdout
    assert "not fixed    tiny.halfway" in r.stdout
    assert dist_list(python) == before  # tinypkg back at 1, tinydep gone again
    u = run("--select", "tiny.halfway", "--undo")
    assert u.returncode == 2 and "nothing to undo" in u.stderr  # a rolled-back run leaves nothing to undo


@pytest.mark.slow
def test_bytecode_fix_is_undone_file_by_file(fix, tmp_path):
    """compileall creates a.pyc and replaces the stale b.pyc; undo removes the one and puts the other back, byte for byte."""
    run, _ = fix
    src = tmp_path / "src"
    (src / "__pycache__").mkdir(parents=True)
    (src / "a.py").write_text("A = 1\n")
    (src / "b.py").write_text("B = 2\n")
    (src / "sub").mkdir()
    (src / "sub" / "c.py").write_text("C = 3\n")  # its __pycache__ is created, and removed by undo
    tag = sys.implementation.cache_tag
    (src / "__pycache__" / f"b.{tag}.pyc").write_bytes(b"stale bytecode of an older b.py")
    before = tree(src, exact=True)
    r = run("--select", "tiny.bytecode", "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    after = tree(src, exact=True)
    assert f"__pycache__/a.{tag}.pyc" in after and f"sub/__pycache__/c.{tag}.pyc" in after
    assert after[f"__pycache__/b.{tag}.pyc"] != before[f"__pycache__/b.{tag}.pyc"]
    u = run("--select", "tiny.bytecode", "--undo")
    assert u.returncode == 0, u.stdout + u.stderr
    assert tree(src, exact=True) == before
    assert not any((tmp_path / "state" / "envdoctor").glob("*.files/*"))  # the backups went with the undone run
    assert "fail   tiny.bytecode: a.py has no bytecode" in u.stdout


@pytest.mark.slow
def test_pip_refusing_a_conflict_changes_nothing(fix, tmp_path):
    run, python, before, r = _yes(fix, "tiny.conflict", 1)
    (line,) = [x for x in r.stdout.splitlines() if x.startswith("  not fixed    tiny.conflict: ")]
    assert "python exited with 1: " in line and line.endswith("; rolled back"), r.stdout
    assert "Traceback" not in r.stdout + r.stderr
    assert dist_list(python) == before
    u = run("--select", "tiny.conflict", "--undo")
    assert u.returncode == 2 and "nothing to undo" in u.stderr  # nothing was left to undo


@pytest.mark.slow
def test_a_fix_that_does_not_help_is_reported_as_still_failing(fix):
    run, _ = fix
    r = run("--select", "tiny.stubborn", "--yes")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "still fail   tiny.stubborn: still broken (its fix ran; the check still does not pass)" in r.stdout
    assert "fixed" not in r.stdout


def _start(python: Path, tmp_path: Path, *args: str) -> subprocess.Popen:
    """A fix run in the background, with the state directory of ``tmp_path``; returns once its waiting fix is inside."""
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "TINY_DIR": str(tmp_path)}
    env["TINY_WHEELS"] = str(python.parents[2] / "wheels")
    cmd = [sys.executable, "-m", "envdoctor", "fix", "--python", str(python), "--checks-path", str(python.parents[2] / "plugins"), *args]
    # SIGINT as a terminal's foreground job has it, whatever this test process inherited: a script's
    # background job ignores INT, and an ignored INT stays ignored in envdoctor (by design).
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    for _ in range(4800):
        if (tmp_path / "inside").exists() or proc.poll() is not None:
            break
        time.sleep(0.05)
    assert (tmp_path / "inside").exists(), proc.communicate()
    return proc


@pytest.mark.slow
def test_ctrl_c_half_way_rolls_back(fix, tmp_path):
    run, python = fix
    before = dist_list(python)
    proc = _start(python, tmp_path, "--select", "tiny.interrupt", "--yes")
    assert tiny_version(python) == "2"  # the first command has run
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 130, out + err
    assert "envdoctor: interrupted" in err and "Traceback" not in err
    assert dist_list(python) == before
    (journal,) = (tmp_path / "state" / "envdoctor").glob("*.json")
    assert json.loads(journal.read_text())["runs"] == []  # rolled back: nothing left to undo


@pytest.mark.slow
def test_second_run_is_refused_by_the_lock(fix, tmp_path):
    run, python = fix
    first = _start(python, tmp_path, "--select", "tiny.wait", "--yes")
    try:
        second = run("--select", "tiny.version", "--yes")
        assert second.returncode == 2, second.stdout + second.stderr
        venv_dir = os.path.realpath(python.parents[1])
        assert f"another fix run holds the lock for {venv_dir} (pid {first.pid}," in second.stderr
        assert tiny_version(python) == "1"  # the refused run changed nothing
    finally:
        (tmp_path / "go").touch()
        out, err = first.communicate(timeout=240)
    assert first.returncode == 0, out + err


@pytest.mark.slow
def test_system_fixes_need_allow_system_and_reboot_never_runs(fix, tmp_path):
    run, _ = fix
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for prog in ("reboot", "apt-get"):
        (bin_dir / prog).write_text(f"#!/bin/sh\ntouch {tmp_path}/{prog}-ran\n")
        (bin_dir / prog).chmod(0o755)
    path = {"PATH": f"{bin_dir}:{os.environ['PATH']}"}
    r = run("--select", "tiny.system", "--yes", extra_env=path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "(system; runs only with --allow-system)" in r.stdout
    assert "printed only, never run by envdoctor" in r.stdout
    assert "(environment; a fix cannot change your shell: eval the line yourself)" in r.stdout  # unset TINY_OLD
    assert "(environment; runs: written to " in r.stdout and "for you to source):\n  export TINY_VAR=1\n" in r.stdout
    assert "eval them there yourself):\n  unset TINY_OLD\n" in r.stdout
    (lines,) = (tmp_path / "state" / "envdoctor").glob("*.env.sh")  # the export is written for the user to source
    assert lines.read_text().splitlines()[1:] == ["export TINY_VAR=1"] and "In your shell: source " in r.stdout
    lines.write_text(lines.read_text() + "export TINY_MINE=2\n")  # the user's own line
    edited = lines.read_bytes()
    assert not (tmp_path / "system-ran").exists()
    assert "(venv; not run by " in r.stdout and not (tmp_path / "venv-ran").exists()
    r = run("--select", "tiny.system", "--yes", "--allow-system", extra_env=path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "system-ran").exists() and (tmp_path / "venv-ran").exists()
    assert not (tmp_path / "reboot-ran").exists() and not (tmp_path / "apt-get-ran").exists()
    assert lines.read_text().splitlines()[1:] == ["export TINY_MINE=2", "export TINY_VAR=1"]  # TINY_VAR replaced, not repeated
    u = run("--select", "tiny.system", "--undo")
    assert u.returncode == 1, u.stdout + u.stderr  # a system command is not the journal's to revert
    assert f"Not undone (a system command; revert it yourself): touch {tmp_path}/system-ran" in u.stdout
    assert lines.read_bytes() == edited  # the file that run replaced, back from its backup


@pytest.mark.slow
def test_corrupt_journal_is_one_line_exit_2(fix, tmp_path):
    run, python = fix
    r = run("--select", "tiny.version", "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    (journal,) = (tmp_path / "state" / "envdoctor").glob("*.json")
    (entry,) = json.loads(journal.read_text())["runs"][-1]["entries"]
    assert entry["planned"] == [{"tinypkg": "2"}]  # pip's --dry-run --report, recorded before the change
    assert entry["before"]["tinypkg"] == "1" and entry["after"]["tinypkg"] == "2" and entry["state"] == "done"
    data = json.loads(journal.read_text())
    journal.write_text("{not json")
    u = run("--select", "tiny.version", "--undo")
    assert u.returncode == 2
    assert u.stderr.count("\n") == 1 and "is corrupt" in u.stderr and "Traceback" not in u.stderr
    journal.write_text(json.dumps({**data, "prefix": "/elsewhere/venv"}))  # copied from another environment
    u = run("--select", "tiny.version", "--undo")
    assert u.returncode == 2 and "records another environment ('/elsewhere/venv'" in u.stderr, u.stderr
    assert tiny_version(python) == "2"  # neither touched the environment


@pytest.mark.slow
def test_bad_input_is_one_line_exit_2(fix, tmp_path):
    run, _ = fix
    (tmp_path / "r.json").write_text("not a report")
    r = run("--from", str(tmp_path / "r.json"))
    assert r.returncode == 2 and "r.json: is not valid JSON" in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = run("--undo", "--from", str(tmp_path / "r.json"))
    assert r.returncode == 2 and "takes no --from report" in r.stderr
    r = run("--select", "tiny.no_such_fix", "--yes")  # an unknown check id: nothing planned, nothing run
    assert r.returncode == 2 and "tiny.no_such_fix" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert r.stdout == "" and not (tmp_path / "state").exists()


@pytest.mark.slow
def test_report_from_another_environment_is_plan_only(fix, tmp_path):
    run, python = fix
    report = tmp_path / "r.json"
    r = run_cli(
        "check",
        "--python",
        str(python),
        "--checks-path",
        str(Path(str(python)).parents[2] / "plugins"),
        "--select",
        "tiny.version",
        "--json",
        str(report),
        env={"TINY_WHEELS": "/x", "TINY_DIR": str(tmp_path)},
    )
    assert r.returncode == 1, r.stdout + r.stderr
    data = json.loads(report.read_text())
    data["platform"]["hostname"] = "elsewhere\x1b[31m"
    report.write_text(json.dumps(data))
    f = run("--select", "tiny.version", "--from", str(report), "--yes")
    assert f.returncode == 2, f.stdout + f.stderr
    assert "not this environment: plan only" in f.stdout and "\x1b" not in f.stdout
    assert tiny_version(python) == "1"


def _on_a_terminal(python: Path, tmp_path: Path, answer: bytes) -> tuple[int, str]:
    """`envdoctor fix` with a pseudo-terminal for its standard streams, given ``answer`` when it asks."""
    import pty

    env = {
        **os.environ,
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "TINY_DIR": str(tmp_path),
        "TINY_WHEELS": str(python.parents[2] / "wheels"),
    }
    main, child = pty.openpty()
    cmd = [sys.executable, "-m", "envdoctor", "fix", "--python", str(python), "--checks-path", str(python.parents[2] / "plugins")]
    proc = subprocess.Popen([*cmd, "--select", "tiny.version"], env=env, stdin=child, stdout=child, stderr=child)
    os.close(child)
    out = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
        if b"[y/N]" in out and answer:
            os.write(main, answer)
            answer = b""
    os.close(main)
    return proc.wait(timeout=240), out.decode(errors="replace")


@pytest.mark.slow
def test_on_a_terminal_it_asks_once(fix, tmp_path):
    _, python = fix
    code, out = _on_a_terminal(python, tmp_path, b"n\n")
    assert out.count("Run these 1 command(s)? [y/N]") == 1 and code == 1, out
    assert tiny_version(python) == "1"
    code, out = _on_a_terminal(python, tmp_path, b"y\n")
    assert code == 0 and "fixed        tiny.version: tinypkg 2" in out, out
    assert tiny_version(python) == "2"
