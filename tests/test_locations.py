"""The smokes compile where the user's runs write, and a location that breaks compiling is named.

The full-file-system cases use a real tmpfs (mount needs root or CAP_SYS_ADMIN; skipped with the
reason otherwise), filled to the last byte, as the user's Inductor cache.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from envdoctor import ProbeError, ProbeRaised, Status, compile_locations
from envdoctor.core import probe as probe_mod
from envdoctor.core._probe_child import remove_all
from envdoctor.testing import run_check
from envdoctor_checks import smoke, system
from envdoctor_checks._dirs import MIN_FREE, DirProbe, judge_cache_dir, probe_dir
from verification import cache_locations  # the GPU script's full tmpfs, shared


@pytest.fixture
def full_fs(tmp_path):
    """A real tmpfs of 1 MiB with no byte left: what a full cache volume is to the stack."""
    mnt = tmp_path / "full"
    try:
        cache_locations.full_tmpfs(str(mnt))
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): {e}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _check(env: dict, *select: str) -> tuple[int, dict]:
    args = [sys.executable, "-m", "envdoctor", "check", "--format", "json"]
    for s in select:
        args += ["--select", s]
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=480)
    report = json.loads(done.stdout)
    return done.returncode, {r["id"]: r for r in report["results"]}


def _env(tmp_path: Path, **extra: str) -> dict:
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(tmp), "NO_COLOR": "1", "ENVDOCTOR_TEST_MARKER": uuid.uuid4().hex, **extra}


# --- a full Inductor cache file system, for real -----------------------------------------------


@pytest.mark.slow
def test_a_full_inductor_cache_file_system_is_not_healthy_and_is_named(full_fs, tmp_path):
    cache = full_fs / "inductor"
    env = _env(tmp_path, TORCHINDUCTOR_CACHE_DIR=str(cache))
    rc, rows = _check(env)  # the default selection: what a user runs
    assert rc == 1, rows
    for row_id in ("compile.inductor_cache", "smoke.compile"):
        row = rows[row_id]
        assert row["status"] == "fail", row
        assert str(cache) in row["message"] and "TORCHINDUCTOR_CACHE_DIR" in row["message"], row["message"]
        assert "TORCHINDUCTOR_CACHE_DIR" in row["hint"], row["hint"]
    assert "No space left on device" in rows["smoke.compile"]["message"]
    assert rows["smoke.compile"]["details"]["location"]["variable"] == "TORCHINDUCTOR_CACHE_DIR"
    assert sorted(os.listdir(full_fs)) == ["filler"]  # the smoke's subdirectory is gone
    assert os.listdir(env["TMPDIR"]) == []


def test_a_full_temporary_directory_is_named_by_system_disk(full_fs):
    r = run_check(system.disk_space, env={"TMPDIR": str(full_fs), "HOME": "/root"})
    assert r.status is Status.FAIL and str(full_fs) in r.message and "(TMPDIR)" in r.message
    assert "No space left on device" in r.message and "TMPDIR=" in r.hint


# --- a healthy location: no false alarm, nothing left behind -----------------------------------


@pytest.mark.slow
def test_a_healthy_cache_location_passes_and_keeps_only_what_was_there(tmp_path):
    cache = tmp_path / "user-cache"
    cache.mkdir()
    (cache / "kept").write_text("the user's own entry")
    fresh = tmp_path / "not-yet" / "inductor"  # its parents too are made by the compile, then removed
    env = _env(tmp_path, TORCHINDUCTOR_CACHE_DIR=str(cache), TRITON_CACHE_DIR=str(fresh))
    rc, rows = _check(env, "compile.inductor_cache", "smoke.compile", "triton.cache_dir", "system.disk")
    assert rows["smoke.compile"]["status"] == "pass", rows["smoke.compile"]
    assert rows["compile.inductor_cache"]["status"] == "pass", rows["compile.inductor_cache"]
    assert rows["system.disk"]["status"] in ("pass", "warn"), rows["system.disk"]  # warn: a small disk here
    assert rc == 0 or rows["system.disk"]["status"] == "warn"
    assert sorted(os.listdir(cache)) == ["kept"]
    assert not (tmp_path / "not-yet").exists()
    assert os.listdir(env["TMPDIR"]) == []


def _wait(predicate, within: float, what: str) -> None:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(what)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
@pytest.mark.slow
def test_a_signal_mid_smoke_leaves_no_subdirectory_in_the_users_cache(tmp_path, sig):
    cache = tmp_path / "user-cache"
    cache.mkdir()
    env = _env(tmp_path, TORCHINDUCTOR_CACHE_DIR=str(cache))
    proc = subprocess.Popen(
        [sys.executable, "-m", "envdoctor", "check", "--select", "smoke.compile"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        # The compile writes its first files into <cache>/envdoctor-probe-*: it is mid-smoke.
        _wait(lambda: any(os.listdir(cache / d) for d in os.listdir(cache)), 240, "the compile smoke never wrote to the cache")
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "Traceback" not in err
    if sig == signal.SIGTERM:
        assert proc.returncode == 130
        assert os.listdir(cache) == []  # envdoctor removed it before it exited
    # After a SIGKILL of envdoctor, the worker sees its control pipe close and removes it.
    _wait(lambda: os.listdir(cache) == [] and os.listdir(env["TMPDIR"]) == [], 60, f"left behind: {os.listdir(cache)}")


# --- the pieces ----------------------------------------------------------------------------------


def test_worker_caches_are_subdirectories_of_the_users_locations(tmp_path):
    root = str(tmp_path / "tmp" / "envdoctor-probe-abc")
    (tmp_path / "ind").mkdir()
    (tmp_path / "home" / ".triton" / "cache").mkdir(parents=True)
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "ind"), "HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path)}
    worker = probe_mod._worker_env(env, root)
    assert worker["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "ind" / "envdoctor-probe-abc")
    assert worker["TRITON_CACHE_DIR"] == str(tmp_path / "home" / ".triton" / "cache" / "envdoctor-probe-abc")
    assert worker["TMPDIR"] == os.path.join(root, "tmp")
    plan = probe_mod.cleanup_plan(env, root)
    assert plan == {"trees": [worker["TRITON_CACHE_DIR"], worker["TORCHINDUCTOR_CACHE_DIR"]], "prune": []}


def test_a_location_not_created_yet_is_tested_beside_it_and_nothing_is_created(tmp_path):
    """A missing location is created by the user's first run; envdoctor compiles beside it, in
    its nearest existing ancestor (same file system, same permission needed), and creates no
    parent: creating it as root made /tmp/torchinductor 0755 in an image build, and the
    rehearsal as the runtime user, running beside it, could no longer write there."""
    root = str(tmp_path / "tmp" / "envdoctor-probe-abc")
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "ind"), "HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path)}
    worker = probe_mod._worker_env(env, root)
    assert worker["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "ind.envdoctor-probe-abc")
    assert worker["TRITON_CACHE_DIR"] == str(tmp_path / "home-.triton-cache.envdoctor-probe-abc")
    default = probe_mod._worker_env({"USER": "alice", "TMPDIR": str(tmp_path), "HOME": "/x"}, root)
    assert default["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "torchinductor_alice.envdoctor-probe-abc")
    plan = probe_mod.cleanup_plan(env, root)
    assert plan == {"trees": [worker["TRITON_CACHE_DIR"], worker["TORCHINDUCTOR_CACHE_DIR"]], "prune": []}
    assert not (tmp_path / "ind").exists() and not (tmp_path / "home").exists()


def test_remove_all_prunes_only_empty_parents_it_made(tmp_path):
    root, tree = tmp_path / "root", tmp_path / "made" / "deeper" / "envdoctor-probe-x"
    (root / "tmp").mkdir(parents=True)
    (tree / "k").mkdir(parents=True)
    (tmp_path / "made" / "user-file").write_text("")  # someone else wrote beside it since
    remove_all(str(root), {"trees": [str(tree)], "prune": [str(tmp_path / "made" / "deeper"), str(tmp_path / "made")]})
    assert not root.exists() and not tree.exists() and not (tmp_path / "made" / "deeper").exists()
    assert (tmp_path / "made" / "user-file").exists()


def test_room_is_judged_not_only_writability(tmp_path):
    p = probe_dir(str(tmp_path))
    assert p.free is not None and p.free > 0
    full = DirProbe(**{**p.__dict__, "free": 4096})
    status, message, hint = judge_cache_dir("Inductor cache (X)", full, None, env_var="X", suggest="/s", needs_exec=True)
    assert status is Status.FAIL and "4 KiB free" in message and "No space left on device" in message and "export X=/s" in hint
    few = DirProbe(**{**p.__dict__, "free": MIN_FREE * 4, "inodes_free": 12})
    assert judge_cache_dir("c", few, None, env_var="X", suggest="/s", needs_exec=False)[0] is Status.FAIL
    # a report from an older envdoctor has no room measured: judged as before
    old = {k: v for k, v in p.__dict__.items() if k not in ("free", "inodes_free")}
    assert judge_cache_dir("c", DirProbe(**old), None, env_var="X", suggest="/s", needs_exec=False)[0] is Status.PASS


def _raised(message: str, traceback: str = "", output: str = "") -> ProbeRaised:
    return ProbeRaised("InductorError", message, traceback, output)


def test_a_smoke_error_naming_a_path_blames_that_location(tmp_path):
    env = {"TRITON_CACHE_DIR": str(tmp_path / "tc"), "TMPDIR": str(tmp_path), "USER": "u", "HOME": "/root"}
    e = _raised(f"OSError: [Errno 30] Read-only file system: '{tmp_path}/tc/envdoctor-probe-1/x.so'")
    r = smoke._raised(e, "the Triton vector-add kernel", "smoke.triton", env)
    assert r.status is Status.FAIL and f"Triton cache {tmp_path}/tc (TRITON_CACHE_DIR) is on a read-only" in r.message
    assert "export TRITON_CACHE_DIR=" in r.hint
    # the deepest location wins: Inductor's default cache lies inside the temporary directory
    e = _raised(f"PermissionError: [Errno 13] Permission denied: '{tmp_path}/torchinductor_u/envdoctor-probe-1/ab'")
    r = smoke._raised(e, "torch.compile", "smoke.compile", env)
    assert f"Inductor cache {tmp_path}/torchinductor_u (TORCHINDUCTOR_CACHE_DIR unset: the default" in r.message
    # a compiler's temporary file in the worker's TMPDIR (inside the user's): the temporary directory
    e = _raised("", output=f"{tmp_path}/envdoctor-probe-1/tmp/ccA.s: No space left on device\n")
    r = smoke._raised(e, "torch.compile", "smoke.compile", env)
    assert f"temporary directory {tmp_path} (TMPDIR) is full" in r.message and "export TMPDIR=" in r.hint


def test_a_smoke_error_about_somewhere_else_is_not_blamed_on_a_location(tmp_path):
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "ind"), "TMPDIR": str(tmp_path), "HOME": "/root"}
    e = _raised("PermissionError: [Errno 13] Permission denied: '/dev/nvidia0'")
    r = smoke._raised(e, "torch.compile", "smoke.compile", env)
    assert r.status is Status.FAIL and "because the" not in r.message
    # ENOSPC naming no path, with every location roomy: no location to blame either
    e = _raised("OSError: [Errno 28] No space left on device")
    assert "because the" not in smoke._raised(e, "torch.compile", "smoke.compile", env).message
    assert compile_locations(env)["inductor"].chosen_by() == "TORCHINDUCTOR_CACHE_DIR"


def test_an_error_line_is_found_in_a_long_line_without_newlines(tmp_path):
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "ind"), "TMPDIR": str(tmp_path), "HOME": "/root"}
    text = "x" * 30_000 + f" OSError: [Errno 30] Read-only file system: '{tmp_path}/ind/envdoctor-probe-1/a'" + "y" * 30_000
    r = smoke.location_failure(text, env, "torch.compile")
    assert r is not None and f"Inductor cache {tmp_path}/ind (TORCHINDUCTOR_CACHE_DIR)" in r.message
    assert len(r.details["error"]) <= 300


def test_a_worker_that_died_of_a_full_location_is_a_failing_row_naming_it(tmp_path):
    """A compiler killed by a full temporary directory takes the worker down: no error row of
    the run, but the smoke's failure, naming the location."""
    from tests.checks.test_smoke import CPU_TORCH, CannedProbe

    env = {"TMPDIR": str(tmp_path), "HOME": "/root", "ENVDOCTOR_SMOKE_PARALLEL": "0"}
    died = ProbeError("the torch.compile smoke exited with status 1", output=f"cc1plus: error: {tmp_path}/x/ccB.s: No space left on device")
    row = run_check(smoke.compile_smoke, probe=CannedProbe(compile_smoke=died), torch_build=CPU_TORCH, env=env)
    assert row.status is Status.FAIL and f"temporary directory {tmp_path} (TMPDIR) is full" in row.message
    # anything else still ends the check with the worker's own error
    other = ProbeError("the torch.compile smoke was killed by SIGSEGV", output="Segmentation fault")
    with pytest.raises(ProbeError):
        smoke.compile_smoke(probe=CannedProbe(compile_smoke=other), torch_build=CPU_TORCH, env=env)


def test_a_noexec_location_is_named_when_its_so_cannot_be_loaded(tmp_path):
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "ind"), "TMPDIR": str(tmp_path), "HOME": "/root"}
    e = ProbeRaised("ImportError", f"{tmp_path}/ind/envdoctor-probe-1/ab/x.so: failed to map segment from shared object", "", "")
    r = smoke._raised(e, "torch.compile", "smoke.compile", env)
    assert "(TORCHINDUCTOR_CACHE_DIR) is on a noexec mount" in r.message and "without noexec" in r.hint
