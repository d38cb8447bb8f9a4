"""``envdoctor npd``: envdoctor as a node-problem-detector custom plugin.

The contract (NPD's custom plugin monitor): exit 0 when the condition is OK, 1 when there is a
problem, anything else (here 2) when the plugin could not tell; one line on standard output of
at most 80 bytes (NPD keeps no more as the condition's message): ``<check id>: <action>:
<message>`` for a problem. Every rule of the monitor config runs one condition's checks
(``--select``) under the rule's timeout; this run's own deadline is set below it, so a hung check
ends as "could not judge" (exit 2) before NPD kills the plugin. deploy/kubernetes/ has the
monitor config, the DaemonSet and a pre-flight Job; docs/kubernetes.md the conditions and taints.
"""

from __future__ import annotations

import click

from envdoctor.adapters.judge import NodeState, check_node, one_line

LINE_BYTES = 80
EXIT = {NodeState.OK: 0, NodeState.PROBLEM: 1, NodeState.UNKNOWN: 2}


def npd_line(v) -> str:
    if v.state is NodeState.OK:
        text = f"envdoctor: ok ({v.counts.get('pass', 0)} passed)"
    elif v.state is NodeState.PROBLEM:
        text = f"{v.check}: {v.action}: {v.message}"
    else:
        text = f"could not judge: {v.check}: {v.message}"
    return one_line(text, LINE_BYTES)


@click.command("npd")
@click.option("--profile", default="liveness", show_default=True, help="The envdoctor check profile to run (liveness: no torch import).")
@click.option("-s", "--select", multiple=True, metavar="PATTERN", help="The condition's checks (as envdoctor check --select).")
@click.option("--checks-path", multiple=True, type=click.Path(), metavar="DIR", help="Also load check modules from DIR.")
@click.option("--timeout", type=float, default=25.0, show_default=True, help="Seconds the run may take (below the rule's timeout).")
def npd_cmd(profile, select, checks_path, timeout) -> None:
    """node-problem-detector custom plugin: exit 0 OK, 1 problem, 2 could not judge; one line of at most 80 bytes."""
    if not timeout > 0:
        raise click.UsageError("--timeout must be a positive number of seconds")
    args = ["--profile", profile, *(f"--select={s}" for s in select), *(f"--checks-path={p}" for p in checks_path)]
    v = check_node(args, timeout)
    click.echo(npd_line(v))
    raise SystemExit(EXIT[v.state])
