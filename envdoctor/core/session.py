"""One doctor run on this machine: gather and judge the plan's checks, and build the report.

:func:`execute` is the local executor; ``envdoctor.modes.distributed`` is the other one, and
returns the same Report. Reports come out unscrubbed: secrets are scrubbed once, where a report
leaves the process (:func:`envdoctor.core.redact.protect`).
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import socket
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from envdoctor.core.api import CheckSpec, FactSpec
from envdoctor.core.facts import FactStore
from envdoctor.core.interpreter import Interpreter
from envdoctor.core.interpreter import own as own_interpreter
from envdoctor.core.limits import DEFAULT_TIMEOUT
from envdoctor.core.probe import ProbeClient
from envdoctor.core.registry import SPECIALS, Registry, discover
from envdoctor.core.report import Report
from envdoctor.core.runner import Progress, run_checks
from envdoctor.core.selection import choose
from envdoctor.core.version import __version__

# Facts the engine supplies itself (SPECIALS, from the registry, which checks parameters against
# them). They are inputs, not findings, and are never reported (``env`` holds the whole
# environment, secrets included).


@dataclass
class RunOptions:
    select: Sequence[str] = ()
    deselect: Sequence[str] = ()
    profile: str = "default"
    timeout: float | None = DEFAULT_TIMEOUT
    checks_paths: Sequence[str] = ()
    verbose: bool = False
    torch_expected: bool = True  # False with `--expect torch=none`
    full_facts: bool = False  # --full-facts: recorded in the report's options
    extra: Mapping[str, Any] = field(default_factory=dict)  # more entries for the `options` fact
    interpreter: Interpreter | None = None  # --python, examined by the plan; None: envdoctor's own

    def as_fact(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "verbose": self.verbose,
            "timeout": self.timeout,
            "torch_expected": self.torch_expected,
            **dict(self.extra),
        }


def platform_facts(interp: Interpreter | None = None) -> dict[str, Any]:
    system = f"{platform.system()} {platform.release()}"
    py, exe = (interp.version, interp.executable) if interp is not None else (platform.python_version(), sys.executable)
    return {
        "hostname": socket.gethostname(),
        "system": platform.system(),
        "release": platform.release(),
        "machine": platform.machine(),
        "python": py,
        "executable": exe,  # the interpreter judged
        "summary": f"{system} {platform.machine()}, Python {py} ({exe})",
    }


def live_store(reg: Registry, env: Mapping[str, str], options: Mapping[str, Any], interpreter: Interpreter | None = None):
    """(probe client, fact store) for facts read on this machine: the engine's specials (the
    probe, the options, the environment, the examined interpreter) given, every other fact from
    its provider. The caller closes the probe client."""
    interp = interpreter or own_interpreter()
    probe = ProbeClient(extra_path=reg.paths, env=env, python=None if interp.own else interp.executable)
    store = FactStore(reg.facts, given={"probe": probe, "options": dict(options), "env": env, "interpreter": interp})
    return probe, store


def needs_fact(specs: Sequence[CheckSpec], facts: Mapping[str, FactSpec], wanted: str) -> bool:
    """Whether any of ``specs`` needs the fact ``wanted``, itself or through the facts it needs."""
    todo = [p.name for s in specs for p in s.params]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name == wanted:
            return True
        if name in seen or name not in facts:
            continue
        seen.add(name)
        todo += [p.name for p in facts[name].params]
    return False


def execute(
    opts: RunOptions,
    *,
    registry: Registry | None = None,
    specs: Sequence[CheckSpec] | None = None,
    progress: Progress | None = None,
    env: Mapping[str, str] | None = None,
) -> Report:
    started = time.monotonic()
    started_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    deadline = started + opts.timeout if opts.timeout else None
    reg = registry if registry is not None else discover(tuple(opts.checks_paths))
    chosen = list(specs) if specs is not None else choose(reg.checks, opts.select, opts.deselect, opts.profile)
    env = dict(os.environ if env is None else env)
    interp = opts.interpreter or own_interpreter()
    probe, store = live_store(reg, env, opts.as_fact(), interp)
    probe.deadline = deadline
    try:
        if needs_fact(chosen, reg.facts, "torch_runtime"):
            # The shared worker imports torch while the static checks run; a spare one too when
            # several smokes will run, for the lane beside it (the compile smokes take it).
            probe.prestart(spare=sum("smoke" in c.tags for c in chosen) > 1)
        state = run_checks(chosen, store, deadline=deadline, progress=progress, on_stop=probe.close, on_abandon=probe.abandon)
    finally:
        probe.close()
    results = [state.outcomes[s.id] for s in chosen] + list(reg.problems)
    facts: dict[str, Any] = dict(getattr(probe, "contained_facts", {}))  # contained plugins' (core.plugin_host)
    for name, out in sorted(store.computed().items()):
        if name in SPECIALS:
            continue
        if out.available:
            facts[name] = out.value
        else:
            facts[name] = {"unavailable": out.reason} if out.reason else {"error": out.error}
    return Report(
        tool_version=__version__,
        started_at=started_at,
        duration=time.monotonic() - started,
        platform=platform_facts(interp),
        results=tuple(results),
        facts=facts,
        options={
            "profile": opts.profile,
            "select": list(opts.select),
            "deselect": list(opts.deselect),
            "timeout": opts.timeout,
            "full_facts": opts.full_facts,
            **({} if interp.own else {"python": interp.executable}),
        },
        interrupted=state.interrupted,
        timed_out=state.timed_out,
    )
