"""Helper modules that the check modules load on first use.

``envdoctor list`` imports every check module to list its checks. The release tables, the CUDA
compatibility rules and the Xid catalog are needed only when a check runs, and their
dataclasses and patterns cost about 25 ms of start-up together.

The standard library's ``importlib.util.LazyLoader`` would do this too. Before Python 3.12,
though, two threads that touch the module for the first time can race, and checks run in
threads. This proxy imports through ``importlib.import_module`` instead, which holds the
import system's per-module lock.
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands for the module ``name``, and imports it on the first attribute read.

    Every read goes to the module itself, so a patch of the module (a test's monkeypatch) is
    seen through the proxy. The proxy itself cannot be written to.
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)

    def __setattr__(self, attr: str, value: object) -> None:
        raise AttributeError(f"patch the module {self._name}, not its lazy proxy")

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy(name: str) -> Any:
    """A stand-in for ``import name`` that imports it on first use (``Any``: it reads as the module)."""
    return LazyModule(name)
