"""Distributed mode: launcher detection, merging, the checks' judgement, and real torchrun runs.

The torchrun tests start two real ranks on 127.0.0.1 with gloo on CPU (free port chosen at test
time). Each selects one cheap local check so the run costs little more than the torch imports.
"""

from __future__ import annotations

import functools
import json
import math
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from envdoctor import Unavailable
from envdoctor.core.api import Status
from envdoctor.core.launch import detect_launch, first_slurm_host
from envdoctor.modes.distributed import merge_results
from envdoctor.testing import gather, run_check
from envdoctor_checks.distributed import allreduce, bandwidth, dist_launch, launch, rendezvous
from tests.conftest import run_cli

# -- launcher detection --------------------------------------------------------------------------

TORCHRUN = {
    "RANK": "3",
    "WORLD_SIZE": "8",
    "LOCAL_RANK": "3",
    "LOCAL_WORLD_SIZE": "4",
    "MASTER_ADDR": "node-a",
    "MASTER_PORT": "29400",
    "TORCHELASTIC_RUN_ID": "job7",
    "TORCHELASTIC_USE_AGENT_STORE": "True",
}


def test_torchrun_variables_give_rank_world_and_agent_store():
    got = detect_launch(TORCHRUN)
    assert (got.launcher, got.rank, got.world_size, got.local_rank, got.master_addr, got.master_port) == (
        "torchrun",
        3,
        8,
        3,
        "node-a",
        29400,
    )
    assert got.agent_store and not got.problems and not got.coordinator


def test_slurm_variables_are_used_when_torchrun_s_are_absent():
    env = {
        "SLURM_PROCID": "5",
        "SLURM_NTASKS": "16",
        "SLURM_LOCALID": "1",
        "SLURM_JOB_NODELIST": "gpu[07-10,12],login1",
        "SLURM_JOB_ID": "4242",
    }
    got = detect_launch(env)
    assert (got.launcher, got.rank, got.world_size, got.local_rank, got.master_addr) == ("slurm", 5, 16, 1, "gpu07")
    # every task derives the same port from the job id without talking to the others
    assert got.master_port == detect_launch({**env, "SLURM_PROCID": "0"}).master_port
    assert 20000 <= got.master_port < 40000
    assert detect_launch({**env, "MASTER_PORT": "1234"}).master_port == 1234


@pytest.mark.parametrize(
    ("nodelist", "first"),
    [("n1", "n1"), ("gpu[01-04]", "gpu01"), ("a,b", "a"), ("rack[2-3]-node[009-010],x", "rack2-node009"), ("gpu[5,7-9]", "gpu5")],
)
def test_first_host_of_a_slurm_hostlist(nodelist, first):
    assert first_slurm_host(nodelist) == first


def test_kubernetes_indexed_job_needs_world_size_and_master_addr():
    ok_env = {"JOB_COMPLETION_INDEX": "2", "WORLD_SIZE": "4", "MASTER_ADDR": "doctor-0.doctor"}
    got = detect_launch(ok_env)
    assert (got.launcher, got.rank, got.world_size, got.master_port, got.problems) == ("kubernetes", 2, 4, 29500, ())
    bad = detect_launch({"JOB_COMPLETION_INDEX": "2"})
    assert any("WORLD_SIZE" in p for p in bad.problems) and any("MASTER_ADDR" in p for p in bad.problems)


def test_no_launcher_means_no_launch():
    assert detect_launch({"PATH": "/usr/bin"}) is None
    with pytest.raises(Unavailable, match="not started by a launcher"):
        gather(dist_launch, env={})


def test_launch_check_fails_on_inconsistent_variables_and_passes_otherwise():
    bad = detect_launch({**TORCHRUN, "RANK": "9"}).as_dict()
    row = run_check(launch, dist_launch=bad)
    assert row.status is Status.FAIL and "rank 9 is outside the world of 8 ranks" in row.message and "torchrun" in row.hint
    row = run_check(launch, dist_launch=detect_launch(TORCHRUN).as_dict())
    assert row.status is Status.PASS and "rank 3 of 8" in row.message


