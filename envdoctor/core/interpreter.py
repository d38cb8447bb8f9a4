"""The interpreter examined: the doctor's own (default) or another one (``--python PATH``).

For another interpreter, everything that the checks would read from the doctor's own process
(sys.path, sysconfig, the installed distributions) is read once, by that interpreter, with a
deadline (:func:`examine`); the probe worker is started with it too. The default run reads its
own process as before and pays nothing for this.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from envdoctor.core.subproc import last_line
from envdoctor.core.subproc import run as run_command

MIN_VERSION = (3, 10)  # what envdoctor's probe bodies need (requires-python)
QUERY_TIMEOUT = 30.0
_QUERY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_interpreter_query.py")
_MARKER = "envdoctor-interpreter: "


class InterpreterError(Exception):
    """--python names no usable interpreter: one line for the user (exit code 2)."""


@dataclass(frozen=True)
class Interpreter:
    """The ``interpreter`` special fact. ``facts`` is None for the doctor's own interpreter
    (checks read their own process then); for another, what :func:`examine` read there."""

    executable: str
    version: str
    sys_path: tuple[str, ...]
    prefix: str
    facts: Mapping[str, Any] | None = field(default=None, repr=False)

    @property
    def own(self) -> bool:
        return self.facts is None


def own() -> Interpreter:
    return Interpreter(sys.executable, platform.python_version(), tuple(sys.path), sys.prefix)


def examine(path: str, *, timeout: float = QUERY_TIMEOUT, env: Mapping[str, str] | None = None) -> Interpreter:
    """Run the facts query in the interpreter at ``path``; :class:`InterpreterError` (one
    line) when it is missing, not executable, not a Python, too old, or hangs."""
    exe = os.path.abspath(os.path.expanduser(path))
    if not os.path.exists(exe):
        raise InterpreterError(f"--python {path}: no such file")
    if os.path.isdir(exe):
        raise InterpreterError(f"--python {path}: is a directory, not an interpreter (e.g. {os.path.join(path, 'bin', 'python')})")
    if not os.access(exe, os.X_OK):
        raise InterpreterError(f"--python {path}: not executable")
    try:
        with open(_QUERY, encoding="utf-8") as f:
            source = f.read()
    except OSError as e:  # a broken envdoctor install
        raise InterpreterError(f"--python {path}: cannot read envdoctor's interpreter query {_QUERY}: {e.strerror or e}") from e
    res = run_command([exe, "-c", source], timeout=timeout, env=env, cwd="/")
    answer = next((line[len(_MARKER) :] for line in res.stdout.splitlines() if line.startswith(_MARKER)), None)
    if answer is None:
        if res.timed_out:
            raise InterpreterError(f"--python {path}: did not answer within {timeout:.0f}s")
        why = res.error or last_line(res.stderr) or ("it ran, but did not answer as Python does" if res.ok else res.describe())
        raise InterpreterError(f"--python {path}: not a working Python interpreter ({why})")
    try:
        facts = json.loads(answer)
        version = tuple(int(v) for v in facts["version_info"][:2])
    except (ValueError, KeyError, TypeError) as e:
        raise InterpreterError(f"--python {path}: answered something that is not envdoctor's interpreter query ({e})") from None
    if version < MIN_VERSION:
        need = ".".join(map(str, MIN_VERSION))
        raise InterpreterError(f"--python {path}: Python {facts.get('version')} is too old (envdoctor examines Python {need} or newer)")
    # sys.executable there: a venv's bin/python, not the base interpreter it links to; the path given if it has none.
    facts["executable"] = facts.get("executable") or exe
    return Interpreter(
        facts["executable"], str(facts.get("version", "")), tuple(facts.get("sys_path") or ()), str(facts.get("prefix", "")), facts
    )
