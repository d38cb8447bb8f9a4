"""Third-party checks, contained: each plugin distribution is imported and run in a child
interpreter of its own (a probe worker: core.probe), never in envdoctor's process.

The parent asks the host to :func:`describe` the distribution (its checks, the built-in facts
they need, its signatures and its load problems, as JSON) and, during the run, to
:func:`run_check` one check with the built-in facts' values. A plugin that segfaults, calls
``os._exit``, hangs at import or in a check, prints to standard output or monkeypatches
envdoctor's internals does so in that child: the worker's deadline, process-group kill and death
diagnosis (core.probe) turn it into an ``error`` row, and nothing it patched is the parent's.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata as md
import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from envdoctor.core.api import CheckSpec, Missing, Param, ProbeError, ProbeRaised
from envdoctor.core.registry import GROUP, SPECIALS, Registry, load_entry_points
from envdoctor.core.runner import ContainedOutcome
from envdoctor.core.signatures import Signature

TARGET = "envdoctor.core.plugin_host"
LOAD_TIMEOUT = 30.0  # seconds a distribution's modules may take to import (ENVDOCTOR_PLUGIN_LOAD_TIMEOUT)
LOAD_TIMEOUT_ENV = "ENVDOCTOR_PLUGIN_LOAD_TIMEOUT"
CONTAINED_FACTS = "contained_facts"  # the attribute of the run's probe client holding them
_HOST: dict[str, Registry] = {}
_OWN_LOCK = threading.Lock()  # in the child: the distribution's registry, loaded once


def dist_key(ep: md.EntryPoint) -> str:
    """The distribution an entry point belongs to: one host per distribution."""
    dist = getattr(ep, "dist", None)
    name = dist.metadata["Name"] if dist is not None else None
    return name or f"?[{ep.name}]"


# -- in the child ----------------------------------------------------------------------------


def _load(dist: str, builtin_facts: Sequence[str]) -> Registry:
    if dist in _HOST:
        return _HOST[dist]
    reg = Registry()
    load_entry_points(reg, eps=[e for e in md.entry_points(group=GROUP) if dist_key(e) == dist])
    for name in sorted(set(reg.facts) & set(builtin_facts)):
        taken = reg.facts.pop(name)
        reg.problem(
            f"plugin.fact.{name}",
            f"fact {name}",
            f"fact name {name!r} is provided by built-in and again by {taken.source}; the second is ignored",
            "Rename the plugin's fact (prefix it with the plugin's name), or use the existing fact.",
            taken.source,
        )
    reg.validate(known=builtin_facts)
    _HOST[dist] = reg
    return reg


def _needs(reg: Registry, params: Sequence[Param]) -> list[str]:
    """The facts outside the distribution (built-ins and specials) a check needs, through its own facts too."""
    todo, seen, out = [p.name for p in params], set(), []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in reg.facts:
            todo += [p.name for p in reg.facts[name].params]
        else:
            out.append(name)
    return sorted(out)


def describe(dist: str, builtin_facts: Sequence[str]) -> dict[str, Any]:
    from envdoctor.core.report import result_to_dict

    reg = _load(dist, builtin_facts)
    checks = [
        {
            "id": c.id,
            "title": c.title,
            "tags": list(c.tags),
            "timeout": c.timeout,
            "source": c.source,
            "sources": list(c.sources),
            "repro": c.repro,
            "needs": _needs(reg, c.params),
        }
        for c in reg.checks
    ]
    return {
        "checks": checks,
        "facts": sorted(reg.facts),
        "signatures": [dataclasses.asdict(s) for s in reg.signatures],
        "problems": [result_to_dict(p) for p in reg.problems],
    }


def run_check(
    dist: str, builtin_facts: Sequence[str], id: str, given: Mapping[str, Any], missing: Mapping[str, str], seconds: float | None
):
    """One check of the distribution, judged here by the engine's own runner: its row and the
    distribution's facts it gathered, as JSON."""
    from envdoctor.core.facts import FactStore
    from envdoctor.core.interpreter import Interpreter
    from envdoctor.core.probe import ProbeClient
    from envdoctor.core.report import result_to_dict
    from envdoctor.core.runner import evaluate

    reg = _load(dist, builtin_facts)
    spec = next(c for c in reg.checks if c.id == id)
    values: dict[str, Any] = {**given, **{n: Missing(n, why) for n, why in missing.items()}}
    if isinstance(values.get("interpreter"), dict):
        raw = values["interpreter"]
        values["interpreter"] = Interpreter(**{**raw, "sys_path": tuple(raw["sys_path"])})
    interp = values.get("interpreter")
    probe = ProbeClient(env=values.get("env"), python=None if interp is None or interp.own else interp.executable)
    probe.deadline = time.monotonic() + seconds if seconds else None
    values["probe"] = probe
    store = FactStore(reg.facts, given=values)
    try:
        row = result_to_dict(evaluate(spec, store, on_abandon=probe.abandon))
    finally:
        probe.close()
    facts = {
        n: o.value if o.available else {"unavailable": o.reason} if o.reason else {"error": o.error} for n, o in store.computed().items()
    }
    return {"row": row, "facts": facts}