def test_report_paths_one_per_rank_or_only_rank_0():
    l1 = detect_launch({**TORCHRUN, "RANK": "1", "LOCAL_RANK": "1"})
    l0 = detect_launch({**TORCHRUN, "RANK": "0", "LOCAL_RANK": "0"})
    assert l0.format_path("all.json", "h") == "all.json" and l1.format_path("all.json", "h") is None
    assert l1.format_path("r/{host}-{rank}.json", "h") == "r/h-1.json"
    assert l1.format_path("r/{host}.json", "h") is None and l0.format_path("r/{host}.json", "h") == "r/h.json"


def test_distributed_flag_without_a_launcher_is_a_usage_error():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RANK", "WORLD_SIZE", "SLURM_", "JOB_COMPLETION", "MASTER_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "envdoctor", "check", "--distributed"], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 2
    assert "not started by a launcher" in proc.stderr and "torchrun" in proc.stderr


# -- merging and judging -------------------------------------------------------------------------


def _row(cid, status, message=""):
    return {"id": cid, "title": cid, "status": status, "message": message, "hint": "fix it", "tags": [], "source": "built-in"}


def test_merge_lists_the_ranks_that_differ_under_one_row():
    summaries = {
        0: {"host": "a", "results": [_row("x.same", "pass", "fine"), _row("x.odd", "pass", "fine")]},
        1: {"host": "a", "results": [_row("x.same", "pass", "fine"), _row("x.odd", "fail", "broken GPU")]},
        2: {"host": "b", "results": [_row("x.same", "pass", "fine"), _row("x.odd", "pass", "fine")]},
    }
    same, odd = merge_results(summaries)
    assert same.status is Status.PASS and same.message == "fine" and not same.items
    assert odd.status is Status.FAIL
    assert odd.message == "failed on rank 1 of 3 (a): broken GPU"
    assert [(i.name, i.status) for i in odd.items] == [("rank 1 @ a", Status.FAIL)]
    assert odd.hint == "fix it"


def _coord(ranks, **kw):
    return {"rank": 0, "coordinator": True, "world_size": len(ranks), "backend": "gloo", "members": sorted(ranks), "ranks": ranks, **kw}


def _member(host, **col):
    return {"host": host, "state": "reported", "collective": {"member": True, "allreduce_ok": True, "busbw_gbs": 10.0, **col}}


def test_rendezvous_names_the_rank_that_did_not_answer():
    ranks = {"0": _member("a"), "1": {"state": "no-join", "note": "did not join the rendezvous within 30s"}}
    row = run_check(rendezvous, dist_collective=_coord(ranks))
    assert row.status is Status.FAIL
    assert "1 of 2 ranks did not answer: rank 1 did not join" in row.message
    assert [i.name for i in row.items] == ["rank 1 @ unknown host"]


def test_rendezvous_on_a_rank_that_lost_rank_0():
    c = {
        "rank": 2,
        "coordinator": False,
        "error": "rank 0 (the coordinator) stopped answering for 30s",
        "coordinator_lost": True,
        "host": "c",
    }
    row = run_check(rendezvous, dist_collective=c)
    assert row.status is Status.FAIL and "rank 2 lost rank 0" in row.message and "reachable" in row.hint


def test_allreduce_wrong_sums_and_timeouts_fail_with_the_rank():
    ranks = {"0": _member("a"), "1": _member("b", allreduce_ok=False, allreduce_error="3 of 9 elements wrong")}
    row = run_check(allreduce, dist_collective=_coord(ranks))
    assert row.status is Status.FAIL and "rank 1 @ b: wrong sums: 3 of 9 elements wrong" in row.message
    ranks = {"0": _member("a", error="init_process_group failed (timed out waiting for the other ranks)"), "1": _member("b")}
    row = run_check(allreduce, dist_collective=_coord(ranks))
    assert row.status is Status.FAIL and "timed out" in row.message and "NCCL_DEBUG=INFO" in row.hint
    row = run_check(allreduce, dist_collective=_coord({"0": _member("a"), "1": _member("b")}))
    assert row.status is Status.PASS and "exact on 2 ranks" in row.message


