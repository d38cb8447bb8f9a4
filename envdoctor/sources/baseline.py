"""The ``baseline`` fact source: what an image was built with, read from files.

Two files describe it. A baseline (``envdoctor baseline FILE`` at build time, schema
``envdoctor-baseline/1``) holds the facts the conformance checks compare, exactly as they were
gathered live; a lock file (a requirements.txt with ``==`` pins, or a PEP 751 ``pylock.toml``)
holds the versions a project pinned. This module is the one definition of the baseline format:
the ``envdoctor baseline`` command writes it here, and ``check --baseline`` and the checks
read it here. Every problem with a file is one :class:`BaselineError` line.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from envdoctor.core.stack import Stack, from_facts

SCHEMA = "envdoctor-baseline/1"
SOURCE = "baseline"  # the origin the typed stack carries for facts read from a baseline


class BaselineError(ValueError):
    """A baseline or lock file that cannot be used: one line naming the file."""


@dataclass(frozen=True)
class Baseline:
    path: str
    facts: Mapping[str, Any]
    created: str = ""
    tool_version: str = ""
    not_recorded: Mapping[str, str] = field(default_factory=dict)

    def stack(self) -> Stack:
        """The recorded stack, typed, marked as coming from a baseline."""
        return from_facts(self.facts, source=SOURCE)

    def as_fact(self) -> dict[str, Any]:
        """The value of the ``baseline`` fact (JSON, as reports hold facts)."""
        return {
            "schema": SCHEMA,
            "source": SOURCE,
            "path": self.path,
            "created": self.created,
            "tool_version": self.tool_version,
            "facts": dict(self.facts),
        }


def baseline_data(facts: Mapping[str, Any], not_recorded: Mapping[str, str], tool_version: str) -> dict[str, Any]:
    """The file's content for ``facts`` gathered now."""
    return {
        "schema": SCHEMA,
        "tool_version": tool_version,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "facts": dict(facts),
        "not_recorded": dict(not_recorded),
    }


def write_baseline(path: str, facts: Mapping[str, Any], not_recorded: Mapping[str, str] | None = None, tool_version: str = "") -> dict:
    """Write a baseline atomically (a failed write leaves the previous file whole), secrets
    scrubbed; returns what was written. Raises OSError."""
    from envdoctor.core.outputs import write_atomic
    from envdoctor.core.redact import scrub_data

    data = scrub_data(baseline_data(facts, not_recorded or {}, tool_version))
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True, default=str) + "\n")
    return data


def _read_text(path: str, what: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise BaselineError(f"cannot read the {what} {path}: {getattr(e, 'strerror', None) or e}") from None


def load_baseline(path: str) -> Baseline:
    """Read and validate a baseline file; raises :class:`BaselineError`."""
    text = _read_text(path, "baseline")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("facts"), dict):
        raise BaselineError(f"{path} is not an envdoctor baseline (make one with `envdoctor baseline FILE`)")
    missing = data.get("not_recorded")
    return Baseline(
        path=path,
        facts=data["facts"],
        created=str(data.get("created") or ""),
        tool_version=str(data.get("tool_version") or ""),
        not_recorded={str(k): str(v) for k, v in missing.items()} if isinstance(missing, dict) else {},
    )


def parse_requirements(text: str, origin: str = "") -> dict[str, str]:
    """{canonical name: exact version} from ``name==version`` lines; options, URLs and
    editable lines are skipped; markers that do not apply here drop the line."""
    # packaging's requirement parser loads on use: `import envdoctor` reaches this module.
    from packaging.markers import InvalidMarker
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    pins: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-", "git+", "http:", "https:", "file:")):
            continue
        line = line.rstrip("\\").strip()
        try:
            req = Requirement(line)
        except (InvalidRequirement, InvalidMarker):
            continue
        if req.marker is not None and not req.marker.evaluate():
            continue
        exact = [s.version for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
        if exact:
            pins[canonicalize_name(req.name)] = exact[0]
    return pins


def parse_pylock(text: str) -> dict[str, str]:
    """{canonical name: version} from a pylock.toml (PEP 751) ``[[packages]]`` table."""
    from packaging.utils import canonicalize_name

    from envdoctor.core.config import tomllib  # tomllib, or tomli on Python 3.10

    data = tomllib.loads(text)
    packages = data.get("packages", [])
    if not isinstance(packages, list):
        raise ValueError("'packages' is not an array of tables")
    return {canonicalize_name(p["name"]): str(p["version"]) for p in packages if isinstance(p, dict) and p.get("name") and p.get("version")}


def load_lock(path: str) -> dict[str, Any]:
    """``{"path", "pins"}`` of a lock file (pylock.toml by its name, else requirements
    format); raises :class:`BaselineError` when it cannot be read or pins nothing exactly."""
    text = _read_text(path, "lock file")
    is_toml = os.path.basename(path).endswith(".toml")
    try:
        pins = parse_pylock(text) if is_toml else parse_requirements(text, path)
    except (ValueError, KeyError, TypeError) as e:  # TOMLDecodeError is a ValueError
        raise BaselineError(f"{path} is not a pylock.toml: {e}") from None
    if not pins:
        raise BaselineError(f"{path} pins nothing with == (a lock file lists name==version lines)")
    return {"path": path, "pins": pins}
