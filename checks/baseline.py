"""Conformance to what the image was built with: a baseline file, or a pinned lock file.

A later ``pip install`` in an image silently swaps the CUDA torch for a CPU one (``+cu130`` →
``+cpu``), replaces the Triton torch pinned, or overwrites a library file. ``envdoctor baseline
FILE`` records, at build time, every fact the checks below take (besides ``baseline``
itself); ``envdoctor check --baseline FILE`` compares this environment with it, and ``--lock
FILE`` compares it with the ``==`` pins of a requirements file or a ``pylock.toml``.

Files are judged against their wheel's ``RECORD`` (size and sha256 of every file, written by the
installer) and the baseline's per-distribution stat digest: a stat that moved is hashed, and a
file whose content differs from RECORD is named.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from envdoctor import Fix, Item, Status, Unavailable, check, fact, fail, ok, pip_fix, skip, worst
from envdoctor_checks._lazy import lazy
from envdoctor_checks.packages import canonical, dist_path

if TYPE_CHECKING:
    import importlib.metadata as md
else:
    md = lazy("importlib.metadata")  # read by the live checks only: triage need not load it

# The distributions whose files are digested: the ones a stray install breaks silently.
_GUARDED = re.compile(r"^(torch|triton|pytorch-triton(-\w+)?|nvidia-[\w-]+)$")
MAX_NAMED = 5


def guarded(name: str) -> bool:
    return bool(_GUARDED.match(canonical(name)))


# ---- facts ---------------------------------------------------------------------------------


def _record_rows(dist: md.Distribution) -> list[tuple[str, str, int]]:
    """(path relative to site-packages, sha256 as RECORD writes it, size) of hashed files."""
    text = dist.read_text("RECORD") or ""
    rows = []
    for line in text.splitlines():
        parts = line.rsplit(",", 2)
        if len(parts) == 3 and parts[1].startswith("sha256=") and parts[2].isdigit():
            rows.append((parts[0], parts[1][7:], int(parts[2])))
    return rows


def _stat_digest(base: str, rows: Iterable[tuple[str, str, int]]) -> tuple[str, int, int]:
    """(digest of every file's path, size and mtime; newest mtime; files missing)."""
    import hashlib  # here and below: `list` and a run without these checks need none of it

    h, newest, missing = hashlib.sha256(), 0, 0
    for path, _, _ in rows:
        try:
            st = os.stat(os.path.join(base, path))
        except OSError:
            missing += 1
            h.update(f"{path}\0-\n".encode())
            continue
        newest = max(newest, st.st_mtime_ns)
        h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest(), newest, missing


@fact("dist_files")
def dist_files(interpreter=None) -> dict:
    """{canonical name: {version, base, record, files, stat_digest, newest_mtime}} for torch,
    Triton and the nvidia-* distributions (the first copy on sys.path)."""
    import hashlib

    out: dict[str, dict] = {}
    for d in md.distributions(**dist_path(interpreter)):
        name = (d.metadata["Name"] or "") if d.metadata else ""
        key = canonical(name) if name else ""
        if not key or not guarded(key) or key in out:
            continue
        base = str(d.locate_file(""))
        rows = _record_rows(d)
        digest, newest, missing = _stat_digest(base, rows)
        out[key] = {
            "version": d.version,
            "base": base,
            "record": hashlib.sha256((d.read_text("RECORD") or "").encode()).hexdigest(),
            "files": len(rows),
            "stat_digest": digest,
            "newest_mtime": newest,
            "missing": missing,
        }
    return out


@fact("baseline", source="baseline")
def baseline(options) -> dict:
    """The baseline file named by ``--baseline`` (facts recorded at image build)."""
    path = (options or {}).get("baseline")
    if not path:
        raise Unavailable("no baseline given (envdoctor check --baseline FILE)")
    from envdoctor import BaselineError, load_baseline  # the format and the typed stack: only with a file

    try:
        return load_baseline(path).as_fact()
    except BaselineError as e:
        raise Unavailable(str(e)) from None


@fact("lock")
def lock(options) -> dict:
    """The exact pins of the file named by ``--lock`` (requirements.txt with ``==`` or pylock.toml)."""
    path = (options or {}).get("lock")
    if not path:
        raise Unavailable("no lock file given (envdoctor check --lock FILE)")
    from envdoctor import BaselineError, load_lock

    try:
        return load_lock(path)
    except BaselineError as e:
        raise Unavailable(str(e)) from None


# ---- judging -------------------------------------------------------------------------------


def restore_fix(python_info, name: str, version: str, *flags: str) -> Fix:
    """``<python> -m pip install`` that puts ``name`` back at ``version``, with the examined
    interpreter. A local version (``+cu130``, ``+rocm6.4``, ``+cpu``, ``+xpu``) is on PyTorch's
    index only (PyPI cannot install it), so that one command uses that index."""
    local = version.partition("+")[2]
    index: tuple[str, ...] = ()
    if local and re.fullmatch(r"cu\d+|rocm[\d.]+|cpu|xpu", local):
        index = ("--index-url", f"https://download.pytorch.org/whl/{local}")
    return pip_fix(python_info, "install", "--no-deps", *flags, f"{name}=={version}", *index)


def compare_versions(expected: Mapping[str, str], have: Mapping[str, Mapping], *, guarded_only_extra: bool) -> list[Item]:
    """One item per distribution that moved: changed, removed, or (in the guarded set) added."""
    items = []
    for key, version in sorted(expected.items()):
        now = have.get(key)
        if now is None:
            items.append(Item(key, Status.FAIL, f"{key} {version} was removed"))
        elif str(now.get("version")) != str(version):
            items.append(Item(key, Status.FAIL, f"{now.get('name', key)} is {now.get('version')}, recorded {version}"))
    for key in sorted(set(have) - set(expected)):
        if guarded_only_extra and not guarded(key):
            continue
        items.append(Item(key, Status.FAIL, f"{have[key].get('name', key)} {have[key].get('version')} was added"))
    return items


def _drift_result(items: list[Item], expected: Mapping[str, str], what: str, total: int, python_info=None):
    if not items:
        return ok(f"all {total} distributions at the versions {what} records")
    names = [i.name for i in items]
    fixes = [restore_fix(python_info, n, expected[n]) for n in names if n in expected][:MAX_NAMED]
    added = [n for n in names if n not in expected]
    if added:
        fixes.append(pip_fix(python_info, "uninstall", "-y", *added[:MAX_NAMED]))
    shown = ", ".join(i.message for i in items[:3]) + (f" and {len(items) - 3} more" if len(items) > 3 else "")
    hint = "; ".join(f.command for f in fixes)
    return fail(
        f"{len(items)} distribution(s) differ from {what}: {shown}",
        f"Restore them: {hint}",
        items=items,
        fixes=fixes,
        action="reinstall-package",
    )


@check("baseline.distributions", tags=("baseline", "build"))
def distributions(baseline, dists, python_info=None):
    """Every distribution is at the version the baseline recorded (nothing added to torch/Triton/nvidia-*)"""
    recorded = baseline["facts"].get("dists")
    if not isinstance(recorded, dict):
        return skip("the baseline has no distribution list")
    expected = {k: str(v.get("version")) for k, v in recorded.items() if isinstance(v, dict)}
    items = compare_versions(expected, dists, guarded_only_extra=True)
    return _drift_result(items, expected, "the baseline", len(expected), python_info)


@check("baseline.lock", tags=("baseline", "build"))
def lock_pins(lock, dists, python_info=None):
    """Every distribution pinned by the lock file is installed at its pinned version"""
    pins = lock["pins"]
    items = [i for i in compare_versions(pins, dists, guarded_only_extra=True) if i.name in pins]
    return _drift_result(items, pins, lock["path"], len(pins), python_info)


def _hash_file(path: str) -> str:
    import base64
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()


def changed_files(dist: md.Distribution, newer_than: int) -> list[str]:
    """Files of ``dist`` whose size differs from RECORD, are missing, or were written after the
    baseline's newest file and no longer hash as RECORD says."""
    base = str(dist.locate_file(""))
    out = []
    for path, sha, size in _record_rows(dist):
        full = os.path.join(base, path)
        try:
            st = os.stat(full)
        except OSError:
            out.append(f"{path} (missing)")
            continue
        if st.st_size != size or (st.st_mtime_ns > newer_than and _hash_file(full) != sha):
            out.append(path)
    return out


def _dist_named(key: str, interpreter=None) -> md.Distribution | None:
    for d in md.distributions(**dist_path(interpreter)):
        if d.metadata and canonical(d.metadata["Name"] or "") == key:
            return d
    return None


@check("baseline.files", tags=("baseline", "build"))
def files(baseline, dist_files, interpreter=None, python_info=None):
    """The files of torch, Triton and the nvidia-* packages are the ones installed at build time"""
    recorded = baseline["facts"].get("dist_files")
    if not isinstance(recorded, dict):
        return skip("the baseline has no file digests")
    items = []
    for key, then in sorted(recorded.items()):
        now = dist_files.get(key)
        if now is None or now.get("version") != then.get("version") or now.get("stat_digest") == then.get("stat_digest"):
            continue  # removed or swapped: baseline.distributions names it
        dist = _dist_named(key, interpreter)
        changed = changed_files(dist, int(then.get("newest_mtime") or 0)) if dist else []
        if changed:
            shown = ", ".join(changed[:MAX_NAMED]) + (f" and {len(changed) - MAX_NAMED} more" if len(changed) > MAX_NAMED else "")
            items.append(Item(key, Status.FAIL, f"{len(changed)} file(s) differ from the wheel: {shown}"))
    if not items:
        return ok(
            f"files of {len(recorded)} distribution(s) as installed ({sum(int(v.get('files') or 0) for v in recorded.values())} files)"
        )
    fixes = [restore_fix(python_info, i.name, str(recorded[i.name]["version"]), "--force-reinstall") for i in items[:MAX_NAMED]]
    return fail(
        f"files were modified after the build in {', '.join(i.name for i in items)}: {items[0].message}",
        f"Reinstall them: {'; '.join(f.command for f in fixes)}",
        items=items,
        fixes=fixes,
        action="reinstall-package",
    )


def _gpu_models(gpus) -> list[str]:
    return sorted(str(g.get("name")) for g in gpus or [] if isinstance(g, dict))


@check("baseline.driver_gpus", tags=("baseline", "gpu"))
def driver_gpus(baseline, driver=None, gpus=None):
    """The NVIDIA driver and the GPU models are the ones the baseline recorded"""
    facts = baseline["facts"]
    then_driver, then_gpus = facts.get("driver"), facts.get("gpus")
    if not isinstance(then_driver, dict) and not isinstance(then_gpus, list):
        return skip("the baseline was recorded without a driver or GPUs (at image build): compared at run time only when recorded")
    items = []
    if isinstance(then_driver, dict) and then_driver.get("version"):
        now = driver.get("version") if driver else None
        status = Status.PASS if now == then_driver["version"] else Status.FAIL
        items.append(Item("driver", status, f"{now or 'no driver'} (recorded {then_driver['version']})"))
    if isinstance(then_gpus, list):
        now_models, then_models = _gpu_models(gpus if gpus else []), _gpu_models(then_gpus)
        status = Status.PASS if now_models == then_models else Status.FAIL
        items.append(Item("GPUs", status, f"{', '.join(now_models) or 'none'} (recorded {', '.join(then_models) or 'none'})"))
    if worst(items) is Status.PASS:
        return ok("; ".join(f"{i.name} {i.message}" for i in items), items=items)
    bad = [i for i in items if i.status is Status.FAIL]
    return fail(
        "; ".join(f"{i.name} {i.message}" for i in bad),
        "The machine differs from the one the image was accepted on: run on the recorded hardware and driver, or record a new baseline "
        "there (envdoctor baseline FILE) once `envdoctor check` passes",
        items=items,
    )


@check("baseline.interpreter", tags=("baseline", "build"))
def interpreter(baseline, python_info):
    """The Python interpreter is the one the baseline recorded"""
    then = baseline["facts"].get("python_info")
    if not isinstance(then, dict):
        return skip("the baseline has no interpreter")
    now = (python_info.get("executable"), python_info.get("version"))
    was = (then.get("executable"), then.get("version"))
    if now == was:
        return ok(f"{now[0]} (Python {now[1]}), as recorded")
    return fail(
        f"the interpreter is {now[0]} (Python {now[1]}), recorded {was[0]} (Python {was[1]})",
        "Run the image's own interpreter (check PATH and the entrypoint), or record a new baseline for this one",
    )
