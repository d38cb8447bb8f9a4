"""envdoctor: will PyTorch, Triton, torch.compile and torch_xla work on this machine?

This module is the public API for check authors; everything else in the package is internal.
"""

from envdoctor.core import signals as _signals

if _signals.is_envdoctor_program():
    _signals.install_early()  # before the heavy imports: a Ctrl-C now exits quietly

from envdoctor.core.api import (
    Item,
    Missing,
    ProbeError,
    ProbeRaised,
    Result,
    Skip,
    Status,
    Unavailable,
    check,
    fact,
    fail,
    ok,
    skip,
    warn,
    worst,
)

__version__ = "0.1.0"

__all__ = [
    "Item",
    "Missing",
    "ProbeError",
    "ProbeRaised",
    "Result",
    "Skip",
    "Status",
    "Unavailable",
    "__version__",
    "check",
    "fact",
    "fail",
    "ok",
    "skip",
    "warn",
    "worst",
]
