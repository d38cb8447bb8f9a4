"""Command line: the click group, the commands registered on it, and the one place that turns
every outcome into an exit code (:class:`envdoctor.core.exitcode.ExitCode`)."""

from __future__ import annotations

import os
import sys

import click

from envdoctor import __version__
from envdoctor.commands.baseline import baseline_cmd
from envdoctor.commands.bench import bench_cmd
from envdoctor.commands.check import check_cmd, list_cmd
from envdoctor.commands.diff import diff_cmd
from envdoctor.commands.fleet import fleet_cmd
from envdoctor.commands.triage import triage_cmd
from envdoctor.core import signals
from envdoctor.core.exitcode import ExitCode


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="envdoctor")
def cli() -> None:
    """Will PyTorch, Triton, torch.compile and torch_xla work on this machine? If not, why?"""


for _command in (check_cmd, list_cmd, diff_cmd, fleet_cmd, bench_cmd, baseline_cmd, triage_cmd):
    cli.add_command(_command)


def _tolerant_stdout() -> None:
    """A latin-1 or ASCII stdout cannot show every character a report may hold (a GPU name, a
    path): show '?' for those rather than fail (the reporters pick ASCII marks themselves)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if (stream.encoding or "").lower().replace("-", "") not in ("utf8", "utf8sig"):
                stream.reconfigure(errors="replace")
        except (AttributeError, ValueError, OSError):
            pass  # not a TextIOWrapper (embedded use, a test runner's capture)


def main(argv: list[str] | None = None) -> None:
    from envdoctor.core.config import ConfigError
    from envdoctor.core.plan import PlanError

    signals.install_run()  # INT, TERM and HUP: stop the run, print the partial report, exit 130
    _tolerant_stdout()
    try:
        code = cli.main(args=argv, prog_name="envdoctor", standalone_mode=False)
    except (ConfigError, PlanError) as e:
        for line in e.message.splitlines():
            click.echo(f"Error: {line}", err=True)
        sys.exit(ExitCode.USAGE)
    except click.exceptions.Abort:
        click.echo("envdoctor: interrupted", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except click.ClickException as e:
        e.show()
        sys.exit(ExitCode.USAGE)
    except KeyboardInterrupt:
        click.echo("envdoctor: interrupted", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except SystemExit:
        raise
    except BrokenPipeError:  # `envdoctor list | head -1`: the reader has what it wanted
        from envdoctor.commands.output import emit

        emit("")  # points stdout at /dev/null, so the exit flush is quiet too
        sys.exit(ExitCode.OK)
    except Exception as e:  # noqa: BLE001 - never a traceback for the user
        if os.environ.get("ENVDOCTOR_DEBUG"):
            raise
        click.echo(f"envdoctor: internal error: {type(e).__name__}: {e}", err=True)
        click.echo("Please report this at the envdoctor issue tracker (ENVDOCTOR_DEBUG=1 shows the traceback).", err=True)
        sys.exit(ExitCode.INTERNAL)
    sys.exit(code if isinstance(code, int) else ExitCode.OK)
