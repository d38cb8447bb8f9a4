"""Baseline and lock conformance: real distributions on a real sys.path, drift named by name."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import time

import pytest

from envdoctor import BASELINE_SCHEMA, Status
from envdoctor.sources.baseline import parse_requirements
from envdoctor.testing import gather, run_check
from envdoctor_checks import baseline as bl
from envdoctor_checks.packages import dists as dists_fact


def _write_dist(site, name: str, version: str, files: dict[str, bytes]) -> None:
    """A wheel-installed distribution: its files and a RECORD with their sha256 and size."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    rows = []
    for rel, data in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append(f"{rel},sha256={digest},{len(data)}")
    rows.append(f"{info.name}/RECORD,,")
    (info / "RECORD").write_text("\n".join(rows) + "\n")


@pytest.fixture
def site(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    _write_dist(
        site, "nvidia-fake-cublas", "13.0.1", {"nvidia/fake/lib/libfake.so": b"\x7fELF" + b"a" * 60, "nvidia/fake/__init__.py": b""}
    )
    return site


def _baseline(tmp_path, facts) -> dict:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"schema": BASELINE_SCHEMA, "facts": facts}))
    return gather(bl.baseline, options={"baseline": str(path)})


@pytest.mark.slow
def test_an_unchanged_environment_passes_against_its_own_baseline(site, tmp_path):
    live = {"dists": gather(dists_fact), "dist_files": gather(bl.dist_files)}
    assert "nvidia-fake-cublas" in live["dist_files"]
    base = _baseline(tmp_path, live)
    for check, facts in ((bl.distributions, {"dists": live["dists"]}), (bl.files, {"dist_files": gather(bl.dist_files)})):
        row = run_check(check, baseline=base, **facts)
        assert row.status is Status.PASS, row.message


def test_a_changed_version_and_a_swapped_local_tag_fail_by_name(tmp_path):
    live = {"torch": {"name": "torch", "version": "2.11.0+cpu"}, "numpy": {"name": "numpy", "version": "2.1.0"}}
    recorded = {"torch": {"name": "torch", "version": "2.11.0+cu130"}, "numpy": {"name": "numpy", "version": "1.26.4"}}
    row = run_check(bl.distributions, baseline=_baseline(tmp_path, {"dists": recorded}), dists=live)
    assert row.status is Status.FAIL
    assert "torch is 2.11.0+cpu, recorded 2.11.0+cu130" in row.message and "numpy is 2.1.0" in row.message
    commands = [f.command for f in row.fixes]
    assert "python -m pip install --no-deps torch==2.11.0+cu130 --index-url https://download.pytorch.org/whl/cu130" in commands
    assert "python -m pip install --no-deps numpy==1.26.4" in commands  # from PyPI: no PyTorch index for a plain version
    assert "; ".join(commands) in row.hint
    examined = run_check(
        bl.distributions, baseline=_baseline(tmp_path, {"dists": recorded}), dists=live, python_info={"executable": "/v/bin/python"}
    )
    assert all(f.argv[:3] == ("/v/bin/python", "-m", "pip") for f in examined.fixes)


def test_an_added_triton_fails_but_an_added_unrelated_package_does_not(tmp_path):
    recorded = {"torch": {"version": "2.11.0"}}
    live = {"torch": {"name": "torch", "version": "2.11.0"}, "pytorch-triton": {"name": "pytorch-triton", "version": "3.6.0"}}
    row = run_check(bl.distributions, baseline=_baseline(tmp_path, {"dists": recorded}), dists=live)
    assert (
        row.status is Status.FAIL
        and "pytorch-triton 3.6.0 was added" in row.message
        and "python -m pip uninstall -y pytorch-triton" in row.hint
    )
    live = {"torch": {"name": "torch", "version": "2.11.0"}, "rich": {"name": "rich", "version": "14.0"}}
    assert run_check(bl.distributions, baseline=_baseline(tmp_path, {"dists": recorded}), dists=live).status is Status.PASS


