"""The probe worker's main loop. Runs in a child interpreter, never in the doctor itself.

Reads one JSON request per line on stdin ({"target": "module:function", "kwargs": {...}}),
calls the function and writes one JSON response line to the file descriptor given as argv[1],
so that whatever the target prints (torch warnings, compiler output) cannot corrupt the
protocol. Kept free of envdoctor imports so it starts fast and cannot be broken by them.

It also holds the two halves of the run's bytecode cache (see ``envdoctor.core.bytecode``):
:func:`precompile`, run by helper processes the worker starts in its own process group when
``ENVDOCTOR_PRECOMPILE_JOB`` asks (so they die with it, before its directory is removed), and
:func:`read_bytecode_from`, which the worker applies at start when ``ENVDOCTOR_BYTECODE_CACHE``
names the cache.
"""

import ctypes
import importlib
import importlib.util
import json
import os
import shutil
import signal
import sys
import threading
import time
import traceback

_PR_SET_PDEATHSIG = 1


def remove_tree(path, tries=20):
    """Remove ``path`` and everything in it. A process killed a moment ago may still finish the
    system call it was in (a starved one, at idle priority, in particular) and add an entry after
    rmtree listed its directory, which then stays: try again, a bounded number of times."""
    for _ in range(tries):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            return
        time.sleep(0.05)


def remove_all(root, plan=None):
    """Remove the worker's directory and what ``plan`` names: its cache subdirectories inside the
    user's locations ("trees"), then the parents their creation made ("prune"), if empty."""
    remove_tree(root)
    for tree in (plan or {}).get("trees", ()):
        remove_tree(tree)
    for parent in (plan or {}).get("prune", ()):
        try:
            os.rmdir(parent)
        except OSError:
            pass  # not empty (someone else writes there now) or gone already


def _end(root, plan=None):
    """Take the worker down with everything it started, its temporary directory and its caches."""
    _spawning.acquire(timeout=2)  # kept: no bytecode helper starts after the group was told to end
    try:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.killpg(0, signal.SIGTERM)  # compilers, compile workers, bytecode helpers: none writes on
        time.sleep(0.2)
    except OSError:
        pass
    if root:
        remove_all(root, plan)
    try:
        os.killpg(0, signal.SIGKILL)  # stragglers, and this process
    finally:
        os._exit(1)


def _watch(control_fd, root, plan):
    """EOF on the control pipe: envdoctor is gone (however it died) or has let this worker go."""
    while True:
        try:
            if not os.read(control_fd, 1):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    _end(root, plan)


def _guard(control_fd, parent, root, plan=None):
    """Die with the parent: its death signal (SIGTERM, so the handler can clean up), a check that
    it did not die before prctl ran, and the control-pipe watchdog for when prctl is unavailable
    or the signal cannot be handled (the main thread stuck in C code)."""
    signal.signal(signal.SIGTERM, lambda *_: _end(root, plan))
    try:
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        _end(root, plan)
    threading.Thread(target=_watch, args=(control_fd, root, plan), name="envdoctor-parent-watch", daemon=True).start()


# --- the run's bytecode cache ------------------------------------------------------------------
# Where a package ships without .pyc files and Python may not write them (PYTHONDONTWRITEBYTECODE,
# a read-only site-packages), every process compiles each module it imports from source: about
# 2,500 modules for torch and torch.compile. Helper processes compile them side by side into a
# directory of the run; the worker reads a module's bytecode from there when the usual
# __pycache__ file is missing. Python validates each file against its source (mtime and size) as
# always, so a stale or half-written one is recompiled, never trusted.

BYTECODE_ENV = "ENVDOCTOR_BYTECODE_CACHE"
_spawning = threading.Lock()  # held while a helper starts; _end takes it for good
# What the worker's helpers compile: JSON {"count": N, "roots": [directory or module, ...]}.
PRECOMPILE_ENV = "ENVDOCTOR_PRECOMPILE_JOB"
_SKIP_DIRS = {"__pycache__", "tests", "test"}


