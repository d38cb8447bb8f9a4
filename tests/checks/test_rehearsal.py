"""Rehearsing the runtime user: a real child envdoctor as a UID without a passwd entry."""

from __future__ import annotations

import os
import pathlib
import pwd
import shutil
import sys
import sysconfig
import tempfile

import pytest

from envdoctor import Status
from envdoctor.testing import Unavailable, gather, run_check
from envdoctor_checks import rehearsal as rh

UID = 12345  # no passwd entry on the test machine (asserted below)
SYSTEM_PYTHON = "/usr/bin/python3"


def test_parse_user():
    assert rh.parse_user("1000680000") == (1000680000, 0)
    assert rh.parse_user("1000:1000") == (1000, 1000)
    with pytest.raises(ValueError, match="UID or UID:GID"):
        rh.parse_user("app")


def test_runtime_env_is_what_a_container_gives_a_uid_without_passwd_entry():
    env = rh.runtime_env({"HOME": "/root", "USER": "root", "LOGNAME": "root", "PATH": "/bin", "XDG_CACHE_HOME": "/root/.cache"}, UID)
    assert env == {"HOME": "/", "PATH": "/bin"}


@pytest.fixture
def open_tmp():
    """A temporary directory every user can enter (pytest's own lives under a 0700 directory)."""
    d = tempfile.mkdtemp(prefix="envdoctor-test-")
    os.chmod(d, 0o755)
    yield pathlib.Path(d)
    shutil.rmtree(d, ignore_errors=True)


def test_blocked_at_names_the_directory_the_user_cannot_enter(open_tmp):
    tmp_path = open_tmp
    private = tmp_path / "home"
    (private / "bin").mkdir(parents=True)
    exe = private / "bin" / "python"
    exe.write_text("")
    exe.chmod(0o755)
    os.chmod(tmp_path, 0o755)
    private.chmod(0o700)
    assert rh.blocked_at(str(exe), UID, UID) == str(private)
    private.chmod(0o755)
    assert rh.blocked_at(str(exe), UID, UID) is None


def test_unwritable_runtime_paths_give_the_env_line():
    paths = [
        {"what": "Triton cache", "path": "/.triton/cache", "writable": False, "error": "cannot create a file in /: Permission denied"},
        {"what": "temporary files", "path": "/tmp", "writable": True, "error": ""},
    ]
    row = run_check(rh.runtime_paths_check, runtime_paths=paths)
    assert row.status is Status.FAIL and "Triton cache /.triton/cache" in row.message
    assert row.hint == "ENV TRITON_CACHE_DIR=/tmp/triton"


def test_without_as_user_the_fact_is_unavailable():
    with pytest.raises(Unavailable, match="no --as-user"):
        gather(rh.rehearsal, options={}, env={})


def _world_usable_python() -> bool:
    if not os.path.exists(SYSTEM_PYTHON) or rh.blocked_at(SYSTEM_PYTHON, UID, 0):
        return False
    return os.path.realpath(SYSTEM_PYTHON).endswith(f"python{sys.version_info[0]}.{sys.version_info[1]}")


@pytest.mark.skipif(os.geteuid() != 0, reason="switching users needs root (CI and the GPU machine run as root)")
@pytest.mark.slow
def test_the_rehearsal_finds_an_unwritable_cache_for_a_uid_without_passwd_entry(open_tmp, monkeypatch):
    tmp_path = open_tmp
    with pytest.raises(KeyError):
        pwd.getpwuid(UID)
    if not _world_usable_python():
        pytest.skip(f"{SYSTEM_PYTHON} is missing or not Python {sys.version_info[0]}.{sys.version_info[1]}")
    # This interpreter lives under /root (0700), which the UID cannot enter: run the rehearsal from
    # the system Python of the same version, with envdoctor, its checks and torch on PYTHONPATH.
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "envdoctor_checks").symlink_to(os.path.dirname(os.path.abspath(rh.__file__)))
    for d in (tmp_path, shim):
        d.chmod(0o755)
    root = os.path.dirname(os.path.dirname(os.path.abspath(rh.__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shim), root, sysconfig.get_paths()["purelib"]])}
    for var in ("TRITON_CACHE_DIR", "XDG_CACHE_HOME", "TORCH_EXTENSIONS_DIR"):
        env.pop(var, None)
    monkeypatch.setattr(sys, "executable", SYSTEM_PYTHON)
    monkeypatch.setattr(rh, "REHEARSED", ("triton.cache_dir", "compile.inductor_cache", "rehearsal.runtime_paths"))
    fact = gather(rh.rehearsal, options={"as_user": str(UID)}, env=env)
    assert fact["error"] == "" and {r["id"] for r in fact["results"]} == set(rh.REHEARSED)
    row = run_check(rh.as_user, rehearsal=fact)
    assert row.status is Status.FAIL
    assert "Triton cache /.triton/cache" in row.message
    # The Triton check itself names the path too (a skip with this CPU torch, a fail with a CUDA one).
    triton_row = next(r for r in fact["results"] if r["id"] == "triton.cache_dir")
    assert "/.triton/cache" in triton_row["message"] and "not writable" in triton_row["message"]
    assert row.hint.startswith("ENV ") and "TRITON_CACHE_DIR=/tmp/triton" in row.hint


@pytest.mark.skipif(os.geteuid() != 0, reason="the rehearsal needs root")
def test_the_rehearsals_child_ends_before_the_runs_deadline_with_a_report_of_its_own(monkeypatch):
    """The child's --timeout is the run's limit less a margin, and the parent waits the run's
    limit: on a slow machine the child names the check that ran out of time (seen in a loaded
    image build: killed at a fixed 240 s, it said only "interrupted")."""
    seen = {}

    class Done:
        def describe(self):
            return "exited 1"

    def fake_run(argv, timeout, **kw):
        seen["argv"], seen["timeout"] = argv, timeout
        return Done()

    monkeypatch.setattr(rh, "run", fake_run)
    monkeypatch.setattr(rh, "blocked_at", lambda *a: None)
    fact = gather(rh.rehearsal, options={"as_user": str(UID), "timeout": 600.0}, env={})
    assert seen["timeout"] == 600.0
    assert seen["argv"][seen["argv"].index("--timeout") + 1] == "585"
    assert "gave no report" in fact["error"]
