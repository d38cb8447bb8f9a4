"""Every verification script parses and can fail: a GPU rerun must answer pass/fail.

A static check: each shell script under verification/ (the archive aside) is `bash -n` clean and
has a failure exit path (the shared `finish`/`want`/`expect` of faults.sh, or an `exit` with a
non-zero status); each Python script exits with a status it computed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

VERIFICATION = Path(__file__).resolve().parent.parent / "verification"
SHELL = sorted([*VERIFICATION.glob("*.sh"), *VERIFICATION.glob("scripts/*.sh")])
PYTHON = sorted([*VERIFICATION.glob("*.py"), *VERIFICATION.glob("scripts/*.py")])
FAILS = re.compile(r"^\s*finish\s*$|exit \$\(\(|exit [1-9]|return [1-9]", re.M)
KIT_ASSERTS = ("triaged", "own_paste_is_clean")  # faults.sh's helpers that assert through `expect`
ASSERTS = re.compile(r"(?:^|;)\s*(?:expect|want|assert|" + "|".join(KIT_ASSERTS) + r")(?: |$)|\bfails=\$\(\(fails", re.M)


def test_there_are_scripts_to_check():
    assert len(SHELL) >= 10 and PYTHON


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("script", SHELL, ids=lambda p: p.relative_to(VERIFICATION).as_posix())
def test_shell_script_parses(script):
    proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("script", SHELL, ids=lambda p: p.relative_to(VERIFICATION).as_posix())
def test_shell_script_asserts_and_can_fail(script):
    text = script.read_text(encoding="utf-8")
    assert FAILS.search(text), f"{script.name}: no failure exit path (finish, or exit with a non-zero status)"
    if script.name != "faults.sh":
        assert ASSERTS.search(text), f"{script.name}: asserts nothing (no expect/want/assert, no failure count)"


def test_the_kits_asserting_helpers_assert():
    # a script may assert through these alone: each must be the kit's and end in its `expect`
    kit = (VERIFICATION / "faults.sh").read_text(encoding="utf-8")
    for name in KIT_ASSERTS:
        body = re.search(rf"^{name}\(\) \{{.*?^\}}", kit, re.M | re.S)
        assert body and re.search(r"^\s*expect ", body.group(0), re.M), name


@pytest.mark.parametrize("script", PYTHON, ids=lambda p: p.relative_to(VERIFICATION).as_posix())
def test_python_script_exits_with_its_verdict(script):
    text = script.read_text(encoding="utf-8")
    assert re.search(r"sys\.exit\(|raise SystemExit", text), f"{script.name}: never exits with a status"


def test_faults_kit_finish_exits_one_after_a_failure(tmp_path):
    kit = VERIFICATION / "faults.sh"
    body = f". {kit}\nexpect ok 0 'hi' -- echo hi\nsaw '^hi$'\nsaw 'ho'\nexpect bad 0 'never' -- echo hi\nwant 0 after-true\nfalse; want 0 after-false\nfinish\n"
    proc = subprocess.run(["bash", "-c", body], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "!! FAIL bad" in proc.stdout and "!! FAIL after-false" in proc.stdout
    assert "!! FAIL: no line matches /ho/" in proc.stdout and "ok: saw /^hi$/" in proc.stdout
    assert "FAIL ok" not in proc.stdout and "failures: 3" in proc.stdout
    ok = subprocess.run(["bash", "-c", f". {kit}\nexpect ok 0 'hi' -- echo hi\nfinish\n"], capture_output=True, text=True)
    assert ok.returncode == 0 and "failures: 0" in ok.stdout
