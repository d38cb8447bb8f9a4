"""torch_xla checks: version pairing, libtpu pin, PJRT_DEVICE, TPU device nodes (fake /sys, /dev)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envdoctor import Status
from envdoctor.testing import Unavailable, gather, run_check
from envdoctor_checks import packages, xla

TORCH_29 = {"name": "torch", "version": "2.9.0", "requires": []}
XLA_29 = {"name": "torch-xla", "version": "2.9.0", "requires": ['libtpu==0.0.21; extra == "tpu"', 'jax; extra == "pallas"']}
CHIP = {"pci": "0000:00:04.0", "device": "0x0063", "generation": "v5e"}
TPU_HOST = {"chips": [CHIP], "nodes": [{"path": "/dev/vfio/0", "access": True}], "lockfile": False}
NO_TPU = {"chips": [], "nodes": [], "lockfile": False}


def test_torch_xla_absent_skips_every_xla_check():
    for func in (xla.torch_match, xla.libtpu, xla.pjrt_device, xla.tpu_devices):
        r = run_check(func, torch_xla=Unavailable("torch_xla is not installed"), dists={}, tpu=NO_TPU, env={})
        assert r.status is Status.SKIP and r.message == "torch_xla is not installed"
    with pytest.raises(Unavailable, match="torch_xla is not installed"):
        gather(xla.torch_xla, dists={"torch": TORCH_29})


def test_minor_mismatch_from_real_dist_info(tmp_path, monkeypatch):
    """A site dir with torch 2.9.0 and a torch_xla 2.8.0 dist-info, read by the real `dists` fact."""
    for name, version in (("torch", "2.9.0"), ("torch_xla", "2.8.0")):
        info = tmp_path / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    dists = gather(packages.dists)
    monkeypatch.undo()
    r = run_check(xla.torch_match, torch_xla=gather(xla.torch_xla, dists=dists), dists=dists)
    assert r.status is Status.FAIL and "built for torch 2.8" in r.message and "undefined symbol" in r.message
    assert r.hint == 'pip install "torch~=2.9.0" "torch_xla[tpu]~=2.9.0"'


def test_torch_newer_than_any_torch_xla():
    r = run_check(xla.torch_match, torch_xla=XLA_29, dists={"torch": {**TORCH_29, "version": "2.13.0+cpu"}})
    assert r.status is Status.FAIL and "no torch_xla release exists for torch 2.13" in r.message
    assert r.hint.startswith('pip install "torch~=2.9.0" "torch_xla[tpu]~=2.9.0"') and "pin torch down" in r.hint


def test_matching_and_nightly_dates():
    assert run_check(xla.torch_match, torch_xla=XLA_29, dists={"torch": TORCH_29}).status is Status.PASS
    t = {**TORCH_29, "version": "2.10.0.dev20260101+cpu"}
    x = {**XLA_29, "version": "2.10.0.dev20260105"}
    r = run_check(xla.torch_match, torch_xla=x, dists={"torch": t})
    assert r.status is Status.FAIL and "different days" in r.message


def test_libtpu_pin():
    fix = "torch_xla[tpu]==2.9.0"
    r = run_check(xla.libtpu, torch_xla=XLA_29, dists={}, tpu=TPU_HOST, env={})
    assert r.status is Status.FAIL and "libtpu is not installed" in r.message and fix in r.hint
    wrong = {"libtpu": {"name": "libtpu", "version": "0.0.17"}}
    r = run_check(xla.libtpu, torch_xla=XLA_29, dists=wrong, tpu=TPU_HOST, env={})
    assert r.status is Status.FAIL and "pins libtpu==0.0.21" in r.message
    right = {"libtpu": {"name": "libtpu", "version": "0.0.21"}}
    assert run_check(xla.libtpu, torch_xla=XLA_29, dists=right, tpu=TPU_HOST, env={}).status is Status.PASS
    assert run_check(xla.libtpu, torch_xla=XLA_29, dists={}, tpu=NO_TPU, env={}).status is Status.SKIP
    r = run_check(xla.libtpu, torch_xla=XLA_29, dists=right, tpu=TPU_HOST, env={"TPU_LIBRARY_PATH": "/nonexistent/libtpu.so"})
    assert r.status is Status.FAIL and "TPU_LIBRARY_PATH" in r.message


def test_pjrt_device():
    libtpu = {"libtpu": {"name": "libtpu", "version": "0.0.21"}}
    r = run_check(xla.pjrt_device, torch_xla=XLA_29, tpu=TPU_HOST, env={}, dists={})
    assert r.status is Status.WARN and "Defaulting to PJRT_DEVICE=CPU" in r.message and "PJRT_DEVICE=TPU" in r.hint
    assert run_check(xla.pjrt_device, torch_xla=XLA_29, tpu=TPU_HOST, env={}, dists=libtpu).status is Status.PASS
    r = run_check(xla.pjrt_device, torch_xla=XLA_29, tpu=TPU_HOST, env={"PJRT_DEVICE": "CPU"}, dists=libtpu)
    assert r.status is Status.WARN and "will not use them" in r.message
    r = run_check(xla.pjrt_device, torch_xla=XLA_29, tpu=NO_TPU, env={"PJRT_DEVICE": "TPU"}, dists={})
    assert r.status is Status.FAIL and "no TPU chip" in r.message
    assert run_check(xla.pjrt_device, torch_xla=XLA_29, tpu=NO_TPU, env={}, dists={}).status is Status.PASS


def fake_sys(root: Path, devices: dict[str, tuple[str, str]]) -> str:
    for name, (vendor, device) in devices.items():
        d = root / "bus" / "pci" / "devices" / name
        d.mkdir(parents=True)
        (d / "vendor").write_text(vendor + "\n")
        (d / "device").write_text(device + "\n")
    return str(root)


def test_tpu_scan_on_fake_sys_and_dev(tmp_path):
    sys_root = fake_sys(
        tmp_path / "sys", {"0000:00:04.0": ("0x1ae0", "0x0063"), "0000:00:05.0": ("0x10de", "0x2335"), "0000:00:06.0": ("0x1ae0", "0x9999")}
    )
    chips = xla.scan_tpu_chips(sys_root)
    assert chips == [{"pci": "0000:00:04.0", "device": "0x0063", "generation": "v5e"}]
    dev = tmp_path / "dev"
    (dev / "vfio").mkdir(parents=True)
    (dev / "vfio" / "vfio").write_text("")  # the control node alone is no TPU
    assert xla.scan_tpu_nodes(str(dev)) == []
    r = run_check(xla.tpu_devices, torch_xla=XLA_29, tpu={"chips": chips, "nodes": [], "lockfile": False})
    assert r.status is Status.FAIL and "no /dev/accel*" in r.message and "--device" in r.hint
    (dev / "vfio" / "0").write_text("")
    (dev / "accel0").write_text("")
    nodes = xla.scan_tpu_nodes(str(dev))
    assert [n["path"] for n in nodes] == [str(dev / "accel0"), str(dev / "vfio" / "0")]
    r = run_check(xla.tpu_devices, torch_xla=XLA_29, tpu={"chips": chips, "nodes": nodes, "lockfile": True})
    assert r.status is Status.PASS and "libtpu_lockfile" in r.message
    assert run_check(xla.tpu_devices, torch_xla=XLA_29, tpu=NO_TPU).status is Status.SKIP


def test_real_tpu_fact_here():
    t = gather(xla.tpu)
    assert isinstance(t["chips"], list) and isinstance(t["nodes"], list)
