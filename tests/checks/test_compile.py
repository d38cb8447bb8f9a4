"""torch.compile checks: the real torch's own source, a real UID without a passwd entry, real dirs."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from envdoctor import Status
from envdoctor.testing import Unavailable, gather, run_check
from envdoctor_checks import compile as comp
from envdoctor_checks import packages, toolchain
from envdoctor_checks._dirs import probe_dir

PY311 = {"version": "3.11.7", "version_info": [3, 11, 7], "free_threading": False, "include_dir": "/x", "python_h": True}


def fake_torch(root: Path, eval_frame: str = "", cache_utils: str | None = None, version: str = "2.3.0") -> dict:
    t = root / "torch"
    (t / "_dynamo").mkdir(parents=True)
    (t / "_dynamo" / "eval_frame.py").write_text(eval_frame)
    if cache_utils is not None:
        (t / "_inductor" / "runtime").mkdir(parents=True)
        (t / "_inductor" / "runtime" / "cache_dir_utils.py").write_text(cache_utils)
    return {"version": version, "kind": "cpu", "cuda": None, "location": str(t)}


def real_torch_build() -> dict:
    try:
        return gather(packages.torch_build)
    except Unavailable:
        pytest.skip("torch is not installed here")


# ---------------------------------------------------------------- Python vs Dynamo (C5)

OLD_EVAL_FRAME = """
def check_if_dynamo_supported():
    if sys.version_info >= (3, 12):
        raise RuntimeError("Python 3.12+ not yet supported for torch.compile")

def other():
    if sys.version_info >= (3, 99):
        pass
