"""Triton checks: judgements with injected facts; facts against real fake installs on disk."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from envdoctor import Status
from envdoctor.testing import Unavailable, gather, run_check
from envdoctor_checks import packages, triton

TORCH_2_11 = {"name": "torch", "version": "2.11.0+cu130", "requires": ['triton==3.6.0; platform_system == "Linux"', "sympy>=1.13.3"]}
TORCH_CPU = {"name": "torch", "version": "2.13.0+cpu", "requires": ["filelock", "sympy>=1.13.3"]}
TRITON_36 = {"name": "triton", "version": "3.6.0", "requires": []}
CUDA_BUILD = {"version": "2.11.0+cu130", "kind": "cuda", "cuda": "13.0", "location": "/x/torch"}
H200 = {"index": 0, "name": "NVIDIA H200", "cc": "9.0"}
DRIVER_580 = {"version": "580.65.06", "cuda_version": "13.0"}


def write_dist(site: Path, name: str, version: str, requires: list[str] = ()) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", *(f"Requires-Dist: {r}" for r in requires)]
    (info / "METADATA").write_text("\n".join(lines) + "\n")
    (info / "INSTALLER").write_text("pip\n")


def write_script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


def fake_triton(site: Path, version: str = "3.6.0", ptxas_release: str | None = "12.8", blackwell: str | None = None) -> Path:
    pkg = site / "triton"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(f'"""fake"""\n__version__ = \'{version}\'\nraise ImportError("must not be imported")\n')
    nbin = pkg / "backends" / "nvidia" / "bin"
    nbin.mkdir(parents=True)
    if ptxas_release:
        write_script(nbin / "ptxas", f"echo 'Cuda compilation tools, release {ptxas_release}, V{ptxas_release}.93'")
    if blackwell:
        write_script(nbin / "ptxas-blackwell", f"echo 'Cuda compilation tools, release {blackwell}, V{blackwell}.80'")
    return pkg


# ---------------------------------------------------------------- torch_pin (A6), single_dist (A7)


def test_pin_mismatch_read_from_real_dist_info(tmp_path, monkeypatch):
    """A venv whose torch pins triton==3.6.0 but has triton 3.5.1: the real `dists` fact reads it."""
    write_dist(tmp_path, "torch", "2.11.0", ['triton==3.6.0; platform_system == "Linux"', "filelock"])
    write_dist(tmp_path, "triton", "3.5.1")
    from envdoctor import installed_distributions  # noqa: F401 - its module loads (sysconfig...) before sys.path is narrowed

    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    dists = gather(packages.dists)
    monkeypatch.undo()
    r = run_check(triton.torch_pin, dists=dists, torch_build=CUDA_BUILD, triton_pkg=Unavailable("triton is not installed"))
    if sys.platform == "linux":
        assert r.status is Status.FAIL
        assert "triton 3.5.1 is installed but torch 2.11.0 requires triton==3.6.0" in r.message
        assert 'pip install --force-reinstall --no-deps "triton==3.6.0"' in r.hint


def test_pin_satisfied_and_compatible_release():
    pkg = {"location": "/x/triton", "version": "3.6.0", "nvidia_backend": True, "bundled": {}}
    r = run_check(triton.torch_pin, dists={"torch": TORCH_2_11, "triton": TRITON_36}, torch_build=CUDA_BUILD, triton_pkg=pkg)
    assert r.status is Status.PASS and "satisfies torch's pin triton==3.6.0" in r.message
    torch_214 = {"name": "torch", "version": "2.14.0", "requires": ['triton~=3.8.0; platform_system == "Linux"']}
    r = run_check(
        triton.torch_pin, dists={"torch": torch_214, "triton": {**TRITON_36, "version": "3.8.2"}}, triton_pkg={**pkg, "version": "3.8.2"}
    )
    assert r.status is Status.PASS
    r = run_check(
        triton.torch_pin, dists={"torch": torch_214, "triton": {**TRITON_36, "version": "3.9.0"}}, triton_pkg={**pkg, "version": "3.9.0"}
    )
    assert r.status is Status.FAIL and "triton~=3.8.0" in r.message


def test_pin_missing_triton_where_required_and_where_marker_is_false():
    r = run_check(triton.torch_pin, dists={"torch": TORCH_2_11}, torch_build=CUDA_BUILD)
    assert r.status is Status.FAIL and "TritonMissing" in r.message and r.hint == 'pip install --force-reinstall --no-deps "triton==3.6.0"'
    windows_only = {**TORCH_2_11, "requires": ['triton==3.6.0; platform_system == "Windows"']}
    r = run_check(triton.torch_pin, dists={"torch": windows_only}, torch_build=CUDA_BUILD)
    assert r.status is Status.SKIP and "which is false here" in r.message


def test_cpu_torch_does_not_depend_on_triton():
    r = run_check(triton.torch_pin, dists={"torch": TORCH_CPU}, torch_build={**CUDA_BUILD, "kind": "cpu"})
    assert r.status is Status.SKIP and "CPU build" in r.message and "C++" in r.message
    beside = run_check(triton.torch_pin, dists={"torch": TORCH_CPU, "triton": TRITON_36}, torch_build={**CUDA_BUILD, "kind": "cpu"})
    assert beside.status is Status.SKIP and beside.message.endswith("; triton 3.6.0 is installed on its own")


def test_files_overwritten_by_another_triton():
    pkg = {"location": "/x/triton", "version": "3.5.1", "nvidia_backend": True, "bundled": {}}
    r = run_check(triton.torch_pin, dists={"torch": TORCH_2_11, "triton": TRITON_36}, triton_pkg=pkg)
    assert r.status is Status.FAIL and "files say 3.5.1" in r.message
    # a nightly's local version is the same release as its files
    nightly = {"name": "torch", "version": "2.12.0.dev20260101", "requires": ["pytorch-triton==3.7.0+git1234abcd"]}
    pt = {"name": "pytorch-triton", "version": "3.7.0+git1234abcd", "requires": []}
    r = run_check(triton.torch_pin, dists={"torch": nightly, "pytorch-triton": pt}, triton_pkg={**pkg, "version": "3.7.0"})
    assert r.status is Status.PASS


def test_dist_info_without_package_files():
    r = run_check(triton.torch_pin, dists={"torch": TORCH_2_11, "triton": TRITON_36}, triton_pkg=Unavailable("triton is not installed"))
    assert r.status is Status.FAIL and "files are gone" in r.message and "--force-reinstall" in r.hint


def test_two_triton_distributions():
    pt = {"name": "pytorch-triton", "version": "3.6.0+gitabc", "requires": []}
    r = run_check(triton.single_dist, dists={"torch": TORCH_2_11, "triton": TRITON_36, "pytorch-triton": pt})
    assert r.status is Status.FAIL
    assert "triton 3.6.0, pytorch-triton 3.6.0+gitabc" in r.message
    assert r.hint == 'pip uninstall -y triton pytorch-triton && pip install "triton==3.6.0"'
    assert run_check(triton.single_dist, dists={"triton": TRITON_36}).status is Status.PASS


# ---------------------------------------------------------------- the package on disk, ptxas (A4)


def test_triton_pkg_located_without_import(tmp_path, monkeypatch):
    fake_triton(tmp_path, "3.6.0", "12.8")
    monkeypatch.syspath_prepend(str(tmp_path))
    pkg = gather(triton.triton_pkg)
    assert pkg["version"] == "3.6.0" and pkg["location"] == str(tmp_path / "triton")
    assert pkg["bundled"]["ptxas"].endswith("bin/ptxas") and pkg["bundled"]["ptxas-blackwell"] is None
    assert "triton" not in sys.modules


def test_real_ptxas_fake_and_gpu_judgement(tmp_path):
    pkg = triton.read_triton_package(str(fake_triton(tmp_path, "3.6.0", "12.8")))
    facts = gather(triton.triton_ptxas, triton_pkg=pkg, env={})
    assert facts["tools"]["ptxas"]["version"] == "12.8"
    r = run_check(triton.ptxas, triton_pkg=pkg, triton_ptxas=facts, torch_build=CUDA_BUILD, driver=DRIVER_580, visible_gpus=[H200])
    assert r.status is Status.PASS and "ptxas 12.8" in r.message
    gb10 = {"index": 0, "name": "NVIDIA GB10", "cc": "12.1"}
    r = run_check(triton.ptxas, triton_pkg=pkg, triton_ptxas=facts, driver=DRIVER_580, visible_gpus=[gb10])
    assert r.status is Status.FAIL and "sm_121" in r.message and "TRITON_PTXAS_PATH" in r.hint


def test_ptxas_newer_than_driver(tmp_path):
    pkg = triton.read_triton_package(str(fake_triton(tmp_path, "3.7.1", "12.8", blackwell="13.1")))
    facts = gather(triton.triton_ptxas, triton_pkg=pkg, env={})
    b200 = {"index": 0, "name": "NVIDIA B200", "cc": "10.0"}
    r575 = {"version": "575.51.03", "cuda_version": "12.9"}
    r = run_check(triton.ptxas, triton_pkg=pkg, triton_ptxas=facts, driver=r575, visible_gpus=[b200])
    assert r.status is Status.FAIL and "13.1 is newer than the driver's CUDA 12.9" in r.message and "driver" in r.hint
    # the same driver is fine for a Hopper GPU, which uses the 12.8 ptxas
    r = run_check(triton.ptxas, triton_pkg=pkg, triton_ptxas=facts, driver=r575, visible_gpus=[H200])
    assert r.status is Status.PASS


def test_ptxas_path_variable_problems(tmp_path):
    pkg = triton.read_triton_package(str(fake_triton(tmp_path / "site", "3.6.0", "12.8")))
    cuda = tmp_path / "cuda-13.0"
    (cuda / "bin").mkdir(parents=True)
    env = {"TRITON_PTXAS_PATH": str(cuda), "TRITON_PTXAS_BLACKWELL_PATH": str(tmp_path / "missing"), "TRITON_DUMP_PTXAS_LOG": "1"}
    facts = gather(triton.triton_ptxas, triton_pkg=pkg, env=env)
    r = run_check(triton.ptxas, triton_pkg=pkg, triton_ptxas=facts)
    assert r.status is Status.WARN
    assert "TRITON_PTXAS_PATH" in r.message and "is a directory" in r.message and "falls back to its bundled ptxas 12.8" in r.message
    assert "TRITON_DUMP_PTXAS_LOG" not in str(r.items)


def test_cuda13_ptxas_with_old_triton(tmp_path):
    pkg = triton.read_triton_package(str(fake_triton(tmp_path / "site", "3.4.0", "12.8")))
    p13 = write_script(tmp_path / "ptxas13", "echo 'Cuda compilation tools, release 13.0, V13.0.88'")
    facts = gather(triton.triton_ptxas, triton_pkg=pkg, env={"TRITON_PTXAS_PATH": str(p13)})
    r = run_check(triton.ptxas, triton_pkg=pkg, triton_ptxas=facts)
    assert r.status is Status.FAIL and "Triton only support CUDA 10.0 or higher" in r.message


def test_broken_bundled_ptxas(tmp_path):
    pkg = triton.read_triton_package(str(fake_triton(tmp_path, "3.6.0", None)))
    write_script(Path(pkg["location"]) / "backends/nvidia/bin/ptxas", "echo 'segfault' >&2; exit 139")
    pkg = triton.read_triton_package(pkg["location"])
    facts = gather(triton.triton_ptxas, triton_pkg=pkg, env={})
    r = run_check(triton.ptxas, triton_pkg=pkg, triton_ptxas=facts)
    assert r.status is Status.FAIL and "Cannot find ptxas" in r.message and "--force-reinstall" in r.hint


# ---------------------------------------------------------------- GPU generation (A8)


def test_gpu_generations():
    pkg = {"version": "3.6.0"}
    pascal = {"index": 1, "name": "Tesla P100", "cc": "6.0"}
    r = run_check(triton.gpu_supported, triton_pkg=pkg, torch_build=CUDA_BUILD, visible_gpus=[H200, pascal])
    assert r.status is Status.FAIL and "GPU 1 (Tesla P100, CC 6.0)" in r.message and "aot_eager" in r.hint
    t4 = {"index": 0, "name": "Tesla T4", "cc": "7.5"}
    r = run_check(triton.gpu_supported, triton_pkg=pkg, visible_gpus=[t4])
    assert r.status is Status.WARN and "FMA" in r.message
    assert run_check(triton.gpu_supported, triton_pkg={"version": "3.2.0"}, visible_gpus=[t4]).status is Status.PASS
    assert run_check(triton.gpu_supported, triton_pkg=pkg, visible_gpus=[H200]).status is Status.PASS
    r = run_check(triton.gpu_supported, visible_gpus=[], gpus=[H200])
    assert r.status is Status.SKIP and "CUDA_VISIBLE_DEVICES" in r.message
    r = run_check(triton.gpu_supported, gpus=Unavailable("no NVIDIA driver found"), visible_gpus=Unavailable("no NVIDIA driver found"))
    assert r.status is Status.SKIP and "no NVIDIA driver found" in r.message


def test_cache_reached_through_a_symlink_onto_nfs_is_judged_at_every_hop(tmp_path):
    # ~/.triton -> /mnt/nfs/triton (itself a link back to local disk): the resolved path is local,
    # yet every lookup crosses the network mount. The mount table is injected as the fact.
    nfs, local = tmp_path / "nfs", tmp_path / "local"
    nfs.mkdir()
    (local / "cache").mkdir(parents=True)
    (nfs / "triton").symlink_to(local)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".triton").symlink_to(nfs / "triton")
    mounts = [
        {"mount_point": "/", "fstype": "ext4", "source": "/dev/sda1", "options": ["rw"]},
        {"mount_point": str(nfs), "fstype": "nfs4", "source": "srv:/export", "options": ["rw"]},
    ]
    c = gather(triton.triton_cache, env={"HOME": str(tmp_path / "home")})
    r = run_check(triton.cache_dir, triton_cache=c, triton_pkg={}, mounts=mounts)
    assert r.status is Status.WARN, r.message
    assert f"through the symlink {tmp_path}/home/.triton -> {nfs}/triton" in r.message and f"nfs4 at {nfs}" in r.message
    # The same tree without the network mount passes.
    assert run_check(triton.cache_dir, triton_cache=c, triton_pkg={}, mounts=mounts[:1]).status is Status.PASS
    # A link straight onto the network mount names the link too.
    (tmp_path / "home" / ".triton").unlink()
    (nfs / "triton").unlink()
    (nfs / "triton").mkdir()
    (tmp_path / "home" / ".triton").symlink_to(nfs / "triton")
    local_mounts = [{**m, "mount_point": os.path.realpath(m["mount_point"])} for m in mounts]
    c = gather(triton.triton_cache, env={"HOME": str(tmp_path / "home")})
    r = run_check(triton.cache_dir, triton_cache=c, triton_pkg={}, mounts=local_mounts)
    assert r.status is Status.WARN and "through the symlink" in r.message and "network filesystem (nfs4" in r.message


# ---------------------------------------------------------------- libcuda (A1)


def test_libcuda_lookup(tmp_path):
    pkg = {"nvidia_backend": True}
    assert run_check(triton.libcuda, triton_pkg=pkg, env={}, driver=Unavailable("no NVIDIA driver found")).status is Status.SKIP
    found = {"path": "/sbin/ldconfig", "libs": {"libcuda.so.1": ["/usr/lib/x86_64-linux-gnu/libcuda.so.1"]}}
    r = run_check(triton.libcuda, triton_pkg=pkg, env={}, driver=DRIVER_580, ldconfig=found)
    if os.path.exists("/sbin/ldconfig"):
        assert r.status is Status.PASS
    stale = {"path": "/sbin/ldconfig", "libs": {"libc.so.6": ["/lib/libc.so.6"]}}
    r = run_check(triton.libcuda, triton_pkg=pkg, env={}, driver=DRIVER_580, ldconfig=stale)
    assert r.status is Status.FAIL and "libcuda.so cannot found" in r.message and r.hint.startswith("ldconfig")
    lib = tmp_path / "driver"
    lib.mkdir()
    (lib / "libcuda.so.1").write_bytes(b"\x7fELF")
    r = run_check(triton.libcuda, triton_pkg=pkg, env={"LD_LIBRARY_PATH": f"/nowhere:{lib}"}, driver=DRIVER_580, ldconfig=stale)
    assert r.status is Status.PASS and "LD_LIBRARY_PATH" in r.message
    r = run_check(triton.libcuda, triton_pkg=pkg, env={"TRITON_LIBCUDA_PATH": str(lib / "libcuda.so.1")}, driver=DRIVER_580, ldconfig=stale)
    assert r.status is Status.FAIL and "expects the directory" in r.message and r.hint == f"export TRITON_LIBCUDA_PATH={lib}"
    r = run_check(triton.libcuda, triton_pkg=pkg, env={}, driver=DRIVER_580, ldconfig=Unavailable("ldconfig not found"))
    assert r.status is Status.FAIL and "ldconfig" in r.message and "TRITON_LIBCUDA_PATH" in r.hint


def test_unversioned_libcuda_for_a_triton_that_links_lcuda(tmp_path):
    # Triton <= 3.1 builds its launcher with -lcuda: with only libcuda.so.1 (WSL, some images)
    # "/usr/bin/ld: cannot find -lcuda: No such file or directory".
    old = tmp_path / "triton"
    (old / "backends" / "nvidia").mkdir(parents=True)
    (old / "backends" / "nvidia" / "driver.py").write_text('libraries = ["cuda"]\n')
    pkg = {"nvidia_backend": True, "location": str(old)}
    lib = tmp_path / "wsl"
    lib.mkdir()
    (lib / "libcuda.so.1").write_bytes(b"\x7fELF")
    stale = {"path": "/sbin/ldconfig", "libs": {"libc.so.6": ["/lib/libc.so.6"]}}
    env = {"LD_LIBRARY_PATH": str(lib), "PATH": os.environ.get("PATH", "")}
    r = run_check(triton.libcuda, triton_pkg=pkg, env=env, driver=DRIVER_580, ldconfig=stale)
    assert r.status is Status.FAIL and "cannot find -lcuda" in r.message and str(lib) in r.message
    assert r.hint.startswith(f"sudo ln -s libcuda.so.1 {lib}/libcuda.so && sudo ldconfig")
    (lib / "libcuda.so").symlink_to("libcuda.so.1")
    r = run_check(triton.libcuda, triton_pkg=pkg, env=env, driver=DRIVER_580, ldconfig=stale)
    assert r.status is Status.PASS and f"{lib}/libcuda.so" in r.message
    # LIBRARY_PATH is where ld looks too.
    (lib / "libcuda.so").unlink()
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "libcuda.so").write_bytes(b"\x7fELF")
    r = run_check(triton.libcuda, triton_pkg=pkg, env={**env, "LIBRARY_PATH": str(dev)}, driver=DRIVER_580, ldconfig=stale)
    assert r.status is Status.PASS
    # Triton 3.2+ links -l:libcuda.so.1: no unversioned library needed.
    (old / "backends" / "nvidia" / "driver.py").write_text("libraries = ['libcuda.so.1']\n")
    assert run_check(triton.libcuda, triton_pkg=pkg, env=env, driver=DRIVER_580, ldconfig=stale).status is Status.PASS


# ---------------------------------------------------------------- cache dir (A5)


def test_cache_dir_resolution_leaves_nothing_behind(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    c = gather(triton.triton_cache, env={"HOME": str(home)})
    assert c["path"] == str(home / ".triton" / "cache") and c["source"] == "HOME"
    assert c["probe"]["writable"] and c["probe"]["checked"] == str(home)
    assert list(home.iterdir()) == []  # no .triton created, no temp file left
    c = gather(triton.triton_cache, env={"HOME": str(home), "TRITON_HOME": str(tmp_path)})
    assert c["path"] == str(tmp_path / ".triton" / "cache")
    c = gather(triton.triton_cache, env={"TRITON_CACHE_DIR": str(tmp_path / "tc"), "HOME": str(home)})
    assert c["source"] == "TRITON_CACHE_DIR"


def test_unwritable_cache_dir_under_a_regular_file(tmp_path):
    """Tests run as root, where chmod stops nothing: a path below a regular file truly cannot be created."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    c = gather(triton.triton_cache, env={"TRITON_CACHE_DIR": str(blocker / "cache")})
    r = run_check(triton.cache_dir, triton_cache=c, triton_pkg={"version": "3.6.0"})
    assert r.status is Status.FAIL and "is not writable" in r.message and "is not a directory" in r.message
    assert r.hint.startswith("export TRITON_CACHE_DIR=")
    assert [(f.argv, f.scope) for f in r.fixes] == [(("export", f"TRITON_CACHE_DIR=/tmp/triton-{os.getuid()}"), "environment")]


