"""envdoctor under a real single-node Slurm (tests/components.py starts munged, slurmctld and
slurmd, and stops them by pid): slurm-health drains the node with envdoctor's reason when a check
fails, never when it could not judge, resumes only its own drains; it works as slurmd's
HealthCheckProgram and as a Prolog (exit code only); srun -n2 runs the distributed mode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.components import Slurm, wait_for
from tests.conftest import REPO

PLUGINS = REPO / "tests" / "fleet_plugins"
# The liveness profile (slurm-health's default) also requires a GPU, which this CPU machine lacks:
# the tests judge only the fault plugin's check.
CHECKS = ("--profile", "build", "--select", "fleetfault", "--checks-path", str(PLUGINS))
OURS = "envdoctor: fleetfault.marker: GPU 3 has fallen off the bus"


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    cluster = Slurm(tmp_path_factory.mktemp("slurm"))
    yield cluster
    cluster.stop()


@pytest.fixture
def marker(tmp_path, slurm):
    path = tmp_path / "fault"
    yield path
    slurm.reconfigure()
    slurm.resume()


def slurm_health(slurm: Slurm, marker: Path, *extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "envdoctor", "slurm-health", *CHECKS, *extra]
    env = {**slurm.env, "ENVDOCTOR_FAULT_FILE": str(marker), "SLURMD_NODENAME": slurm.node}
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_a_failing_check_drains_with_envdoctor_s_reason_and_healthy_resumes(slurm, marker):
    assert slurm_health(slurm, marker).returncode == 0 and slurm.state() == "idle"
    marker.write_text("fail:GPU 3 has fallen off the bus\n")
    res = slurm_health(slurm, marker)
    assert res.returncode == 1, res.stderr
    assert "drain" in slurm.state() and slurm.reason() == OURS
    assert "(recommended action: reset-gpu)" in res.stderr
    marker.unlink()
    res = slurm_health(slurm, marker)
    assert res.returncode == 0, res.stderr
    assert slurm.state() == "idle" and slurm.reason() == ""


@pytest.mark.slow
def test_could_not_judge_neither_drains_nor_resumes(slurm, marker):
    marker.write_text("error\n")
    res = slurm_health(slurm, marker)
    assert res.returncode == 2 and "could not judge: fleetfault.marker" in res.stderr
    assert slurm.state() == "idle"  # envdoctor could not run the check: no drain
    marker.write_text("fail:GPU 3 has fallen off the bus\n")
    slurm_health(slurm, marker)
    marker.write_text("error\n")
    assert slurm_health(slurm, marker).returncode == 2
    assert slurm.reason() == OURS  # nor a resume: not judged healthy


@pytest.mark.slow
def test_an_administrator_s_drain_is_left_alone(slurm, marker):
    slurm.drain("admin: swap the PSU")
    marker.write_text("fail:GPU 3 has fallen off the bus\n")
    assert slurm_health(slurm, marker).returncode == 1
    assert slurm.reason() == "admin: swap the PSU"  # not overwritten
    marker.unlink()
    assert slurm_health(slurm, marker).returncode == 0
    assert "drain" in slurm.state() and slurm.reason() == "admin: swap the PSU"  # not resumed


def _wrapper(slurm: Slurm, marker: Path, name: str, *extra: str) -> Path:
    script = slurm.root / name
    log = slurm.root / "log" / f"{name}.log"
    script.write_text(
        "#!/bin/sh\n"
        f"export SLURM_CONF={slurm.conf} ENVDOCTOR_FAULT_FILE={marker} PATH={os.environ['PATH']}\n"
        f"exec {sys.executable} -m envdoctor slurm-health {' '.join((*CHECKS, *extra))} >>{log} 2>&1\n"
    )
    script.chmod(0o755)
    return script


@pytest.mark.slow
def test_as_slurmd_s_health_check_program(slurm, marker):
    program = _wrapper(slurm, marker, "healthcheck.sh")
    conf = f"HealthCheckProgram={program}\nHealthCheckInterval=5\nHealthCheckNodeState=ANY\n"
    marker.write_text("fail:GPU 3 has fallen off the bus\n")
    slurm.reconfigure(conf)  # slurmd runs the program at reconfigure and every interval
    wait_for(lambda: slurm.reason() == OURS, 120, "slurmd's health check to drain the node")
    marker.unlink()
    wait_for(lambda: slurm.state() == "idle", 120, "slurmd's health check to resume the node")


@pytest.mark.slow
def test_as_prolog_only_a_failed_check_fails_the_job(slurm, marker):
    program = _wrapper(slurm, marker, "prolog.sh", "--prolog")
    slurm.reconfigure(f"Prolog={program}\n")
    marker.write_text("error\n")
    assert slurm.run("srun", "-N1", "hostname", check=False).returncode == 0  # could not judge: the job runs
    marker.write_text("fail:GPU 3 has fallen off the bus\n")
    assert slurm.run("srun", "-N1", "-t", "1", "hostname", check=False, timeout=120).returncode != 0
    wait_for(lambda: "Prolog error" in slurm.reason(), 60, "Slurm to drain the node for the failed prolog")
    marker.unlink()
    slurm.resume()
    assert slurm.run("srun", "-N1", "hostname", check=False, timeout=120).returncode == 0


@pytest.mark.slow
def test_srun_runs_the_distributed_mode_and_rank_0_writes_the_combined_report(slurm, tmp_path):
    out = tmp_path / "job.json"
    argv = [sys.executable, "-m", "envdoctor", "check", "--distributed", "--select", "system.python,distributed", "--json", str(out)]
    res = slurm.run("srun", "-N1", "-n2", *argv, check=False, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    report = json.loads(out.read_text())
    rows = {r["id"]: r for r in report["results"]}
    assert rows["distributed.allreduce"]["status"] == "pass", rows["distributed.allreduce"]
    launch = rows["distributed.launch"]
    assert launch["status"] == "pass" and "slurm" in launch["message"].lower() and "2" in launch["message"], launch


def test_the_decision_table_without_slurm():
    from envdoctor.adapters.judge import NodeState, Verdict
    from envdoctor.adapters.slurm import decide, reason_for

    bad = Verdict(NodeState.PROBLEM, "health.ecc", "GPU 1:\n2 uncorrectable ECC errors " + "é" * 200, "reset-gpu")
    reason = reason_for(bad)
    assert reason.startswith("envdoctor: health.ecc: GPU 1: 2 uncorrectable") and "\n" not in reason and len(reason.encode()) <= 120
    unknown, healthy = Verdict(NodeState.UNKNOWN, "smoke.matmul", "probe hung"), Verdict(NodeState.OK)
    assert decide(bad, False, "") == "drain"
    assert decide(bad, True, "admin: PSU") == ""  # someone else's drain stays as it is
    assert decide(bad, True, reason) == ""  # already drained for this: no churn
    assert decide(bad, True, "envdoctor: health.xid: Xid 79") == "drain"  # ours, reason brought up to date
    assert decide(unknown, False, "") == "" and decide(unknown, True, reason) == ""
    assert decide(healthy, True, reason) == "resume" and decide(healthy, True, "admin: PSU") == "" and decide(healthy, False, "") == ""