"""


def test_python_too_new_for_this_torch_read_from_its_source(tmp_path):
    build = fake_torch(tmp_path, OLD_EVAL_FRAME)
    r = run_check(comp.python_version, python_info={**PY311, "version": "3.12.1", "version_info": [3, 12, 1]}, torch_build=build)
    assert r.status is Status.FAIL and "does not support Python 3.12.1" in r.message and "Python < 3.12" in r.hint
    assert run_check(comp.python_version, python_info=PY311, torch_build=build).status is Status.PASS


def test_table_when_source_unreadable(tmp_path):
    build = {"version": "2.5.1", "kind": "cpu", "location": str(tmp_path / "gone")}
    r = run_check(comp.python_version, python_info={**PY311, "version": "3.13.0", "version_info": [3, 13, 0]}, torch_build=build)
    assert r.status is Status.FAIL and "3.13" in r.message


def test_real_torch_supports_this_python():
    build = real_torch_build()
    limits = comp.dynamo_limits(build["location"])
    assert limits is not None and limits["refuses_from"] > [3, 11]
    info = {**PY311, "version": ".".join(map(str, sys.version_info[:3])), "version_info": list(sys.version_info[:3])}
    assert run_check(comp.python_version, python_info=info, torch_build=build).status is Status.PASS


def test_free_threaded_minimum_from_real_torch():
    build = real_torch_build()
    limits = comp.dynamo_limits(build["location"])
    if not limits or not limits["free_threaded_min"]:
        pytest.skip("this torch has no free-threading minimum")
    ft = {**PY311, "version": "3.13.1", "version_info": [3, 13, 1], "free_threading": True}
    r = run_check(comp.python_version, python_info=ft, torch_build=build)
    assert r.status is Status.FAIL and "free-threaded Python >= 3.13.3" in r.message


# ---------------------------------------------------------------- environment switches (C6)


def test_compile_disabled_by_env():
    build = {"version": "2.13.0", "kind": "cpu", "location": "/x"}
    r = run_check(comp.disabled_by_env, env={"TORCH_COMPILE_DISABLE": "1"}, torch_build=build)
    assert r.status is Status.WARN and "silently" in r.message and r.hint.startswith("unset TORCH_COMPILE_DISABLE")
    r = run_check(comp.disabled_by_env, env={"TORCHDYNAMO_DISABLE": "true"}, torch_build=build)
    assert r.status is Status.PASS and "only honours '1'" in r.message
    assert run_check(comp.disabled_by_env, env={}, torch_build=build).status is Status.PASS


# ---------------------------------------------------------------- C++ compiler (C1)


def test_no_cxx_compiler_on_path(tmp_path):
    d = tmp_path / "bin"
    d.mkdir()
    (d / "python3").symlink_to(sys.executable)
    env = {"PATH": str(d)}
    cxx = gather(toolchain.cxx_compiler, env=env)
    r = run_check(comp.cxx_compiler_check, cxx_compiler=cxx, torch_build={"kind": "cpu"}, env=env)
    assert r.status is Status.FAIL and "InvalidCxxCompiler" in r.message and "apt-get install g++" in r.hint
    # Inductor does not fall back to clang++ on Linux: the hint says to point CXX at it
    (d / "clang++").write_text("#!/bin/sh\necho clang\n")
    (d / "clang++").chmod(0o755)
    r = run_check(comp.cxx_compiler_check, cxx_compiler=gather(toolchain.cxx_compiler, env=env), torch_build={"kind": "cpu"}, env=env)
    assert r.status is Status.FAIL and r.hint.startswith(f"export CXX={d / 'clang++'}")


def test_cxx_pointing_to_directory(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "CXX": str(tmp_path)}
    r = run_check(comp.cxx_compiler_check, cxx_compiler=gather(toolchain.cxx_compiler, env=env), torch_build={"kind": "cpu"}, env=env)
    assert r.status is Status.FAIL and "a directory" in r.message and "export CXX=" in r.hint


# ---------------------------------------------------------------- Triton for GPU torch (C2)


def test_triton_available():
    torch_cuda = {"name": "torch", "version": "2.11.0", "requires": ['triton==3.6.0; platform_system == "Windows"']}
    build = {"version": "2.11.0", "kind": "cuda"}
    r = run_check(comp.triton_available, torch_build=build, dists={"torch": torch_cuda}, triton_pkg=Unavailable("triton is not installed"))
    assert r.status is Status.WARN and "TritonMissing" in r.message and "aot_eager" in r.hint
    r = run_check(comp.triton_available, torch_build={**build, "kind": "cpu"}, dists={"torch": torch_cuda})
    assert r.status is Status.SKIP and "C++" in r.message
    r = run_check(comp.triton_available, torch_build=build, dists={"torch": torch_cuda}, triton_pkg={"location": "/t", "version": "3.6.0"})
    assert r.status is Status.PASS


# ---------------------------------------------------------------- Inductor cache dir, getpass (C4)


def run_as(uid: int, func) -> dict:
    """Run ``func`` in a forked child with a real, different UID; return its JSON result."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(r)
            os.setgid(uid)
            os.setuid(uid)
            out = json.dumps(func())
        except BaseException as e:  # noqa: BLE001 - report anything to the parent
            out, code = json.dumps({"error": repr(e)}), 1
        os.write(w, out.encode())
        os._exit(code)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(data)


def free_uid() -> int:
    uid = 54321
    while True:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
        uid += 1