def test_bandwidth_warns_on_the_slow_link_and_names_the_rank_on_both_slow_links():
    gbs = {0: 20.0, 1: 21.0, 2: 2.0, 3: 1.9}  # link into rank r from rank r-1: rank 2's links are slow
    ranks = {str(r): _member(f"h{r}", link_from=(r - 1) % 4, link_gbs=g) for r, g in gbs.items()}
    row = run_check(bandwidth, dist_collective=_coord(ranks))
    assert row.status is Status.WARN
    assert "2 of 4 gloo links run far below the others" in row.message and "rank 2 is on every slow link" in row.message
    assert [i.name for i in row.items] == ["link rank 1 @ h1 → rank 2 @ h2", "link rank 2 @ h2 → rank 3 @ h3"]
    assert "nvidia-smi topo -m" in row.hint


def test_bandwidth_with_two_ranks_reports_numbers_without_a_comparison():
    ranks = {"0": _member("a", link_from=1, link_gbs=0.3), "1": _member("a", link_from=0, link_gbs=0.8)}
    row = run_check(bandwidth, dist_collective=_coord(ranks))
    assert row.status is Status.PASS and "bus bandwidth 10.00 GB/s over 2 ranks" in row.message
    row = run_check(bandwidth, dist_collective=_coord({"0": _member("a", algbw_gbs=100.0)}))
    assert row.status is Status.SKIP and "at least 2 ranks" in row.message


# -- real runs under torchrun, gloo on CPU -------------------------------------------------------

