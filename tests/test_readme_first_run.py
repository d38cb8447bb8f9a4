"""The README's first run (a fresh venv, no torch) is what envdoctor prints there: exit 1, one
failure saying torch is not installed, with the command that installs it."""

from __future__ import annotations

import re
import venv
from pathlib import Path

import pytest

from tests.conftest import run_cli

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _first_run_block() -> str:
    section = README.split("**The first run, in a fresh venv**", 1)[1]
    return section.split("```", 2)[1]


@pytest.mark.slow
def test_readme_first_run_matches_a_run_without_torch(tmp_path):
    fresh = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=False).create(fresh)
    python = str(fresh / "bin" / "python")
    done = run_cli("check", "--python", python)
    assert done.returncode == 1, done.stdout + done.stderr
    shown = _first_run_block().replace("/tmp/fresh/bin/python3", "PY")
    out = re.sub(re.escape(python) + r"3?", "PY", done.stdout)
    for line in shown.splitlines():
        if line.startswith(("  ✗", "      →")):
            assert line in out, (line, out)
    assert re.search(r"^PROBLEMS FOUND: \d+ passed, 1 failed, \d+ skipped in", out, re.M), out
    assert "$ echo $?\n1" in shown