def _cache_name(source, usual=None):
    """The bytecode's path inside the cache, relative to it: the source's absolute directory
    and the file name Python would use beside it (``usual``, that path, when known)."""
    name = os.path.basename(usual or importlib.util.cache_from_source(source))
    return os.path.join(os.path.abspath(os.path.dirname(source)).lstrip(os.sep), name)


def read_bytecode_from(cache):
    """Make the import system look in ``cache`` for bytecode it does not find beside a source."""
    import importlib._bootstrap_external as external  # the module the import system runs

    plain = external.cache_from_source

    def cache_from_source(path, debug_override=None, *, optimization=None):
        usual = plain(path, debug_override, optimization=optimization)
        if sys.pycache_prefix is not None or os.path.exists(usual):
            return usual
        return os.path.join(cache, _cache_name(path, usual))

    external.cache_from_source = cache_from_source


def sources(roots):
    """The .py files under ``roots`` (package directories or single modules), shallow ones first
    (a package's top modules are imported before its deep ones), tests left out."""
    found = []
    for order, root in enumerate(roots):
        if os.path.isfile(root):
            found.append((0, order, root))
            continue
        base = os.path.dirname(root.rstrip(os.sep))
        for directory, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
            depth = directory[len(base) :].count(os.sep)
            found += [(depth, order, os.path.join(directory, f)) for f in files if f.endswith(".py")]
    return [path for _, _, path in sorted(found)]


