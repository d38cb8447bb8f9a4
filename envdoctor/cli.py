"""Command line: the click group, the commands registered on it, and the one place that turns
every outcome into an exit code (:class:`envdoctor.core.exitcode.ExitCode`)."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

import click

from envdoctor import __version__
from envdoctor.core import reaper, signals
from envdoctor.core.exitcode import ExitCode

# name -> (module, attribute, the first paragraph of its help). A command's module is imported
# only when that command runs: `envdoctor --help` and `envdoctor list` must start fast, and diff,
# fleet and bench pull in modules those do not need. tests/test_cli.py checks the help texts
# against the commands themselves.
COMMANDS = {
    "check": ("envdoctor.commands.check", "check_cmd", "Run the checks and report."),
    "list": ("envdoctor.commands.check", "list_cmd", "List every check: id, title, tags and where it comes from."),
    "fix": (
        "envdoctor.commands.fix",
        "fix_cmd",
        "Plan the fixes of the failing checks; run them (--yes), re-check, journal; --undo.",
    ),
    "diff": (
        "envdoctor.commands.diff",
        "diff_cmd",
        "What changed from report A to report B (versions, GPUs, check verdicts); exit 1 on a regression.",
    ),
    "fleet": (
        "envdoctor.commands.fleet",
        "fleet_cmd",
        "Summarise per-node JSON reports (files or directories): failing checks, and nodes that differ.",
    ),
    "bench": ("envdoctor.commands.bench", "bench_cmd", "Time a training step of a small reference model: eager vs torch.compile modes."),
    "baseline": (
        "envdoctor.commands.baseline",
        "baseline_cmd",
        "Record this environment into FILE, for `envdoctor check --baseline FILE` later.",
    ),
    "bundle": (
        "envdoctor.commands.bundle",
        "bundle_cmd",
        "Run the checks and write one archive a maintainer can reproduce from: the redacted reports, a standalone repro of each failing smoke with its captured output, the steering environment variables, nvidia-smi -q and a manifest.",
    ),
    "triage-event": (
        "envdoctor.commands.triage_event",
        "triage_event_cmd",
        "The Markdown reply to a GitHub issues event payload ($GITHUB_EVENT_PATH): the likely cause with a hidden marker, or nothing when the issue shows nothing to read.",
    ),
    "slurm-health": (
        "envdoctor.adapters.slurm",
        "slurm_health_cmd",
        "Slurm HealthCheckProgram: drain this node when a check fails, resume it once healthy (only its own drains).",
    ),
    "npd": (
        "envdoctor.adapters.npd",
        "npd_cmd",
        "node-problem-detector custom plugin: exit 0 OK, 1 problem, 2 could not judge; one line of at most 80 bytes.",
    ),
    "triage": (
        "envdoctor.commands.triage",
        "triage_cmd",
        "The likely cause of a bug report: FILE (or - for standard input) holds a pasted issue body or any part of it (collect_env, nvidia-smi, pip list, a traceback). Exit 1 when a cause is found.",
    ),
}


class LazyGroup(click.Group):
    """A group whose commands (``COMMANDS``) are imported when first looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in COMMANDS:
            import importlib

            module, attr, _ = COMMANDS[name]
            self.add_command(getattr(importlib.import_module(module), attr), name)
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click's own listing, with a stand-in carrying the help text for a command not loaded.
        rows = [(n, self.commands.get(n) or click.Command(n, help=COMMANDS[n][2])) for n in self.list_commands(ctx)]
        rows = [(n, c) for n, c in rows if not c.hidden]
        if rows:
            # The whole first paragraph, wrapped: click's short help cuts it mid-sentence at ~45 characters.
            with formatter.section("Commands"):
                formatter.write_dl([(n, " ".join((c.help or "").split("\n\n")[0].split())) for n, c in rows])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="envdoctor")
def cli() -> None:
    """Will PyTorch, Triton, torch.compile and torch_xla work on this machine? If not, why?"""


