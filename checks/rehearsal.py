"""Rehearse the runtime user at build time: ``envdoctor check --as-user UID[:GID]``.

Images are built and checked as root but run as an arbitrary UID (OpenShift, Kubernetes
``runAsUser``) with no passwd entry and ``HOME=/``: then ``PermissionError: [Errno 13]
Permission denied: '/.triton'`` and ``KeyError: 'getpwuid(): uid not found: 1000680000'``. As
root, envdoctor re-runs the cache, toolchain and compile checks as that user in a child
``envdoctor check`` (``HOME=/``, no ``USER``/``LOGNAME``), and lists every path the stack
writes at run time with whether that user can write it, and the ``ENV`` line that fixes it.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

from envdoctor import Item, Status, Unavailable, check, fact, fail, ok, parse_as_user, skip
from envdoctor import run_command as run
from envdoctor_checks._dirs import probe_dir

TAG = "rehearsal"
# What the runtime user re-runs: the caches, the compilers, and one real compile.
REHEARSED = (
    "triton.cache_dir",
    "compile.inductor_cache",
    "triton.c_compiler",
    "compile.cxx_compiler",
    "toolchain.python_h",
    "smoke.compile",
    "rehearsal.runtime_paths",
)
# The rehearsal's child gets the run's own time limit less this margin as its --timeout, so
# that on a slow machine it reports which check ran out of time (and its report arrives)
# before the run's deadline, instead of being killed and reported as "interrupted".
MARGIN = 15.0
# The ENV line each unwritable path needs (a writable place every UID has).
FIXES = {
    "Triton cache": "TRITON_CACHE_DIR=/tmp/triton",
    "Inductor cache": "TORCHINDUCTOR_CACHE_DIR=/tmp/torchinductor",
    "user cache (~/.cache)": "XDG_CACHE_HOME=/tmp/.cache",
    "torch extensions": "TORCH_EXTENSIONS_DIR=/tmp/torch_extensions",
    "temporary files": "TMPDIR=/tmp",
}


parse_user = parse_as_user  # "UID" or "UID:GID" -> (uid, gid); the gid defaults to 0 (OpenShift's root group)


def runtime_env(env, uid: int) -> dict:
    """The environment a container runtime gives a UID without a passwd entry: HOME=/, no
    USER/LOGNAME. An XDG_CACHE_HOME under the build user's home goes with it; one set
    elsewhere (``ENV XDG_CACHE_HOME=/tmp/.cache`` in the Dockerfile, the fix this check
    suggests) is the image's and stays."""
    home = env.get("HOME") or ""
    cache = env.get("XDG_CACHE_HOME") or ""
    own_cache = bool(home) and home != "/" and (cache == home or cache.startswith(home.rstrip("/") + "/"))
    drop = {"USER", "LOGNAME", "HOME", *(("XDG_CACHE_HOME",) if own_cache else ())}
    out = {k: v for k, v in env.items() if k not in drop}
    out["HOME"] = "/"
    return out


@fact("runtime_paths")
def runtime_paths(env) -> list:
    """Every directory torch, Triton and Inductor write to at run time, resolved as they do."""
    home = os.path.expanduser("~") if env.get("HOME") is None else env["HOME"]
    cache = env.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    tmp = env.get("TMPDIR") or tempfile.gettempdir()
    paths = [
        ("Triton cache", env.get("TRITON_CACHE_DIR") or os.path.join(env.get("TRITON_HOME") or home, ".triton", "cache")),
        (
            "Inductor cache",
            env.get("TORCHINDUCTOR_CACHE_DIR") or os.path.join(tmp, f"torchinductor_{env.get('USER') or 'uid_' + str(os.getuid())}"),
        ),
        ("user cache (~/.cache)", cache),
        ("torch extensions", env.get("TORCH_EXTENSIONS_DIR") or os.path.join(cache, "torch_extensions")),
        ("temporary files", tmp),
    ]
    return [{"what": what, "path": path, **probe_dir(path).__dict__} for what, path in paths]


