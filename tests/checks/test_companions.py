"""torchvision/torchaudio pairing and torch.compile's Python ceiling, from the release table."""

from __future__ import annotations

from envdoctor import Status
from envdoctor.testing import run_check
from envdoctor_checks import companions as c


def _dists(**versions):
    return {name: {"name": name, "version": v} for name, v in versions.items()}


def test_the_releases_built_for_torch_pass():
    row = run_check(c.companions, dists=_dists(torch="2.11.0+cu130", torchvision="0.26.0+cu130"))
    assert row.status is Status.PASS and "torchvision 0.26.0+cu130 pairs with torch 2.11.0+cu130" in row.message


def test_a_torchvision_for_another_torch_fails_with_the_pairing_release():
    row = run_check(c.companions, dists=_dists(torch="2.11.0", torchvision="0.25.0"))
    assert row.status is Status.FAIL and "torch 2.11.0 pairs with torchvision 0.26.0" in row.message
    assert "pip install torchvision==0.26.0" in row.hint and "torchvision::nms" in row.message
    assert [f.argv[1:] for f in row.fixes] == [("-m", "pip", "install", "--no-deps", "torchvision==0.26.0")]  # PyPI's, as torch


def test_a_companion_fix_uses_the_index_of_torchs_build():
    row = run_check(
        c.companions, dists=_dists(torch="2.11.0+cu126", torchvision="0.25.0+cu126"), python_info={"executable": "/v/bin/python"}
    )
    assert row.status is Status.FAIL
    (fix,) = row.fixes
    assert fix.argv == (
        "/v/bin/python",
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--index-url",
        "https://download.pytorch.org/whl/cu126",
        "torchvision==0.26.0",
    )


def test_nothing_to_pair_or_unknown_torch_skips():
    assert run_check(c.companions, dists=_dists(torch="2.11.0")).status is Status.SKIP
    assert run_check(c.companions, dists=_dists(torch="9.9.0", torchvision="0.1.0")).status is Status.SKIP


def test_python_ceiling_judges_a_pasted_torch_only():
    pasted = {"version": "2.5.1+cu124", "location": ""}
    too_new = run_check(c.python_ceiling, torch_build=pasted, python_info={"version": "3.13.1"})
    assert too_new.status is Status.FAIL and "up to 3.12" in too_new.message
    assert run_check(c.python_ceiling, torch_build=pasted, python_info={"version": "3.12.3"}).status is Status.PASS
    live = {"version": "2.5.1+cu124", "location": "/venv/lib/python3.12/site-packages/torch"}
    assert run_check(c.python_ceiling, torch_build=live, python_info={"version": "3.13.1"}).status is Status.SKIP


def test_python_ceiling_needs_only_the_release():
    # "torch 2.4.0" without a build tag: no torch_build, but the release decides the limit
    v = run_check(c.python_ceiling, python_info={"version": "3.13.0"}, dists=_dists(torch="2.4.0"))
    assert v.status is Status.FAIL and v.details["cause_id"] == "python_too_new_for_dynamo"
    assert run_check(c.python_ceiling, python_info={"version": "3.11.9"}, dists=_dists(torch="2.4.0")).status is Status.PASS
    assert run_check(c.python_ceiling, python_info={"version": "3.13.0"}).status is Status.SKIP  # no torch at all
