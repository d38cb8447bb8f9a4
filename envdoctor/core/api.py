"""The public check API: everything a check or fact author needs.

A *fact* gathers (lazily, cached for the run) and never judges; a *check* judges facts and
returns a :class:`Result`. Both name what they need by parameter name::

    from envdoctor import check, fact, ok, warn, fail, Unavailable

    @fact("shm")
    def shm():
        ...                       # raise Unavailable("why") when it cannot be had

    @check("system.shm_size", tags=("build",))
    def shm_size(shm):
        \"\"\"/dev/shm is large enough for DataLoader workers\"\"\"
        if shm["size"] < 1 << 30:
            return warn("/dev/shm is 64 MiB", hint="docker run --shm-size=16g ...")
        return ok(f"/dev/shm is {shm['size'] >> 30} GiB")

A hint may carry the exact commands that apply it, as :class:`Fix` objects: reporters show
them under the hint and the JSON report carries them, so tooling can offer to run them::

    return fail("triton 3.4.0 does not match torch's pin", "Install the Triton torch pins.",
                fixes=[pip_fix(python_info, "install", "triton==3.5.0")])

A check whose required fact is unavailable is skipped with that fact's reason. Give the
parameter a default (``nvml=None``) to receive a falsy :class:`Missing` (carrying ``reason``)
instead and judge the absence yourself.
"""

from __future__ import annotations

import enum
import inspect
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FunctionType
from typing import Any

CHECK_ATTR = "__envdoctor_check__"
FACT_ATTR = "__envdoctor_fact__"


class Status(str, enum.Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    ERROR = "error"  # assigned by the runner only: the check or its probe could not run

    @property
    def severity(self) -> int:
        return _SEVERITY[self]


_SEVERITY = {Status.PASS: 0, Status.SKIP: 0, Status.WARN: 1, Status.FAIL: 2, Status.ERROR: 3}


@dataclass(frozen=True)
class Item:
    """One subject inside a check's result, e.g. one GPU of eight."""

    name: str
    status: Status
    message: str = ""


FIX_SCOPES = ("venv", "environment", "system")


@dataclass(frozen=True)
class Fix:
    """One command that applies (part of) a hint, as data.

    ``scope`` says what it changes: ``venv`` the examined Python environment (pip),
    ``environment`` the shell or job environment (a variable), ``system`` the machine (packages,
    the linker cache, drivers). ``needs_root`` is true when it must run as root.
    """

    argv: tuple[str, ...]
    scope: str = "system"
    needs_root: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.argv, str) or not self.argv:
            raise ValueError(f"Fix.argv must be a non-empty sequence of arguments, not {self.argv!r}")
        object.__setattr__(self, "argv", tuple(str(a) for a in self.argv))
        if self.scope not in FIX_SCOPES:
            raise ValueError(f"Fix.scope must be one of {', '.join(FIX_SCOPES)}: {self.scope!r}")

    @property
    def command(self) -> str:
        """The command as one shell-quoted line."""
        return shlex.join(self.argv)


def pip_fix(python_info: Any, *args: str) -> Fix:
    """``<python> -m pip ARGS`` for the *examined* interpreter: the ``python_info`` fact's
    executable (envdoctor may run from another one); plain ``python`` when it is unknown."""
    exe = python_info.get("executable") if isinstance(python_info, Mapping) else None
    return Fix((exe or "python", "-m", "pip", *args), scope="venv")


def env_fix(name: str, value: str) -> Fix:
    """``export NAME=VALUE`` for the shell or job environment."""
    return Fix(("export", f"{name}={value}"), scope="environment")


# What an operator (or Slurm, node-problem-detector, an alert) should do about a warn or fail row,
# weakest first. "none" on every other row: a pass, a skip and an error (envdoctor could not judge)
# never ask for anything. A check may name one (warn/fail(..., action=...)); otherwise it follows
# from the row's fixes (envdoctor.core.outcome.recommended_action).
ACTIONS = (
    "none",
    "restart-process",
    "fix-environment",
    "reinstall-package",
    "reset-gpu",
    "reboot",
    "drain-node",
    "hardware-inspection",
)


def _action(action: str) -> str:
    if action and action not in ACTIONS:
        raise ValueError(f"action must be one of {', '.join(ACTIONS)}: {action!r}")
    return action


