"""Which probe worker each smoke runs in (issue 16): the compile smokes in the 'compile' lane, beside
the shared worker; all in the shared one with ENVDOCTOR_SMOKE_PARALLEL=0; fresh workers with =1."""

from __future__ import annotations

import pytest

from envdoctor import Status
from envdoctor.testing import run_check
from envdoctor_checks import smoke
from tests.checks.test_smoke import CUDA_TORCH, H200, CannedProbe, compiled, gpu, part

GPU_FACTS = {"torch_build": CUDA_TORCH, "gpus": [H200], "visible_gpus": [H200]}
ANSWERS = {
    "compile_smoke": compiled(function=part(), module=part()),
    "cudagraphs": {"max_error": 0.0, "ok": True, "cudagraph_skips": 0},
    "amp_compile": {"dtype": "bfloat16", "max_error": 1e-3, "ok": True},
    "matmul": {"gpus": [gpu(0)]},
}
COMPILE_SMOKES = (smoke.compile_smoke, smoke.cudagraphs, smoke.amp_compile)


def _calls(check, env) -> list[tuple[str, dict, dict]]:
    probe = CannedProbe(**ANSWERS)
    row = run_check(check, probe=probe, env=env, **GPU_FACTS)
    assert row.status is Status.PASS, (check, row.message)
    assert probe.calls, check
    return probe.calls


@pytest.mark.parametrize("check", COMPILE_SMOKES)
@pytest.mark.parametrize("env", [{}, {"ENVDOCTOR_SMOKE_PARALLEL": ""}, {"ENVDOCTOR_SMOKE_PARALLEL": "triton"}])
def test_compile_smokes_run_in_the_compile_lane_by_default(check, env):
    for _, _, kw in _calls(check, env):
        assert kw.get("lane") == "compile", kw
        assert not kw.get("fresh"), kw


@pytest.mark.parametrize("check", COMPILE_SMOKES)
def test_compile_smokes_share_the_main_worker_with_parallel_off(check):
    for _, _, kw in _calls(check, {"ENVDOCTOR_SMOKE_PARALLEL": "0"}):
        assert kw.get("lane") == "main", kw
        assert not kw.get("fresh"), kw


@pytest.mark.parametrize("check", COMPILE_SMOKES)
def test_compile_smokes_get_fresh_workers_with_parallel_on(check):
    for _, _, kw in _calls(check, {"ENVDOCTOR_SMOKE_PARALLEL": "1"}):
        assert kw.get("fresh"), kw


def test_the_matmul_stays_in_the_shared_worker():
    for env in ({}, {"ENVDOCTOR_SMOKE_PARALLEL": "0"}):
        for _, _, kw in _calls(smoke.matmul, env):
            assert kw.get("lane", "main") == "main" and not kw.get("fresh"), kw


def test_compile_lane_setting():
    assert smoke.compile_lane(None) == smoke.compile_lane({}) == "compile"
    assert smoke.compile_lane({"ENVDOCTOR_SMOKE_PARALLEL": " 0 "}) == "main"
    assert smoke.compile_lane({"ENVDOCTOR_SMOKE_PARALLEL": "1"}) == "compile"
