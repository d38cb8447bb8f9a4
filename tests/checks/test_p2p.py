"""B20: consumer GPUs whose driver reports peer-to-peer access while peer copies hang or
corrupt data. The copies run on GPUs only; here the probe answers are injected."""

from __future__ import annotations

import pytest

from envdoctor import ProbeError, ProbeRaised, Status, Unavailable
from envdoctor.core.probe import ProbeClient
from envdoctor.testing import gather, run_check
from envdoctor_checks import nvidia
from tests.checks.test_nvidia import gpu

RTX = [gpu(i, name="NVIDIA GeForce RTX 4090", brand="GeForce") for i in range(3)]
MIB8 = 8 << 20


def _good(src, dst, gbps=24.0):
    return {
        "src": src,
        "dst": dst,
        "bytes": MIB8,
        "wrong_there": 0,
        "wrong_back": 0,
        "ok": True,
        "seconds": MIB8 / gbps / 1e9,
        "gbps": gbps,
    }


class FakeProbe:
    """Answers probe calls from a table keyed by (src, dst); an exception in it is raised."""

    def __init__(self, pairs, answers):
        self.pairs, self.answers, self.calls = pairs, answers, []

    def call(self, target, kwargs=None, *, timeout=60.0, what=None, **_):
        self.calls.append((target, dict(kwargs or {}), timeout))
        if target.endswith(":peer_pairs"):
            return {"devices": 3, "pairs": self.pairs, "refused": []}
        answer = self.answers[(kwargs["src"], kwargs["dst"])]
        if isinstance(answer, BaseException):
            raise answer
        return answer


def test_exact_copies_pass_with_the_measured_bandwidth(monkeypatch, tmp_path):
    monkeypatch.setattr(nvidia, "IOMMU_GROUPS", str(tmp_path))
    probe = FakeProbe([[0, 1], [0, 2], [1, 2]], {(0, 1): _good(0, 1), (0, 2): _good(0, 2, 11.5), (1, 2): _good(1, 2)})
    copies = gather(nvidia.peer_copies, probe=probe, gpus=RTX)
    row = run_check(nvidia.p2p_consumer, gpus=RTX, env={}, nvidia_query={"nvml": {"p2p_read": "ok"}}, peer_copies=copies)
    assert row.status is Status.PASS
    assert "3 GPU pair(s) are exact both ways" in row.message and "slowest 11.5 GB/s" in row.message
    assert all(c[2] == nvidia.P2P_PAIR_TIMEOUT for c in probe.calls[1:])


def test_wrong_bytes_fail_where_the_driver_reports_p2p_working(monkeypatch, tmp_path):
    """Exactly the case the static check passed: NVML says P2P ok, no IOMMU group visible."""
    monkeypatch.setattr(nvidia, "IOMMU_GROUPS", str(tmp_path))
    corrupt = {**_good(0, 1), "wrong_there": 4096, "ok": False}
    copies = nvidia.measure_peer_copies(FakeProbe([[0, 1], [1, 2]], {(0, 1): corrupt, (1, 2): _good(1, 2)}))
    query = {"nvml": {"p2p_read": "ok"}}
    assert run_check(nvidia.p2p_consumer, gpus=RTX, env={}, nvidia_query=query).status is Status.PASS  # silent without the copy
    row = run_check(nvidia.p2p_consumer, gpus=RTX, env={}, nvidia_query=query, peer_copies=copies)
    assert row.status is Status.FAIL
    assert "GPU 0 <-> GPU 1 returned wrong data (4096 of 16777216 bytes differ)" in row.message
    assert "NCCL_P2P_DISABLE=1" in row.hint and "iommu=off" in row.hint
    assert [f.command for f in row.fixes] == ["export NCCL_P2P_DISABLE=1", "export NCCL_IB_DISABLE=1"]


def test_a_hang_fails_and_stops_the_measurement(monkeypatch, tmp_path):
    monkeypatch.setattr(nvidia, "IOMMU_GROUPS", str(tmp_path))
    hang = ProbeError(
        "the peer copy between GPU 0 and GPU 1 did not finish within 20s and was killed; while peer copy GPU 0 -> GPU 1 (8 MiB)"
    )
    probe = FakeProbe([[0, 1], [0, 2], [1, 2]], {(0, 1): hang, (0, 2): _good(0, 2), (1, 2): _good(1, 2)})
    copies = nvidia.measure_peer_copies(probe)
    assert len(probe.calls) == 2 and copies["untested"] == [[0, 2], [1, 2]]
    row = run_check(nvidia.p2p_consumer, gpus=RTX, env={"NCCL_P2P_DISABLE": "1"}, peer_copies=copies)
    assert row.status is Status.FAIL  # NCCL_P2P_DISABLE does not make torch's own peer copies safe
    assert row.message.startswith(
        "NCCL_P2P_DISABLE=1 is set, but the driver reports peer-to-peer access and the peer copy GPU 0 <-> GPU 1 hung"
    )


def test_a_raising_copy_is_a_broken_pair_not_a_crash(monkeypatch, tmp_path):
    monkeypatch.setattr(nvidia, "IOMMU_GROUPS", str(tmp_path))
    raised = ProbeRaised("RuntimeError", "CUDA error: an illegal memory access was encountered")
    copies = nvidia.measure_peer_copies(FakeProbe([[0, 1]], {(0, 1): raised}))
    row = run_check(nvidia.p2p_consumer, gpus=RTX, env={}, peer_copies=copies)
    assert row.status is Status.FAIL and "failed: RuntimeError: CUDA error: an illegal memory access" in row.message


def test_no_pair_with_peer_access_falls_back_to_the_drivers_word(monkeypatch, tmp_path):
    monkeypatch.setattr(nvidia, "IOMMU_GROUPS", str(tmp_path))
    copies = nvidia.measure_peer_copies(FakeProbe([], {}))
    row = run_check(nvidia.p2p_consumer, gpus=RTX, env={}, nvidia_query={"nvml": {"p2p_read": "status 2"}}, peer_copies=copies)
    assert row.status is Status.WARN and "peer-to-peer unsupported" in row.message


def test_peer_copies_only_on_two_or_more_consumer_gpus():
    probe = FakeProbe([[0, 1]], {})
    for gpus in ([gpu(0), gpu(1)], RTX[:1], []):
        with pytest.raises(Unavailable, match="fewer than two consumer GPUs"):
            gather(nvidia.peer_copies, probe=probe, gpus=gpus)
    assert probe.calls == []


@pytest.mark.slow
def test_the_body_runs_in_a_real_worker_and_finds_no_pair_without_gpus():
    client = ProbeClient()
    try:
        listing = client.call("envdoctor_checks.bodies.p2p:peer_pairs", timeout=120)
    finally:
        client.close()
    assert listing == {"devices": 0, "pairs": [], "refused": []}
