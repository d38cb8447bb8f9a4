"""Shared test helpers: run the real CLI in a subprocess or in this process, start one to signal
(and kill all it started, whatever the test's outcome), build real plugin distributions."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import psutil
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


@functools.lru_cache(maxsize=1)
def startup_s() -> float:
    """What a minimal real run (`envdoctor check --select system.python`) takes on this machine now:
    measured once, not assumed, so that a bound on a run's wall time holds on a loaded machine too."""
    t = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "envdoctor", "check", "--select", "system.python", "--format", "json"], capture_output=True, timeout=300
    )
    return time.monotonic() - t


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


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def marked(marker: str) -> list[psutil.Process]:
    """Every process whose environment carries ``marker`` (each descendant of a run inherits it)."""
    found = []
    for p in psutil.process_iter():
        try:
            if p.environ().get("ENVDOCTOR_TEST_MARKER") == marker:
                found.append(p)
        except (psutil.Error, OSError):
            continue
    return found


def _as_in_a_terminal(ignored: tuple[int, ...]):
    """A preexec_fn: a process group of its own, and the stop signals as a terminal's foreground
    job has them (the default action), whatever this test process inherited (a script's
    background job ignores INT); those in ``ignored`` ignored (as ``nohup`` leaves HUP)."""

    def preexec() -> None:
        os.setpgid(0, 0)
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN if sig in ignored else signal.SIG_DFL)

    return preexec


def kill_everything(proc: subprocess.Popen, marker: str) -> None:
    """SIGKILL the run's process group and every group its marked descendants lead (probe
    workers start sessions of their own); the test's own group is never signalled whole."""
    groups = {proc.pid}
    for p in marked(marker):
        try:
            groups.add(os.getpgid(p.pid))
        except OSError:
            continue
    for pgid in groups - {os.getpgrp()}:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
    for p in marked(marker):  # one in the test's own group, if any
        try:
            p.kill()
        except psutil.Error:
            pass
    if proc.poll() is None:
        proc.kill()
    try:
        proc.communicate(timeout=30)  # reaped, its pipes closed
    except (ValueError, subprocess.TimeoutExpired):
        pass  # already read by the test


@pytest.fixture
def spawn():
    """``spawn(*args, env=None, ignore=())``: a started ``python -m envdoctor ARGS`` to signal
    (see _as_in_a_terminal), its output piped as text. Whatever it started is killed when the
    test ends, passed or failed: a failing signal test leaves no run and no ``sleep 1000``."""
    started: list[tuple[subprocess.Popen, str]] = []

    def start(*args: str, env: dict | None = None, ignore: tuple[int, ...] = ()) -> subprocess.Popen:
        env = dict(os.environ if env is None else env)
        marker = env.setdefault("ENVDOCTOR_TEST_MARKER", uuid.uuid4().hex)
        proc = subprocess.Popen(
            [sys.executable, "-m", "envdoctor", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            preexec_fn=_as_in_a_terminal(ignore),
        )
        started.append((proc, marker))
        return proc

    yield start
    for proc, marker in started:
        kill_everything(proc, marker)


def _plugin_eps(site: Path) -> list:
    """The ``envdoctor.checks`` entry points of the distributions under ``site`` (make_plugin)."""
    import importlib.metadata as md

    from envdoctor.core.registry import GROUP

    return [ep for d in md.distributions(path=[str(site)]) for ep in d.entry_points if ep.group == GROUP]


@pytest.fixture
def cli_inproc(monkeypatch):
    """`envdoctor ARGS` in this process, its output captured by click's CliRunner, for tests that
    need only discovery and the report (not the real process: its signals, its exit status as a
    process, containment stay with :func:`run_cli`). The exit code is main's own mapping (usage 2,
    internal 3...). ``site``: a directory of plugin distributions, given to discover (eps=) and, on
    PYTHONPATH, to the children that host them; without it no installed plugin is loaded."""
    from click.testing import CliRunner

    from envdoctor import cli as cli_mod
    from envdoctor.core import registry

    discover = registry.discover

    def run(*args: str, site: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
        eps = _plugin_eps(site) if site is not None else []
        monkeypatch.setattr(registry, "discover", lambda *a, **k: discover(*a, **{"eps": eps, **k}))
        if site is not None:
            monkeypatch.setenv("PYTHONPATH", str(site))
        with CliRunner().isolation(env=env) as (out, err, _):
            try:
                code = int(cli_mod._run(list(args)))  # main less its process-wide signals and reaper
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
        return subprocess.CompletedProcess(list(args), code, out.getvalue().decode(), err.getvalue().decode())

    return run
