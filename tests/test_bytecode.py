"""The run's bytecode cache (issue 16): helpers compile torch's modules into a directory of the run
when the installation has no .pyc files and Python may not write them; the probe worker reads
from there. Real files and real interpreters: a cached .pyc must really be used, a stale one never."""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import py_compile
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest

from envdoctor.core import _probe_child as child
from envdoctor.core import bytecode
from envdoctor.core._probe_child import PRECOMPILE_ENV, _cache_name, precompile, sources
from tests.test_containment import _cmdline, _ended, _marked, _wait_gone

REPO = str(Path(__file__).resolve().parent.parent)
HEADER = 16  # PEP 552: magic, flags, mtime, size


def _write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _import_x(module_dir: Path, name: str, cache: Path | None) -> dict:
    """Import ``name`` from ``module_dir`` in a fresh interpreter that may not write bytecode,
    reading from ``cache`` first when given: its X and where its bytecode was looked for."""
    code = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {REPO!r})
        from envdoctor.core._probe_child import read_bytecode_from
        if {str(cache) if cache else ""!r}:
            read_bytecode_from({str(cache) if cache else ""!r})
        sys.path.insert(0, {str(module_dir)!r})
        import {name} as m
        print(json.dumps({{"X": m.X, "cached": m.__cached__}}))
        """
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPYCACHEPREFIX", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _replace_code(pyc: Path, source: str) -> None:
    """Keep ``pyc``'s 16-byte header (still valid for its source) and swap its code object."""
    header = pyc.read_bytes()[:HEADER]
    pyc.write_bytes(header + marshal.dumps(compile(source, "tampered", "exec")))


# --- sources() ------------------------------------------------------------------------------


def test_sources_lists_shallow_files_first_and_leaves_tests_and_caches_out(tmp_path):
    a, b = tmp_path / "sp" / "pkga", tmp_path / "sp" / "pkgb"
    for path in (
        a / "__init__.py",
        a / "z_top.py",
        a / "sub" / "__init__.py",
        a / "sub" / "deep" / "leaf.py",
        a / "tests" / "test_a.py",
        a / "test" / "test_b.py",
        a / "sub" / "tests" / "test_c.py",
        a / "__pycache__" / "odd.py",
        a / ".hidden" / "h.py",
        b / "__init__.py",
    ):
        _write(path)
    _write(a / "data.txt")
    _write(a / "native.so")
    single = _write(tmp_path / "sp" / "single.py")
    got = sources([str(a), str(b), str(single)])
    assert got == [
        str(single),  # a module given as a root is as shallow as it gets
        str(a / "__init__.py"),
        str(a / "z_top.py"),
        str(b / "__init__.py"),  # the second root's top before the first root's depths
        str(a / "sub" / "__init__.py"),
        str(a / "sub" / "deep" / "leaf.py"),
    ]
    assert sources([str(tmp_path / "nowhere")]) == []


# --- precompile() and read_bytecode_from() --------------------------------------------------


@pytest.fixture(autouse=True)
def _keep_the_test_process_scheduled(monkeypatch):
    """precompile() moves its process to Linux's idle scheduling class, as a helper should. Called
    in this process, it would leave pytest, and every process pytest starts afterwards, idle: any
    other load on the machine would then starve the rest of the suite. The tests that call it
    here get a no-op; the test below runs the real one in a process of its own."""
    monkeypatch.setattr(child, "_yield_cpu", lambda: None)


