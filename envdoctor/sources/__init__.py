"""Fact sources other than this machine. ``pasted``: text a user pasted (collect_env,
nvidia-smi, pip/conda listings, envdoctor reports, tracebacks) read into facts in the live shape;
``baseline``: the files an image was built with (a baseline, a lock file).

The readers load on first use: ``import envdoctor`` reaches ``sources.baseline`` on every run,
and the paste readers are only for triage."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from envdoctor.sources.pasted import Paste, read_paste

__all__ = ["Paste", "read_paste"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from envdoctor.sources import pasted

        return getattr(pasted, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