@pytest.mark.slow
def test_a_modified_library_file_fails_naming_the_file(site, tmp_path):
    base = _baseline(tmp_path, {"dist_files": gather(bl.dist_files)})
    lib = site / "nvidia/fake/lib/libfake.so"
    time.sleep(0.01)
    lib.write_bytes(b"\x7fELF" + b"b" * 60)  # same size, other content: an overwrite by another package
    os.utime(lib, ns=(time.time_ns(), time.time_ns()))
    row = run_check(bl.files, baseline=base, dist_files=gather(bl.dist_files))
    assert row.status is Status.FAIL
    assert "nvidia/fake/lib/libfake.so" in row.message and "nvidia-fake-cublas" in row.message
    assert "python -m pip install --no-deps --force-reinstall nvidia-fake-cublas==13.0.1" in row.hint


@pytest.mark.slow
def test_a_touched_but_identical_file_passes(site, tmp_path):
    base = _baseline(tmp_path, {"dist_files": gather(bl.dist_files)})
    lib = site / "nvidia/fake/lib/libfake.so"
    os.utime(lib, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    assert run_check(bl.files, baseline=base, dist_files=gather(bl.dist_files)).status is Status.PASS


def test_driver_and_gpu_models_as_recorded(tmp_path):
    base = _baseline(tmp_path, {"driver": {"version": "580.159.04"}, "gpus": [{"name": "NVIDIA H200"}, {"name": "NVIDIA H200"}]})
    same = run_check(bl.driver_gpus, baseline=base, driver={"version": "580.159.04"}, gpus=[{"name": "NVIDIA H200"}] * 2)
    assert same.status is Status.PASS
    moved = run_check(bl.driver_gpus, baseline=base, driver={"version": "570.86.15"}, gpus=[{"name": "NVIDIA H100 80GB HBM3"}])
    assert moved.status is Status.FAIL and "570.86.15 (recorded 580.159.04)" in moved.message and "NVIDIA H100" in moved.message


def test_a_bad_baseline_file_is_one_clear_reason(tmp_path):
    bad = tmp_path / "b.json"
    bad.write_text('{"facts": {}}')
    with pytest.raises(bl.Unavailable, match="is not an envdoctor baseline"):
        gather(bl.baseline, options={"baseline": str(bad)})
    with pytest.raises(bl.Unavailable, match="cannot read the baseline"):
        gather(bl.baseline, options={"baseline": str(tmp_path / "missing.json")})


def test_requirements_and_pylock_pins(tmp_path):
    req = tmp_path / "requirements.txt"
    req.write_text(
        "# pinned\n--index-url https://download.pytorch.org/whl/cu130\ntorch==2.11.0+cu130 \\\n    --hash=sha256:abc\n"
        "numpy==2.1.0 ; python_version >= '3'\nrequests>=2\n-e git+https://x/y#egg=z\nolder==1.0 ; python_version < '3'\n"
    )
    assert parse_requirements(req.read_text(), str(req)) == {"torch": "2.11.0+cu130", "numpy": "2.1.0"}
    lock = tmp_path / "pylock.toml"
    lock.write_text(
        'lock-version = "1.0"\n[[packages]]\nname = "Torch"\nversion = "2.11.0"\n[[packages]]\nname = "numpy"\nversion = "2.1.0"\n'
    )
    got = gather(bl.lock, options={"lock": str(lock)})
    assert got["pins"] == {"torch": "2.11.0", "numpy": "2.1.0"}
    row = run_check(
        bl.lock_pins, lock=got, dists={"torch": {"name": "torch", "version": "2.11.0"}, "numpy": {"name": "numpy", "version": "2.2.0"}}
    )
    assert (
        row.status is Status.FAIL
        and "numpy is 2.2.0, recorded 2.1.0" in row.message
        and "python -m pip install --no-deps numpy==2.1.0" in row.hint
    )
