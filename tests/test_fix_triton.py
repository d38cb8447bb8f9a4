"""The issue's "done when", with the built-in check and real Triton wheels: in a fresh venv whose
Triton does not match the pin, `envdoctor fix` without --yes changes nothing, --yes installs the
pinned Triton and triton.torch_pin passes again, --undo restores the identical distribution list.

torch itself is a stand-in declaring a CUDA build's pin (a real CUDA torch is a 2 GB wheel;
triton.torch_pin reads only its metadata). Triton 3.6.0 and 3.8.0 come from pip's configured
index (slow: two 180 MB wheels)."""

from __future__ import annotations

import pytest

from tests.fixvenv import dist_list, fix_round, make_venv, state_env, torch_standin

pytestmark = pytest.mark.slow

PIN = "3.8.0"


def test_triton_off_the_pin_is_fixed_and_undone(tmp_path):
    torch = torch_standin(tmp_path, "2.14.0", requires=(f'triton=={PIN}; platform_system == "Linux"',))
    python = make_venv(tmp_path, torch, "triton==3.6.0")

    def pinned(python):
        assert dict(dist_list(python))["triton"] == PIN

    out = fix_round(
        python, "triton.torch_pin", state_env(tmp_path), "triton 3.6.0 is installed but torch 2.14.0 requires triton==3.8.0", fixed=pinned
    )
    assert f"install --force-reinstall --no-deps triton=={PIN}" in out["plan"]
