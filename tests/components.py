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


def absent(reason: str) -> None:
    """Skip, saying why; under .ci/run (ENVDOCTOR_REQUIRE_COMPONENTS=1), where every component is
    installed, fail instead: a missing one there is a broken CI, not a reason to test less."""
    if os.environ.get("ENVDOCTOR_REQUIRE_COMPONENTS") == "1":
        pytest.fail(f"{reason}, but ENVDOCTOR_REQUIRE_COMPONENTS=1 (.ci/run) requires it")
    pytest.skip(reason)


def need(*commands: str, package: str) -> None:
    missing = [c for c in commands if not shutil.which(c)]
    if missing:
        absent(f"{', '.join(missing)} not installed (apt-get install {package}; .ci/run installs it)")


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


MUNGE_SOCKET = Path("/run/munge/munge.socket.2")
MUNGE_KEY = Path("/etc/munge/munge.key")


def munge_works() -> bool:
    if not MUNGE_SOCKET.exists() or not shutil.which("munge"):
        return False
    return subprocess.run("munge -n | unmunge", shell=True, capture_output=True, timeout=10).returncode == 0


class Munged:
    """munged as the recipe starts it (its key and socket are the system's: Slurm's auth/munge
    looks there); reused when one already answers, and then left running."""

    def __init__(self, log: Path) -> None:
        self.pid: int | None = None
        if munge_works():
            return
        if not MUNGE_KEY.exists() or MUNGE_KEY.stat().st_size == 0:
            subprocess.run(["mungekey", "--create", "--force"], check=True, capture_output=True, timeout=30)
            shutil.chown(MUNGE_KEY, "munge", "munge")
            MUNGE_KEY.chmod(0o400)
        Path("/run/munge").mkdir(exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")
        with open(log, "wb") as out:
            self._runner = subprocess.Popen(
                ["runuser", "-u", "munge", "--", "/usr/sbin/munged", "-F"], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        wait_for(munge_works, 20, "munged to answer")
        self.pid = int(Path("/run/munge/munged.pid").read_text().split()[0])

    def stop(self) -> None:
        if self.pid is not None:
            stop(self.pid)
            stop(self._runner)


class Slurm:
    """A single-node Slurm (slurmctld + slurmd, private SLURM_CONF, free ports), run by hand
    as ../shared/recipes/slurm-single-node.sh does. ``env`` is what its clients need."""

    def __init__(self, root: Path, extra_conf: str = "") -> None:
        need("slurmctld", "slurmd", "scontrol", "sinfo", "srun", "munged", package="slurm-wlm munge")
        if os.geteuid() != 0:
            absent("Slurm's daemons need root here (CI runs as root)")
        self.root = root
        for d in ("spool/ctld", "spool/d", "log"):
            (root / d).mkdir(parents=True, exist_ok=True)
        self.node = socket.gethostname().split(".")[0]
        self.conf = root / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}
        self._base = self._conf_text()
        self.write_conf(extra_conf)
        self.munged = Munged(root / "log" / "munged.out")
        self.procs = []
        try:
            for argv, name in ((["slurmctld", "-D", "-i"], "slurmctld"), (["slurmd", "-D"], "slurmd")):
                out = open(root / "log" / f"{name}.out", "wb")  # noqa: SIM115 - the daemon's, for its life
                self.procs.append(subprocess.Popen(argv, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True))
                out.close()
            wait_for(lambda: self.state() in ("idle", "drained", "draining"), 60, "the node to come up")
        except BaseException:
            self.stop()
            raise

    def _conf_text(self) -> str:
        r = self.root
        return f"""ClusterName=envdoctor-ci
SlurmctldHost={self.node}
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation={r}/spool/ctld
SlurmdSpoolDir={r}/spool/d
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName={self.node} CPUs={os.cpu_count()} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""

    def write_conf(self, extra: str = "") -> None:
        self.conf.write_text(self._base + extra)

    def reconfigure(self, extra: str = "") -> None:
        self.write_conf(extra)
        self.run("scontrol", "reconfigure")

    def run(self, *argv: str, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess:
        res = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and res.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} exited {res.returncode}: {res.stderr}")
        return res

    def state(self) -> str:
        res = self.run("sinfo", "-h", "-N", "-n", self.node, "-o", "%T", check=False, timeout=20)
        return res.stdout.strip().rstrip("*~#!%$@^-") if res.returncode == 0 else ""

    def reason(self) -> str:
        res = self.run("sinfo", "-h", "-N", "-n", self.node, "-o", "%E", timeout=20)
        return "" if res.stdout.strip() == "none" else res.stdout.strip()

    def drain(self, reason: str) -> None:
        self.run("scontrol", "update", f"nodename={self.node}", "state=drain", f"reason={reason}")

    def resume(self) -> None:
        if "drain" in self.state():
            self.run("scontrol", "update", f"nodename={self.node}", "state=resume")
        wait_for(lambda: self.state() == "idle", 30, "the node to be idle")

    def stop(self) -> None:
        for p in reversed(self.procs):
            stop(p, timeout=20)
        self.munged.stop()
