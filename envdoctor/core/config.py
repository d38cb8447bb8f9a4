"""The config file: expectations for an image or a fleet, kept beside the project.

Found in the project, and no further: from the current directory upwards, the first
``envdoctor.toml``, or ``pyproject.toml`` with a ``[tool.envdoctor]`` table, looking no higher
than the project's root (a directory with ``.git`` or ``pyproject.toml``) or the user's home;
or named with ``--config FILE``. A directory that belongs to someone other than the user or
root, or that anyone may write to (``/tmp``), ends the search unread: another user's
``/tmp/envdoctor.toml`` never steers a run. A config file found that another user owns, that
anyone may write to, or that is not a regular file (a FIFO) is refused (exit 2); a named one
is refused when anyone may write to it or it is not a regular file. The report says which
config was used and which were left unread (``options.config``). The format (the same keys under ``[tool.envdoctor]`` in pyproject.toml)::

    must_pass = ["triton.torch_pin"]   # checks that must pass (ids, prefixes or tags)
    skip = ["system.disk"]             # checks to leave out

    [expect]
    python = ">=3.10"
    torch = ">=2.5"                    # or "none": torch is not expected here
    torch_cuda = "==13.0"
    triton = ">=3.5"
    driver = ">=570"
    gpus = 8                           # or ">=4"
    gpu_name = "*H200*"
    gpu_memory = "140GB"               # minimum per GPU

and, above ``[expect]``, the files a run compares against (relative to the config file):
``baseline = "baseline.json"`` (like ``--baseline``) and ``lock = "requirements.txt"`` (like
``--lock``); the command line's options override them.

Every mistake (malformed TOML, an unknown key, a wrong type, a bad specifier) is one message
naming the file and the key, and the usage-error exit code (2).
"""

from __future__ import annotations

import dataclasses
import os
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envdoctor.core.api import CheckSpec
from envdoctor.core.exitcode import ExitCode
from envdoctor.core.expect import LIST_KEYS, Expectation, ExpectationError, Expectations, for_profile, parse, split_cli, to_spec

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, from PyPI (a dependency there)
    import tomli as tomllib

FILENAME = "envdoctor.toml"
TOP_KEYS = ("expect", *LIST_KEYS)
INPUT_KEYS = ("baseline", "lock")  # file paths, like --baseline and --lock


class ConfigError(Exception):
    """A config or --expect mistake: one line (``message``); the CLI shows it and exits 2."""

    exit_code = ExitCode.USAGE

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Config:
    path: str | None
    expectations: Expectations
    baseline: str | None = None  # resolved against the config file's directory
    lock: str | None = None
    found: str = "none"  # how path was chosen: "--config", "found" (searched), "none"
    not_read: tuple[str, ...] = ()  # "FILE: why" for config files the search left unread

    def describe(self) -> dict[str, Any]:
        """What the report records (``options.config``)."""
        return {"path": self.path, "from": self.found, "not_read": list(self.not_read)}


@dataclass(frozen=True)
class Search:
    """What :func:`search` found: the config file (or None) and the files it left unread."""

    path: Path | None
    not_read: tuple[str, ...] = ()


PROJECT_MARKERS = (".git", "pyproject.toml")


def find(start: str | Path | None = None) -> Path | None:
    """The project's config file (see the module's docstring), or None."""
    return search(start).path


def search(start: str | Path | None = None, home: str | Path | None = None) -> Search:
    """From ``start`` (the current directory) upwards to the project's root or ``home`` (the
    user's), through directories the user or root owns and others may not write to."""
    here = Path(start or Path.cwd()).resolve()
    top = _home(home)
    not_read: list[str] = []
    for d in (here, *here.parents):
        why = _untrusted_dir(d)
        if why:
            not_read += [f"{c}: {why}" for c in (d / FILENAME, d / "pyproject.toml") if os.path.lexists(c)]
            break
        found = _candidate(d, not_read)
        if found or d == top or any(os.path.lexists(d / m) for m in PROJECT_MARKERS):
            return Search(found, tuple(not_read))
    return Search(None, tuple(not_read))


def _home(home: str | Path | None) -> Path | None:
    try:
        return Path(home or Path.home()).resolve()
    except (RuntimeError, OSError, KeyError):
        return None  # no HOME and no passwd entry (a container's arbitrary uid)


def _owner_ok(uid: int) -> bool:
    return uid in (os.geteuid(), 0)


def _untrusted_dir(d: Path) -> str | None:
    """Why files in ``d`` are not read (or None): another user's, or anyone may write there."""
    try:
        st = d.stat()
    except OSError as e:
        return f"its directory cannot be examined ({e.strerror or e})"
    if not _owner_ok(st.st_uid):
        return f"its directory belongs to uid {st.st_uid}, not this user (uid {os.geteuid()}) or root"
    if st.st_mode & stat.S_IWOTH:
        return "anyone may write to its directory"
    return None


def _file_problem(p: Path, *, named: bool) -> str | None:
    """Why the config file ``p`` is not read (or None): a FIFO or device, a file anyone may
    write to, or (found, not named) another user's."""
    try:
        st = p.stat()
    except FileNotFoundError:
        return None  # read_config says it does not exist
    except OSError as e:
        return f"it cannot be examined ({e.strerror or e})"
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    if st.st_mode & stat.S_IWOTH:
        return "anyone may write to it (chmod o-w, if it is yours)"
    if not named and not _owner_ok(st.st_uid):
        return f"it belongs to uid {st.st_uid}, not this user (uid {os.geteuid()}) or root (name it with --config to use it)"
    return None


def _refuse(p: Path, why: str) -> ConfigError:
    return ConfigError(f"config file {p} not read: {why}")


