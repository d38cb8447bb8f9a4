"""A check's or fact's parameters read from its code object are what inspect.signature reads."""

from __future__ import annotations

import functools
import inspect

from envdoctor.core.api import Param, _params
from envdoctor.core.registry import discover


def _by_inspect(func) -> tuple[Param, ...]:
    return tuple(
        Param(p.name, p.default is not inspect.Parameter.empty)
        for p in inspect.signature(func).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    )


def a(x, y=1, *args, z, w=2, **kw): ...
def b(x, /, y, z=None): ...
def c(): ...
def d(*, probe=None): ...
def e(dists, torch_build=None, triton_pkg=None, python_info=None): ...


@functools.wraps(e)
def wrapped(*args, **kwargs): ...


def with_signature(*args): ...


with_signature.__signature__ = inspect.signature(b)  # type: ignore[attr-defined]


def test_each_shape_of_function_reads_as_inspect_reads_it():
    for func in (a, b, c, d, e, wrapped, with_signature, lambda q, r=3: None, functools.partial(e, {})):
        assert _params(func) == _by_inspect(func), func
    assert _params(wrapped) == _params(e)  # through __wrapped__, as inspect does


def test_every_declared_check_and_fact_reads_as_inspect_reads_it():
    reg = discover(plugins=False)
    specs = [*reg.checks, *reg.facts.values(), *reg.pasted_facts.values()]
    assert len(specs) > 100
    for spec in specs:
        assert spec.params == _by_inspect(spec.func), spec
