"""``envdoctor check`` and ``envdoctor list``: run the checks and report; list what can run."""

from __future__ import annotations

import os
import sys

import click

from envdoctor.console import TTYProgress, emit, quiet_line, use_color, write_report
from envdoctor.core.exitcode import ExitCode
from envdoctor.core.limits import DEFAULT_RANK_TIMEOUT, DEFAULT_TIMEOUT
from envdoctor.core.selection import PROFILE_TABLE
from envdoctor.reporters import FORMATS  # light: the renderers themselves load on use

TEXTFILE_NAME = "envdoctor.prom"  # node_exporter's textfile collector reads DIR/*.prom
_TIMEOUT_HELP = "Seconds the whole run may take (a positive number)."
_NO_PLUGINS_HELP = "Run the built-in checks alone: no installed plugin is loaded (also ENVDOCTOR_DISABLE_PLUGIN_AUTOLOAD=1)."


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
    type=click.Choice(list(PROFILE_TABLE)),
    default="default",
    show_default=True,
    help="build: no GPU needed (docker build); runtime: GPU node; health: runtime without the compile smokes (HEALTHCHECK); full: plus perf.",
)
@click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True, help="Format of the main output.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the main output to FILE instead of stdout.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False), help="Also write a JSON report to FILE.")
@click.option("--junit-xml", "junit_file", type=click.Path(dir_okay=False), help="Also write a JUnit XML report to FILE.")
@click.option("--markdown", "markdown_file", type=click.Path(dir_okay=False), help="Also write a Markdown report to FILE.")
@click.option(
    "--textfile",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="Also write DIR/envdoctor.prom for node_exporter's textfile collector (atomically; docs/fleet.md).",
)
@click.option("-v", "--verbose", is_flag=True, help="Show each check's details and duration.")
@click.option("--strict", is_flag=True, help="Treat warnings as failures (exit 1).")
@click.option("--timeout", type=float, default=DEFAULT_TIMEOUT, show_default=True, help=_TIMEOUT_HELP)
@click.option("--no-color", is_flag=True, help="No colour (also when NO_COLOR is set).")
@click.option("--checks-path", multiple=True, type=click.Path(), metavar="DIR", help="Also load check modules (*.py) from DIR.")
@click.option("--no-plugins", is_flag=True, help=_NO_PLUGINS_HELP)
@click.option(
    "-e",
    "--expect",
    "expects",
    multiple=True,
    metavar="KEY=SPEC",
    help="Expect e.g. 'torch>=2.5', gpus=8, 'gpu_name=*H200*', torch=none (torch not expected here) (repeatable).",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    help="Config file (default: the project's envdoctor.toml or [tool.envdoctor], found upwards).",
)
@click.option(
    "--python",
    "python",
    metavar="PATH",
    help="Examine this interpreter's environment (a venv's bin/python, an image's python) instead of envdoctor's own.",
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Compare with a baseline recorded by `envdoctor baseline FILE` (versions, torch/Triton/nvidia-* files, interpreter).",
)
@click.option(
    "--lock", type=click.Path(dir_okay=False), metavar="FILE", help="Compare with the == pins of a requirements.txt or pylock.toml."
)
@click.option(
    "--as-user",
    metavar="UID[:GID]",
    help="As root: rehearse the runtime user (no passwd entry, HOME=/): caches, compilers, a compile (docker/README.md).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print one line; the exit code carries the verdict (health checks).")
@click.option(
    "--full-facts",
    is_flag=True,
    help="Keep every fact whole in the report (the shared-library cache, all mounts, every package's requirements); "
    "by default large facts keep what the checks use, so a JSON report stays under 64 KB and Markdown under 20 KB.",
)
@click.option("--redact", is_flag=True, help="Also hide host, user, home paths, IP addresses and GPU UUIDs/serials (public reports).")
@click.option(
    "--distributed", is_flag=True, help="One rank of a torchrun/srun/indexed-Job launch: rank 0 reports the whole job (docs/fleet.md)."
)
@click.option(
    "--rank-timeout",
    type=float,
    default=DEFAULT_RANK_TIMEOUT,
    show_default=True,
    help="--distributed: seconds before a silent rank is reported.",
)
@click.option(
    "--exit-zero",
    is_flag=True,
    help="Exit 0 whatever the verdict (it is still in the report and the summary line): for launchers such as "
    "torchrun that print a traceback for any non-zero exit, and pipelines that judge the JSON.",
)
def check_cmd(**options) -> None:
    """Run the checks and report."""
    from envdoctor.core.report import exit_code

    plan = make_plan(**options)
    report = run(plan)
    failures = deliver(report, plan, use_color(options["no_color"]))
    for line in failures:
        click.echo(f"envdoctor: {line}", err=True)
    code = exit_code(report, plan.strict)
    if failures and code is not ExitCode.INTERRUPTED:
        code = ExitCode.USAGE
    if code is ExitCode.FAILED and options["exit_zero"]:
        code = ExitCode.OK
    explain_launcher_exit(plan.launch, code)
    raise SystemExit(code)