def _candidate(d: Path, not_read: list[str]) -> Path | None:
    """The config file in the trusted directory ``d``: its envdoctor.toml (refused with
    ConfigError when not trustworthy), or its pyproject.toml with [tool.envdoctor] (one that
    is not trustworthy is left unread: it may be the project's, not ours)."""
    own = d / FILENAME
    if os.path.lexists(own):
        why = _file_problem(own, named=False)
        if why:
            raise _refuse(own, why)
        return own
    py = d / "pyproject.toml"
    if not os.path.lexists(py):
        return None
    why = _file_problem(py, named=False)
    if why:
        not_read.append(f"{py}: {why}")
        return None
    return py if _mentions_us(py) else None


def _mentions_us(pyproject: Path) -> bool:
    # A project's own pyproject.toml may be broken or huge; only ours matters, so parse only
    # files that mention the table (a broken one that does is then reported, naming it).
    try:
        text = pyproject.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if "tool.envdoctor" not in text:
        return False
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return True
    return isinstance(data.get("tool"), dict) and "envdoctor" in data["tool"]


def read(path: str | Path) -> Expectations:
    """Parse and validate one config file's expectations."""
    return read_config(path).expectations


def _input_paths(data: dict[str, Any], p: Path, prefix: str) -> dict[str, str]:
    """Take ``baseline`` and ``lock`` out of ``data``: paths relative to the config file."""
    out = {}
    for key in INPUT_KEYS:
        if key not in data:
            continue
        value = data.pop(key)
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{p}: {prefix}{key}: want a file path (a string), got {value!r}")
        out[key] = str(p.parent / Path(value).expanduser())
    return out


def read_config(path: str | Path) -> Config:
    """Parse and validate one config file."""
    from envdoctor.core.untrusted import LIMITS, InputError, decode_utf8, load_toml, read_bytes

    p = Path(path)
    try:
        text = decode_utf8(read_bytes(str(p), LIMITS["config"]))
    except InputError as e:
        if e.reason == "no such file":
            raise ConfigError(f"config file {p} does not exist") from None
        raise ConfigError(
            f"cannot read config file {p}: it {e.reason}" if e.reason.startswith("is ") else f"cannot read config file {p}: {e.reason}"
        ) from None
    try:
        data = load_toml(text)  # bounded depth; no infinite or 65-bit number reaches the parsers below
    except InputError as e:
        raise ConfigError(f"{p}: {e.reason}") from None
    prefix = ""
    if p.name == "pyproject.toml":
        tool = data.get("tool")
        if not isinstance(tool, dict) or "envdoctor" not in tool:
            raise ConfigError(f"{p}: has no [tool.envdoctor] table")
        data, prefix = tool["envdoctor"], "tool.envdoctor."
        if not isinstance(data, dict):
            raise ConfigError(f"{p}: tool.envdoctor must be a table, got {type(data).__name__}")
    data = dict(data)
    inputs = _input_paths(data, p, prefix)
    return Config(str(p), validate(data, str(p), prefix), baseline=inputs.get("baseline"), lock=inputs.get("lock"))


def validate(data: dict[str, Any], origin: str, prefix: str = "") -> Expectations:
    items: list[Expectation] = []
    for key, value in data.items():
        if key not in TOP_KEYS:
            raise ConfigError(
                f"{origin}: unknown key '{prefix}{key}' (known: {', '.join(TOP_KEYS)}; version and GPU keys go under [{prefix}expect])"
                f"; files to compare against: {', '.join(INPUT_KEYS)}"
            )
        if key == "expect":
            if not isinstance(value, dict):
                raise ConfigError(f"{origin}: '{prefix}expect' must be a table ([{prefix}expect]), got {type(value).__name__}")
            for k, v in value.items():
                if k in LIST_KEYS:
                    raise ConfigError(f"{origin}: '{prefix}expect.{k}' belongs at the top level: write {k} = [...] above [{prefix}expect]")
                items.append(_parse(k, v, origin, f"{prefix}expect."))
        else:
            items.append(_parse(key, value, origin, prefix))
    out = Expectations().merged(items)
    both = set(out.must_pass) & set(out.skip)
    if both:
        raise ConfigError(f"{origin}: {', '.join(sorted(both))} is in both '{prefix}must_pass' and '{prefix}skip'")
    return out


def _parse(key: str, value: Any, origin: str, where: str) -> Expectation:
    try:
        return parse(key, value, origin)
    except ExpectationError as err:
        raise ConfigError(f"{origin}: {where}{key}: {err.message}") from None


def from_cli(values: Sequence[str]) -> list[Expectation]:
    """``--expect`` values, each validated; errors name the option and the value."""
    out = []
    for text in values:
        try:
            key, raw = split_cli(text)
            out.append(parse(key, raw, "--expect"))
        except ExpectationError as err:
            raise ConfigError(f"--expect '{text}': {err.message}") from None
    return out


def load(config: str | None = None, expects: Sequence[str] = (), start: str | Path | None = None) -> Config:
    """The run's expectations: the config file (named, or found) overlaid with ``--expect``."""
    if config:
        why = _file_problem(Path(config), named=True)
        if why:
            raise _refuse(Path(config), why)
        found, how = Search(Path(config)), "--config"
    else:
        found, how = search(start), "found"
    conf = read_config(found.path) if found.path else Config(None, Expectations())
    return dataclasses.replace(
        conf,
        expectations=conf.expectations.merged(from_cli(expects)),
        found=how if found.path else "none",
        not_read=found.not_read,
    )


def expectation_specs(conf: Config, profile: str) -> list[CheckSpec]:
    """The expect.* checks a run with this config and profile has (what ``--select expect`` can
    name); the run plan (``envdoctor.core.plan``) builds the same from the same functions."""
    return [to_spec(e) for e in for_profile(conf.expectations, profile).facts]