@pytest.fixture
def shared_dir():
    """A world-readable directory (pytest's tmp_path sits under a 0700 root-only parent, which
    another UID cannot even traverse)."""
    d = Path(tempfile.mkdtemp(prefix="envdoctor-test-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to a UID without a passwd entry")

OLD_CACHE_UTILS = """
def default_cache_dir():
    sanitized_username = re.sub(r'[\\\\/:*?"<>|]', "_", getpass.getuser())
    return os.path.join(tempfile.gettempdir(), "torchinductor_" + sanitized_username)
"""
NEW_CACHE_UTILS = OLD_CACHE_UTILS.replace("getpass.getuser()", 'f"uid_{os.getuid()}"')


@needs_root
def test_uid_without_passwd_entry(shared_dir):
    tmp_path = shared_dir
    uid = free_uid()
    build = fake_torch(tmp_path, cache_utils=OLD_CACHE_UTILS)
    c = run_as(uid, lambda: gather(comp.inductor_cache, env={"PATH": "/usr/bin"}, torch_build=build))
    assert c["user"] is None and "no passwd entry" in c["user_source"]
    r = run_check(comp.inductor_cache_check, inductor_cache=c)
    assert r.status is Status.FAIL and "getpwuid(): uid not found" in r.message and "TORCHINDUCTOR_CACHE_DIR" in r.hint
    # with USER set, getpass.getuser() never asks the passwd database
    c = run_as(uid, lambda: gather(comp.inductor_cache, env={"USER": "svc"}, torch_build=build))
    assert c["user"] == "svc" and c["path"].endswith("torchinductor_svc")
    # a torch whose default_cache_dir() falls back to uid_<n> is fine
    newer = fake_torch(tmp_path / "new", cache_utils=NEW_CACHE_UTILS)
    c = run_as(uid, lambda: gather(comp.inductor_cache, env={}, torch_build=newer))
    assert c["path"].endswith(f"torchinductor_uid_{uid}")
    r = run_check(comp.inductor_cache_check, inductor_cache=c)
    assert r.status is Status.PASS and "falls back to uid_<n>" in r.message


@needs_root
def test_cache_dir_of_another_user_is_not_writable(shared_dir):
    """A directory root owns (0755) really is unwritable for another UID: no chmod trick needed."""
    owned = shared_dir / "torchinductor_shared"
    owned.mkdir()
    build = fake_torch(shared_dir / "t", cache_utils=NEW_CACHE_UTILS)
    c = run_as(free_uid(), lambda: gather(comp.inductor_cache, env={"TORCHINDUCTOR_CACHE_DIR": str(owned), "USER": "u"}, torch_build=build))
    r = run_check(comp.inductor_cache_check, inductor_cache=c)
    assert r.status is Status.FAIL and "is not writable" in r.message and "Permission denied" in r.message
    assert r.hint.startswith("export TORCHINDUCTOR_CACHE_DIR=")


def test_default_cache_dir_here_and_noexec_tmp(tmp_path):
    build = real_torch_build()
    c = gather(comp.inductor_cache, env={"USER": "alice", "TMPDIR": str(tmp_path)}, torch_build=build)
    assert c["path"] == str(tmp_path / "torchinductor_alice") and c["source"] == "default"
    assert list(tmp_path.iterdir()) == []  # nothing created
    assert run_check(comp.inductor_cache_check, inductor_cache=c).status is Status.PASS
    noexec = [{"mount_point": str(tmp_path), "fstype": "tmpfs", "source": "tmpfs", "options": ["noexec", "rw"]}]
    r = run_check(comp.inductor_cache_check, inductor_cache=c, mounts=noexec)
    assert r.status is Status.FAIL and "noexec" in r.message


def test_cache_dir_under_a_regular_file(tmp_path):
    (tmp_path / "f").write_text("")
    build = fake_torch(tmp_path / "t", cache_utils=NEW_CACHE_UTILS)
    c = gather(comp.inductor_cache, env={"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "f" / "cache")}, torch_build=build)
    r = run_check(comp.inductor_cache_check, inductor_cache=c)
    assert r.status is Status.FAIL and "is not a directory" in r.message
    # the hint's export as a fix `envdoctor fix` writes for the user to source
    assert [f.argv for f in r.fixes] == [("export", f"TORCHINDUCTOR_CACHE_DIR=/tmp/torchinductor-{os.getuid()}")]


def test_inductor_cache_through_a_symlink_onto_nfs_warns_naming_the_link(tmp_path):
    nfs = tmp_path / "nfs"
    (nfs / "inductor").mkdir(parents=True)
    (tmp_path / "cache").symlink_to(nfs / "inductor")
    p = probe_dir(str(tmp_path / "cache"))
    cache = {"path": p.path, "source": "TORCHINDUCTOR_CACHE_DIR", "user": "u", "user_source": "USER", "tolerant": True, "probe": p.__dict__}
    mounts = [{"mount_point": "/", "fstype": "ext4", "options": ["rw"]}, {"mount_point": str(nfs), "fstype": "nfs", "options": ["rw"]}]
    r = run_check(comp.inductor_cache_check, inductor_cache=cache, mounts=mounts)
    assert r.status is Status.WARN and f"symlink {tmp_path}/cache -> {nfs}/inductor" in r.message and f"nfs at {nfs}" in r.message
