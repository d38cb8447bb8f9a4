"""System checks: judgements with injected facts, facts against real files and commands."""

from __future__ import annotations

import os
import shutil

import pytest

from envdoctor import Status
from envdoctor.testing import Unavailable, gather, run_check
from envdoctor_checks import system
from envdoctor_checks.packages import parse_version_py, torch_build, versions

PY = {
    "version": "3.11.7",
    "version_info": [3, 11, 7],
    "executable": "/usr/bin/python3",
    "include_dir": "/usr/include/python3.11",
    "python_h": True,
    "free_threading": False,
}


def test_python_version():
    assert run_check(system.python_version, python_info=PY).message == "Python 3.11.7 at /usr/bin/python3"
    old = run_check(system.python_version, python_info={**PY, "version": "3.8.10", "version_info": [3, 8, 10]})
    assert old.status is Status.FAIL and "3.10" in old.hint


def test_python_info_matches_this_interpreter():
    info = gather(system.python_info)
    assert info["python_h"] == os.path.isfile(os.path.join(info["include_dir"], "Python.h"))
    assert info["version_info"][0] == 3


def test_ldconfig_parsing_and_real_run():
    text = (
        "3 libs found in cache `/etc/ld.so.cache'\n"
        "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
        "\tlibcudnn.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.8\n"
        "\tlibcuda.so.1 (libc6) => /usr/lib32/libcuda.so.1\n"
    )
    libs = system.parse_ldconfig(text)
    assert libs["libcuda.so.1"] == ["/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib32/libcuda.so.1"]
    if shutil.which("ldconfig") or os.path.exists("/sbin/ldconfig"):
        real = gather(system.ldconfig)
        assert any(name.startswith("libc.so") for name in real["libs"])


def test_ldconfig_missing_is_unavailable(monkeypatch):
    monkeypatch.setattr(system, "LDCONFIG_CANDIDATES", ("/nonexistent/ldconfig",))
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(Unavailable, match="ldconfig not found"):
        gather(system.ldconfig)


def test_mountinfo_and_find_mount():
    text = (
        "22 1 0:21 / / rw,relatime - overlay overlay rw\n"
        "30 22 0:25 / /dev/shm rw,nosuid,nodev - tmpfs shm rw,size=65536k\n"
        "31 22 0:26 / /mnt/home\\040dir rw - nfs4 server:/export rw,vers=4.2\n"
        "32 22 0:27 / /ro ro - tmpfs tmpfs ro\n"
    )
    mounts = system.parse_mountinfo(text)
    assert system.find_mount("/dev/shm/x", mounts)["fstype"] == "tmpfs"
    nfs = system.find_mount("/mnt/home dir/.triton", mounts)
    assert nfs["mount_point"] == "/mnt/home dir" and system.is_network_fs(nfs)
    assert "ro" in system.find_mount("/ro/cache", mounts)["options"]
    assert system.find_mount("/usr/lib", mounts)["mount_point"] == "/"
    assert not system.is_network_fs({"fstype": "fuse.fuse-overlayfs"})
    assert system.is_network_fs({"fstype": "fuse.sshfs"})
    real = gather(system.mounts)
    assert any(m["mount_point"] == "/" for m in real)


def test_shm_judgement():
    small = run_check(system.shm_size, shm={"size": 64 << 20, "free": 60 << 20}, container={"in_container": True})
    assert small.status is Status.WARN
    assert "64 MiB" in small.message and "Docker's default" in small.message
    assert "--shm-size" in small.hint
    big = run_check(system.shm_size, shm={"size": 16 << 30, "free": 16 << 30}, container={"in_container": False})
    assert big.status is Status.PASS
    gone = run_check(system.shm_size, shm=Unavailable("/dev/shm is not available: No such file or directory"))
    assert gone.status is Status.FAIL


def test_real_shm_fact():
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm here")
    assert gather(system.shm)["size"] > 0


def test_glibc_and_musl():
    base = {"name": "Ubuntu 18.04", "machine": "x86_64", "kernel": "5.4", "libc": ["glibc", "2.27"], "id": "ubuntu", "version": "18.04"}
    old = run_check(system.os_info, os_release=base)
    assert old.status is Status.WARN and "glibc 2.28" in old.message
    new = run_check(system.os_info, os_release={**base, "libc": ["glibc", "2.36"]})
    assert new.status is Status.PASS and "glibc 2.36" in new.message
    musl = run_check(system.os_info, os_release={**base, "libc": ["", ""]})
    assert musl.status is Status.WARN and "Alpine" in musl.hint


def test_container_fact_reads_environment(tmp_path):
    k8s = gather(system.container, env={"KUBERNETES_SERVICE_HOST": "10.0.0.1"})
    assert k8s["in_container"] and k8s["kind"] == "kubernetes"


def test_disk_space_warns_when_low(monkeypatch):
    monkeypatch.setattr(system, "DISK_WARN", 1 << 60)
    r = run_check(system.disk_space, env={"HOME": "/"})
    assert r.status is Status.WARN and "TORCHINDUCTOR_CACHE_DIR" in r.hint


def test_version_py_parsing_and_torch_build(tmp_path, monkeypatch):
    text = "from typing import Optional\n__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\nhip: Optional[str] = None\ngit_version = 'abc'\n"
    assert parse_version_py(text) == {"__version__": "2.11.0+cu130", "cuda": "13.0", "hip": None, "git_version": "abc"}
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('must never be imported')\n")
    (fake / "version.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    build = gather(torch_build)
    assert build["kind"] == "cuda" and build["cuda"] == "13.0" and build["local"] == "cu130"


def test_versions_check_fails_without_torch_unless_not_expected():
    # Issue 13: torch missing in the interpreter examined is a failure (was: a skip, so a
    # fresh venv without torch was HEALTHY); with `--expect torch=none` it is a skip.
    dists = {"numpy": {"name": "numpy", "version": "2.1.0"}}
    r = run_check(versions, dists=dists)
    assert r.status is Status.FAIL and r.message.startswith("torch is not installed")
    r = run_check(versions, dists=dists, options={"torch_expected": False})
    assert r.status is Status.SKIP and r.message.startswith("torch is not installed")
