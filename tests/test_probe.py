"""The probe machinery against real child processes that hang, crash or speak garbage."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envdoctor import ProbeError
from envdoctor.core.probe import ProbeClient

PLUGINS = str(Path(__file__).parent / "probe_plugins")


@pytest.fixture
def client():
    c = ProbeClient(extra_path=[PLUGINS])
    yield c
    c.close()


def _gone(pid: int, within: float = 5.0) -> bool:
    """True once ``pid`` no longer runs (absent, or a zombie awaiting its reaper)."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_a_hanging_body_is_killed_at_its_deadline_with_its_children(client, tmp_path):
    pid_file = tmp_path / "pids"
    with pytest.raises(ProbeError) as exc:
        client.call("faults:hang", {"pid_file": str(pid_file)}, timeout=3, what="the hang smoke")
    msg = exc.value.diagnosis
    assert "the hang smoke did not finish within 3s and was killed" in msg
    assert "while initialising CUDA on GPU 0" in msg and "CUDA init hang" in msg
    worker, child = (int(p) for p in pid_file.read_text().split())
    assert _gone(worker), "the worker survived its deadline"
    assert _gone(child), "the worker's child process survived the kill"


def test_a_segfault_is_reported_with_the_signal_and_the_step(client):
    with pytest.raises(ProbeError) as exc:
        client.call("faults:segfault", timeout=30, what="the Triton smoke")
    msg = exc.value.diagnosis
    assert "the Triton smoke died of SIGSEGV (segmentation fault)" in msg
    assert "while launching the vector-add kernel" in msg


def test_a_dead_worker_is_explained_by_the_catalogs_probe_rows(client):
    with pytest.raises(ProbeError) as exc:
        client.call("faults:no_space", timeout=30, what="the compile smoke")
    assert exc.value.diagnosis == "the compile smoke exited with status 3; No space left on device"


def test_garbage_on_the_result_channel_is_a_readable_error(client):
    with pytest.raises(ProbeError) as exc:
        client.call("faults:garbage", timeout=30, what="the noisy smoke")
    msg = exc.value.diagnosis
    assert msg.startswith("the noisy smoke answered with something that is not a probe result")
    assert "just noise from a C library" in msg


def test_the_worker_restarts_after_a_death_and_the_next_call_works(client):
    first = client.call("faults:pid", timeout=30)
    with pytest.raises(ProbeError):
        client.call("faults:segfault", timeout=30)
    second = client.call("faults:pid", timeout=30)
    assert second != first
    assert client.call("faults:pid", timeout=30) == second  # and the new worker is kept
    assert client.workers_started == 2


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
@pytest.mark.slow
def test_torch_is_imported_once_across_calls(client):
    results = [client.call("faults:import_torch", timeout=120) for _ in range(3)]
    assert client.workers_started == 1
    assert len({r["pid"] for r in results}) == 1
    assert [r["already_loaded"] for r in results] == [False, True, True]
    assert os.getpid() not in {r["pid"] for r in results}


@pytest.mark.slow
def test_the_worker_sees_nvidia_smi_bounded(tmp_path, monkeypatch):
    """Inductor runs nvidia-smi itself while compiling: on a wedged driver (an nvidia-smi that
    never answers) the probe must not hang with it. The first call is cut at the bound, later
    calls fail at once; a healthy nvidia-smi answers through the wrapper unchanged."""
    import subprocess
    import time

    from envdoctor.core import probe as probe_mod

    monkeypatch.setattr(probe_mod, "NVIDIA_SMI_BOUND", 1)
    for name, body in (("ok", 'echo "GPU 0: fake $*"'), ("hang", "exec sleep 100000")):
        d = tmp_path / name
        d.mkdir()
        (d / "nvidia-smi").write_text(f"#!/bin/sh\n{body}\n")
        (d / "nvidia-smi").chmod(0o755)
    root = tmp_path / "run-ok"
    root.mkdir()
    env = probe_mod._worker_env({"PATH": f"{tmp_path / 'ok'}:/usr/bin:/bin"}, str(root))
    probe_mod._write_smi_shim(f"{tmp_path / 'ok'}:/usr/bin:/bin", str(root))  # as _Worker does once the child made root
    done = subprocess.run(["nvidia-smi", "-L"], env=env, capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout.strip()) == (0, "GPU 0: fake -L")
    root = tmp_path / "run-hang"
    root.mkdir()
    env = probe_mod._worker_env({"PATH": f"{tmp_path / 'hang'}:/usr/bin:/bin"}, str(root))
    probe_mod._write_smi_shim(f"{tmp_path / 'hang'}:/usr/bin:/bin", str(root))
    start = time.monotonic()
    first = subprocess.run(["nvidia-smi"], env=env, capture_output=True, text=True, timeout=30)
    second = subprocess.run(["nvidia-smi"], env=env, capture_output=True, text=True, timeout=30)
    assert first.returncode == 124 and second.returncode == 124 and "did not answer earlier" in second.stderr
    assert time.monotonic() - start < 10
    # No nvidia-smi at all: nothing is wrapped.
    assert probe_mod._worker_env({"PATH": "/nonexistent"}, str(tmp_path))["PATH"] == "/nonexistent"


def test_a_temporary_directory_the_worker_cannot_make_is_one_probe_error(tmp_path, monkeypatch):
    """The worker's directory is made in the child between fork and exec: a parent it cannot
    write (a read-only TMPDIR) or a name it cannot make are ProbeErrors naming the place, and
    nothing is left behind."""
    from envdoctor.core import probe as probe_mod

    real = os.access
    monkeypatch.setattr(probe_mod.os, "access", lambda path, mode, **kw: False if path == str(tmp_path) else real(path, mode, **kw))
    monkeypatch.setattr(probe_mod.tempfile, "gettempdir", lambda: str(tmp_path))
    with pytest.raises(ProbeError, match=f"cannot create a temporary directory in {tmp_path}: it is not writable"):
        ProbeClient().call("json:dumps", {"obj": 1}, timeout=30)
    missing = tmp_path / "gone" / "envdoctor-probe-x"
    with pytest.raises(ProbeError, match="cannot create the probe's temporary directory .*envdoctor-probe-x"):
        probe_mod._Worker(dict(os.environ), [], root=str(missing))
    assert os.listdir(tmp_path) == []


def test_a_worker_killed_before_its_guard_leaves_no_directory(tmp_path):
    # The worker's child makes its directory between fork and exec; an interpreter that never
    # reaches the guard (a slow start killed by the reaper at exit) cannot remove it: the exit does.
    slow = tmp_path / "python"
    slow.write_text("#!/bin/sh\nexec sleep 60\n")
    slow.chmod(0o755)
    code = f"""
import os, sys, tempfile
tempfile.tempdir = {str(tmp_path / "tmp")!r}
os.makedirs(tempfile.tempdir)
from envdoctor.core import probe, reaper
assert reaper.install()
w = probe._Worker(dict(os.environ), [], python={str(slow)!r})
assert os.path.isdir(w.cache_root)
print(w.cache_root, w.proc.pid, flush=True)
reaper.reap(grace=5)
print("left", os.path.exists(w.cache_root), w.proc.poll() is not None)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    root, pid = done.stdout.split()[:2]
    assert done.stdout.splitlines()[-1] == "left False True", done.stdout
    assert os.listdir(tmp_path / "tmp") == [] and _gone(int(pid))
