"""The declared index of the built-in modules that ``envdoctor triage`` need not import.

Triage runs only the checks that can judge a paste; every other check it lists as "cannot be
judged from this paste", by its id, title and the facts it would need (their ``ask`` texts). A
built-in module that holds no paste-capable check, no pasted-fact adapter and no error signature
of its own contributes only that description, so triage reads it from this index (a JSON file the
built-in package ships and declares as ``LIVE_INDEX``) instead of importing the module: about a
fifth of a paste's start-up. Plugins and ``--checks-path`` modules are always imported.

The index is data written from full discovery (``python tools/regen_live_index.py``), never by
hand; tests/test_live_index.py fails when it differs from what importing every module finds,
and when triage's answer from it differs from its answer with every module imported.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from types import ModuleType
from typing import Any, NoReturn

from envdoctor.core.api import CheckSpec, FactSpec, Param

KEY = "LIVE_INDEX"  # what the built-in package declares: the index file, relative to its folder


def document(package: ModuleType) -> Mapping[str, Any]:
    """The package's index as read, or empty when it declares none or the file cannot be read."""
    name = getattr(package, KEY, None)
    folder = list(getattr(package, "__path__", []) or [""])[0]
    if not name or not folder:
        return {}
    try:
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def load(package: ModuleType, doc: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    """{module's last name: its checks and facts} from the package's index (``doc``: the index
    already read); empty (every module is imported) when the package declares none or the file
    cannot be read."""
    modules = (document(package) if doc is None else doc).get("modules")
    return modules if isinstance(modules, dict) else {}


def needles(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """The built-in catalog's needles by pattern (core.signatures.needle_key), computed when the
    index was written; empty (each pattern is parsed at first use) when the index has none."""
    found = doc.get("needles")
    return found if isinstance(found, dict) else {}


def _not_loaded(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise RuntimeError("a check or fact from the live index runs only once its module is imported")


def specs(entry: Mapping[str, Any], folder: str) -> tuple[list[CheckSpec], list[FactSpec]]:
    """The checks and facts of one indexed module, as its import would declare them (their
    functions stand-ins: triage never runs them)."""
    checks = [
        CheckSpec(
            c["id"],
            _not_loaded,
            c["title"],
            tuple(c["tags"]),
            tuple(Param(n, bool(o)) for n, o in c["params"]),
            c["timeout"],
            sources=tuple(c["sources"]),
            blame=tuple(c["blame"]),
            repro=os.path.join(folder, c["repro"]) if c["repro"] else "",
        )
        for c in entry.get("checks", ())
    ]
    facts = [
        FactSpec(f["name"], _not_loaded, tuple(Param(n, bool(o)) for n, o in f["params"]), origin=f["origin"], ask=f["ask"])
        for f in entry.get("facts", ())
    ]
    return checks, facts


def describe(checks: list[CheckSpec], facts: list[FactSpec], folder: str) -> dict[str, Any]:
    """One module's entry: what :func:`specs` rebuilds."""
    return {
        "checks": [
            {
                "id": c.id,
                "title": c.title,
                "tags": list(c.tags),
                "params": [[p.name, p.optional] for p in c.params],
                "timeout": c.timeout,
                "sources": list(c.sources),
                "blame": list(c.blame),
                "repro": os.path.relpath(c.repro, folder).replace(os.sep, "/") if c.repro else "",
            }
            for c in checks
        ],
        "facts": [{"name": f.name, "params": [[p.name, p.optional] for p in f.params], "origin": f.origin, "ask": f.ask} for f in facts],
    }
