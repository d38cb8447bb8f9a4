"""ProbeClient.prestart (issue 16): the shared worker imports torch before the first call, a spare
one waits for the first other lane. Real workers; a fake torch package on the workers' PYTHONPATH
imports fine, raises, dies, hangs or warns on cue."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from envdoctor import ProbeError
from envdoctor.core import bytecode
from envdoctor.core.probe import ProbeClient
from tests.test_containment import _ended, _wait_gone  # a zombie (not yet reaped by PID 1) has ended

COLLECT = "envdoctor_checks.bodies.torch_info:collect"

BODIES = '''
import os, sys

def state():
    """This worker's pid and whether torch was imported before this call."""
    return {"pid": os.getpid(), "torch_loaded": "torch" in sys.modules}
'''

FAKE_TORCH = {
    "ok": "__version__ = '0.0.fake'\n_C = object()\nfrom . import cuda, version\n",
    "raises": "raise ImportError('libfake_cuda.so.13: cannot open shared object file: No such file or directory')\n",
    "exits": "import os\nos._exit(3)\n",
    "segfaults": "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
    "hangs": "import time\nwhile True:\n    time.sleep(1)\n",
    "warns": "import warnings\nwarnings.warn('fake numpy warning')\n__version__ = '0.0.fake'\n_C = object()\nfrom . import cuda, version\n",
}


class Setup:
    def __init__(self, tmp_path: Path, monkeypatch, kind: str) -> None:
        sp = tmp_path / "sp" / "torch"
        sp.mkdir(parents=True)
        (sp / "__init__.py").write_text(FAKE_TORCH[kind])
        (sp / "version.py").write_text("cuda = None\nhip = None\ngit_version = 'fake'\n")
        (sp / "cuda.py").write_text("def is_available():\n    return False\n\n\ndef device_count():\n    return 0\n")
        self.bodies = tmp_path / "bodies"
        self.bodies.mkdir()
        (self.bodies / "prestartbody.py").write_text(BODIES)
        self.tmp = tmp_path / "tmp"
        self.tmp.mkdir()
        # Worker directories are made by this process: keep them where the test can look.
        monkeypatch.setattr("tempfile.tempdir", str(self.tmp))
        # prestart asks this process whether torch is installed; the fake one answers whether or
        # not this venv has a real torch.
        monkeypatch.syspath_prepend(str(tmp_path / "sp"))
        self.marker = uuid.uuid4().hex
        env = {
            **os.environ,
            "PYTHONPATH": str(tmp_path / "sp"),
            "PYTHONDONTWRITEBYTECODE": "1",
            "ENVDOCTOR_PRECOMPILE": "0",
            "ENVDOCTOR_TEST_MARKER": self.marker,
        }
        self.client = ProbeClient(extra_path=[str(self.bodies)], env=env)

    def close(self) -> None:
        self.client.close()
        assert _wait_gone(self.marker) == [], "a worker outlived close()"
        assert os.listdir(self.tmp) == [], "a worker's directory outlived close()"


@pytest.fixture
def setup(tmp_path, monkeypatch):
    made = []

    def make(kind: str) -> Setup:
        made.append(Setup(tmp_path, monkeypatch, kind))
        return made[-1]

    yield make
    for s in made:
        s.close()


def test_a_successful_preload_is_the_worker_the_first_call_uses(setup):
    s = setup("ok")
    s.client.prestart()
    assert s.client.workers_started == 1
    first = s.client.call("prestartbody:state", timeout=30)
    assert first["torch_loaded"], "the worker had not imported torch before the first call"
    assert s.client.call("prestartbody:state", timeout=30)["pid"] == first["pid"]
    assert s.client.workers_started == 1
    assert s.client.bytecode_cache is None  # ENVDOCTOR_PRECOMPILE=0: no helpers, no cache


def test_without_prestart_the_first_call_imports_nothing_beforehand(setup):
    s = setup("ok")
    assert s.client.call("prestartbody:state", timeout=30)["torch_loaded"] is False


def test_a_preload_whose_import_raises_gives_the_call_a_fresh_worker(setup):
    s = setup("raises")
    s.client.prestart()
    value = s.client.call(COLLECT, timeout=30)
    assert s.client.workers_started == 2
    assert value["import_error"].startswith("ImportError: libfake_cuda.so.13: cannot open shared object file"), value
    # The fresh worker is kept for the calls after.
    pid = s.client.call("prestartbody:state", timeout=30)["pid"]
    assert s.client.call("prestartbody:state", timeout=30)["pid"] == pid
    assert s.client.workers_started == 2


@pytest.mark.parametrize(("kind", "how"), [("exits", "exited with status 3"), ("segfaults", "died of SIGSEGV")])
@pytest.mark.slow
def test_a_preload_that_kills_the_worker_gives_the_call_a_fresh_worker(setup, kind, how):
    s = setup(kind)
    s.client.prestart()
    preloaded = s.client._lanes["main"].worker.proc.pid
    # The call meets the crash first-hand, in a worker of its own, with its own words.
    with pytest.raises(ProbeError) as exc:
        s.client.call(COLLECT, timeout=30, what="the torch probe (import torch)")
    assert exc.value.diagnosis.startswith(f"the torch probe (import torch) {how}"), exc.value.diagnosis
    assert s.client.workers_started == 2
    assert _ended(preloaded)
    # A body that does not import torch works in the next worker.
    assert s.client.call("prestartbody:state", timeout=30)["torch_loaded"] is False
    assert s.client.workers_started == 3


@pytest.mark.slow
def test_a_preload_that_hangs_is_the_calls_timeout_naming_the_import(setup):
    s = setup("hangs")
    s.client.prestart()
    start = time.monotonic()
    with pytest.raises(ProbeError) as exc:
        s.client.call("prestartbody:state", timeout=3, what="the torch probe (import torch)")
    took = time.monotonic() - start
    msg = exc.value.diagnosis
    assert "the torch probe (import torch) did not finish within 3s and was killed" in msg, msg
    assert "while importing torch" in msg, msg
    assert took < 8, took
    assert s.client.workers_started == 1  # no second worker was started to hang again
    assert _wait_gone(s.marker) == [], "the hung worker survived its deadline"


def test_warnings_of_the_preloaded_import_reach_collect(setup):
    s = setup("warns")
    s.client.prestart()
    value = s.client.call(COLLECT, timeout=30)
    assert s.client.workers_started == 1
    assert value["version"] == "0.0.fake"
    assert value["warnings"].count("fake numpy warning") == 1, value["warnings"]


def test_warnings_without_prestart_are_reported_once_too(setup):
    s = setup("warns")
    value = s.client.call(COLLECT, timeout=30)
    assert value["warnings"].count("fake numpy warning") == 1, value["warnings"]


def test_the_spare_worker_serves_the_first_other_lane(setup):
    s = setup("ok")
    s.client.prestart(spare=True)
    assert s.client.workers_started == 2
    spare = s.client._spare.proc.pid
    other = s.client.call("prestartbody:state", timeout=30, lane="x")
    assert other == {"pid": spare, "torch_loaded": True}
    main = s.client.call("prestartbody:state", timeout=30)
    assert main["torch_loaded"] and main["pid"] != spare
    assert s.client.call("prestartbody:state", timeout=30, lane="x")["pid"] == spare  # the lane keeps it
    assert s.client.workers_started == 2
    # A third lane finds no spare left: a worker of its own, nothing preloaded.
    assert s.client.call("prestartbody:state", timeout=30, lane="y")["torch_loaded"] is False
    assert s.client.workers_started == 3


def test_close_kills_a_spare_no_lane_took(setup):
    s = setup("ok")
    s.client.prestart(spare=True)
    spare = s.client._spare
    assert spare is not None and spare.alive()
    s.client.close()
    assert not spare.alive()
    assert _wait_gone(s.marker) == []
    assert os.listdir(s.tmp) == []


def test_a_spare_whose_preload_failed_is_not_handed_to_a_lane(setup):
    s = setup("exits")
    s.client.prestart(spare=True)
    with pytest.raises(ProbeError, match="exited with status 3"):
        s.client.call(COLLECT, timeout=30, lane="x")
    # The lane met the failure first-hand in a fresh worker: main, spare, then that one.
    assert s.client.workers_started == 3


def test_prestart_after_close_starts_nothing(setup):
    s = setup("ok")
    s.client.close()
    s.client.prestart(spare=True)
    assert s.client.workers_started == 0


def test_prestart_without_torch_starts_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(bytecode, "installed", lambda name: False)
    client = ProbeClient(env={**os.environ, "ENVDOCTOR_PRECOMPILE": "0"})
    try:
        client.prestart(spare=True)
        assert client.workers_started == 0 and client._lanes["main"].worker is None
    finally:
        client.close()