@check("rehearsal.runtime_paths", tags=(TAG,))
def runtime_paths_check(runtime_paths):
    """Every path the stack writes at run time is writable by this user"""
    items = [
        Item(p["what"], Status.PASS if p["writable"] else Status.FAIL, f"{p['path']}" + ("" if p["writable"] else f": {p['error']}"))
        for p in runtime_paths
    ]
    bad = [p for p in runtime_paths if not p["writable"]]
    if not bad:
        return ok(f"all {len(items)} runtime paths are writable", items=items)
    env_line = "ENV " + " ".join(FIXES[p["what"]] for p in bad)
    return fail(f"not writable: {', '.join(p['what'] + ' ' + p['path'] for p in bad)}", env_line, items=items)


def blocked_at(path: str, uid: int, gid: int) -> str | None:
    """The first directory on the way to ``path`` that ``uid``/``gid`` cannot enter (or the file
    itself if it cannot execute it), judged from the permission bits; None when all are open."""
    real = os.path.realpath(path)
    parts = real.split(os.sep)
    for i in range(2, len(parts) + 1):
        here = os.sep.join(parts[:i]) or os.sep
        try:
            st = os.stat(here)
        except OSError:
            return here
        bits = 0o100 if st.st_uid == uid else 0o010 if st.st_gid == gid else 0o001
        if not st.st_mode & bits:
            return here
    return None


@fact("rehearsal")
def rehearsal(options, env) -> dict:
    """The rehearsed checks' results, run as ``--as-user`` in a child envdoctor."""
    spec = (options or {}).get("as_user")
    if not spec:
        raise Unavailable("no --as-user given")
    uid, gid = parse_user(spec)
    if os.geteuid() != 0:
        raise Unavailable("switching to another user needs root: rehearse during the image build, where it runs as root")
    blocked = blocked_at(sys.executable, uid, gid)
    if blocked:
        return {"uid": uid, "gid": gid, "results": [], "error": f"UID {uid} cannot run {sys.executable}: it cannot enter {blocked}"}
    with tempfile.TemporaryDirectory(prefix="envdoctor-rehearsal-") as tmp:
        os.chmod(tmp, 0o777)
        out = os.path.join(tmp, "report.json")
        limit = float((options or {}).get("timeout") or 300.0)  # every run sets it; 300 s is --timeout's default
        argv = [sys.executable, "-m", "envdoctor", "check", "--no-color", "--format", "json", "-o", out, "--select", ",".join(REHEARSED)]
        argv += ["--timeout", f"{max(limit - MARGIN, limit / 2):.0f}"]
        done = run(argv, timeout=limit, env=runtime_env(env, uid), cwd=tmp, user=uid, group=gid)
        try:
            with open(out, encoding="utf-8") as f:
                report = json.load(f)
        except (OSError, ValueError):
            return {"uid": uid, "gid": gid, "results": [], "error": f"the rehearsal as UID {uid} gave no report: {done.describe()}"}
    return {"uid": uid, "gid": gid, "results": report.get("results", []), "error": ""}


@check("rehearsal.as_user", tags=(TAG, "build"))
def as_user(rehearsal):
    """The caches, compilers and a real compile work as the runtime user (no passwd entry, HOME=/)"""
    who = f"UID {rehearsal['uid']}:{rehearsal['gid']} (no passwd entry, HOME=/)"
    results = rehearsal["results"]
    if rehearsal.get("error"):
        return fail(
            f"as {who}: {rehearsal['error']}",
            "Install Python and the stack where every user can read them (not under /root or a 0700 home), e.g. a venv in /opt",
        )
    if not results:
        return skip(f"the rehearsal as {who} ran no checks")
    items = [Item(r["id"], Status(r["status"]), r.get("message", "")) for r in results]
    bad = [r for r in results if r["status"] in ("fail", "error", "warn")]
    paths = next((r for r in results if r["id"] == "rehearsal.runtime_paths"), None)
    if not bad:
        return ok(f"as {who}: {len(results)} checks pass, every runtime path is writable", items=items)
    hints = [r.get("hint") for r in bad if r.get("hint")]
    env_line = paths.get("hint") if paths and paths["status"] == "fail" else ""
    hint = env_line or (hints[0] if hints else "Rerun as that user: envdoctor check -v")
    first = "; ".join(f"{r['id']}: {r.get('message', '')}" for r in bad[:2])
    return fail(f"as {who}, {len(bad)} check(s) fail: {first}", hint, items=items)
