"""Real components the fleet tests start and stop by pid: node_exporter's textfile collector and a
single-node Slurm (munged, slurmctld, slurmd), as ../shared/recipes/ does by hand. Each is
installed from Debian's packages by .ci/run; where one is absent its tests skip saying so."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

NODE_EXPORTER = "prometheus-node-exporter"


def need(*commands: str, package: str) -> None:
    missing = [c for c in commands if not shutil.which(c)]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (apt-get install {package}; .ci/run installs it)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc: subprocess.Popen | int, timeout: float = 15.0) -> None:
    """SIGTERM one process we started (by its pid), then SIGKILL if it outlives ``timeout``."""
    pid = proc if isinstance(proc, int) else proc.pid
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if isinstance(proc, subprocess.Popen):
            if proc.poll() is not None:
                return
        else:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if isinstance(proc, subprocess.Popen):
        proc.wait(5)


def wait_for(predicate, timeout: float, what: str, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")


def scrape(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:  # noqa: S310 - 127.0.0.1 only
            return r.read().decode()
    except OSError:
        return None


class NodeExporter:
    """node_exporter with only the textfile collector, on 127.0.0.1 and a free port."""

    def __init__(self, directory: Path, log: Path) -> None:
        need(NODE_EXPORTER, package="prometheus-node-exporter")
        self.url = f"http://127.0.0.1:{free_port()}/metrics"
        argv = [
            NODE_EXPORTER,
            f"--web.listen-address={self.url.split('/')[2]}",
            f"--collector.textfile.directory={directory}",
            "--collector.disable-defaults",
            "--collector.textfile",
        ]
        self._log = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(lambda: scrape(self.url) is not None or self.proc.poll() is not None, 20, "node_exporter to listen")
        if self.proc.poll() is not None:
            raise AssertionError(f"node_exporter exited: {log.read_text()[-2000:]}")

    def metrics(self) -> str:
        return scrape(self.url) or ""

    def stop(self) -> None:
        stop(self.proc)
        self._log.close()
