"""envdoctor: will PyTorch, Triton, torch.compile and torch_xla work on this machine?

This module is the public API for check authors; everything else in the package is internal.
"""

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
from envdoctor.core.stack import (
    TRITON_DISTS,
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

__version__ = "0.1.0"

__all__ = [
    "TRITON_DISTS",
    "Distribution",
    "Driver",
    "Gpu",
    "Item",
    "Missing",
    "ProbeError",
    "OsInfo",
    "ProbeRaised",
    "PythonInfo",
    "Result",
    "Skip",
    "Stack",
    "Status",
    "TorchInfo",
    "Unavailable",
    "__version__",
    "check",
    "decode_cudnn",
    "fact",
    "fail",
    "from_facts",
    "ok",
    "skip",
    "warn",
    "worst",
]
