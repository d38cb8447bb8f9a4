"""Probes: work that imports torch/triton/torch_xla or touches a GPU, in a child interpreter.

A long-lived worker per *lane* serves the probe calls of a run, in turn: the shared ``main``
lane (torch's facts, the matmul, the Triton kernel) and whatever lanes checks name (the compile
smokes run in ``compile``), so torch is imported and the first compile paid once per lane, the
lanes side by side. The run starts the shared worker, and a spare for the next lane, before
any check asks (:meth:`ProbeClient.prestart`): they import torch while the static checks run.
Each call has a deadline; a call that hangs or kills the worker is reported as a
:class:`ProbeError` with a diagnosis, and the next call starts a fresh worker. The worker leads
its own process group, so a kill reaches its children too (compiler subprocesses, Inductor's
compile workers).

The worker gets fresh ``TRITON_CACHE_DIR`` and ``TORCHINDUCTOR_CACHE_DIR`` so smoke tests
exercise the real toolchain rather than a cached kernel: a new subdirectory inside each of the
user's own cache locations (configured or default, ``core.locations``), so a full, read-only or
noexec file system there fails the smoke as it fails the user's run. Its temporary directory is
inside the user's. All of them are removed when the worker goes, by envdoctor or, when
envdoctor was killed, by the worker itself.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import select
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from envdoctor.core import builtins, bytecode, locations, reaper
from envdoctor.core._probe_child import BYTECODE_ENV, PRECOMPILE_ENV, remove_all
from envdoctor.core.api import ProbeError, ProbeRaised
from envdoctor.core.signatures import PROBE, SIGNATURES, best
from envdoctor.core.subproc import describe_signal, kill_group, kill_now, spawn_on_stable_thread

# Both boots load the built-in checks from their files, as core.builtins does
# in this process: a checkout that is not installed has them under checks/ only.
_BOOT = (
    "import sys; sys.path.extend({extra!r}); from envdoctor.core import builtins\n"
    "builtins.PACKAGE in sys.modules or builtins.load_by_path(builtins.PACKAGE, {checks!r})\n"
    "from envdoctor.core._probe_child import main; main()"
)
# Another interpreter (--python) has neither envdoctor nor its dependencies installed: the worker
# loop and the probe bodies (both standard library only, besides what they probe) are loaded from
# their files, without touching sys.path, so the target's own torch and numpy are the ones found.
# Plugin directories go after the target's own paths, as in the default boot.
_TARGET_BOOT = (
    "import sys, importlib.util as u\n"
    "def load(name, init, pkg=None):\n"
    "    s = u.spec_from_file_location(name, init, submodule_search_locations=pkg)\n"
    "    m = u.module_from_spec(s); sys.modules[name] = m; s.loader.exec_module(m); return m\n"
    "load({package!r}, {checks_init!r}, [{checks!r}])\n"
    "sys.path.extend({extra!r})\n"
    "load('envdoctor_probe_child', {child!r}).main()"
)
OUTPUT_TAIL = 16 * 1024

# Probe bodies announce each step that can hang or crash ("envdoctor-stage: initialising CUDA on
# GPU 0"); the last one says where a killed or dead worker was.
_STAGE = re.compile(r"^envdoctor-stage: (.+)$", re.M)


def last_stage(output: str) -> str:
    """'while <the last step a body announced>' (a CUDA init hang is named as such), or ''."""
    stages = _STAGE.findall(output)
    if not stages:
        return ""
    step = stages[-1].strip()[:200]
    if step.startswith("initialising CUDA"):
        return f"while {step} (a CUDA init hang or crash: check nvidia-smi, dmesg for Xid errors, and nvidia-fabricmanager on NVSwitch systems)"
    return f"while {step}"


def _dead_cause(output: str) -> str:
    return "; ".join(p for p in (explain_output(output), last_stage(output)) if p)


def _worker_env(
    env: Mapping[str, str], root: str, bytecode_cache: str | None = None, precompile: tuple[int, Sequence[str]] | None = None
) -> dict[str, str]:
    """The worker's environment: every cache and temporary file inside ``root``.

    Inductor writes precompiled headers under ``$TMPDIR/torchinductor_<user>`` whatever
    TORCHINDUCTOR_CACHE_DIR says (149 MB per run); compilers write temporaries to $TMPDIR. With
    TMPDIR pointing inside the run's directory, all of it goes when that directory goes.
    ``bytecode_cache``: the run's bytecode cache the worker reads from (core.bytecode);
    ``precompile``: (helpers, roots) the worker starts to fill it."""
    env = dict(env)
    env.pop(BYTECODE_ENV, None)
    env.pop(PRECOMPILE_ENV, None)
    if bytecode_cache:
        env[BYTECODE_ENV] = bytecode_cache
        if precompile:
            env[PRECOMPILE_ENV] = json.dumps({"count": precompile[0], "roots": list(precompile[1])})
    tmp = os.path.join(root, "tmp")
    env.update(user_cache_dirs(env, root))  # before TMPDIR changes: Inductor's default lies in the user's
    env.update(TMPDIR=tmp, TEMP=tmp, TMP=tmp)
    env["CUDA_CACHE_PATH"] = os.path.join(root, "cuda")  # the driver's PTX JIT cache
    env["PYTHONUNBUFFERED"] = "1"
    if _smi_shim(env.get("PATH", os.defpath)):  # written into root/bin once the worker made root
        env["PATH"] = os.path.join(root, "bin") + os.pathsep + env.get("PATH", os.defpath)
    return env


def user_cache_dirs(env: Mapping[str, str], root: str) -> dict[str, str]:
    """The worker's TRITON_CACHE_DIR and TORCHINDUCTOR_CACHE_DIR: a subdirectory named as
    ``root`` inside each location the user's own runs would use (core.locations); inside ``root``
    where none resolves (no HOME and no passwd entry: the cache check reports that). Not created
    here: Triton and Inductor create them as they would for the user, and meet the same errors."""
    name = os.path.basename(root)
    where = locations.compile_locations(env)
    out = {}
    for key, var in (("triton", "TRITON_CACHE_DIR"), ("inductor", "TORCHINDUCTOR_CACHE_DIR")):
        base = where[key].path
        out[var] = _inside(base, name) if base else os.path.join(root, key)
    return out


def _inside(base: str, name: str) -> str:
    """``base/name``; where ``base`` does not exist yet, ``name`` goes beside it instead, in its
    nearest existing ancestor (``/tmp/torchinductor.envdoctor-probe-…``): the same file system
    and the same permission the user's first run needs to create ``base``, and nothing that
    outlives the worker. Creating ``base`` itself would leave it owned by whoever ran first:
    seen in an image build, where root's compile made /tmp/torchinductor (0755) and the
    rehearsal as the runtime user, beside it, could no longer write there."""
    missing = locations.missing_ancestors(base)
    if not missing:
        return os.path.join(base, name)
    top = missing[-1]
    label = os.path.relpath(os.path.abspath(base), os.path.dirname(top)).replace(os.sep, "-")
    return os.path.join(os.path.dirname(top), f"{label}.{name}")


def cleanup_plan(env: Mapping[str, str], root: str) -> dict[str, list[str]]:
    """What to remove when the worker goes, besides ``root``: its cache subdirectories ("trees")
    and the parents that creating them will make ("prune": removed only if empty, deepest
    first), found now, before the worker exists. Removing an empty parent can race another
    process's makedirs between its parent and child step (ENOENT there); the window is one
    system call, and only where the location did not exist before the run."""
    trees = [d for d in user_cache_dirs(env, root).values() if not d.startswith(root + os.sep)]
    prune = [p for d in trees for p in locations.missing_ancestors(d)[1:]]
    return {"trees": trees, "prune": sorted(set(prune), key=lambda p: (-p.count(os.sep), p))}


# torch and Inductor run nvidia-smi themselves (e.g. to look at the GPU topology while
# compiling): on a wedged driver that call never returns and the compile smoke would hang until
# its deadline, holding the worker every other probe waits for. The worker sees nvidia-smi
# through this wrapper: the real one, bounded; after one hang, later calls fail at once.
# Only torch's and Triton's own calls go through it: Inductor's scheduler asks for the GPU's
# maximum SM clock (triton.testing.nvsmi) for a runtime estimate and uses 0 when that fails; the
# NVLink topology query has its own 5 s timeout. No check depends on their answers, so the bound
# is short: a hang costs the compile smoke 3 s, not 10 (the whole healthy run takes ~10 s on
# the H200; docs/benchmarks.md).
NVIDIA_SMI_BOUND = 3
_SMI_SHIM = """#!/bin/sh
# envdoctor: the real nvidia-smi, bounded (a wedged driver must not hang the probe).
hung="$(dirname "$0")/.nvidia-smi-hung"
[ -e "$hung" ] && {{ echo "nvidia-smi did not answer earlier in this run (envdoctor bounds it to {bound} s)" >&2; exit 124; }}
{timeout} -k 2 {bound} {real} "$@"
rc=$?
[ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && : > "$hung"
exit $rc
"""


def _smi_shim(path: str) -> str | None:
    """The bounding ``nvidia-smi`` wrapper's text, or None (no nvidia-smi or no ``timeout``
    program on ``path``: nothing to wrap, or nothing to wrap it with)."""
    real, bound_with = shutil.which("nvidia-smi", path=path), shutil.which("timeout", path=path)
    if not real or not bound_with:
        return None
    return _SMI_SHIM.format(timeout=shlex.quote(bound_with), real=shlex.quote(real), bound=NVIDIA_SMI_BOUND)


def _write_smi_shim(path: str, root: str) -> None:
    """Put the wrapper where the worker's PATH looks first. Before the first request, so before
    any torch code can run nvidia-smi; if it cannot be written, the real one is found instead."""
    text = _smi_shim(path)
    if not text:
        return
    bindir = os.path.join(root, "bin")
    try:
        os.makedirs(bindir, exist_ok=True)
        script = os.path.join(bindir, "nvidia-smi")
        with open(script, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(script, 0o755)
    except OSError:
        pass


def explain_output(output: str) -> str:
    """The most telling cause found in a probe's output, or '': the engine's probe-scope rows of
    the catalog (a worker dies before, and apart from, any registry)."""
    found = best(output, SIGNATURES, PROBE)
    return found.cause.strip()[:300] if found else ""


def _boot(python: str | None, extra_path: Sequence[str]) -> list[str]:
    """The worker's interpreter and its boot code: the doctor's own, or the one examined."""
    checks = _checks_dir()
    if python is None:
        return [sys.executable, "-c", _BOOT.format(extra=list(extra_path), checks=checks)]
    boot = _TARGET_BOOT.format(
        package=builtins.PACKAGE,
        checks_init=os.path.join(checks, "__init__.py"),
        checks=checks,
        extra=list(extra_path[1:]),  # not the directory holding envdoctor itself
        child=os.path.join(os.path.dirname(os.path.abspath(__file__)), "_probe_child.py"),
    )
    return [python, "-c", boot]


def _checks_dir() -> str:
    """Where the built-in checks live, found without importing them."""
    found = builtins.location()
    if found is None:
        raise ProbeError(f"envdoctor's built-in checks ({builtins.PACKAGE}) cannot be found; reinstall envdoctor")
    return found


def _run_dir() -> str:
    """A name for one worker's temporary directory, not yet made: the worker's child makes it
    between fork and exec (see _make_run_dir), so no moment exists where the directory is there
    and nothing would remove it (a SIGKILL of envdoctor before that leaves nothing; after it, the
    child's guard removes it). ProbeError when the temporary directory cannot take it."""
    parent = tempfile.gettempdir()
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ProbeError(f"cannot create a temporary directory in {parent}: it is not writable")
    return os.path.join(parent, f"envdoctor-probe-{secrets.token_hex(6)}")


# The temporary directories of workers not yet closed (root -> its cleanup plan): at exit, once
# the reaper has ended every process below envdoctor, those still there are removed. A worker
# killed while it was still starting (SIGTERM from the reaper before its guard ran) cannot.
_open_roots: dict[str, Any] = {}
_open_roots_lock = threading.Lock()


def _remove_open_roots() -> None:
    with _open_roots_lock:
        left = list(_open_roots.items())
        _open_roots.clear()
    for root, plan in left:
        remove_all(root, plan)


reaper.after_reap(_remove_open_roots)


def _make_run_dir(root: str):
    """The worker's preexec_fn: make ``root`` (private) and its ``tmp``, and work there. Only
    system calls, as code between fork and exec must be."""
    tmp = os.path.join(root, "tmp")

    def preexec() -> None:
        os.mkdir(root, 0o700)
        os.mkdir(tmp)
        os.chdir(root)

    return preexec


class _Worker:
    def __init__(
        self,
        env: Mapping[str, str],
        extra_path: Sequence[str],
        python: str | None = None,
        *,
        root: str | None = None,
        bytecode_cache: str | None = None,
        precompile: tuple[int, Sequence[str]] | None = None,
    ) -> None:
        """``root``: the name of its temporary directory (``_run_dir``; else one is chosen here),
        which the child makes and which is removed when the worker goes; ``precompile``: the
        bytecode helpers it starts, in its own process group (see _worker_env)."""
        boot = _boot(python, extra_path)  # before anything is created that would need cleaning up
        self.cache_root = root or _run_dir()
        self.log = tempfile.TemporaryFile()  # nameless: nothing to leave behind
        self.stopped = ""  # "deadline" or "interrupted" when envdoctor itself stopped this worker
        self.allowed = 0.0  # the deadline of the call in progress, in seconds
        self.expired = False  # a call ran past its deadline (and the worker was killed)
        self.preload_offset: int | None = None  # where the output of an unanswered preload starts
        rfd, wfd = os.pipe()
        # The control pipe: the worker holds its read end; its write end stays here and closes when
        # this process dies, however it dies (SIGKILL included); the worker then cleans up and exits.
        crfd, self.control = os.pipe()
        self.cleanup = cleanup_plan(env, self.cache_root)
        with _open_roots_lock:
            _open_roots[self.cache_root] = self.cleanup
        argv = [*boot, str(wfd), str(crfd), str(os.getpid()), self.cache_root, json.dumps(self.cleanup)]
        try:
            # From a thread that lives as long as this process: the worker's parent-death signal
            # fires when the thread that started it ends, and check threads end during a run.
            self.proc = spawn_on_stable_thread(
                lambda: subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=self.log,
                    stderr=subprocess.STDOUT,
                    pass_fds=(wfd, crfd),
                    start_new_session=True,
                    env=_worker_env(env, self.cache_root, bytecode_cache, precompile),
                    preexec_fn=_make_run_dir(self.cache_root),
                )
            )
        except (OSError, subprocess.SubprocessError) as e:
            for fd in (rfd, self.control):
                os.close(fd)
            self.log.close()
            remove_all(self.cache_root, self.cleanup)
            if isinstance(e, OSError):
                raise ProbeError(f"cannot start a Python child process: {e}") from e
            raise ProbeError(f"cannot create the probe's temporary directory {self.cache_root}") from e
        finally:
            os.close(wfd)
            os.close(crfd)
        _write_smi_shim(env.get("PATH", os.defpath), self.cache_root)
        self.rfd = rfd
        self.buf = b""
        self.calls = 0

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _output_since(self, offset: int) -> str:
        if self.log.closed:
            return ""
        self.log.flush()
        self.log.seek(0, os.SEEK_END)
        end = self.log.tell()
        start = max(offset, end - OUTPUT_TAIL)
        self.log.seek(start)
        return self.log.read(end - start).decode("utf-8", "replace")

    def request(self, target: str, kwargs: Mapping[str, Any], timeout: float, what: str) -> tuple[dict, str]:
        return self.receive(self.send(target, kwargs), timeout, what)

    def send(self, target: str, kwargs: Mapping[str, Any]) -> int:
        """Write one request; the offset in the log where its output starts."""
        self.log.seek(0, os.SEEK_END)
        offset = self.log.tell()
        line = json.dumps({"target": target, "kwargs": dict(kwargs)}) + "\n"
        try:
            self.proc.stdin.write(line.encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it died; reading the answer reports how
        self.calls += 1
        return offset

    def receive(self, offset: int, timeout: float, what: str) -> tuple[dict, str]:
        """The answer to the oldest request not yet answered, within ``timeout`` seconds."""
        start = time.monotonic()
        self.allowed = timeout
        while b"\n" not in self.buf:
            left = timeout - (time.monotonic() - start)
            if left <= 0:
                self.expired = True
                kill_group(self.proc, grace=1.0)
                out = self._output_since(offset)
                self.close()
                cause = _dead_cause(out)
                raise ProbeError(
                    f"{what} did not finish within {timeout:.0f}s and was killed" + (f"; {cause}" if cause else ""),
                    output=out,
                )
            ready, _, _ = select.select([self.rfd], [], [], min(left, 0.5))
            if not ready:
                continue
            chunk = os.read(self.rfd, 65536)
            if not chunk:
                self._died(offset, what)
            self.buf += chunk
        raw, _, self.buf = self.buf.partition(b"\n")
        out = self._output_since(offset)
        try:
            payload = json.loads(raw.decode("utf-8", "replace"))
            if not isinstance(payload, dict):
                raise ValueError("not an object")
        except ValueError:
            self.close()
            raise ProbeError(f"{what} answered with something that is not a probe result: {raw[:200]!r}", output=out) from None
        return payload, out

    def _died(self, offset: int, what: str) -> None:
        try:
            rc = self.proc.wait(5)
        except subprocess.TimeoutExpired:
            rc = None
        out = self._output_since(offset)
        self.close()
        if self.stopped == "deadline":
            # envdoctor's own TERM/KILL is not a crash of the probe: never "died of SIGTERM".
            raise ProbeError(f"{what} did not finish within its deadline of {self.allowed:.0f}s (envdoctor stopped it)", output=out)
        if self.stopped == "interrupted":
            raise ProbeError(f"{what} was stopped by envdoctor before it finished (the run was interrupted)", output=out)
        if rc is not None and rc < 0:
            how = describe_signal(-rc)
        elif rc is not None:
            how = f"exited with status {rc}"
        else:
            how = "closed its result channel"
        cause = _dead_cause(out)
        raise ProbeError(f"{what} {how}" + (f"; {cause}" if cause else ""), output=out)

    def close(self) -> None:
        kill_now(self.proc)  # the whole group at once (helpers too): all it wrote is in cache_root, removed below
        for f in (self.proc.stdin,):
            try:
                f.close()
            except OSError:
                pass
        for fd in (self.rfd, self.control):
            try:
                os.close(fd)
            except OSError:
                pass
        self.rfd = self.control = -1
        self.log.close()
        remove_all(self.cache_root, self.cleanup)
        with _open_roots_lock:
            _open_roots.pop(self.cache_root, None)


MAIN_LANE = "main"


class _Lane:
    """A long-lived worker and the lock that serialises the calls it serves."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.worker: _Worker | None = None


class ProbeClient:
    """What a check receives as its ``probe`` parameter.

    ``probe.call("my_plugin.bodies:matmul", {"dtype": "bf16"}, timeout=60)``
    returns the function's (JSON) value. It raises :class:`ProbeRaised` when the function
    raised in the child, and :class:`ProbeError` when the child hung, died or spoke garbage.
    Pass ``fresh=True`` (or a different ``env``) to run in a one-off worker that cannot
    disturb the shared one, or ``lane="name"`` to run in another long-lived worker, side by
    side with the shared one (the ``main`` lane); calls on one lane run in turn.
    """

    def __init__(self, *, extra_path: Sequence[str] = (), env: Mapping[str, str] | None = None, python: str | None = None) -> None:
        # The directory holding the envdoctor package (this file is envdoctor/core/probe.py);
        # envdoctor/ itself must not be on the child's path: its modules would be top-level names.
        here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        self.extra_path = [here, *extra_path]
        self.env = dict(os.environ if env is None else env)
        self.python = python  # the interpreter examined (--python); None: the doctor's own
        self.deadline: float | None = None  # monotonic; set by the runner from --timeout
        self._lanes: dict[str, _Lane] = {MAIN_LANE: _Lane()}
        self._closed = False
        self._live_lock = threading.Lock()
        self._live: set[_Worker] = set()  # every worker started and not yet closed by a call
        self.workers_started = 0
        # Which thread uses which worker now, so a check abandoned past its own timeout can be
        # cut off its probe (see abandon); guarded by _meta, never held while waiting on a child.
        self._meta = threading.Lock()
        self._using: dict[int, _Worker] = {}
        self._abandoned: set[int] = set()
        self.bytecode_cache: str | None = None  # the run's bytecode cache, when torch has none (core.bytecode)
        self._spare: _Worker | None = None  # a preloaded worker no lane has taken yet (prestart)

    def prestart(self, spare: bool = False, preload: str | None = None) -> None:
        """Start the shared worker now and have it import torch while the run's other checks
        work, instead of when the first check asks; with ``spare``, one more such worker, for
        the first other lane that needs one. Where torch has no bytecode, helpers compile it
        side by side (core.bytecode). A preload that fails is forgotten: the first call gets a
        fresh worker and meets the failure itself, first-hand."""
        if self.python is None and not bytecode.installed("torch"):
            return  # nothing to preload: the torch checks say so without a worker
        preload = preload or builtins.declared("PRELOAD")  # the built-ins declare what a worker runs first
        if not preload:
            return
        lane = self._lanes[MAIN_LANE]
        if not lane.lock.acquire(blocking=False):
            return
        try:
            if not self._closed and lane.worker is None:
                lane.worker = self._preloaded(preload)
                if spare:
                    self._spare = self._preloaded(preload)
        except (ProbeError, OSError):
            pass  # the first call starts its own worker and reports what is wrong
        finally:
            lane.lock.release()

    def _take_spare(self) -> _Worker | None:
        with self._live_lock:
            worker, self._spare = self._spare, None
        if worker is not None and not (worker.alive() or worker.preload_offset is not None):
            worker.close()
            return None
        return worker

    def _preloaded(self, preload: str) -> _Worker:
        """A new worker told to import torch; the first one also starts the bytecode helpers
        (core.bytecode), their cache inside its directory: they live in its process group, so
        they go with it, however it and envdoctor end."""
        count = bytecode.helper_count(self.env) if self.python is None and self.bytecode_cache is None else 0
        roots = bytecode.missing_roots() if count else []
        root = _run_dir()  # a name: the worker makes the directory
        job = (count, roots) if roots else None
        if job:
            self.bytecode_cache = os.path.join(root, "bytecode")
        try:
            worker = self._start_worker(self.env, "preloading torch", root=root, precompile=job)
        except BaseException:  # a Ctrl-C or TERM here too: later workers must not look there
            if job:
                self.bytecode_cache = None
            raise
        worker.preload_offset = worker.send(preload, {})
        return worker

    def _lane(self, name: str) -> _Lane:
        with self._live_lock:
            return self._lanes.setdefault(name, _Lane())

    def _await_preload(self, worker: _Worker, timeout: float, what: str) -> _Worker:
        """The shared worker once its preload is answered: itself when torch imported there;
        a fresh one when the preload failed or the worker died (the call meets the failure
        first-hand, with its own output). A preload that outlives the call's deadline is the
        call's timeout, as an import that hangs would be."""
        offset, worker.preload_offset = worker.preload_offset, None
        assert offset is not None, "awaited only while a preload is pending"
        try:
            payload, _ = self._request_answer(worker, offset, timeout, what)
        except ProbeError:
            if worker.expired:
                raise
            payload = {}
        if payload.get("ok"):
            return worker
        worker.close()
        return self._start_worker(self.env, what)

    def _remaining(self, timeout: float) -> float:
        if self.deadline is None:
            return timeout
        return min(timeout, self.deadline - time.monotonic())

    def call(
        self,
        target: str,
        kwargs: Mapping[str, Any] | None = None,
        *,
        timeout: float = 60.0,
        env: Mapping[str, str] | None = None,
        fresh: bool = False,
        what: str | None = None,
        lane: str = MAIN_LANE,
    ) -> Any:
        what = what or f"probe {target}"
        if self._closed:
            raise ProbeError(f"{what} was not run: the run was stopped")
        self._refuse_abandoned(what)
        if env is not None or fresh:
            return self._call_fresh(target, kwargs or {}, timeout, {**self.env, **(env or {})}, what)
        slot = self._lane(lane)
        left = self._remaining(timeout)
        if left <= 0 or not slot.lock.acquire(timeout=max(left, 0)):
            raise ProbeError(f"{what} was not run: no time left within the run's --timeout")
        try:
            left = self._remaining(timeout)
            if self._closed:
                raise ProbeError(f"{what} was not run: the run was stopped")
            self._refuse_abandoned(what)
            worker = slot.worker
            if worker is None or not (worker.alive() or worker.preload_offset is not None):
                if worker is not None:
                    worker.close()
                slot.worker = worker = self._take_spare() or self._start_worker(self.env, what)
            try:
                if worker.preload_offset is not None:
                    slot.worker = worker = self._await_preload(worker, left, what)
                    left = self._remaining(timeout)
                payload, out = self._request(worker, target, kwargs or {}, left, what)
            except ProbeError:
                slot.worker = None
                raise
        finally:
            slot.lock.release()
        return _unwrap(payload, out)

    def _call_fresh(self, target: str, kwargs: Mapping[str, Any], timeout: float, env: Mapping[str, str], what: str) -> Any:
        worker = self._start_worker(env, what)
        try:
            payload, out = self._request(worker, target, kwargs, self._remaining(timeout), what)
        finally:
            worker.close()
            with self._live_lock:
                self._live.discard(worker)
        return _unwrap(payload, out)

    def _request(self, worker: _Worker, target: str, kwargs: Mapping[str, Any], timeout: float, what: str) -> tuple[dict, str]:
        return self._request_answer(worker, worker.send(target, kwargs), timeout, what)

    def _request_answer(self, worker: _Worker, offset: int, timeout: float, what: str) -> tuple[dict, str]:
        me = threading.get_ident()
        with self._meta:
            self._using[me] = worker
        try:
            return worker.receive(offset, timeout, what)
        finally:
            with self._meta:
                self._using.pop(me, None)

    def _refuse_abandoned(self, what: str) -> None:
        if threading.get_ident() in self._abandoned:
            raise ProbeError(f"{what} was not run: its check ran past its own timeout")

    def abandon(self, thread: threading.Thread) -> None:
        """A check ran past its own timeout and was left running on ``thread``: refuse its
        later calls and kill the worker it is waiting on. Its call then fails in that thread,
        which releases the shared worker; the next check's call starts a fresh one."""
        if thread.ident is None:
            return
        with self._meta:
            self._abandoned.add(thread.ident)
            worker = self._using.get(thread.ident)
            if worker is not None and worker.rfd != -1:
                kill_group(worker.proc, grace=0.5)

    def _start_worker(
        self, env: Mapping[str, str], what: str, root: str | None = None, precompile: tuple[int, Sequence[str]] | None = None
    ) -> _Worker:
        worker = _Worker(env, self.extra_path, self.python, root=root, bytecode_cache=self.bytecode_cache, precompile=precompile)
        self.workers_started += 1
        with self._live_lock:
            self._live = {w for w in self._live if w.rfd != -1}
            self._live.add(worker)
            stopped = self._closed
        if stopped:  # close() ran while this worker was starting: it must not outlive the run
            worker.close()
            raise ProbeError(f"{what} was not run: the run was stopped")
        return worker

    def close(self) -> None:
        """Kill every worker (also from another thread, e.g. on Ctrl-C or the run's deadline).

        Never waits for a probe call in progress: the call sees its worker die and reports that
        envdoctor stopped it."""
        with self._live_lock:
            self._closed = True
            live = list(self._live)
        past_deadline = self.deadline is not None and time.monotonic() >= self.deadline
        for w in live:
            if w.rfd == -1:
                continue  # closed by its call already (its process group is gone)
            w.stopped = "deadline" if past_deadline else "interrupted"
            kill_now(w.proc)
        spare = self._take_spare()
        if spare is not None:
            spare.close()
        with self._live_lock:
            lanes = list(self._lanes.values())
        for lane in lanes:
            if lane.lock.acquire(timeout=2):
                try:
                    if lane.worker is not None and lane.worker.rfd != -1:
                        lane.worker.close()
                    lane.worker = None
                finally:
                    lane.lock.release()


def _unwrap(payload: dict, out: str) -> Any:
    if payload.get("ok"):
        return payload.get("value")
    raise ProbeRaised(
        str(payload.get("exc_type", "Exception")),
        str(payload.get("message", "")),
        str(payload.get("traceback", "")),
        out,
    )
