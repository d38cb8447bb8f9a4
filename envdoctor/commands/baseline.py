"""``envdoctor baseline FILE``: record what this environment is, for ``check --baseline FILE``.

The baseline holds the facts that the checks tagged ``baseline`` compare (every distribution
with its exact version, the RECORD digests of torch, Triton and nvidia-*, the interpreter, the
driver and GPUs where present). Which facts those are is read from the checks themselves, so a
plugin's baseline check records what it needs too.
"""

from __future__ import annotations

import os

import click

from envdoctor import __version__
from envdoctor.console import writable_target
from envdoctor.core.exitcode import ExitCode

TAG = "baseline"
# Facts a baseline never records: the baseline and lock files themselves and the engine's inputs.
NOT_RECORDED = frozenset({"baseline", "lock", "options", "env", "probe", "interpreter"})


def recorded_facts(registry) -> list[str]:
    """The facts the baseline checks take, in a stable order."""
    names = {p.name for spec in registry.checks if TAG in spec.tags for p in spec.params}
    return sorted(names - NOT_RECORDED)


def gather(registry, env) -> tuple[dict, dict]:
    """(facts recorded, reasons for facts that could not be had)."""
    from envdoctor.core.session import live_store

    probe, store = live_store(registry, env, {})
    facts, missing = {}, {}
    try:
        for name in recorded_facts(registry):
            out = store.outcome(name)
            if out.available:
                facts[name] = out.value
            else:
                missing[name] = out.reason or out.error
    finally:
        probe.close()
    return facts, missing


@click.command("baseline")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--checks-path", multiple=True, type=click.Path(), metavar="DIR", help="Also load check modules from DIR.")
def baseline_cmd(file, checks_path) -> None:
    """Record this environment into FILE, for `envdoctor check --baseline FILE` later."""
    from envdoctor.core.registry import discover
    from envdoctor.sources.baseline import write_baseline

    writable_target(file)
    reg = discover(tuple(checks_path))
    facts, missing = gather(reg, dict(os.environ))
    try:
        write_baseline(file, facts, missing, __version__)
    except OSError as e:
        click.echo(f"envdoctor: cannot write {file}: {e.strerror or e}", err=True)
        raise SystemExit(ExitCode.USAGE) from None
    dists = facts.get("dists") or {}
    files = facts.get("dist_files") or {}
    click.echo(
        f"envdoctor baseline: recorded {len(dists)} distributions, the files of {len(files)} "
        f"({', '.join(sorted(files)[:4])}{', …' if len(files) > 4 else ''}) into {file}"
    )
    for name, why in sorted(missing.items()):
        click.echo(f"  not recorded: {name}: {why}")
    raise SystemExit(ExitCode.OK)
