"""Command line: thin glue between click, the session and the reporters.

Exit codes (documented in the README, tested in tests/test_cli.py):
  0  healthy (warnings allowed unless --strict)
  1  a check failed or errored (or warned, under --strict)
  2  usage error: bad option, unknown check, unreadable input, unwritable output
  3  envdoctor's own internal error
  130 interrupted (Ctrl-C or SIGTERM); the partial report is still printed
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import click

from envdoctor import __version__
from envdoctor.reporters import FORMATS  # light: the renderers themselves load on use

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _writable_target(path: str) -> str:
    """Fail early, before a long run, if a report file cannot be written."""
    parent = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise click.UsageError(f"cannot write the report to {path}: it is a directory")
    if not os.path.isdir(parent):
        raise click.UsageError(f"cannot write the report to {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise click.UsageError(f"cannot write the report to {path}: permission denied")
    return path


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        click.echo(f"envdoctor: cannot write {path}: {e.strerror or e}", err=True)
        raise SystemExit(EXIT_USAGE) from None


def use_color(no_color: bool, stream=None) -> bool:
    stream = stream or sys.stdout
    if no_color or "NO_COLOR" in os.environ:
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


class TTYProgress:
    """One self-rewriting line on stderr: which check runs and for how long. TTY only."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.running: dict[str, float] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._tick, daemon=True)
        self.width = 0

    def started(self, spec) -> None:
        with self.lock:
            self.running[spec.id] = time.monotonic()

    def finished(self, outcome) -> None:
        with self.lock:
            self.running.pop(outcome.id, None)
            self.done += 1

    def _tick(self) -> None:
        while not self.stop.wait(0.25):
            with self.lock:
                if not self.running:
                    continue
                cid, since = min(self.running.items(), key=lambda kv: kv[1])
                line = f"[{self.done}/{self.total}] running {cid} ({time.monotonic() - since:.0f}s)"
                if len(self.running) > 1:
                    line += f" +{len(self.running) - 1} more"
            pad = max(0, self.width - len(line))
            self.width = len(line)
            sys.stderr.write("\r" + line + " " * pad)
            sys.stderr.flush()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(1)
        if self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="envdoctor")
def cli() -> None:
    """Will PyTorch, Triton, torch.compile and torch_xla work on this machine? If not, why?"""


@cli.command("check")
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
    from envdoctor import config
    from envdoctor.expect import judge_must_pass
    from envdoctor.registry import discover
    from envdoctor.reporters import render
    from envdoctor.select import split_patterns, unmatched
    from envdoctor.session import RunOptions, execute

    launch, run = None, execute
    if distributed:
        from envdoctor.distributed import DistributedRun, launch_for_cli

        try:
            launch, (output, json_file, junit_file, markdown_file) = launch_for_cli(
                os.environ, (output, json_file, junit_file, markdown_file)
            )
        except ValueError as e:
            raise click.UsageError(str(e)) from None
        run, quiet = DistributedRun(launch, rank_timeout), quiet or not launch.coordinator
    targets = [p for p in (output, json_file, junit_file, markdown_file) if p]
    for p in targets:
        _writable_target(p)
    sel, desel = split_patterns(select), split_patterns(deselect)
    conf = config.load(config_file, expects)
    reg = discover(tuple(checks_path))
    missing = unmatched([*reg.checks, *config.expectation_specs(conf, profile)], sel)  # `--select expect` is fine
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
    report = _protect(report, redact)  # before ANY rendering: secrets never, identities on request
    color = use_color(no_color) and not output
    main_text = render(report, fmt, verbose=verbose, color=color, strict=strict)
    if output:
        _write(output, main_text)
    if quiet:
        click.echo(run.line(_quiet_line(report, strict)) if launch else _quiet_line(report, strict))
    elif not output:
        click.echo(main_text, nl=False)
    for path, extra_fmt in ((json_file, "json"), (junit_file, "junit"), (markdown_file, "markdown")):
        if path:
            _write(path, render(report, extra_fmt, verbose=verbose, strict=strict))
    if report.interrupted:
        raise SystemExit(EXIT_INTERRUPTED)
    raise SystemExit(EXIT_OK if (run.healthy(report, strict) if launch else report.healthy(strict)) else EXIT_FAILED)


@cli.command("list")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--checks-path", multiple=True, type=click.Path(), metavar="DIR", help="Also load check modules from DIR.")
def list_cmd(fmt, checks_path) -> None:
    """List every check: id, title, tags and where it comes from."""
    import json

    from envdoctor.registry import discover
    from envdoctor.select import PROFILES

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


def _protect(report, redact: bool):
    from envdoctor.redact import redact_report, scrub_report

    report = scrub_report(report)
    return redact_report(report) if redact else report


@cli.command("diff")
@click.argument("before", metavar="A.json")
@click.argument("after", metavar="B.json")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the comparison to FILE instead of stdout.")
@click.option("--redact", is_flag=True, help="Hide host names, user names, home paths, IP addresses and GPU UUIDs/serials.")
def diff_cmd(before, after, fmt, output, redact) -> None:
    """What changed from report A to report B (versions, GPUs, check verdicts); exit 1 on a regression."""
    from envdoctor.diff import ReportError, compare, load_report, render
    from envdoctor.redact import redact_data, scrub_data

    if output:
        _writable_target(output)
    try:
        a, b = load_report(before), load_report(after)
    except ReportError as e:
        click.echo(f"envdoctor diff: {e}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    a, b = scrub_data(a), scrub_data(b)  # files from elsewhere (or older envdoctors) may hold secrets
    if redact:
        a, b = redact_data([a, b])
    d = compare(a, b, os.path.basename(before), os.path.basename(after))
    text = render(d, fmt)
    if output:
        _write(output, text)
    else:
        click.echo(text, nl=False)
    raise SystemExit(EXIT_FAILED if d.regressed else EXIT_OK)


def _quiet_line(report, strict: bool) -> str:
    """One line for health checks and logs: the verdict, the counts and the first problems."""
    from envdoctor.api import Status
    from envdoctor.reporters.text import summary_line, verdict

    bad = [r for r in report.results if r.status in (Status.FAIL, Status.ERROR) or (strict and r.status is Status.WARN)]
    line = f"envdoctor {verdict(report, strict)}: {summary_line(report)}"
    if bad:
        shown = "; ".join(f"{r.id}: {' '.join((r.message or r.status.value).split())}" for r in bad[:3])
        line += f" — {shown}" + (f"; +{len(bad) - 3} more" if len(bad) > 3 else "")
    return line


from envdoctor.bench import bench_cmd  # noqa: E402 - its own module; registered here

cli.add_command(bench_cmd)

from envdoctor.fleet import fleet_cmd  # noqa: E402 - its own module; registered here

cli.add_command(fleet_cmd)


def _sigterm(signum, frame):  # noqa: ARG001
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    try:
        signal.signal(signal.SIGTERM, _sigterm)
    except ValueError:
        pass  # not the main thread (embedded use)
    try:
        code = cli.main(args=argv, prog_name="envdoctor", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("envdoctor: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as e:
        e.show()
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        click.echo("envdoctor: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - never a traceback for the user
        if os.environ.get("ENVDOCTOR_DEBUG"):
            raise
        click.echo(f"envdoctor: internal error: {type(e).__name__}: {e}", err=True)
        click.echo("Please report this at the envdoctor issue tracker (ENVDOCTOR_DEBUG=1 shows the traceback).", err=True)
        sys.exit(EXIT_INTERNAL)
    sys.exit(code if isinstance(code, int) else EXIT_OK)