def _pyc(source):
    """Timestamp-validated bytecode of ``source`` (the format of PEP 552, as the importer writes it)."""
    import marshal

    st = os.stat(source)
    with open(source, "rb") as f:
        code = compile(f.read(), source, "exec", dont_inherit=True)
    header = importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")
    header += (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    return header + marshal.dumps(code)


class _Cache:
    """Writes inside the cache directory through a descriptor of it: once the directory is
    removed (the run ended, or its worker went), nothing can recreate it."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        self.made = set()

    def has(self, name):
        try:
            os.stat(name, dir_fd=self.fd)
            return True
        except OSError:
            return False

    def write(self, name, data):
        parts = name.split(os.sep)
        for i in range(1, len(parts)):
            sub = os.sep.join(parts[:i])
            if sub not in self.made:
                try:
                    os.mkdir(sub, dir_fd=self.fd)
                except FileExistsError:
                    pass
                self.made.add(sub)
        tmp = f"{name}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=self.fd)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)


def precompile(argv=None):
    """A helper: ``cache index count root...``; compiles every ``count``-th source from ``index``
    into ``cache``, skipping modules that already have bytecode. Never raises: a module it
    cannot compile is compiled by the importer, as it would have been anyway."""
    argv = sys.argv[1:] if argv is None else argv
    _yield_cpu()
    try:
        cache = _Cache(argv[0])
        index, count = int(argv[1]), int(argv[2])
    except (OSError, IndexError, ValueError):
        return
    for path in sources(argv[3:])[index::count]:
        try:
            name = _cache_name(path)
            if os.path.exists(importlib.util.cache_from_source(path)) or cache.has(name):
                continue
            cache.write(name, _pyc(path))
        except FileNotFoundError:
            if not _alive(cache.fd):
                return  # the cache is gone: the run is over
        except (OSError, ValueError, SyntaxError, MemoryError, RecursionError):
            continue


def start_helpers(cache, job):
    """The worker's part: make ``cache`` and start the helpers ``job`` asks for, in this process's
    group, so that whatever takes the worker down (envdoctor killing its group, its own _end)
    takes them too, before the directory is removed; envdoctor never holds a handle that a
    signal could make it lose. They start from a thread of their own, so the worker's import of
    torch does not wait for them; that thread lives until the last one ended (a helper's
    parent-death signal fires when the thread that started it ends) and reaps each one.
    Returns that thread, or None when ``job`` is unreadable or the cache cannot be made."""
    try:
        spec = json.loads(job)
        count, roots = int(spec["count"]), [str(r) for r in spec["roots"]]
        os.mkdir(cache)
    except (ValueError, KeyError, TypeError, OSError):
        return None
    thread = threading.Thread(target=_run_helpers, args=(cache, count, roots), name="envdoctor-helpers", daemon=True)
    thread.start()
    return thread


def _run_helpers(cache, count, roots):
    import subprocess

    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = f"import sys; sys.path.insert(0, {here!r}); from envdoctor.core._probe_child import helper; helper()"
    env = {k: v for k, v in os.environ.items() if k not in (BYTECODE_ENV, PRECOMPILE_ENV)}
    helpers = []
    for index in range(count):
        argv = [sys.executable, "-c", code, str(os.getpid()), cache, str(index), str(count), *roots]
        try:
            with _spawning:
                helpers.append(
                    subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
                )
        except (OSError, subprocess.SubprocessError):
            break
    for proc in helpers:
        proc.wait()


def helper(argv=None):
    """A helper process: ``parent cache index count root...``. Dies with the worker that started
    it (parent-death signal, and a check that the worker did not die first), then precompiles."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        parent = int(argv[0])
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (IndexError, ValueError, OSError, AttributeError):
        return
    if os.getppid() != parent:
        return
    precompile(argv[1:])


def _yield_cpu():
    """Run only on CPUs nothing else wants (the worker importing torch; a training job beside a
    health check): Linux's idle scheduling class, else the lowest nice level."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        try:
            os.nice(19)
        except OSError:
            pass


def _alive(fd):
    """Whether the directory behind ``fd`` still exists (has a link)."""
    try:
        return os.fstat(fd).st_nlink > 0
    except OSError:
        return False


def _plan(text):
    """The cleanup plan envdoctor passed (core.probe.cleanup_plan); an unreadable one is none."""
    try:
        plan = json.loads(text)
        return {k: [str(p) for p in plan.get(k, ())] for k in ("trees", "prune")}
    except (ValueError, TypeError, AttributeError):
        return None


def _respond(out, payload):
    try:
        text = json.dumps(payload, default=repr)
    except (TypeError, ValueError) as e:
        text = json.dumps({"ok": False, "exc_type": "TypeError", "message": f"result is not JSON: {e}"})
    out.write(text + "\n")
    out.flush()


def main(argv=None):
    argv = sys.argv if argv is None else argv
    job = os.environ.pop(PRECOMPILE_ENV, None)  # not for anything the worker starts itself
    if os.environ.get(BYTECODE_ENV):
        read_bytecode_from(os.environ[BYTECODE_ENV])
    root = plan = None
    if len(argv) >= 5:  # result fd, control fd, parent pid, the run's temporary directory[, cleanup plan]
        root = argv[4]
        plan = _plan(argv[5]) if len(argv) >= 6 else None
        _guard(int(argv[2]), int(argv[3]), root, plan)
    if job and os.environ.get(BYTECODE_ENV):
        start_helpers(os.environ[BYTECODE_ENV], job)
    out = os.fdopen(int(argv[1]), "w", encoding="utf-8")
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            module, _, name = req["target"].partition(":")
            func = getattr(importlib.import_module(module), name)
            value = func(**req.get("kwargs", {}))
            payload = {"ok": True, "value": value}
        except BaseException as e:  # noqa: BLE001 - everything is reported to the parent
            payload = {
                "ok": False,
                "exc_type": type(e).__name__,
                "message": str(e)[:4000],
                "traceback": traceback.format_exc()[-6000:],
            }
        sys.stdout.flush()
        sys.stderr.flush()
        _respond(out, payload)
    if root:
        _end(root, plan)  # stdin closed: envdoctor let this worker go (or died); leave nothing behind


if __name__ == "__main__":
    main()
