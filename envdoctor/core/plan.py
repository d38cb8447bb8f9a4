"""The run plan: CLI options, the config file, the profile and the expectations, resolved once
into one frozen :class:`RunPlan`, the one model of a run's options (checks read it as the
``options`` fact, :meth:`RunPlan.fact`; the report records :meth:`RunPlan.report_options`).
Everything downstream (core.session.run: the executors, the post-run ``must_pass`` row; the
outputs, the exit code) reads the plan and decides nothing again.

Every mistake found while building it is a :class:`PlanError`: one line, exit code 2.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from envdoctor.core.api import CheckSpec
from envdoctor.core.exitcode import ExitCode
from envdoctor.core.inputs import RunInputs, with_inputs
from envdoctor.core.limits import DEFAULT_RANK_TIMEOUT, DEFAULT_TIMEOUT
from envdoctor.core.outputs import Output, target_problem
from envdoctor.core.selection import choose, matches, no_match_message, unmatched

if TYPE_CHECKING:
    from envdoctor.core.expect import Expectations
    from envdoctor.core.interpreter import Interpreter
    from envdoctor.core.launch import Launch
    from envdoctor.core.registry import Registry

DISTRIBUTED_TAG = "distributed"


class PlanError(Exception):
    """A usage mistake found while planning: one line for the user, exit code 2."""

    exit_code = ExitCode.USAGE

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NothingToRun(PlanError):
    """A plan in which no check would run: never a healthy verdict, its own exit code."""

    exit_code = ExitCode.NO_CHECKS


def nothing_to_run(registry: Registry, profile: str, deselect: Sequence[str]) -> NothingToRun:
    if not registry.checks:
        why = "no check was loaded"
        if registry.problems:
            more = len(registry.problems) - 1
            why += f": {registry.problems[0].message}" + (f" (and {more} more: `envdoctor list` names them)" if more else "")
        else:
            why += " (envdoctor's built-in checks are missing: reinstall envdoctor)"
    else:
        why = f"the selection (profile {profile}" + (f", deselected {', '.join(deselect)}" if deselect else "") + ") left none"
    return NothingToRun(f"no check ran: {why}")


def positive_seconds(option: str, value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise PlanError(f"{option}: {value!r} is not a positive, finite number of seconds")
    return value


@dataclass(frozen=True)
class RunPlan:
    registry: Registry
    specs: tuple[CheckSpec, ...]  # local checks, in order (expectations included)
    expectations: Expectations  # with the profile's own (e.g. gpus>=1)
    profile: str = "default"
    select: tuple[str, ...] = ()
    deselect: tuple[str, ...] = ()  # --deselect and the config's skip
    timeout: float = DEFAULT_TIMEOUT
    main: Output = Output("text", None, "--format")
    extras: tuple[Output, ...] = ()
    launch: Launch | None = None  # distributed mode: this rank's place in the job
    rank_timeout: float = DEFAULT_RANK_TIMEOUT
    dist_specs: tuple[CheckSpec, ...] = ()  # distributed mode: the distributed.* checks
    verbose: bool = False
    strict: bool = False
    redact: bool = False
    quiet: bool = False
    full_facts: bool = False  # --full-facts: the report keeps every fact whole (envdoctor.core.compact)
    checks_paths: tuple[str, ...] = ()
    config: Mapping[str, Any] | None = None  # the config file used and those left unread (Config.describe)
    inputs: RunInputs = RunInputs()  # --baseline, --lock, --as-user (validated)
    extra: Mapping[str, Any] = field(default_factory=dict)
    interpreter: Interpreter | None = None  # --python: the interpreter examined; None: envdoctor's own

    @property
    def outputs(self) -> tuple[Output, ...]:
        return (self.main, *self.extras)

    def fact(self) -> dict[str, Any]:
        """The plan as checks see it: the ``options`` fact."""
        return {
            "profile": self.profile,
            "verbose": self.verbose,
            "timeout": self.timeout,
            "torch_expected": self.expectations.torch_expected,
            **self.inputs.as_options(),
            **dict(self.extra),
        }

    def report_options(self) -> dict[str, Any]:
        """The plan as the report records it (its ``options``; the JSON schema describes them)."""
        python = {} if self.interpreter is None or self.interpreter.own else {"python": self.interpreter.executable}
        return {
            "profile": self.profile,
            "select": list(self.select),
            "deselect": list(self.deselect),
            "timeout": self.timeout,
            "full_facts": self.full_facts,
            **python,
            **({} if self.config is None else {"config": dict(self.config)}),
        }


def for_specs(registry: Registry, specs: Sequence[CheckSpec], **fields: Any) -> RunPlan:
    """A plan that runs exactly ``specs`` (library use and tests), no expectations of its own."""
    from envdoctor.core.expect import Expectations

    return RunPlan(registry=registry, specs=tuple(specs), expectations=Expectations(), **fields)


def decide_checks(
    available: Sequence[CheckSpec],
    exp: Expectations,
    select: Sequence[str],
    deselect: Sequence[str],
    profile: str,
    inputs: RunInputs = RunInputs(),
) -> list[CheckSpec]:
    """The one decision of which checks run: the profile (or --select), minus --deselect and
    the config's skip, plus the checks the inputs bring (--baseline, --lock, --as-user), the
    must_pass checks and one spec per expectation."""
    from envdoctor.core.expect import plan as with_expectations

    chosen = with_inputs(choose(available, select, deselect, profile), available, inputs, profile, select, deselect)
    return with_expectations(exp, available, chosen, profile, deselect)


def _check_patterns(available: Sequence[CheckSpec], exp: Expectations, select, deselect, skip, problems=()) -> None:
    from envdoctor.core.expect import to_spec

    # `--select expect` is fine, and so is the id of a check the registry refused (its error row runs).
    everything = [*available, *(to_spec(e) for e in exp.facts), *problems]
    for what, patterns, pool in (("--select", select, everything), ("--deselect", deselect, everything)):
        missing = unmatched(pool, patterns)
        if missing:
            raise PlanError(no_match_message(what, missing, pool))
    missing = unmatched(available, skip)
    if missing:
        origin = entry.origin if (entry := exp.get("skip")) else "the configuration"  # skip comes only from there
        raise PlanError(no_match_message(f"{origin}: skip", missing, available))


def check_outputs(outputs: Sequence[Output]) -> None:
    """Every output target is tried before the run; all problems in one message, one per line."""
    problems = [
        f"cannot write the report to {o.path} ({o.option}): {why}" for o in outputs if o.path for why in [target_problem(o.path)] if why
    ]
    if problems:
        raise PlanError("\n".join(problems))


def build(
    registry: Registry,
    expectations: Expectations,
    *,
    select: Sequence[str] = (),
    deselect: Sequence[str] = (),
    profile: str = "default",
    outputs: Sequence[Output] = (Output("text", None, "--format"),),
    launch: Launch | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    rank_timeout: float = DEFAULT_RANK_TIMEOUT,
    config: Mapping[str, Any] | None = None,
    python: str | None = None,
    inputs: RunInputs = RunInputs(),
    **flags: Any,
) -> RunPlan:
    """The plan, validated: patterns that match nothing, bad timeouts and unwritable outputs
    are refused here, before anything runs (the inputs are validated by the caller, with
    :func:`envdoctor.core.inputs.validate`)."""
    positive_seconds("--timeout", timeout)
    positive_seconds("--rank-timeout", rank_timeout)
    from envdoctor.core.expect import for_profile

    exp = for_profile(expectations, profile)
    skip = list(exp.skip)
    _check_patterns(registry.checks, exp, select, deselect, skip, registry.problems)
    check_outputs(outputs)
    interpreter = examine_python(python) if python else None
    desel = (*deselect, *skip)
    specs = decide_checks(registry.checks, exp, select, desel, profile, inputs)
    dist_specs: tuple[CheckSpec, ...] = ()
    if launch is not None:
        specs = [s for s in specs if DISTRIBUTED_TAG not in s.tags]
        dist_specs = tuple(s for s in registry.checks if DISTRIBUTED_TAG in s.tags and not any(matches(s, p) for p in desel))
    # Selecting only a check the registry refused is a run of its error row, not of nothing.
    if not specs and not dist_specs and not any(matches(p, pat) for p in registry.problems for pat in select):
        raise nothing_to_run(registry, profile, desel)
    return RunPlan(
        registry=registry,
        specs=tuple(specs),
        expectations=exp,
        profile=profile,
        select=tuple(select),
        deselect=desel,
        timeout=timeout,
        main=outputs[0],
        extras=tuple(outputs[1:]),
        launch=launch,
        rank_timeout=rank_timeout,
        dist_specs=dist_specs,
        config=config,
        interpreter=interpreter,
        inputs=inputs,
        **flags,
    )


def examine_python(path: str) -> Interpreter:
    """--python: the interpreter is run once, now, for its facts; a path that is no usable
    Python is a usage mistake (exit 2) before anything runs."""
    from envdoctor.core.interpreter import InterpreterError, examine

    try:
        return examine(path)
    except InterpreterError as e:
        raise PlanError(str(e)) from None