def _usage_errors() -> tuple[type[Exception], ...]:
    """ConfigError and PlanError, from the modules that are loaded: one that is not loaded
    cannot have raised, and importing config (expectations, packaging) would slow `list`."""
    found = []
    for module, name in (("envdoctor.core.config", "ConfigError"), ("envdoctor.core.plan", "PlanError")):
        if module in sys.modules:
            found.append(getattr(sys.modules[module], name))
    return tuple(found)


def _exit_interrupted() -> NoReturn:
    """Ctrl-C, TERM or HUP before a report existed: one line, exit 130. The run's children and
    temporary files are gone already (the runner's and the probe client's finally blocks); the
    process leaves at once, so no late interrupt during interpreter shutdown can turn 130 into
    death by SIGINT (seen 1 in 10 times when TERM came 0.2 s into a run)."""
    click.echo("envdoctor: interrupted", err=True)
    reaper.reap()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(ExitCode.INTERRUPTED)


def _resource_limit(e: BaseException) -> str:
    """One line when ``e`` is the environment refusing a thread or a process (``ulimit -u``,
    a container's pids limit), not a bug; "" otherwise."""
    import errno

    thread = isinstance(e, RuntimeError) and "can't start new thread" in str(e)
    if not (thread or (isinstance(e, BlockingIOError) and e.errno == errno.EAGAIN)):  # fork/clone: EAGAIN
        return ""
    what = "a thread" if thread else "a process"
    return (
        f"cannot start {what}: the limit on processes and threads is reached (ulimit -u, or the container's pids limit); "
        "raise it, or run envdoctor where fewer processes run"
    )


def main(argv: list[str] | None = None) -> None:
    from envdoctor.core.streams import guarded_streams

    signals.install_run()  # INT, TERM and HUP: stop the run, print the partial report, exit 130
    try:
        # Inside the try: a Ctrl-C that lands while the reaper is set up is an interruption
        # (130, no traceback), like one anywhere later (seen 2 in 12 runs of an early SIGINT).
        reaper.install()  # a daemon forked below envdoctor comes back to it, and goes at exit
        with guarded_streams():  # closed, full or ASCII standard streams: see core.streams
            code = _run(argv)
    except KeyboardInterrupt:
        _exit_interrupted()
    finally:
        reaper.reap()
    sys.exit(code)


def _run(argv: list[str] | None) -> int:
    """The command's exit code; every failure becomes one line on stderr and its code."""
    from envdoctor.core.streams import StdoutError, emit, stdout_failed

    try:
        code = cli.main(args=argv, prog_name="envdoctor", standalone_mode=False)
    except _usage_errors() as e:  # evaluated only when an exception is on its way out
        code = getattr(e, "exit_code", ExitCode.USAGE)
        for line in str(e).splitlines():  # their message
            click.echo(f"Error: {line}" if code is ExitCode.USAGE else f"envdoctor: {line}", err=True)
        return code
    except (click.exceptions.Abort, KeyboardInterrupt):
        _exit_interrupted()
    except click.ClickException as e:
        e.show()
        return ExitCode.USAGE
    except SystemExit:
        raise
    except BrokenPipeError:  # `envdoctor list | head -1`: the reader has what it wanted
        emit("")  # points stdout at /dev/null, so the exit flush is quiet too
        return ExitCode.OK
    except StdoutError as e:  # `>&-`, `> /dev/full`
        click.echo(f"envdoctor: {stdout_failed(e)}", err=True)
        return ExitCode.USAGE
    except Exception as e:  # noqa: BLE001 - never a traceback for the user
        if os.environ.get("ENVDOCTOR_DEBUG"):
            raise
        limit = _resource_limit(e)
        if limit:
            click.echo(f"envdoctor: {limit}", err=True)
            sys.exit(ExitCode.USAGE)
        click.echo(f"envdoctor: internal error: {type(e).__name__}: {e}", err=True)
        click.echo("Please report this at the envdoctor issue tracker (ENVDOCTOR_DEBUG=1 shows the traceback).", err=True)
        return ExitCode.INTERNAL
    return code if isinstance(code, int) else ExitCode.OK
