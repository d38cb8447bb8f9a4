"""envdoctor: will PyTorch, Triton, torch.compile and torch_xla work on this machine?

This module is the public API for check authors: a check or plugin imports only from here
(``from envdoctor import check, fact, ok, warn, fail``); every submodule is internal and may
change. The built-in checks (``envdoctor_checks``) follow the same rule, and a test enforces it.

- declaring: :func:`check`, :func:`fact`
- results: :func:`ok`, :func:`warn`, :func:`fail`, :func:`skip`, :class:`Result`,
  :class:`Item`, :class:`Status`, :func:`worst`; remediation as data: :class:`Fix`,
  :func:`pip_fix`, :func:`env_fix`; the recommended action of a warn/fail row
  (``fail(..., action=...)``, one of :data:`ACTIONS`)
- signals: :class:`Skip` (from a check), :class:`Unavailable` (from a fact), :class:`Missing`
  (what an optional parameter receives when its fact is unavailable)
- probes (the ``probe`` parameter): :class:`ProbeClient`, :class:`ProbeError`,
  :class:`ProbeRaised`, :func:`explain_output`
- external commands with a deadline: :func:`run_command` (returns :class:`Completed`),
  :func:`last_line`
- a regular expression compiled on first use (a module's patterns cost nothing to a process
  that never runs its check): :func:`lazy_pattern`
- installed packages and the interpreter, read as the doctor reads them (also inside
  ``--python``'s interpreter): :func:`installed_distributions`, :func:`python_facts`;
  a distribution's name as pip compares it: :func:`canonical_name`
- secrets: :func:`is_secret_key`, :data:`REDACTED`
- paste readers (triage): :func:`reader` registers `fn(lines, writer)` (:class:`PasteWriter`); the
  entry-point group ``envdoctor.readers`` does the same for installed plugins
- error signatures (known error texts -> cause, check, fix): :class:`Signature`,
  :class:`Finding`, :func:`find_signatures`, :func:`best_signature`; a module-level
  ``SIGNATURES`` tuple in a plugin module extends the catalog
- the stack, typed, from any source's facts (live, pasted, baseline): :func:`from_facts`,
  :class:`Stack` and its parts, :data:`TRITON_DISTS`, :func:`decode_cudnn`
- the ``baseline`` fact source (conformance to what an image was built with):
  :func:`load_baseline`, :func:`write_baseline`, :class:`Baseline`, :data:`BASELINE_SCHEMA`,
  :func:`load_lock`, :class:`BaselineError`; ``--as-user`` specs: :func:`parse_as_user`
- where compiling writes (Triton's and Inductor's caches, the temporary directory, HOME's
  cache), resolved as the stack resolves it: :func:`compile_locations`, :class:`Location`,
  :func:`user_name` (getpass.getuser() for an environment), :func:`cannot_create_in`
- launchers (distributed checks): :func:`detect_launch`, :class:`Launch`,
  :data:`LAUNCHER_NAMES`, :data:`NOT_LAUNCHED`, :data:`DEFAULT_RANK_TIMEOUT`, :func:`distributed_budget`
"""

# os and sys are loaded before any module of ours; _signal is built into the interpreter (the
# `signal` module around it is a file to find and compile): no file is read before the handlers.
import _signal  # type: ignore[import-not-found]  # typeshed has stubs for `signal` only
import os as _os
import sys as _sys


def _quiet_exit(signum, frame):  # noqa: ARG001
    try:
        _os.write(2, b"envdoctor: interrupted\n")
    finally:
        _os._exit(130)


# When envdoctor is the program (its console script, `python -m envdoctor`), a Ctrl-C, TERM or HUP
# before `main` runs ends the process at once and quietly: installed here, before any import of
# ours, since a signal during the import of even one more module showed a traceback (about 1 in
# 50 SIGINTs 20 ms after start). envdoctor.core.signals.install_run replaces it in main. A signal
# the parent left ignored stays ignored (`nohup envdoctor check`, `envdoctor check &` in a script).
if _sys.argv and (_sys.argv[0] == "-m" or _os.path.basename(_sys.argv[0]) == "envdoctor"):
    for _sig in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP):
        try:
            if _signal.getsignal(_sig) != _signal.SIG_IGN:
                _signal.signal(_sig, _quiet_exit)
        except (ValueError, OSError):
            pass  # not the main thread (embedded use)

from typing import TYPE_CHECKING  # noqa: E402 - after the signal handlers, on purpose

from envdoctor.core.api import (  # noqa: E402 - after the signal handlers, on purpose
    ACTIONS,
    Fix,
    Item,
    Missing,
    ProbeError,
    ProbeRaised,
    Result,
    Skip,
    Status,
    Unavailable,
    check,
    env_fix,
    fact,
    fail,
    ok,
    pip_fix,
    skip,
    warn,
    worst,
)
from envdoctor.core.version import __version__  # noqa: E402

