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


def _read_text(path: str, what: str, limit_key: str) -> str:
    from envdoctor.core.untrusted import LIMITS, InputError, decode_utf8, read_bytes

    try:
        return decode_utf8(read_bytes(path, LIMITS[limit_key]))
    except InputError as e:
        why = "No such file or directory" if e.reason == "no such file" else f"it {e.reason}" if e.reason.startswith("is ") else e.reason
        raise BaselineError(f"cannot read the {what} {path}: {why}") from None


def _newer(schema: Any) -> bool:
    """``envdoctor-baseline/N`` with N above ours: a file a newer envdoctor wrote."""
    head, _, n = str(schema).rpartition("/")
    return head == SCHEMA.rpartition("/")[0] and n.isdigit() and len(n) < 10 and int(n) > int(SCHEMA.rpartition("/")[2])


def load_baseline(path: str) -> Baseline:
    """Read and validate a baseline file; raises :class:`BaselineError`."""
    from envdoctor.core.report import bad_facts
    from envdoctor.core.untrusted import InputError, load_json

    text = _read_text(path, "baseline", "baseline")
    try:
        data = load_json(text)
    except InputError as e:
        if not e.syntax:
            raise BaselineError(f"{path} is not an envdoctor baseline ({e.reason})") from None
        data = None
    if isinstance(data, dict) and _newer(data.get("schema")):
        raise BaselineError(
            f"{path} was written by a newer envdoctor (schema {str(data['schema'])[:40]}; this one reads {SCHEMA}): "
            "upgrade envdoctor, or make the baseline again with this one"
        )
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("facts"), dict):
        raise BaselineError(f"{path} is not an envdoctor baseline (make one with `envdoctor baseline FILE`)")
    problem = bad_facts(data["facts"])
    if problem:
        raise BaselineError(f"{path} is not an envdoctor baseline ({problem})")
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

    from envdoctor.core.untrusted import load_toml

    data = load_toml(text)
    packages = data.get("packages", [])
    if not isinstance(packages, list):
        raise ValueError("'packages' is not an array of tables")
    return {canonicalize_name(p["name"]): str(p["version"]) for p in packages if isinstance(p, dict) and p.get("name") and p.get("version")}


def load_lock(path: str) -> dict[str, Any]:
    """``{"path", "pins"}`` of a lock file (pylock.toml by its name, else requirements
    format); raises :class:`BaselineError` when it cannot be read or pins nothing exactly."""
    text = _read_text(path, "lock file", "lock")
    is_toml = os.path.basename(path).endswith(".toml")
    try:
        pins = parse_pylock(text) if is_toml else parse_requirements(text, path)
    except (ValueError, KeyError, TypeError) as e:  # TOMLDecodeError is a ValueError
        raise BaselineError(f"{path} is not a pylock.toml: {e}") from None
    if not pins:
        raise BaselineError(f"{path} pins nothing with == (a lock file lists name==version lines)")
    return {"path": path, "pins": pins}
