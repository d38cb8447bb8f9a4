"""Shared test helpers: run the real CLI in a subprocess, build real plugin distributions."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def run_cli(*args: str, env: dict | None = None, timeout: float = 240, cwd: str | None = None) -> subprocess.CompletedProcess:
    """Run `python -m envdoctor ARGS` as a user would, with the given extra environment."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("NO_COLOR", None) if env is not None and "NO_COLOR" not in env else None
    return subprocess.run(
        [sys.executable, "-m", "envdoctor", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        cwd=cwd,
    )


def make_plugin(root: Path, dist: str, module: str, source: str, *, entry: str | None = None, version: str = "1.0") -> Path:
    """A real installed distribution (dist-info with entry_points.txt) under ``root``, which
    the caller puts on PYTHONPATH: importlib.metadata finds it like any pip-installed one."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[envdoctor.checks]\n{entry or module} = {module}\n")
    (info / "RECORD").write_text("")
    return root


@pytest.fixture
def cli():
    return run_cli
