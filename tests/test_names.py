"""envdoctor.core.names: distribution names as pip compares them."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "name", ["Django", "oslo.concurrency", "pytorch_triton--rocm", "Foo._-.Bar", "nvidia-cuda-runtime-cu12", "A__B", "x", ""]
)
def test_the_name_rule_written_out_is_packaging_s(name):
    # core.names.canonical spares triage packaging.utils (and packaging.tags, logging behind it)
    from packaging.utils import canonicalize_name

    from envdoctor.core.names import canonical

    assert canonical(name) == canonicalize_name(name)