# The rest loads on first use (PEP 562): `envdoctor --help` and `envdoctor list` must start fast,
# and a check module that never names the probe client or the launcher need not pay for them.
_LAZY = {
    "DEFAULT_RANK_TIMEOUT": ("envdoctor.core.limits", "DEFAULT_RANK_TIMEOUT"),
    "distributed_budget": ("envdoctor.core.limits", "distributed_budget"),
    "ProbeClient": ("envdoctor.core.probe", "ProbeClient"),
    "explain_output": ("envdoctor.core.probe", "explain_output"),
    "TRITON_DISTS": ("envdoctor.core.names", "TRITON_DISTS"),  # not the stack: the Triton checks name it
    "canonical_name": ("envdoctor.core.names", "canonical"),
    "REDACTED": ("envdoctor.core.redact", "REDACTED"),
    "is_secret_key": ("envdoctor.core.redact", "is_secret_key"),
    "Finding": ("envdoctor.core.signatures", "Finding"),
    "Signature": ("envdoctor.core.signatures", "Signature"),
    "reader": ("envdoctor.sources.readers", "reader"),
    "PasteWriter": ("envdoctor.sources.readers", "PasteWriter"),
    "best_signature": ("envdoctor.core.signatures", "best"),
    "find_signatures": ("envdoctor.core.signatures", "find"),
    **{
        name: ("envdoctor.core.stack", name)
        for name in (
            "Distribution",
            "Driver",
            "Gpu",
            "OsInfo",
            "PythonInfo",
            "Stack",
            "TorchInfo",
            "decode_cudnn",
            "from_facts",
        )
    },
    "Completed": ("envdoctor.core.subproc", "Completed"),
    "describe_signal": ("envdoctor.core.run", "describe_signal"),
    "last_line": ("envdoctor.core.run", "last_line"),
    "run_command": ("envdoctor.core.run", "run_command"),
    **{name: ("envdoctor.core.launch", name) for name in ("LAUNCHER_NAMES", "NOT_LAUNCHED", "Launch", "detect_launch")},
    "parse_as_user": ("envdoctor.core.inputs", "parse_as_user"),
    "Location": ("envdoctor.core.locations", "Location"),
    "compile_locations": ("envdoctor.core.locations", "compile_locations"),
    "user_name": ("envdoctor.core.locations", "user_name"),
    "cannot_create_in": ("envdoctor.core.locations", "cannot_create_in"),
    "lazy_pattern": ("envdoctor.core.patterns", "lazy"),
    "installed_distributions": ("envdoctor.core._interpreter_query", "dists"),
    "python_facts": ("envdoctor.core._interpreter_query", "python_facts"),
    "BASELINE_SCHEMA": ("envdoctor.sources.baseline", "SCHEMA"),
    **{
        name: ("envdoctor.sources.baseline", name) for name in ("Baseline", "BaselineError", "load_baseline", "load_lock", "write_baseline")
    },
}


def __getattr__(name: str):
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'envdoctor' has no attribute {name!r}") from None
    import importlib

    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # once: later lookups do not come back here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from envdoctor.core._interpreter_query import dists as installed_distributions
    from envdoctor.core._interpreter_query import python_facts
    from envdoctor.core.inputs import parse_as_user
    from envdoctor.core.launch import LAUNCHER_NAMES, NOT_LAUNCHED, Launch, detect_launch
    from envdoctor.core.limits import DEFAULT_RANK_TIMEOUT, distributed_budget
    from envdoctor.core.locations import Location, cannot_create_in, compile_locations, user_name
    from envdoctor.core.names import TRITON_DISTS
    from envdoctor.core.names import canonical as canonical_name
    from envdoctor.core.patterns import lazy as lazy_pattern
    from envdoctor.core.probe import ProbeClient, explain_output
    from envdoctor.core.redact import REDACTED, is_secret_key
    from envdoctor.core.run import describe_signal, last_line, run_command
    from envdoctor.core.signatures import Finding, Signature
    from envdoctor.core.signatures import best as best_signature
    from envdoctor.core.signatures import find as find_signatures
    from envdoctor.core.stack import (
        Distribution,
        Driver,
        Gpu,
        OsInfo,
        PythonInfo,
        Stack,
        TorchInfo,
        decode_cudnn,
        from_facts,
    )
    from envdoctor.core.subproc import Completed
    from envdoctor.sources.baseline import SCHEMA as BASELINE_SCHEMA
    from envdoctor.sources.baseline import Baseline, BaselineError, load_baseline, load_lock, write_baseline
    from envdoctor.sources.readers import PasteWriter, reader

__all__ = [
    "ACTIONS",
    "BASELINE_SCHEMA",
    "DEFAULT_RANK_TIMEOUT",
    "LAUNCHER_NAMES",
    "NOT_LAUNCHED",
    "REDACTED",
    "TRITON_DISTS",
    "Baseline",
    "BaselineError",
    "Completed",
    "Distribution",
    "Driver",
    "Finding",
    "Fix",
    "Gpu",
    "Item",
    "Launch",
    "Location",
    "Missing",
    "OsInfo",
    "ProbeClient",
    "ProbeError",
    "ProbeRaised",
    "PythonInfo",
    "Result",
    "Signature",
    "reader",
    "PasteWriter",
    "Skip",
    "Stack",
    "Status",
    "TorchInfo",
    "Unavailable",
    "__version__",
    "best_signature",
    "canonical_name",
    "cannot_create_in",
    "check",
    "compile_locations",
    "decode_cudnn",
    "describe_signal",
    "detect_launch",
    "distributed_budget",
    "env_fix",
    "explain_output",
    "fact",
    "fail",
    "find_signatures",
    "from_facts",
    "installed_distributions",
    "is_secret_key",
    "last_line",
    "lazy_pattern",
    "load_baseline",
    "load_lock",
    "ok",
    "parse_as_user",
    "python_facts",
    "pip_fix",
    "run_command",
    "skip",
    "user_name",
    "warn",
    "worst",
    "write_baseline",
]