RANK_PLUGIN = '''
from envdoctor import check, fail, ok


@check("testrank.not_rank_one")
def not_rank_one(env):
    """This rank is not rank 1"""
    if env.get("RANK") == "1":
        return fail("this is rank 1", hint="a test plugin fails on rank 1 on purpose")
    return ok("rank " + str(env.get("RANK")))
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(tmp_path: Path, *args: str, fault: str = "", nproc: int = 2, timeout: float = 150) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "combined.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RANK", "WORLD_SIZE", "LOCAL_", "MASTER_", "TORCHELASTIC", "SLURM_"))}
    env.update(ENVDOCTOR_TEST_FAULT=fault, NO_COLOR="1", OMP_NUM_THREADS="1")
    argv = [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", f"--nproc-per-node={nproc}", "--master-addr=127.0.0.1"]
    argv += [f"--master-port={_free_port()}", "-m", "envdoctor", "check", "--distributed", "--json", str(out), *args]
    # The subprocess timeout only guards the test run; what a test asserts is the report.
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, cwd=tmp_path)
    report = json.loads(out.read_text()) if out.exists() else {}
    return proc, report


@functools.lru_cache(maxsize=1)
def _startup_timeout() -> str:
    """A rank timeout that covers a rank's start on this machine now: four times what importing
    torch.distributed takes here (measured, not assumed: 5 s was shorter than rank 1's start on a
    loaded 2-core machine, and the test failed there every time), and never under 5 s."""
    t = time.monotonic()
    subprocess.run([sys.executable, "-c", "import torch, torch.distributed"], capture_output=True, timeout=300)
    return str(max(5, math.ceil(4 * (time.monotonic() - t))))


def _rows(report: dict) -> dict:
    return {r["id"]: r for r in report.get("results", ())}


@pytest.mark.slow
def test_torchrun_healthy_run_reports_both_ranks(tmp_path):
    proc, report = torchrun(tmp_path, "--select", "system.python", "--rank-timeout", "20")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = _rows(report)
    assert {rows[c]["status"] for c in ("distributed.launch", "distributed.rendezvous", "distributed.allreduce", "system.python")} == {
        "pass"
    }
    assert rows["distributed.bandwidth"]["status"] == "pass" and "over 2 ranks" in rows["distributed.bandwidth"]["message"]
    table = report["facts"]["distributed"]["ranks"]
    assert [(r["rank"], r["state"]) for r in table] == [(0, "reported"), (1, "reported")]
    assert all(r["collective"]["allreduce_ok"] for r in table)
    assert "rank 1/2" in proc.stdout and "rank 0 writes the combined report" in proc.stdout
    # The combined report feeds the fleet summary: one node per rank, agreeing.
    fleet = run_cli("fleet", str(tmp_path / "combined.json"))
    assert fleet.returncode == 0, fleet.stdout
    assert "/rank0" in fleet.stdout and "/rank1" in fleet.stdout and "HEALTHY" in fleet.stdout


@pytest.mark.slow
def test_torchrun_a_check_failing_on_rank_1_is_reported_under_rank_1(tmp_path):
    plug = tmp_path / "plug"
    plug.mkdir()
    (plug / "rankcheck.py").write_text(textwrap.dedent(RANK_PLUGIN))
    proc, report = torchrun(tmp_path, "--checks-path", str(plug), "--select", "testrank", "--rank-timeout", "20")
    assert proc.returncode != 0
    row = _rows(report)["testrank.not_rank_one"]
    host = socket.gethostname()
    assert row["status"] == "fail" and row["message"] == f"failed on rank 1 of 2 ({host}): this is rank 1"
    assert [(i["name"], i["status"]) for i in row["items"]] == [(f"rank 1 @ {host}", "fail")]
    failing = {r["rank"]: [f["id"] for f in r["failing"]] for r in report["facts"]["distributed"]["ranks"]}
    assert failing == {0: [], 1: ["testrank.not_rank_one"]}
    assert _rows(report)["distributed.rendezvous"]["status"] == "pass"


@pytest.mark.slow
def test_torchrun_a_rank_that_hangs_before_joining_is_named_and_rank_0_finishes(tmp_path):
    proc, report = torchrun(tmp_path, "--select", "system.python", "--rank-timeout", "6", fault="hang@1")
    assert proc.returncode != 0
    row = _rows(report)["distributed.rendezvous"]
    assert row["status"] == "fail" and "rank 1 did not join the rendezvous within 6s" in row["message"]
    assert _rows(report)["distributed.allreduce"]["status"] == "pass"  # among the ranks that answered
    assert [(r["rank"], r["state"]) for r in report["facts"]["distributed"]["ranks"]] == [(0, "reported"), (1, "no-join")]


@pytest.mark.slow
def test_torchrun_a_rank_stuck_in_the_collective_is_reported_after_the_timeout(tmp_path):
    rt = _startup_timeout()
    proc, report = torchrun(
        tmp_path, "--select", "system.python", "--rank-timeout", rt, fault="hang-collective@1", timeout=150 + 10 * int(rt)
    )
    assert proc.returncode != 0
    rows = _rows(report)
    assert rows["distributed.rendezvous"]["status"] == "pass"  # it joined and reported its local checks
    assert rows["system.python"]["status"] == "pass" and not rows["system.python"]["items"]
    ar = rows["distributed.allreduce"]
    assert ar["status"] == "fail"
    items = {i["name"].split(" @ ")[0]: i["message"] for i in ar["items"]}
    assert "timed out waiting for the other ranks" in items["rank 0"]
    assert "sent no result" in items["rank 1"] and "stuck or dead" in items["rank 1"]


@pytest.mark.slow
def test_torchrun_a_rank_whose_probe_dies_is_named_and_rank_0_finishes(tmp_path):
    rt = _startup_timeout()
    proc, report = torchrun(tmp_path, "--select", "system.python", "--rank-timeout", rt, fault="exit@1", timeout=150 + 10 * int(rt))
    assert proc.returncode != 0
    assert "rank 0 reports this rank as not answering" in proc.stdout
    row = _rows(report)["distributed.rendezvous"]
    assert row["status"] == "fail" and "rank 1 did not join" in row["message"]


@pytest.mark.slow
def test_torchrun_failing_check_explains_childfailederror_and_exit_zero_silences_it(tmp_path):
    """rank 0 exits 1 for a failed check: torchrun prints ChildFailedError with its own traceback,
    so envdoctor says first what that is; --exit-zero keeps every rank at 0 (the verdict stays in the report)."""
    plug = tmp_path / "plug"
    plug.mkdir()
    (plug / "rankcheck.py").write_text(textwrap.dedent(RANK_PLUGIN))
    proc, report = torchrun(tmp_path, "--checks-path", str(plug), "--select", "testrank", "--rank-timeout", "20")
    assert proc.returncode != 0
    assert "ChildFailedError" in proc.stderr  # torchrun's own reaction to the exit code
    assert "rank 0 exits 1: the job is not healthy (a check failed)" in proc.stderr
    assert "not a crash of envdoctor" in proc.stderr
    proc, report = torchrun(tmp_path, "--checks-path", str(plug), "--select", "testrank", "--rank-timeout", "20", "--exit-zero")
    assert proc.returncode == 0, proc.stderr
    assert "ChildFailedError" not in proc.stderr and "Traceback" not in proc.stderr
    assert _rows(report)["testrank.not_rank_one"]["status"] == "fail"