def test_cache_dir_on_read_only_network_and_noexec_mounts(tmp_path):
    c = gather(triton.triton_cache, env={"TRITON_CACHE_DIR": str(tmp_path)})
    mount = {"mount_point": str(tmp_path), "fstype": "ext4", "source": "/dev/x", "options": ["rw"]}
    pkg = {"version": "3.6.0"}
    assert run_check(triton.cache_dir, triton_cache=c, triton_pkg=pkg, mounts=[mount]).status is Status.PASS
    r = run_check(triton.cache_dir, triton_cache=c, triton_pkg=pkg, mounts=[{**mount, "fstype": "nfs4"}])
    assert r.status is Status.WARN and "network filesystem (nfs4" in r.message and "local disk" in r.hint
    r = run_check(triton.cache_dir, triton_cache=c, triton_pkg=pkg, mounts=[{**mount, "options": ["ro"]}])
    assert r.status is Status.FAIL and "read-only" in r.message
    r = run_check(triton.cache_dir, triton_cache=c, triton_pkg=pkg, mounts=[{**mount, "options": ["rw", "noexec"]}])
    assert r.status is Status.FAIL and "noexec" in r.message
    overlay = {**mount, "fstype": "fuse.fuse-overlayfs"}
    assert run_check(triton.cache_dir, triton_cache=c, triton_pkg=pkg, mounts=[overlay]).status is Status.PASS


