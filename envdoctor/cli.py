"""Command line: the click group, the commands registered on it, and the one place that turns
every outcome into an exit code (:class:`envdoctor.core.exitcode.ExitCode`)."""

from __future__ import annotations

import os
import sys

import click

from envdoctor import __version__
from envdoctor.commands.bench import bench_cmd
from envdoctor.commands.check import check_cmd, list_cmd
from envdoctor.commands.diff import diff_cmd
from envdoctor.commands.fleet import fleet_cmd
from envdoctor.core import signals
from envdoctor.core.exitcode import ExitCode


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="envdoctor")
def cli() -> None:
    """Will PyTorch, Triton, torch.compile and torch_xla work on this machine? If not, why?"""


for _command in (check_cmd, list_cmd, diff_cmd, fleet_cmd, bench_cmd):
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    signals.install_run()  # INT, TERM and HUP: stop the run, print the partial report, exit 130
    try:
        code = cli.main(args=argv, prog_name="envdoctor", standalone_mode=False)
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
    except Exception as e:  # noqa: BLE001 - never a traceback for the user
        if os.environ.get("ENVDOCTOR_DEBUG"):
            raise
        click.echo(f"envdoctor: internal error: {type(e).__name__}: {e}", err=True)
        click.echo("Please report this at the envdoctor issue tracker (ENVDOCTOR_DEBUG=1 shows the traceback).", err=True)
        sys.exit(ExitCode.INTERNAL)
    sys.exit(code if isinstance(code, int) else ExitCode.OK)