def test_a_helper_runs_at_idle_priority(tmp_path):
    mod = _write(tmp_path / "m.py", "X = 1\n")
    code = (
        "import os, sys; from envdoctor.core._probe_child import precompile; "
        f"precompile([{str(tmp_path / 'cache')!r}, '0', '1', {str(mod)!r}]); "
        "print(os.sched_getscheduler(0) == os.SCHED_IDLE or os.nice(0) == 19)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


def test_a_precompiled_pyc_in_the_cache_is_what_the_import_runs(tmp_path):
    mod = _write(tmp_path / "src" / "cachedmod.py", "X = 1\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    precompile([str(cache), "0", "1", str(mod)])
    pyc = cache / _cache_name(str(mod))
    assert pyc.is_file(), sorted(str(p) for p in cache.rglob("*"))
    assert not (mod.parent / "__pycache__").exists(), "the user's tree was written to"
    assert pyc.read_bytes()[:4] == importlib.util.MAGIC_NUMBER
    # The code in the cached file, not the source, decides X: proof that the import read it.
    _replace_code(pyc, "X = 2\n")
    got = _import_x(mod.parent, "cachedmod", cache)
    assert got == {"X": 2, "cached": str(pyc)}
    # Without the cache the same interpreter compiles the source.
    assert _import_x(mod.parent, "cachedmod", None)["X"] == 1


def test_a_module_with_its_own_pycache_is_skipped_and_read_from_there(tmp_path):
    mod = _write(tmp_path / "src" / "usualmod.py", "X = 1\n")
    usual = Path(py_compile.compile(str(mod), doraise=True))
    cache = tmp_path / "cache"
    cache.mkdir()
    precompile([str(cache), "0", "1", str(mod)])
    assert list(cache.iterdir()) == [], "precompile compiled a module that had bytecode"
    _replace_code(usual, "X = 3\n")
    assert _import_x(mod.parent, "usualmod", cache) == {"X": 3, "cached": str(usual)}


def test_a_stale_cached_pyc_is_not_trusted(tmp_path):
    mod = _write(tmp_path / "src" / "stalemod.py", "X = 1\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    precompile([str(cache), "0", "1", str(mod)])
    pyc = cache / _cache_name(str(mod))
    _replace_code(pyc, "X = 2\n")
    # The source changes after the helper compiled it (other size, other mtime).
    mod.write_text("X = 30  # edited\n")
    st = pyc.stat()
    os.utime(mod, (st.st_mtime + 10, st.st_mtime + 10))
    assert _import_x(mod.parent, "stalemod", cache)["X"] == 30


def test_precompile_skips_what_the_cache_has_and_what_does_not_compile(tmp_path):
    pkg = tmp_path / "sp" / "pkg"
    _write(pkg / "__init__.py", "")
    _write(pkg / "a_broken.py", "def (:\n")
    _write(pkg / "b.py", "Y = 1\n")
    _write(pkg / "sub" / "c.py", "Z = 1\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    precompile([str(cache), "0", "1", str(pkg)])
    names = {p: cache / _cache_name(str(pkg / p)) for p in ("__init__.py", "a_broken.py", "b.py", "sub/c.py")}
    assert not names["a_broken.py"].exists()
    assert all(names[p].is_file() for p in ("__init__.py", "b.py", "sub/c.py"))
    assert not list(cache.rglob("*.tmp")), "a temporary file was left in the cache"
    # A second helper pass leaves what is there alone.
    _replace_code(names["b.py"], "Y = 2\n")
    mark = names["b.py"].read_bytes()
    precompile([str(cache), "0", "1", str(pkg)])
    assert names["b.py"].read_bytes() == mark


def test_helpers_split_the_work_by_index(tmp_path):
    pkg = tmp_path / "sp" / "pkg"
    files = [_write(pkg / f"m{i}.py", f"V = {i}\n") for i in range(6)]
    caches = []
    for index in range(2):
        cache = tmp_path / f"cache{index}"
        cache.mkdir()
        precompile([str(cache), str(index), "2", str(pkg)])
        caches.append({f for f in files if (cache / _cache_name(str(f))).exists()})
    assert caches[0] and caches[1] and not caches[0] & caches[1]
    assert caches[0] | caches[1] == set(files)


def test_precompile_never_recreates_a_removed_cache(tmp_path):
    mod = _write(tmp_path / "src" / "m.py", "X = 1\n")
    cache = tmp_path / "run" / "bytecode"
    cache.parent.mkdir()
    precompile([str(cache), "0", "1", str(mod)])  # the run ended before the helper started
    assert list(cache.parent.iterdir()) == []
    for argv in ([], [str(tmp_path)], [str(tmp_path), "x", "1"]):  # and bad arguments never raise
        precompile(argv)


def test_precompile_stops_when_the_cache_goes_while_it_works(tmp_path, monkeypatch):
    pkg = tmp_path / "sp" / "pkg"
    for i in range(5):
        _write(pkg / f"m{i}.py", f"V = {i}\n")
    cache = tmp_path / "run" / "bytecode"
    cache.mkdir(parents=True)
    listed = []

    def sources_then_end_the_run(roots):
        found = sources(roots)
        listed.extend(found)
        os.rmdir(cache)  # the run ends (its worker's directory is removed) after the helper opened the cache
        return found

    compiled = []
    real_pyc = child._pyc
    monkeypatch.setattr(child, "sources", sources_then_end_the_run)
    monkeypatch.setattr(child, "_pyc", lambda path: compiled.append(path) or real_pyc(path))
    precompile([str(cache), "0", "1", str(pkg)])
    assert len(listed) == 5
    assert len(compiled) == 1, "the helper went on compiling for a run that had ended"
    assert list((tmp_path / "run").iterdir()) == [], "the helper recreated the removed cache"


# --- helper_count() and missing_roots() -----------------------------------------------------


@pytest.mark.parametrize(
    ("env", "cpus", "want"),
    [
        ({}, 2, 0),
        ({}, 4, 0),
        ({}, 5, 2),
        ({}, 16, 12),
        ({}, 64, 12),
        ({"ENVDOCTOR_PRECOMPILE": "auto"}, 8, 5),
        ({"ENVDOCTOR_PRECOMPILE": ""}, 16, 12),
        ({"ENVDOCTOR_PRECOMPILE": "0"}, 64, 0),
        ({"ENVDOCTOR_PRECOMPILE": "3"}, 2, 3),
        ({"ENVDOCTOR_PRECOMPILE": " 2 "}, 64, 2),
        ({"ENVDOCTOR_PRECOMPILE": "500"}, 2, 64),
    ],
)
def test_helper_count(env, cpus, want):
    assert bytecode.helper_count(env, cpus) == want


def test_helper_count_uses_this_machines_cpus_by_default():
    cpus = len(os.sched_getaffinity(0))
    assert bytecode.helper_count({}) == bytecode.helper_count({}, cpus)


def fake_torch(root: Path, init: str = "__version__ = '0.0.fake'\n", *, compiled: bool = False) -> Path:
    """A package named torch under ``root`` (which goes on PYTHONPATH), with a late module."""
    pkg = root / "torch"
    _write(pkg / "__init__.py", init)
    _write(pkg / "version.py", "cuda = None\nhip = None\ngit_version = 'fake'\n")
    _write(pkg / "late.py", "X = 1\n")
    if compiled:
        for f in pkg.glob("*.py"):
            py_compile.compile(str(f), doraise=True)
    return pkg


def _missing_roots_with(pythonpath: Path, **extra) -> list[str]:
    code = "import json; from envdoctor.core.bytecode import missing_roots; print(json.dumps(missing_roots()))"
    env = {**os.environ, "PYTHONPATH": str(pythonpath), "PYTHONDONTWRITEBYTECODE": "1", **extra}
    if "PYTHONPYCACHEPREFIX" not in extra:
        env.pop("PYTHONPYCACHEPREFIX", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, cwd=str(pythonpath))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_missing_roots_names_torch_and_its_companions_without_bytecode(tmp_path):
    sp = tmp_path / "sp"
    torch = fake_torch(sp)
    _write(sp / "sympy.py", "")  # a single-module companion without bytecode
    _write(sp / "networkx" / "__init__.py", "")  # a companion with bytecode: left alone
    py_compile.compile(str(sp / "networkx" / "__init__.py"), doraise=True)
    roots = _missing_roots_with(sp)
    assert roots[0] == str(torch)
    assert [r for r in roots if r.startswith(str(sp))] == [str(torch), str(sp / "sympy.py")]
    assert all(os.path.isabs(r) for r in roots)


@pytest.mark.slow
def test_missing_roots_is_empty_when_torch_has_bytecode_or_a_prefix_redirects_it(tmp_path):
    fake_torch(tmp_path / "built", compiled=True)
    _write(tmp_path / "built" / "sympy.py", "")  # would be listed, but torch itself is fine
    assert _missing_roots_with(tmp_path / "built") == []
    fake_torch(tmp_path / "bare")
    assert _missing_roots_with(tmp_path / "bare", PYTHONPYCACHEPREFIX=str(tmp_path / "prefix")) == []


def test_installed_finds_without_importing():
    assert bytecode.installed("json")
    assert not bytecode.installed("envdoctor_no_such_module_" + uuid.uuid4().hex[:8])
    assert not bytecode.installed("")


def _big_package(root: Path, modules: int = 400) -> Path:
    """A package slow enough to compile that helpers are still at work when they are stopped."""
    pkg = root / "torch"
    body = "".join(f"def f{j}(x):\n    return [x + {j} for _ in range(3)]\n" for j in range(300))
    for i in range(modules):
        _write(pkg / f"mod{i:03d}.py", body)
    _write(pkg / "__init__.py", "")
    return pkg


def _helpers_of(worker_pid: int) -> list[psutil.Process]:
    return [p for p in psutil.Process(worker_pid).children() if "helper()" in _cmdline(p)]


def _still_running(procs: list[psutil.Process], within: float) -> list[psutil.Process]:
    """Those of ``procs`` still running after ``within`` seconds. A dead helper whose worker is
    gone is reaped by PID 1, which may take a second or more (1.5 s on the CPU machine): a
    zombie has ended."""
    end = time.monotonic() + within
    while True:
        running = [p for p in procs if not _ended(p.pid)]
        if not running or time.monotonic() > end:
            return running
        time.sleep(0.02)


def _worker_with_helpers(tmp_path, pkg: Path, count: int = 2):
    """A real probe worker told to start ``count`` helpers over ``pkg``, its cache in its directory."""
    from envdoctor.core.probe import _run_dir, _Worker

    root = _run_dir()
    cache = os.path.join(root, "bytecode")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPYCACHEPREFIX", None)
    worker = _Worker(env, [REPO], root=root, bytecode_cache=cache, precompile=(count, [str(pkg)]))
    end = time.monotonic() + 10
    while not list(Path(cache).rglob("*.pyc")) and time.monotonic() < end:
        time.sleep(0.02)
    return worker, Path(root), Path(cache)


def test_the_worker_starts_its_helpers_in_its_own_group_and_they_go_with_it(tmp_path):
    pkg = _big_package(tmp_path / "sp")
    worker, root, cache = _worker_with_helpers(tmp_path, pkg)
    try:
        assert list(cache.rglob("*.pyc")), "the helpers compiled nothing"
        helpers = _helpers_of(worker.proc.pid)
        assert len(helpers) == 2, "the worker did not start the two helpers it was asked for"
        # In the worker's process group: envdoctor kills that group, never a helper it might have lost.
        assert {os.getpgid(h.pid) for h in helpers} == {worker.proc.pid}
        assert PRECOMPILE_ENV not in helpers[0].environ() and child.BYTECODE_ENV not in helpers[0].environ()
    finally:
        worker.close()
    assert _still_running(helpers, 5) == [], "a helper outlived its worker"
    assert not root.exists(), "the worker's directory (the bytecode cache) outlived it"
    assert not (pkg / "__pycache__").exists()


def test_helpers_die_with_their_worker_even_when_only_the_worker_is_killed(tmp_path):
    pkg = _big_package(tmp_path / "sp")
    worker, root, _ = _worker_with_helpers(tmp_path, pkg, count=1)  # one helper: about 6 s of work here
    try:
        helpers = _helpers_of(worker.proc.pid)
        assert len(helpers) == 1
        os.kill(worker.proc.pid, signal.SIGKILL)  # the worker alone (an OOM kill), not its group
        assert _still_running(helpers, 2) == [], "a helper outlived its worker"
    finally:
        worker.close()
    assert not root.exists()


def test_helpers_that_finished_are_reaped_while_the_worker_lives(tmp_path):
    pkg = tmp_path / "sp" / "torch"
    for i in range(4):
        _write(pkg / f"m{i}.py", f"V = {i}\n")
    worker, root, cache = _worker_with_helpers(tmp_path, pkg)
    try:
        end = time.monotonic() + 10
        while len(list(cache.rglob("*.pyc"))) < 4 and time.monotonic() < end:
            time.sleep(0.02)
        while psutil.Process(worker.proc.pid).children() and time.monotonic() < end:
            time.sleep(0.02)
        # Done and gone, not zombies of the worker for the rest of the run.
        assert [(p.pid, p.status()) for p in psutil.Process(worker.proc.pid).children()] == []
    finally:
        worker.close()
    assert not root.exists()


def test_no_helper_starts_once_the_worker_began_to_end(tmp_path, monkeypatch):
    """_end takes the spawning lock for good before it signals the group, so a helper the helper
    thread was about to start cannot miss that signal and write while the directory goes."""
    import subprocess as sp

    started = []

    class FakePopen:
        def __init__(self, argv, **kwargs):
            started.append(argv)

        def wait(self):
            return 0

    monkeypatch.setattr(sp, "Popen", FakePopen)
    assert child._spawning.acquire(timeout=1)  # as _end does
    try:
        thread = threading.Thread(target=child._run_helpers, args=(str(tmp_path / "c"), 3, [str(tmp_path)]), daemon=True)
        thread.start()
        thread.join(0.5)
        assert thread.is_alive() and started == [], "a helper started after the worker began to end"
    finally:
        child._spawning.release()
    thread.join(5)
    assert len(started) == 3  # (only once released: the lock is what held them)


def test_a_helper_whose_worker_is_already_gone_compiles_nothing(tmp_path):
    mod = _write(tmp_path / "src" / "m.py", "X = 1\n")
    cache = tmp_path / "bytecode"
    cache.mkdir()
    gone = subprocess.Popen([sys.executable, "-c", ""])
    gone.wait()
    not_my_parent = str(gone.pid)  # the worker that started it died before the helper ran
    code = f"import sys; sys.path.insert(0, {REPO!r}); from envdoctor.core._probe_child import helper; helper()"
    done = subprocess.run(
        [sys.executable, "-c", code, not_my_parent, str(cache), "0", "1", str(mod)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert list(cache.iterdir()) == []
    parent = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import os, subprocess, sys; subprocess.run([sys.executable, '-c', {code!r}, str(os.getpid()), *sys.argv[1:]])",
            str(cache),
            "0",
            "1",
            str(mod),
        ],
        timeout=60,
    )
    assert parent.returncode == 0
    assert (cache / _cache_name(str(mod))).exists(), "with its real parent the helper compiles"


def test_remove_tree_removes_what_a_dying_process_adds_while_it_runs(tmp_path, monkeypatch):
    root = tmp_path / "run"
    _write(root / "bytecode" / "a.pyc", "x")
    real = shutil.rmtree
    calls = []

    def rmtree_racing_a_late_write(path, ignore_errors=False):
        calls.append(path)
        if len(calls) == 1:  # a killed helper finishes its last system call after rmtree listed the directory
            real(Path(path) / "bytecode", ignore_errors=True)
            _write(Path(path) / "bytecode" / "late.pyc", "x")
            return
        real(path, ignore_errors=ignore_errors)

    monkeypatch.setattr(child.shutil, "rmtree", rmtree_racing_a_late_write)
    child.remove_tree(str(root))
    assert not root.exists() and len(calls) == 2


def test_remove_tree_gives_up_after_its_tries(tmp_path, monkeypatch):
    root = _write(tmp_path / "run" / "x", "x").parent
    calls = []
    monkeypatch.setattr(child.shutil, "rmtree", lambda path, ignore_errors=False: calls.append(path))
    monkeypatch.setattr(child.time, "sleep", lambda s: None)
    child.remove_tree(str(root), tries=3)
    assert len(calls) == 3 and root.exists()


# --- end to end: a prestarted worker reads torch's bytecode from the run's cache --------------

WHERE_BODY = '''
import os, sys, time

def where(wait=20.0):
    """Where the worker looked for torch's bytecode, once the helpers wrote torch.late's."""
    import importlib._bootstrap_external as external  # what the import system calls (patched)
    import torch

    late = external.cache_from_source(os.path.join(os.path.dirname(torch.__file__), "late.py"))
    end = time.monotonic() + wait
    while not os.path.exists(late) and time.monotonic() < end:
        time.sleep(0.05)
    import torch.late
    return {
        "preloaded": "torch" in sys.modules,
        "torch_cached": torch.__cached__,
        "torch_cached_exists": os.path.exists(torch.__cached__),
        "late_cached": torch.late.__cached__,
        "late_exists": os.path.exists(torch.late.__cached__),
        "env": os.environ.get("ENVDOCTOR_BYTECODE_CACHE"),
        "pid": os.getpid(),
    }
'''

DRIVER = """
import json, os, sys, time
import psutil
from envdoctor.core.probe import ProbeClient

def helpers(wait=10.0):
    # The helpers the prestarted worker started (in its process group), each seen at least once:
    # one may have ended (a zombie has no command line) before the other started.
    worker = c._lanes["main"].worker
    end = time.monotonic() + wait
    found = set()
    while True:
        for p in psutil.Process(worker.proc.pid).children():
            try:
                if "helper()" in " ".join(p.cmdline()):
                    found.add(p.pid)
            except psutil.Error:
                pass
        if len(found) >= 2 or time.monotonic() > end:
            return sorted(found)
        time.sleep(0.02)


def living_descendants():
    left = []
    for p in psutil.Process().children(recursive=True):
        try:
            if p.status() != psutil.STATUS_ZOMBIE:
                left.append(p.pid)
        except psutil.NoSuchProcess:
            pass
    return left


c = ProbeClient(extra_path=[sys.argv[1]])
c.prestart()
if sys.argv[2] == "close-at-once":
    running = helpers()
    c.close()
    print(json.dumps({"running": running, "children": living_descendants(), "cache": c.bytecode_cache}))
    sys.exit(0)
info = {"cache": c.bytecode_cache, "helpers": helpers(), "started_after_prestart": c.workers_started}
info["value"] = c.call("wherebody:where", timeout=60)
info["workers_started"] = c.workers_started
info["cache_existed"] = bool(c.bytecode_cache) and os.path.isdir(c.bytecode_cache)
c.close()
info["cache_after"] = bool(c.bytecode_cache) and os.path.exists(c.bytecode_cache)
info["children"] = living_descendants()
print(json.dumps(info))
"""


def _drive(tmp_path, sp, *args: str) -> tuple[dict, Path, str]:
    """Run DRIVER (a ProbeClient with two forced helpers over the bytecode-less packages under
    ``sp``) in a process of its own; (what it printed, its TMPDIR, the marker its children carry)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    marker = uuid.uuid4().hex
    env = {
        **os.environ,
        "PYTHONPATH": str(sp),
        "PYTHONDONTWRITEBYTECODE": "1",
        "ENVDOCTOR_PRECOMPILE": "2",
        "TMPDIR": str(tmp),
        "ENVDOCTOR_TEST_MARKER": marker,
    }
    env.pop("PYTHONPYCACHEPREFIX", None)
    driver = _write(tmp_path / "driver.py", DRIVER)
    done = subprocess.run([sys.executable, str(driver), *args], capture_output=True, text=True, env=env, timeout=120, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), tmp, marker


def test_a_prestarted_worker_reads_torch_bytecode_from_the_runs_cache(tmp_path):
    sp = tmp_path / "sp"
    torch = fake_torch(sp)
    # Enough for the helpers to be at work for a while (so the driver sees both), compiled after
    # torch's top modules (deeper ones come last), so torch.late's bytecode is not delayed.
    _big_package(torch, modules=40)
    bodies = tmp_path / "bodies"
    _write(bodies / "wherebody.py", WHERE_BODY)
    info, tmp, marker = _drive(tmp_path, sp, str(bodies), "call")
    cache = info["cache"]
    assert cache and cache.startswith(str(tmp) + os.sep) and os.path.basename(cache) == "bytecode"
    assert len(info["helpers"]) == 2 and info["started_after_prestart"] == 1
    value = info["value"]
    assert value["preloaded"] and value["env"] == cache
    assert value["torch_cached"].startswith(cache + os.sep), value
    assert value["late_cached"].startswith(cache + os.sep) and value["late_exists"], value
    assert info["workers_started"] == 1, "the call did not use the prestarted worker"
    assert info["cache_existed"] and not info["cache_after"]
    assert info["children"] == []
    assert not (torch / "__pycache__").exists(), "the user's torch was written to"
    assert _wait_gone(marker) == [], "a helper or worker outlived the run"
    assert os.listdir(tmp) == [], "the run's temporary files outlived it"


def test_close_right_after_prestart_stops_the_helpers_and_removes_their_cache(tmp_path):
    sp = tmp_path / "sp"
    _big_package(sp)
    info, tmp, marker = _drive(tmp_path, sp, str(tmp_path), "close-at-once")
    assert info["cache"] and len(info["running"]) == 2
    assert info["children"] == [], "close() left a helper or worker running"
    assert _marked(marker) == []
    assert os.listdir(tmp) == []
    assert not (sp / "torch" / "__pycache__").exists()