@dataclass(frozen=True)
class Result:
    """What a check returns: its status, message and hint, with details, items and fixes."""

    status: Status
    message: str = ""
    hint: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)
    items: tuple[Item, ...] = ()
    fixes: tuple[Fix, ...] = ()
    action: str = ""  # one of ACTIONS, or "" to derive it from the fixes


Details = Mapping[str, Any] | None  # a result's details, as warn() and fail() take them


def _fixes(fixes: Sequence[Fix]) -> tuple[Fix, ...]:
    out = tuple(fixes)
    for f in out:
        if not isinstance(f, Fix):
            raise TypeError(f"fixes must be Fix objects, not {type(f).__name__}")
    return out


def ok(message: str = "", *, details: Mapping[str, Any] | None = None, items: Sequence[Item] = ()) -> Result:
    return Result(Status.PASS, message, "", dict(details or {}), tuple(items))


def warn(
    message: str, hint: str, *, details: Details = None, items: Sequence[Item] = (), fixes: Sequence[Fix] = (), action: str = ""
) -> Result:
    return Result(Status.WARN, message, hint, dict(details or {}), tuple(items), _fixes(fixes), _action(action))


def fail(
    message: str, hint: str, *, details: Details = None, items: Sequence[Item] = (), fixes: Sequence[Fix] = (), action: str = ""
) -> Result:
    return Result(Status.FAIL, message, hint, dict(details or {}), tuple(items), _fixes(fixes), _action(action))


def skip(reason: str, *, details: Mapping[str, Any] | None = None) -> Result:
    return Result(Status.SKIP, reason, "", dict(details or {}))


def worst(items: Sequence[Item]) -> Status:
    """The most severe status among items (PASS for none)."""
    return max((i.status for i in items), key=lambda s: s.severity, default=Status.PASS)