def test_cache_dir_without_home_or_passwd_entry():
    r = run_check(triton.cache_dir, triton_cache={"path": None, "source": "none", "probe": None}, triton_pkg={"version": "3.6.0"})
    assert r.status is Status.FAIL and "HOME is unset" in r.message and "TRITON_CACHE_DIR" in r.hint


def test_checks_skip_when_triton_is_absent():
    for check_func in (triton.cache_dir, triton.ptxas, triton.c_compiler_check, triton.libcuda):
        r = run_check(
            check_func, triton_pkg=Unavailable("triton is not installed"), env={}, triton_cache={}, triton_ptxas={}, c_compiler={}
        )
        assert r.status is Status.SKIP and r.message == "triton is not installed"


# ---- a CUDA torch that declares no Triton pin: the release table judges it (issue: triton_key)


def _unpinned(version: str, triton: str | None) -> dict:
    dists = {"torch": {"name": "torch", "version": version, "requires": []}}
    if triton:
        dists["triton"] = {"name": "triton", "version": triton}
    return dists


@pytest.mark.parametrize(
    ("torch_version", "triton_version", "status"),
    [
        ("2.5.1", "3.1.0", Status.PASS),  # conda's pytorch 2.5.1 beside its triton
        ("2.5.1", "3.0.0", Status.FAIL),  # the classic: "cannot import name 'triton_key'"
        ("2.6.0a0+gitabc1234", "3.2.0", Status.PASS),  # a source build of the 2.6 line
        ("2.6.0a0+gitabc1234", "3.1.0", Status.FAIL),
        ("2.5.1", None, Status.SKIP),  # no Triton at all: compile.triton_available says so
        ("9.9.0", "3.1.0", Status.SKIP),  # a torch the table does not know
    ],
)
def test_unpinned_cuda_torch_is_judged_by_the_release_table(torch_version, triton_version, status):
    row = run_check(
        triton.torch_pin, dists=_unpinned(torch_version, triton_version), torch_build={"kind": "cuda", "version": torch_version}
    )
    assert row.status is status, row.message
    if status is Status.FAIL:
        assert "declares no Triton dependency" in row.message and "triton_key" in row.message
        assert row.hint.startswith("pip install --force-reinstall --no-deps")