def explain_launcher_exit(launch, code: ExitCode) -> None:
    """torchrun answers any non-zero exit of a rank with 'ChildFailedError' and a Python
    traceback of its own, which users read as envdoctor crashing: say first what it is."""
    if launch is None or launch.launcher != "torchrun" or code is ExitCode.OK:
        return
    what = "the job is not healthy (a check failed)" if code is ExitCode.FAILED else f"it stopped with exit code {int(code)}"
    click.echo(
        f"envdoctor: rank {launch.rank} exits {int(code)}: {what}. torchrun reports any non-zero exit as "
        "'ChildFailedError' with a traceback of its own: that is torchrun relaying this exit code, not a crash of "
        "envdoctor. The report above says what failed; --exit-zero makes every rank exit 0.",
        err=True,
    )


def make_plan(**o):
    """The CLI's options, the config file and the profile, resolved once into the run plan."""
    from envdoctor.core import config, inputs, plan
    from envdoctor.core.outputs import Output
    from envdoctor.core.registry import discover

    paths: list[str | None] = [o["output"], o["json_file"], o["junit_file"], o["markdown_file"]]
    launch, quiet = None, o["quiet"]
    if o["distributed"]:
        from envdoctor.modes.distributed import launch_for_cli

        try:
            launch, paths = launch_for_cli(os.environ, paths)
        except ValueError as e:
            raise click.UsageError(str(e)) from None
        quiet = quiet or not launch.coordinator
    main = Output(o["fmt"], paths[0], "--output")
    extras = [
        Output(f, p, opt)
        for f, p, opt in zip(("json", "junit", "markdown"), paths[1:], ("--json", "--junit-xml", "--markdown"), strict=True)
        if p
    ]
    if o["textfile"] and (launch is None or launch.coordinator):
        extras.append(Output("prometheus", os.path.join(o["textfile"], TEXTFILE_NAME), "--textfile"))
    conf = config.load(o["config_file"], o["expects"])
    try:
        baseline_label, lock_label = (f"--{k}" if o[k] else f"{conf.path}: {k}" for k in ("baseline", "lock"))
        labels = (baseline_label, lock_label)
        run_inputs = inputs.validate(o["baseline"] or conf.baseline, o["lock"] or conf.lock, o["as_user"], labels=labels)
        select, deselect = inputs.patterns("--select", o["select"]), inputs.patterns("--deselect", o["deselect"])
    except ValueError as e:
        raise plan.PlanError(str(e)) from None
    return plan.build(
        discover(tuple(o["checks_path"]), plugins=not o["no_plugins"]),
        conf.expectations,
        select=select,
        deselect=deselect,
        profile=o["profile"],
        outputs=(main, *extras),
        launch=launch,
        timeout=o["timeout"],
        rank_timeout=o["rank_timeout"],
        config=conf.describe(),
        inputs=run_inputs,
        verbose=o["verbose"],
        strict=o["strict"],
        redact=o["redact"],
        full_facts=o["full_facts"],
        quiet=quiet,
        checks_paths=tuple(o["checks_path"]),
        python=o["python"],
    )


def run(plan):
    """The engine's run (core.session.run), with a progress line on a terminal."""
    from envdoctor.core import session

    if sys.stderr.isatty() and plan.main.fmt == "text" and not plan.main.path and not plan.quiet:
        with TTYProgress(len(plan.specs)) as progress:
            return session.run(plan, progress=progress)
    return session.run(plan)


def deliver(report, plan, color: bool) -> list[str]:
    """Every output of the plan; one failing does not stop the others. Returns the failures."""
    from envdoctor.reporters import render

    failures = []
    for out in plan.outputs:
        text = render(report, out.fmt, verbose=plan.verbose, color=color and out.path is None, strict=plan.strict)
        if out.path:
            problem = write_report(out.path, text)
        elif out is plan.main and not plan.quiet:
            problem = emit(text)
        else:
            continue
        if problem:
            failures.append(problem)
    if plan.quiet:
        problem = emit(quiet_line(report, plan.strict) + "\n")
        if problem:
            failures.append(problem)
    return failures


@click.command("list")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--checks-path", multiple=True, type=click.Path(), metavar="DIR", help="Also load check modules from DIR.")
@click.option("--no-plugins", is_flag=True, help=_NO_PLUGINS_HELP)
def list_cmd(fmt, checks_path, no_plugins) -> None:
    """List every check: id, title, tags and where it comes from."""
    import json

    from envdoctor.core.registry import discover
    from envdoctor.core.selection import PROFILES

    reg = discover(tuple(checks_path), plugins=not no_plugins)
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