class Skip(Exception):
    """Raise from a check to skip it: ``raise Skip("no NVIDIA GPU")``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Unavailable(Exception):
    """Raise from a fact that cannot be had; every dependent check shows this reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Missing:
    """Passed to a check parameter with a default when its fact is unavailable. Falsy."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"Missing({self.name!r}, {self.reason!r})"


class ProbeError(Exception):
    """A probe died, hung past its deadline or spoke garbage. The runner reports ``error``."""

    def __init__(self, diagnosis: str, *, output: str = "") -> None:
        super().__init__(diagnosis)
        self.diagnosis = diagnosis
        self.output = output


class ProbeRaised(Exception):
    """The probe's function raised; carries the child's exception type, message and tail."""

    def __init__(self, exc_type: str, message: str, traceback: str = "", output: str = "") -> None:
        super().__init__(f"{exc_type}: {message}")
        self.exc_type = exc_type
        self.message = message
        self.traceback = traceback
        self.output = output


@dataclass(frozen=True)
class Param:
    """A parameter a check or fact names, and whether it may be missing."""

    name: str
    optional: bool


def _params(func: Callable[..., Any]) -> tuple[Param, ...]:
    """The parameters a check or fact names (``*args`` and ``**kwargs`` aside), each with whether
    it has a default. A plain function is read from its code object, as ``inspect.signature``
    reads it, in a fraction of the time (every module's checks are declared at start-up)."""
    code = getattr(func, "__code__", None)
    if isinstance(func, FunctionType) and code is not None and not hasattr(func, "__wrapped__") and not hasattr(func, "__signature__"):
        n = code.co_argcount
        first_default = n - len(func.__defaults__ or ())
        kw_defaults = func.__kwdefaults__ or {}
        names = code.co_varnames[: n + code.co_kwonlyargcount]
        return tuple(Param(name, i >= first_default if i < n else name in kw_defaults) for i, name in enumerate(names))
    out = []
    for p in inspect.signature(func).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        out.append(Param(p.name, p.default is not inspect.Parameter.empty))
    return tuple(out)


@dataclass(frozen=True)
class CheckSpec:
    """A registered check: its id, function, title, tags and the facts it takes."""

    id: str
    func: Callable[..., Any]
    title: str
    tags: tuple[str, ...]
    params: tuple[Param, ...]
    timeout: float | None = None
    source: str = "built-in"
    sources: tuple[str, ...] = ("live",)  # the fact sources it can judge (triage runs only those with "pasted")
    blame: tuple[str, ...] = ()  # distributions and facts, beyond its parameters, that can move its verdict (diff's causes)
    repro: str = ""  # a standalone script that redoes the check's step with the stack alone (envdoctor bundle); absolute path

    @property
    def area(self) -> str:
        return self.id.split(".", 1)[0]


@dataclass(frozen=True)
class FactSpec:
    """A registered fact provider: its name, function, inputs, origin and ask text."""

    name: str
    func: Callable[..., Any]
    params: tuple[Param, ...]
    source: str = "built-in"  # who provides it: built-in or the plugin's name
    origin: str = "live"  # where its value comes from: live (this machine), pasted (triage text), baseline (an image-build file)
    ask: str = ""  # what to ask a reporter for when a paste lacks this fact (triage)
    # The fact's value as the default report keeps it (what checks and readers use); None: as it is.
    compact: Callable[[Any], Any] | None = None


FACT_ORIGINS = ("live", "pasted", "baseline")
CHECK_SOURCES = ("live", "pasted")


def check(
    id: str,
    *,
    tags: Sequence[str] = (),
    timeout: float | None = None,
    sources: Sequence[str] = ("live",),
    blame: Sequence[str] = (),
    repro: str = "",
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a check. Its docstring's first line is its title.

    Tags used by the built-ins: ``build`` (meaningful without a GPU, e.g. in ``docker build``),
    ``gpu`` (needs a driver/GPU), ``smoke`` (runs real work in a probe), ``perf`` and
    ``distributed`` (opt-in, only when selected or with ``--profile full``).

    ``sources`` names the fact sources the check can judge: ``live`` (this machine) and
    ``pasted`` (facts read from a bug report by ``envdoctor triage``). Only checks that list
    ``pasted`` run on a paste; every other check is reported there as "cannot be judged from
    this paste" with what to ask for. Add ``pasted`` only when the check judges nothing a
    paste cannot show (no file on disk, no process, no environment variable of the examiner).

    ``blame`` names what else can move this check's verdict: distributions (``"triton"``,
    ``"numpy"``; ``"compiled"`` for any that ships extension modules) and facts it does not take
    (a perf check measures whatever ``gpus`` are there). ``envdoctor diff`` names a change as a
    regression's likely cause only along a path: a fact the check takes or blames, directly or
    through the facts those are derived from, or a distribution it blames. A parameter such as
    ``dists`` holds every distribution, so it alone blames none of them.

    ``repro`` names a standalone script, relative to the check's module file, that redoes the
    check's step with the stack alone (no envdoctor import): ``envdoctor bundle`` ships it for a
    failing or erroring check, so a maintainer can rerun that step on its own.
    """
    if not id or " " in id or "." not in id:
        raise ValueError(f"check id must be dotted, like 'area.name': {id!r}")
    srcs = tuple(sources)
    if not srcs or any(s not in CHECK_SOURCES for s in srcs):
        raise ValueError(f"check sources must be among {', '.join(CHECK_SOURCES)}: {sources!r}")

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        doc = (func.__doc__ or "").strip().splitlines()
        title = doc[0].strip() if doc else id
        script = str(Path(inspect.getfile(func)).resolve().parent / repro) if repro else ""
        spec = CheckSpec(id, func, title, tuple(tags), _params(func), timeout, sources=srcs, blame=tuple(blame), repro=script)
        setattr(func, CHECK_ATTR, spec)
        return func

    return deco


def fact(
    name: str, *, source: str = "live", ask: str = "", compact: Callable[[Any], Any] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a fact provider. Its parameters name other facts it is derived from.

    ``source`` says where the value comes from: ``live`` (read on this machine), ``pasted``
    (parsed from text a user pasted) or ``baseline`` (read from an image-build baseline file);
    the typed stack (:func:`envdoctor.from_facts`) carries it, so live-only checks can tell.

    A ``source="pasted"`` provider adapts the facts read from a paste before checks judge them
    (``envdoctor triage``): it takes the special parameter ``pasted`` (the dict of facts read
    from the paste) and returns the fact in its live shape, or raises :class:`Unavailable`.

    ``ask`` says what to ask a reporter for when a paste does not show this fact, e.g.
    ``"the output of `nvidia-smi`"``.

    ``compact`` shortens a large value for the report (reports stay small unless the run asks
    for ``--full-facts``): it gets the value the checks judged and returns what the report keeps,
    in the same shape, with what checks, ``diff`` and ``fleet`` read. Checks always get the full value."""
    if source not in FACT_ORIGINS:
        raise ValueError(f"fact source must be one of {', '.join(FACT_ORIGINS)}: {source!r}")

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        setattr(func, FACT_ATTR, FactSpec(name, func, _params(func), origin=source, ask=ask, compact=compact))
        return func

    return deco
