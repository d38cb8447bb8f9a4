"""One doctor run: :func:`run` takes the plan (core.plan) and returns the Report to deliver.

The whole pipeline is here: the executor (:func:`execute` on this machine, or
``envdoctor.modes.distributed`` for one rank of a job, which returns the same Report), the
post-run ``expect.must_pass`` judgement, compaction (unless --full-facts) and the report
boundary, where secrets are scrubbed once (:func:`envdoctor.core.redact.protect`). What comes
out of :func:`execute` is unscrubbed; what comes out of :func:`run` may be rendered.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import socket
import sys
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from envdoctor.core.api import CheckSpec, FactSpec
from envdoctor.core.facts import FactStore
from envdoctor.core.interpreter import Interpreter
from envdoctor.core.interpreter import own as own_interpreter
from envdoctor.core.probe import ProbeClient
from envdoctor.core.registry import SPECIALS, Registry
from envdoctor.core.report import Report
from envdoctor.core.runner import Progress, run_checks
from envdoctor.core.version import __version__

if TYPE_CHECKING:
    from envdoctor.core.plan import RunPlan

# Facts the engine supplies itself (SPECIALS, from the registry, which checks parameters against
# them). They are inputs, not findings, and are never reported (``env`` holds the whole
# environment, secrets included).


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


def run(plan: RunPlan, *, progress: Progress | None = None, env: Mapping[str, str] | None = None) -> Report:
    """The plan run by its executor (this machine, or this rank of a distributed job), judged
    for ``must_pass``, compacted and scrubbed: the report to render."""
    from envdoctor.core.compact import compact_report
    from envdoctor.core.expect import judge_must_pass
    from envdoctor.core.redact import protect

    if plan.launch is not None:
        from envdoctor.modes.distributed import execute_distributed as executor
    else:
        executor = execute
    report = executor(plan, progress=progress, env=env)
    report = judge_must_pass(report, plan.expectations, plan.registry.checks, plan.profile)
    if not plan.full_facts:
        report = compact_report(report, plan.registry.facts)
    return protect(report, plan.redact)  # the report boundary: before ANY rendering


def execute(plan: RunPlan, *, progress: Progress | None = None, env: Mapping[str, str] | None = None) -> Report:
    """The local executor: the plan's checks on this machine, as an unscrubbed Report."""
    started = time.monotonic()
    started_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    deadline = started + plan.timeout if plan.timeout else None
    reg, chosen = plan.registry, list(plan.specs)
    env = dict(os.environ if env is None else env)
    interp = plan.interpreter or own_interpreter()
    probe, store = live_store(reg, env, plan.fact(), interp)
    probe.deadline = deadline
    try:
        if needs_fact(chosen, reg.facts, "torch_runtime"):
            # The shared worker imports torch while the static checks run; a spare one too when
            # several smokes will run, for the lane beside it (the compile smokes take it).
            probe.prestart(spare=sum("smoke" in c.tags for c in chosen) > 1)
        state = run_checks(chosen, store, deadline=deadline, progress=progress, on_stop=probe.close, on_abandon=probe.abandon)
    finally:
        for client in (probe, *getattr(probe, "companions", ())):  # companions: core.plugin_host
            client.close()
    results = [state.outcomes[s.id] for s in chosen] + list(reg.problems)
    return Report(
        tool_version=__version__,
        started_at=started_at,
        duration=time.monotonic() - started,
        platform=platform_facts(interp),
        results=tuple(results),
        facts=_reported_facts(store, probe),
        options=plan.report_options(),
        interrupted=state.interrupted,
        timed_out=state.timed_out,
    )


def _reported_facts(store: FactStore, probe: ProbeClient) -> dict[str, Any]:
    """Every fact gathered, the engine's specials left out (``env`` holds the whole environment)."""
    facts: dict[str, Any] = dict(getattr(probe, "contained_facts", {}))  # contained plugins' (core.plugin_host)
    for name, out in sorted(store.computed().items()):
        if name in SPECIALS:
            continue
        if out.available:
            facts[name] = out.value
        else:
            facts[name] = {"unavailable": out.reason} if out.reason else {"error": out.error}
    return facts
