"""Every `envdoctor ...` command line written in README.md and docker/ is accepted by the CLI.

Documentation rots silently: an option renamed in cli.py leaves a Dockerfile whose build step
or HEALTHCHECK fails with "No such option". Each command is parsed with click's
``make_context`` (options, choices and types validated, nothing run); ``check`` commands also
have their ``--expect`` values and ``--select`` patterns validated as a run would.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import click
import pytest

from envdoctor.cli import cli

REPO = Path(__file__).resolve().parent.parent
PUNCT = {"&&", "||", ";", "|", "&", "(", ")", "|&", ";;"}
# `pip install envdoctor`, `from envdoctor import check`, `COPY envdoctor /opt/...`, a YAML
# `name: envdoctor reports`, "the envdoctor reports" in a comment: not runs.
NOT_A_RUN = {"install", "uninstall", "show", "download", "inject", "from", "import", "copy", "add", "cd", "mkdir", "name:", "the", "an"}


def doc_files() -> list[Path]:
    files = [REPO / "README.md"]
    files += sorted(p for p in (REPO / "docker").rglob("*") if p.is_file())
    return [p for p in files if p.is_file()]


def with_build_defaults(text: str) -> str:
    """A Dockerfile's ``$NAME``/``${NAME}`` replaced by its ARG and ENV defaults, so that a build
    step or HEALTHCHECK that takes an argument is checked with the value the file gives it."""
    values: dict[str, str] = {}
    for name, value in re.findall(r"^(?:ARG|ENV)\s+(\w+)=(\S+)", text, re.M):
        values[name] = re.sub(r"\$\{?(\w+)\}?", lambda m: values.get(m.group(1), m.group(0)), value.strip('"'))
    return re.sub(r"\$\{?(\w+)\}?", lambda m: values.get(m.group(1), m.group(0)), text)


def code_texts(path: Path) -> list[str]:
    """The parts of a file that are commands: all of a Dockerfile/script/YAML (a Dockerfile's
    variables at their defaults); for Markdown, the fenced blocks (a Dockerfile snippet's
    variables at its defaults too) and the inline code spans."""
    text = path.read_text(encoding="utf-8")
    if path.name.startswith("Dockerfile"):
        return [with_build_defaults(text)]
    if path.suffix != ".md":
        return [text]
    fences = re.findall(r"^(```|~~~)[^\n]*\n(.*?)^\1", text, re.S | re.M)
    prose = re.sub(r"^(```|~~~)[^\n]*\n.*?^\1", "", text, flags=re.S | re.M)
    return [with_build_defaults(_commands_of_transcript(body)) for _, body in fences] + re.findall(r"`([^`\n]+)`", prose)


def _commands_of_transcript(body: str) -> str:
    """A block that shows a terminal session (``$ command`` then its output) holds commands on
    its ``$`` lines only; the output (``envdoctor 0.1.0 — Linux …``) is not a command."""
    prompts = [line[2:] for line in body.splitlines() if line.startswith("$ ")]
    return "\n".join(prompts) if prompts else body


def exec_arrays(text: str) -> tuple[list[list[str]], str]:
    """JSON exec forms (Dockerfile CMD/HEALTHCHECK, Kubernetes ``command: [...]``) as argv
    lists, and the text without them."""
    found = []

    def take(m: re.Match) -> str:
        try:
            argv = json.loads(m.group(0))
        except ValueError:
            return m.group(0)
        if isinstance(argv, list) and all(isinstance(a, str) for a in argv):
            found.append(argv)
            return " "
        return m.group(0)

    rest = re.sub(r'\[\s*"[^\[\]\n]*"\s*\]', take, text)
    return found, rest


def tokens(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # an apostrophe in a prose span
        return line.split()


def commands_in_shell(text: str) -> list[list[str]]:
    """Every envdoctor invocation's arguments in shell-like text."""
    out: list[list[str]] = []
    text = re.sub(r"\\\n", " ", text)  # continuation lines
    for line in text.splitlines():
        toks = tokens(line)
        for i, tok in enumerate(toks):
            is_cli = tok == "envdoctor" or tok.endswith("/bin/envdoctor")  # also `python -m envdoctor`
            if not is_cli or (i and toks[i - 1].lower() in NOT_A_RUN):
                continue
            args = []
            for t in toks[i + 1 :]:
                if t in PUNCT:
                    break
                args.append(t)
            if args:
                out.append(args)
    return out


