"""``envdoctor check`` and ``envdoctor list``: run the checks and report; list what can run."""

from __future__ import annotations

import os
import sys

import click

from envdoctor.commands.output import TTYProgress, protect, quiet_line, use_color, writable_target, write
from envdoctor.core.exitcode import ExitCode
from envdoctor.reporters import FORMATS  # light: the renderers themselves load on use


@click.command("check")
@click.option(
    "-s",
    "--select",
    multiple=True,
    metavar="PATTERN",
    help="Run only checks matching an id, id prefix, tag or glob (repeatable, comma-separated).",
)
@click.option("-d", "--deselect", multiple=True, metavar="PATTERN", help="Leave out matching checks.")
@click.option(
    "--profile",
    type=click.Choice(["default", "build", "runtime", "full"]),
    default="default",
    show_default=True,
    help="build: no GPU needed (docker build); runtime: GPU node; full: plus perf.",
)
@click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True, help="Format of the main output.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the main output to FILE instead of stdout.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False), help="Also write a JSON report to FILE.")
@click.option("--junit-xml", "junit_file", type=click.Path(dir_okay=False), help="Also write a JUnit XML report to FILE.")
@click.option("--markdown", "markdown_file", type=click.Path(dir_okay=False), help="Also write a Markdown report to FILE.")
@click.option("-v", "--verbose", is_flag=True, help="Show each check's details and duration.")
@click.option("--strict", is_flag=True, help="Treat warnings as failures (exit 1).")
@click.option("--timeout", type=click.FloatRange(min=1), default=300.0, show_default=True, help="Seconds the whole run may take.")
@click.option("--no-color", is_flag=True, help="No colour (also when NO_COLOR is set).")
@click.option("--checks-path", multiple=True, type=click.Path(), metavar="DIR", help="Also load check modules (*.py) from DIR.")
@click.option(
    "-e", "--expect", "expects", multiple=True, metavar="KEY=SPEC", help="Expect e.g. 'torch>=2.5', gpus=8, 'gpu_name=*H200*' (repeatable)."
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    help="Config file (default: envdoctor.toml or [tool.envdoctor] found upwards).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print one line; the exit code carries the verdict (health checks).")
@click.option("--redact", is_flag=True, help="Also hide host, user, home paths, IP addresses and GPU UUIDs/serials (public reports).")
@click.option(
    "--distributed", is_flag=True, help="One rank of a torchrun/srun/indexed-Job launch: rank 0 reports the whole job (docs/fleet.md)."
)
@click.option(
    "--rank-timeout",
    type=click.FloatRange(min=1),
    default=120.0,
    show_default=True,
    help="--distributed: seconds before a silent rank is reported.",
)
def check_cmd(
    select,
    deselect,
    profile,
    fmt,
    output,
    json_file,
    junit_file,
    markdown_file,
    verbose,
    strict,
    timeout,
    no_color,
    checks_path,
    expects,
    config_file,
    quiet,
    redact,
    distributed,
    rank_timeout,
) -> None:
    """Run the checks and report."""
    from envdoctor.core import config
    from envdoctor.core.expect import judge_must_pass
    from envdoctor.core.registry import discover
    from envdoctor.core.selection import split_patterns, unmatched
    from envdoctor.core.session import RunOptions, execute
    from envdoctor.reporters import render

    launch, run = None, execute
    if distributed:
        from envdoctor.modes.distributed import DistributedRun, launch_for_cli

        try:
            launch, (output, json_file, junit_file, markdown_file) = launch_for_cli(
                os.environ, (output, json_file, junit_file, markdown_file)
            )
        except ValueError as e:
            raise click.UsageError(str(e)) from None
        run, quiet = DistributedRun(launch, rank_timeout), quiet or not launch.coordinator
    targets = [p for p in (output, json_file, junit_file, markdown_file) if p]
    for p in targets:
        writable_target(p)
    sel, desel = split_patterns(select), split_patterns(deselect)
    conf = config.load(config_file, expects)
    reg = discover(tuple(checks_path))
    missing = unmatched([*reg.checks, *reg.problems, *config.expectation_specs(conf, profile)], sel)  # `--select expect` is fine
    if missing:
        raise click.UsageError(f"no check matches {', '.join(repr(m) for m in missing)} (see `envdoctor list`)")
    opts = RunOptions(select=sel, deselect=desel, profile=profile, timeout=timeout, checks_paths=checks_path, verbose=verbose)
    expected, specs = config.checks_to_run(conf, reg.checks, sel, desel, profile)
    tty = sys.stderr.isatty() and fmt == "text" and not output and not quiet
    progress = TTYProgress(len(specs)) if tty else None
    if progress:
        with progress:
            report = run(opts, registry=reg, specs=specs, progress=progress)
    else:
        report = run(opts, registry=reg, specs=specs)
    report = judge_must_pass(report, expected, reg.checks, profile)
    report = protect(report, redact)  # before ANY rendering: secrets never, identities on request
    color = use_color(no_color) and not output
    main_text = render(report, fmt, verbose=verbose, color=color, strict=strict)
    if output:
        write(output, main_text)
    if quiet:
        click.echo(run.line(quiet_line(report, strict)) if launch else quiet_line(report, strict))
    elif not output:
        click.echo(main_text, nl=False)
    for path, extra_fmt in ((json_file, "json"), (junit_file, "junit"), (markdown_file, "markdown")):
        if path:
            write(path, render(report, extra_fmt, verbose=verbose, strict=strict))
    if report.interrupted:
        raise SystemExit(ExitCode.INTERRUPTED)
    raise SystemExit(ExitCode.OK if (run.healthy(report, strict) if launch else report.healthy(strict)) else ExitCode.FAILED)


@click.command("list")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--checks-path", multiple=True, type=click.Path(), metavar="DIR", help="Also load check modules from DIR.")
def list_cmd(fmt, checks_path) -> None:
    """List every check: id, title, tags and where it comes from."""
    import json

    from envdoctor.core.registry import discover
    from envdoctor.core.selection import PROFILES

    reg = discover(tuple(checks_path))
    if fmt == "json":
        rows = [{"id": c.id, "title": c.title, "tags": list(c.tags), "source": c.source} for c in reg.checks]
        rows += [{"id": p.id, "title": p.title, "tags": [], "source": p.source, "error": p.message} for p in reg.problems]
        click.echo(json.dumps(rows, indent=2))
        return
    width = max((len(c.id) for c in reg.checks), default=10)
    for c in reg.checks:
        tags = ",".join(c.tags)
        optin = " (opt-in)" if PROFILES["default"].intersection(c.tags) else ""
        click.echo(f"{c.id:<{width}}  {c.title}  [{tags}] ({c.source}){optin}")
    for p in reg.problems:
        click.echo(f"{p.id:<{width}}  ERROR: {p.message}")
    click.echo(f"\n{len(reg.checks)} checks" + (f", {len(reg.problems)} plugin problem(s)" if reg.problems else ""))
