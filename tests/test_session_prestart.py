"""session.needs_fact and when execute() prestarts the probe worker (issue 16)."""

from __future__ import annotations

import pytest

from envdoctor import check, fact, ok
from envdoctor.core.api import CHECK_ATTR, FACT_ATTR
from envdoctor.core.plan import for_specs
from envdoctor.core.probe import ProbeClient
from envdoctor.core.registry import Registry
from envdoctor.core.session import execute, needs_fact


@fact("torch_runtime")
def _runtime(probe):
    return {"version": "0.0.fake"}


@fact("middle")
def _middle(torch_runtime, env):
    return torch_runtime["version"]


@fact("loop_a")
def _loop_a(loop_b=None):
    return 1


@fact("loop_b")
def _loop_b(loop_a=None):
    return 2


@check("fake.direct", tags=("smoke",))
def _direct(torch_runtime):
    """needs the runtime itself"""
    return ok("direct")


@check("fake.indirect", tags=("smoke", "gpu"))
def _indirect(middle, env):
    """needs it through another fact"""
    return ok("indirect")


@check("fake.static", tags=("build",))
def _static(env):
    """needs only the environment"""
    return ok("static")


@check("fake.cyclic", tags=("build",))
def _cyclic(env, loop_a=None, unknown_fact=None):
    """needs facts that form a cycle, and one nobody provides"""
    return ok("cyclic")


FACTS = {f.name: f for f in (getattr(p, FACT_ATTR) for p in (_runtime, _middle, _loop_a, _loop_b))}
DIRECT, INDIRECT, STATIC, CYCLIC = (getattr(c, CHECK_ATTR) for c in (_direct, _indirect, _static, _cyclic))


def test_needs_fact_follows_facts_through_other_facts():
    assert needs_fact([DIRECT], FACTS, "torch_runtime")
    assert needs_fact([INDIRECT], FACTS, "torch_runtime")
    assert needs_fact([STATIC, INDIRECT], FACTS, "torch_runtime")
    assert not needs_fact([STATIC], FACTS, "torch_runtime")
    assert not needs_fact([CYCLIC], FACTS, "torch_runtime")  # a cycle and an unknown fact end the search
    assert not needs_fact([], FACTS, "torch_runtime")
    assert needs_fact([CYCLIC], FACTS, "loop_b")
    assert not needs_fact([INDIRECT], {}, "torch_runtime")  # "middle" unknown: nothing behind it


@pytest.mark.parametrize(
    ("chosen", "want"),
    [
        ([STATIC], []),
        ([DIRECT], [False]),
        ([STATIC, INDIRECT], [False]),
        ([DIRECT, INDIRECT, STATIC], [True]),  # two smokes: a spare for the second lane
    ],
)
def test_execute_prestarts_only_when_torch_runtime_is_needed(monkeypatch, chosen, want):
    asked = []
    monkeypatch.setattr(ProbeClient, "prestart", lambda self, spare=False, **kw: asked.append(spare))
    reg = Registry(checks=list(chosen), facts=dict(FACTS))
    report = execute(for_specs(reg, chosen, timeout=60))
    assert asked == want
    assert sorted(r.id for r in report.results) == sorted(c.id for c in chosen)
    assert all(r.status.value == "pass" for r in report.results), report.results
