"""``envdoctor slurm-health``: envdoctor as Slurm's HealthCheckProgram (and Prolog/Epilog).

Slurm runs HealthCheckProgram as root, without arguments, at slurmd start, at every
``scontrol reconfigure`` and every HealthCheckInterval, and kills it after 60 s; the program
must drain the node itself. This one:

- runs ``envdoctor check`` (the ``liveness`` profile unless told otherwise: no torch import) with a deadline
  well under Slurm's (default 40 s, plus a few seconds to kill a hung run);
- drains the node with ``Reason="envdoctor: <check id>: <message>"`` when a check fails;
- never drains when envdoctor could not judge (an ``error`` row, a run that hung or died);
- resumes the node, once healthy again, only if the drain is its own (the reason starts with
  ``envdoctor:``): an administrator's drain is left alone, and never overwritten.

``--prolog`` keeps to the exit-code contract only (Slurm drains the node and requeues the job
itself when a Prolog fails): exit 1 for a failed check, 0 otherwise, no scontrol.
"""

from __future__ import annotations

import os
import socket

import click

from envdoctor.adapters.judge import NodeState, Verdict, check_node, one_line
from envdoctor.core.subproc import run

REASON_PREFIX = "envdoctor:"
REASON_BYTES = 120  # Slurm keeps long reasons, but sinfo -R shows the first few dozen characters
DEFAULT_TIMEOUT = 40.0  # the check run's own; Slurm kills a HealthCheckProgram at 60 s
SCONTROL_TIMEOUT = 10.0


def reason_for(v: Verdict) -> str:
    return one_line(f"{REASON_PREFIX} {v.check}: {v.message}", REASON_BYTES)


def ours(reason: str) -> bool:
    return reason.startswith(REASON_PREFIX)


def decide(v: Verdict, drained: bool, reason: str) -> str:
    """ "drain", "resume" or "" for a verdict and the node's drain state and reason."""
    if v.state is NodeState.PROBLEM:
        if drained and not ours(reason):
            return ""  # someone else's drain: theirs to lift, and their reason stays
        return "" if drained and reason == reason_for(v) else "drain"
    if v.state is NodeState.OK and drained and ours(reason):
        return "resume"
    return ""  # could not judge: leave the node as it is


def node_name() -> str:
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def node_state(name: str) -> tuple[bool, str]:
    """(drained or draining, the reason) from sinfo; raises click.ClickException if it fails."""
    res = run(["sinfo", "-h", "-N", "-n", name, "-o", "%T|%E"], timeout=SCONTROL_TIMEOUT)
    line = res.stdout.strip().splitlines()[0] if res.ok and res.stdout.strip() else ""
    if not line:
        raise click.ClickException(f"cannot read node {name}'s state: {res.describe() if not res.ok else 'sinfo lists no such node'}")
    state, _, reason = line.partition("|")
    return "drain" in state.lower(), "" if reason.strip() == "none" else reason.strip()


def scontrol(name: str, *args: str) -> None:
    res = run(["scontrol", "update", f"nodename={name}", *args], timeout=SCONTROL_TIMEOUT)
    if not res.ok:
        raise click.ClickException(f"scontrol update {' '.join(args[:1])} failed: {res.describe()}")


def _line(v: Verdict) -> str:
    if v.state is NodeState.OK:
        return f"envdoctor: healthy ({v.counts.get('pass', 0)} passed)"
    if v.state is NodeState.PROBLEM:
        return f"{reason_for(v)} (recommended action: {v.action})"
    return one_line(f"envdoctor: could not judge: {v.check}: {v.message}", 200)


@click.command("slurm-health")
@click.option("--profile", default="liveness", show_default=True, help="The envdoctor check profile to run (liveness: no torch import).")
@click.option("-s", "--select", multiple=True, metavar="PATTERN", help="Run only these checks (as envdoctor check --select).")
@click.option("--checks-path", multiple=True, type=click.Path(), metavar="DIR", help="Also load check modules from DIR.")
@click.option("--timeout", type=float, default=DEFAULT_TIMEOUT, show_default=True, help="Seconds the check run may take.")
@click.option("--node", default=None, help="Slurm node name (default: $SLURMD_NODENAME, else the short host name).")
@click.option("--prolog", is_flag=True, help="Prolog/Epilog: exit 1 when a check fails, else 0; touch no node state.")
def slurm_health_cmd(profile, select, checks_path, timeout, node, prolog) -> None:
    """Slurm HealthCheckProgram: drain this node when a check fails, resume it once healthy (only its own drains)."""
    if not 0 < timeout < 55:
        raise click.UsageError("--timeout must be between 0 and 55 seconds (Slurm kills a HealthCheckProgram at 60 s)")
    args = ["--profile", profile, *(f"--select={s}" for s in select), *(f"--checks-path={p}" for p in checks_path)]
    v = check_node(args, timeout)
    click.echo(_line(v), err=v.state is not NodeState.OK)
    if not prolog:
        name = node or node_name()
        drained, reason = node_state(name)
        todo = decide(v, drained, reason)
        if todo == "drain":
            scontrol(name, "state=drain", f"reason={reason_for(v)}")
        elif todo == "resume":
            scontrol(name, "state=resume")
        if todo:
            click.echo(f"envdoctor: node {name}: {todo}", err=True)
    raise SystemExit(1 if v.state is NodeState.PROBLEM else 0 if prolog or v.state is NodeState.OK else 2)