# -- in envdoctor's process -------------------------------------------------------------------


def _wire(name: str, value: Any) -> Any:
    if name == "interpreter" and dataclasses.is_dataclass(value) and not isinstance(value, type):
        wired = dataclasses.asdict(value)
        return {**wired, "sys_path": list(wired["sys_path"])}
    if name == "env":
        return dict(value)
    return value


def _proxy(dist: str, builtin_facts: Sequence[str], lane: str, id: str, what: str, **kwargs: Any) -> None:
    probe = kwargs.pop("probe")
    # What cannot travel as JSON travels as its text (built-in facts are JSON already).
    given = json.loads(json.dumps({n: _wire(n, v) for n, v in kwargs.items() if not isinstance(v, Missing)}, default=str))
    missing = {n: v.reason for n, v in kwargs.items() if isinstance(v, Missing)}
    seconds = probe.deadline - time.monotonic() if probe.deadline is not None else None
    args = {"dist": dist, "builtin_facts": list(builtin_facts), "id": id, "given": given, "missing": missing, "seconds": seconds}
    answer = _own(probe).call(f"{TARGET}:run_check", args, timeout=seconds or 24 * 3600, lane=lane, what=what)
    # The distribution's facts go into the report beside the built-ins' (core.session reads them here).
    gathered = probe.__dict__.setdefault(CONTAINED_FACTS, {})
    gathered.update(answer.get("facts") or {})
    raise ContainedOutcome(answer["row"])


COMPANIONS = "companions"  # the attribute of the run's probe client: more clients it closes with it (core.session)


def _own(probe):
    """The client that starts hosts: the run's own, or under --python (whose workers boot the
    examined interpreter, without envdoctor) one of envdoctor's interpreter beside it."""
    if probe.python is None:
        return probe
    from envdoctor.core.probe import ProbeClient

    with _OWN_LOCK:
        companions = probe.__dict__.setdefault(COMPANIONS, [])
        if not companions:
            own = ProbeClient(extra_path=probe.extra_path[1:], env=probe.env)
            own.deadline = probe.deadline
            companions.append(own)
        return companions[0]


def add_described(reg: Registry, dist: str, desc: Mapping[str, Any], builtin_facts: Sequence[str]) -> None:
    """The host's description of ``dist`` into ``reg``: a check each (run through its host), its
    signatures and its problems."""
    from envdoctor.core.report import result_from_dict

    seen = {c.id: c for c in reg.checks}
    for row in desc.get("problems", ()):
        reg.problems.append(result_from_dict(row))
    for c in desc.get("checks", ()):
        if c["id"] in seen:
            reg.problem(
                f"plugin.duplicate.{c['id']}",
                c["title"],
                f"duplicate check id {c['id']}: defined by {seen[c['id']].source} and by {c['source']}; the second is ignored",
                "Rename one of the checks; ids must be unique.",
                c["source"],
            )
            continue
        needs = [n for n in c["needs"] if n != "probe"]
        func = functools.partial(_proxy, dist, builtin_facts, f"plugin {dist}", c["id"], f"plugin {c['source']}")
        params = (Param("probe", False), *(Param(n, True) for n in needs))
        spec = CheckSpec(
            c["id"],
            func,
            c["title"],
            tuple(c["tags"]),
            params,
            c["timeout"],
            c["source"],
            tuple(c["sources"]),
            repro=str(c.get("repro") or ""),
        )
        seen[spec.id] = spec
        reg.checks.append(spec)
    taken = {s.id for s in reg.signatures}
    reg.signatures += [
        Signature(**{**s, "ask_facts": tuple(s.get("ask_facts", ()))}) for s in desc.get("signatures", ()) if s["id"] not in taken
    ]


def load_contained(reg: Registry, eps: Sequence[md.EntryPoint]) -> None:
    """Every third-party distribution among ``eps``, each described by a host of its own."""
    from envdoctor.core.probe import ProbeClient

    dists = sorted({dist_key(e) for e in eps})
    if not dists:
        return
    builtin_facts = sorted({*reg.facts, *SPECIALS})
    timeout = load_timeout(os.environ)
    client = ProbeClient(extra_path=reg.paths)
    try:
        for dist in dists:
            try:
                args = {"dist": dist, "builtin_facts": builtin_facts}
                desc = client.call(f"{TARGET}:describe", args, timeout=timeout, fresh=True, what=f"loading plugin {dist}")
            except (ProbeError, ProbeRaised) as e:  # the host died, hung or failed before the plugin's own rows
                reg.plugin_error(_slug(dist), dist, PluginHostError(str(e)))
                continue
            add_described(reg, dist, desc, builtin_facts)
    finally:
        client.close()


def load_timeout(env: Mapping[str, str]) -> float:
    try:
        value = float(env.get(LOAD_TIMEOUT_ENV, LOAD_TIMEOUT))
    except ValueError:
        return LOAD_TIMEOUT
    return value if 0 < value < float("inf") else LOAD_TIMEOUT


class PluginHostError(Exception):
    """The child that loads a plugin distribution did not answer (it crashed, exited or hung)."""


def _slug(dist: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in dist).strip("_") or "unknown"