def commands(path: Path) -> list[list[str]]:
    out = []
    for text in code_texts(path):
        arrays, rest = exec_arrays(text)
        for argv in arrays:
            if Path(argv[0]).name == "envdoctor":
                out.append(argv[1:])
            else:  # ["/bin/sh", "-c", "envdoctor check ... || exit 1"]
                for a in argv:
                    out += commands_in_shell(a)
        out += commands_in_shell(rest)
    return [c for c in out if c]


ALL = [(p.relative_to(REPO).as_posix(), c) for p in doc_files() for c in commands(p)]


def accept(args: list[str]) -> None:
    """Parse like a run would, without running; raises click errors."""
    name, rest = args[0], args[1:]
    with click.Context(cli, info_name="envdoctor") as group_ctx:
        cmd = cli.get_command(group_ctx, name)
        if cmd is None:
            raise click.UsageError(f"No such command '{name}'")
        ctx = cmd.make_context(name, list(rest), parent=group_ctx)
        if name == "check":
            from envdoctor.core import config
            from envdoctor.core.registry import discover
            from envdoctor.core.selection import split_patterns, unmatched

            try:  # the CLI maps a ConfigError (no longer a click exception) to exit 2 the same way
                expects = config.from_cli(ctx.params.get("expects") or ())
            except config.ConfigError as e:
                raise click.UsageError(e.message) from None
            conf = config.Config(None, config.Expectations().merged(expects))
            known = [*discover(tuple(ctx.params.get("checks_path") or ())).checks, *config.expectation_specs(conf, ctx.params["profile"])]
            missing = unmatched(known, split_patterns(ctx.params["select"]))
            if missing:
                raise click.UsageError(f"no check matches {missing}")


def test_the_docs_have_commands_to_check():
    files = {f for f, _ in ALL}
    assert "README.md" in files
    assert any(f.startswith("docker/") for f in files)
    # The Dockerfile's build step and its HEALTHCHECK are among them.
    docker = [" ".join(c) for f, c in ALL if f == "docker/Dockerfile"]
    assert any("--profile build" in c for c in docker)
    assert any("--profile liveness" in c and "--quiet" in c for c in docker)


@pytest.mark.parametrize(("where", "args"), ALL, ids=[f"{f}: envdoctor {' '.join(a)}" for f, a in ALL])
def test_documented_command_is_accepted(where, args):
    try:
        accept(args)
    except click.ClickException as e:
        pytest.fail(f"{where}: `envdoctor {' '.join(args)}` is rejected: {e.format_message()}")


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--profil", "build"],
        ["check", "--profile", "bulid"],
        ["chekc"],
        ["check", "--expect", "tourch>=2"],
        ["check", "-s", "nope"],
    ],
)
def test_a_wrong_command_is_caught(args):
    with pytest.raises(click.ClickException):
        accept(args)


def test_extraction_forms():
    sample = (
        "RUN envdoctor check --profile build && echo ok\n"
        'HEALTHCHECK CMD ["/bin/sh", "-c", "envdoctor check --quiet || exit 1"]\n'
        'CMD ["envdoctor", "list"]\n'
        "pip install envdoctor  # not a run\n"
        "python -m envdoctor check -v \\\n  --strict\n"
    )
    arrays, rest = exec_arrays(sample)
    got = [a[1:] for a in arrays if a[0] == "envdoctor"] + [
        c for a in arrays if a[0] != "envdoctor" for s in a for c in commands_in_shell(s)
    ]
    got += commands_in_shell(rest)
    assert sorted(map(tuple, got)) == sorted(
        [("list",), ("check", "--quiet"), ("check", "--profile", "build"), ("check", "-v", "--strict")]
    )
