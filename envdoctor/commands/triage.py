"""``envdoctor triage FILE``: the likely cause of a bug report from its pasted text.

Thin: read the input (a file or ``-``), read the paste (``envdoctor.sources``), judge it
(``envdoctor.core.triage``), render it (``envdoctor.reporters.triage``). Never imports torch.
Exit codes: 0 no environment problem found (or nothing recognisable), 1 a cause found,
2 the input cannot be read (missing, a directory, binary, empty).
"""

from __future__ import annotations

import os

import click

from envdoctor.console import emit, writable_target, write
from envdoctor.core.exitcode import ExitCode
from envdoctor.core.untrusted import LIMITS

MAX_BYTES = LIMITS["paste"]


class InputError(Exception):
    pass


def _read_bytes(path: str) -> bytes:
    """At most MAX_BYTES + 1 bytes (the paste reader says the cut); only a regular file or
    standard input (a pipe within its deadline)."""
    from envdoctor.core.untrusted import InputError as Unusable
    from envdoctor.core.untrusted import read_bytes

    try:
        return read_bytes(path, MAX_BYTES, head=True)
    except Unusable as e:
        name = "standard input" if path == "-" else path
        if e.reason.startswith("is a directory"):
            raise InputError(f"{path} is a directory; give the file holding the paste") from None
        raise InputError(f"cannot read {name}: {e.reason}" if not e.reason.startswith(("is ", "sent ")) else f"{name} {e.reason}") from None


def decode(data: bytes, name: str) -> str:
    """Text from the bytes of a paste: UTF-8 (or UTF-16 with its BOM, as Windows tools write),
    undecodable bytes replaced. Binary data (NUL bytes, mostly control bytes) is refused."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace")
    head = data[:65536]
    control = sum(1 for b in head if b < 9 or 13 < b < 32)
    if b"\x00" in head or (head and control / len(head) > 0.1):
        raise InputError(f"{name} looks binary, not text pasted from a terminal or an issue")
    text = data.decode("utf-8-sig", "replace")
    if not text.strip():
        raise InputError(f"{name} is empty: paste the issue body, collect_env or nvidia-smi output, or the error")
    return text


def read_input(path: str) -> str:
    """The paste: the text of the file (or standard input), or, for a bundle that
    ``envdoctor bundle`` wrote, its report and captured logs (envdoctor.sources.bundle)."""
    name = "standard input" if path == "-" else path
    data = _read_bytes(path)
    from envdoctor.sources import bundle

    if bundle.is_bundle(data):
        try:
            return decode(bundle.paste_text(data[:MAX_BYTES]).encode("utf-8"), name)
        except bundle.BundleError as e:
            raise InputError(f"{name} {e}") from None
    return decode(data, name)


@click.command("triage")
@click.argument("file", metavar="FILE")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the answer to FILE instead of stdout.")
@click.option("--checks-path", multiple=True, type=click.Path(), help="Also load checks and signatures from *.py in this directory.")
def triage_cmd(file, fmt, output, checks_path) -> None:
    """The likely cause of a bug report: FILE (or - for standard input) holds a pasted issue body
    or any part of it (collect_env, nvidia-smi, pip list, a traceback). Exit 1 when a cause is found."""
    from envdoctor.core.registry import discover
    from envdoctor.core.triage import triage
    from envdoctor.reporters.triage import render
    from envdoctor.sources import read_paste

    text = prepare(output, "triage", read_input, file, InputError)
    result = triage(discover(tuple(checks_path), paste=True), read_paste(text), text)
    answer = render(result, fmt, "standard input" if file == "-" else os.path.basename(file))
    deliver(answer, output, "triage")
    raise SystemExit(ExitCode.FAILED if result.found else ExitCode.OK)


def prepare(output: str | None, command: str, load, arg: str, errors: type[Exception]):
    """Check that ``output`` is writable, then ``load(arg)``; an ``errors`` exception is one line, exit 2."""
    if output:
        writable_target(output)
    try:
        return load(arg)
    except errors as e:
        click.echo(f"envdoctor {command}: {e}", err=True)
        raise SystemExit(ExitCode.USAGE) from None


def deliver(answer: str, output: str | None, command: str) -> None:
    """The answer to ``output`` (a file) or stdout; a stdout that cannot take it is one line, exit 2."""
    if output:
        write(output, answer)
        return
    problem = emit(answer)
    if problem:
        click.echo(f"envdoctor {command}: {problem}", err=True)
        raise SystemExit(ExitCode.USAGE)
