"""Helpers for testing checks with injected facts (for built-in and plugin authors alike).

    from envdoctor import Unavailable
    from envdoctor.testing import run_check

    row = run_check(shm_size, shm={"size": 64 << 20})
    assert row.status is Status.WARN

A fact not given is "unavailable" with the reason ``fact 'x' not given``; pass
``Unavailable("why")`` to inject an unavailable fact.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from envdoctor.core.api import CHECK_ATTR, FACT_ATTR, CheckSpec, FactSpec, Missing, Unavailable
from envdoctor.core.facts import FactStore
from envdoctor.core.report import CheckOutcome
from envdoctor.core.runner import evaluate


class _Injected(FactStore):
    def _compute(self, name: str):
        from envdoctor.core.facts import FactOutcome

        return FactOutcome(name, reason=f"fact {name!r} not given")


def run_check(func: Callable[..., Any], **facts: Any) -> CheckOutcome:
    """Evaluate one check exactly as the runner does, with the given facts."""
    spec = getattr(func, CHECK_ATTR, None)
    if not isinstance(spec, CheckSpec):
        raise TypeError(f"{func!r} is not decorated with @check")
    return evaluate(spec, _Injected({}, given=facts))


def gather(func: Callable[..., Any], **facts: Any) -> Any:
    """Call one fact provider with the given facts; raises Unavailable like the provider."""
    spec = getattr(func, FACT_ATTR, None)
    if not isinstance(spec, FactSpec):
        raise TypeError(f"{func!r} is not decorated with @fact")
    kwargs, blocked = _Injected({}, given=facts).arguments(spec.params)
    if blocked is not None:
        raise Unavailable(blocked.reason or blocked.error)
    return spec.func(**kwargs)


__all__ = ["Missing", "Unavailable", "gather", "run_check"]