def test_unpinned_cpu_torch_still_skips():
    row = run_check(triton.torch_pin, dists=_unpinned("2.5.1+cpu", "3.0.0"), torch_build={"kind": "cpu", "version": "2.5.1+cpu"})
    assert row.status is Status.SKIP and "CPU build" in row.message


def test_triton_launcher_problems_are_no_alarm_with_a_cpu_torch():
    """HOME=/nonexistent for a non-root user, or a bad CC: they stop Triton's GPU launcher, which a
    CPU build of torch never builds (its Triton interpreter smoke passes); said, not failed."""
    cache = {
        "path": "/nonexistent/.triton/cache",
        "source": "HOME",
        "probe": {
            "path": "/nonexistent/.triton/cache",
            "exists": False,
            "writable": False,
            "checked": "/",
            "error": "cannot create a file in /: Permission denied",
        },
    }
    cc = {"problem": "CC=/opt/nothing/gcc does not exist", "source": "CC", "path": None}
    for check, facts in ((triton.cache_dir, {"triton_cache": cache}), (triton.c_compiler_check, {"c_compiler": cc})):
        gpu = run_check(check, triton_pkg={"version": "3.6.0"}, torch_build={"kind": "cuda", "version": "2.11.0+cu130"}, **facts)
        cpu = run_check(check, triton_pkg={"version": "3.6.0"}, torch_build={"kind": "cpu", "version": "2.13.0+cpu"}, **facts)
        assert gpu.status is Status.FAIL
        assert cpu.status is Status.SKIP and "CPU build" in cpu.message and gpu.message in cpu.message


@pytest.mark.parametrize(
    ("spec", "version"),
    [
        ("==3.6.0", "3.6.0"),
        ("==3.6.0", "3.6.0+git1a2b"),
        ("==3.6.0", "3.6.1"),
        ("==3.6.0+abc", "3.6.0"),
        ("==3.6.0+abc", "3.6.0+abc"),
        ("==3.2.0", "3.2.0rc1"),
        ("==3.3.0", "3.3.0.post1"),
        ("==3.1", "3.1.0"),
        ("==3.1.*", "3.1.4"),
        ("~=3.8.0", "3.8.2"),
        ("==bad", "3.0"),
        ("==3.0", "not-a-version"),
    ],
)
def test_a_plain_pin_is_judged_as_packaging_judges_it(spec, version):
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        want = SpecifierSet(spec).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        want = False
    assert triton.satisfies(spec, version) is want
