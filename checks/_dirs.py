"""Directories the stack writes to while compiling, judged for what compiling needs there:
writable, with room (space and inodes), local, not noexec where compiled objects are loaded.
Shared by the Triton and Inductor cache checks, system.disk and the smokes' diagnosis."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TypeGuard

from envdoctor import Status, cannot_create_in

GIB = 1 << 30
MIB = 1 << 20


def _fmt_bytes(n: float) -> str:
    if n >= GIB:
        return f"{n / GIB:.1f} GiB"
    return f"{n / MIB:.0f} MiB" if n >= MIB else f"{n / 1024:.0f} KiB"


# Network file systems: their file locks and atomic renames are unreliable for compiler caches
# (triton#4002: FileNotFoundError for cache objects).
NETWORK_FS = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "beegfs", "ceph", "glusterfs", "9p", "afs", "orangefs"})
# FUSE file systems that reach over the network (fuse-overlayfs of rootless podman does not).
NETWORK_FUSE = frozenset(
    {
        "sshfs",
        "s3fs",
        "gcsfuse",
        "rclone",
        "juicefs",
        "glusterfs",
        "ceph",
        "cephfs",
        "blobfuse",
        "blobfuse2",
        "goofys",
        "mountpoint-s3",
        "lustre",
    }
)


def find_mount(path: str, mounts: list) -> dict | None:
    """The mount entry that ``path`` (or its nearest existing parent) lives on."""
    p = os.path.realpath(path)
    best = None
    for m in mounts or []:
        mp = m["mount_point"]
        if p == mp or p.startswith(mp.rstrip("/") + "/") or mp == "/":
            if best is None or len(mp) >= len(best["mount_point"]):
                best = m
    return best


def is_network_fs(mount: dict | None) -> TypeGuard[dict]:
    if not mount:
        return False
    fstype = mount["fstype"]
    return fstype in NETWORK_FS or (fstype.startswith("fuse.") and fstype[5:] in NETWORK_FUSE)


@dataclass(frozen=True)
class DirProbe:
    """Whether a cache directory can be used, found without leaving anything behind.

    An existing directory gets a temporary file created and removed in it. A directory that does
    not exist yet is not created: its nearest existing parent is tested instead, since the tool
    would create it there.
    """

    path: str
    exists: bool
    writable: bool
    checked: str  # the directory actually tested
    error: str = ""
    links: tuple = ()  # ((symlink, its target), ...) met on the way, in order
    free: int | None = None  # bytes an unprivileged writer may still use there (statvfs f_bavail)
    inodes_free: int | None = None  # files it may still create (None: the file system does not count them)


def symlink_hops(path: str, limit: int = 40) -> tuple:
    """Each symlink met while resolving ``path``, with its target made absolute but not resolved
    further: a chain through a network mount stays visible even when the end is local."""
    hops: list[tuple[str, str]] = []
    parts, cur = [p for p in os.path.abspath(path).split("/") if p], "/"
    while parts and len(hops) < limit:
        part = parts.pop(0)
        nxt = os.path.join(cur, part)
        if os.path.islink(nxt):
            try:
                target = os.path.normpath(os.path.join(cur, os.readlink(nxt)))
            except OSError:
                break
            hops.append((nxt, target))
            parts, cur = [p for p in target.split("/") if p] + parts, "/"
        elif os.path.exists(nxt):
            cur = nxt
        else:
            break
    return tuple(hops)


def _mount_at(path: str, mounts) -> dict | None:
    """The mount whose mount point is the longest prefix of ``path`` as written (not resolved)."""
    best = None
    for m in mounts or []:
        mp = m["mount_point"]
        if path == mp or path.startswith(mp.rstrip("/") + "/"):
            if best is None or len(mp) >= len(best["mount_point"]):
                best = m
    return best


def probe_dir(path: str) -> DirProbe:
    path = os.path.abspath(path)
    exists = os.path.isdir(path)
    if os.path.exists(path) and not exists:
        return DirProbe(path, False, False, path, f"{path} exists but is not a directory")
    probe = path
    while not os.path.isdir(probe):
        parent = os.path.dirname(probe)
        if os.path.lexists(probe) or parent == probe:
            return DirProbe(path, False, False, probe, f"{probe} is not a directory, so {path} cannot be created under it")
        probe = parent
    e = cannot_create_in(probe)
    if e is not None:
        return DirProbe(path, exists, False, probe, f"cannot create a file in {probe}: {e.strerror or e}")
    return DirProbe(path, exists, True, probe, links=symlink_hops(path), **room(probe))


def room(path: str) -> dict:
    """{"free": bytes, "inodes_free": files} an unprivileged process may still use on the file
    system of ``path``; None for what cannot be measured (btrfs and others report no inode count)."""
    try:
        st = os.statvfs(path)
    except OSError:
        return {}
    return {"free": st.f_bavail * st.f_frsize, "inodes_free": st.f_favail if st.f_files else None}


# What compiling needs where it writes. The smokes' first torch.compile (a function and a small
# conv net; torch 2.13, CPU, measured 2026-12-01) writes 149 MB of precompiled headers into the
# temporary directory and 49 files (0.7 MB) into Inductor's cache; a real model's compile adds
# hundreds of kernels of 3-5 files each, autotuning results and the FX graph cache: hundreds of
# MB and thousands of files. Below these floors the user's next compile is likely to stop with
# "OSError: [Errno 28] No space left on device"; above them, system.disk still warns under 5 GiB.
MIN_FREE = 512 * 1024 * 1024
MIN_INODES = 10_000


def lacks_room(probe: DirProbe) -> str:
    """Why compiling there would run out of space or files, or ''."""
    if probe.free is not None and probe.free < MIN_FREE:
        return (
            f"only {_fmt_bytes(probe.free)} free (compiling needs {_fmt_bytes(MIN_FREE)}: else OSError: [Errno 28] No space left on device)"
        )
    if probe.inodes_free is not None and probe.inodes_free < MIN_INODES:
        return (
            f"only {probe.inodes_free} inodes free (compiling creates thousands of files: else OSError: [Errno 28] No space left on device)"
        )
    return ""


def judge_cache_dir(what: str, probe: DirProbe, mounts, *, env_var: str, suggest: str, needs_exec: bool) -> tuple[Status, str, str]:
    """(status, message, hint) for a directory compiling writes to: writable, with room, local,
    not noexec where compiled objects are loaded from it."""
    fix = f"export {env_var}={suggest}   # or any writable local directory"
    where = probe.path if probe.exists else f"{probe.path} (not created yet; tested {probe.checked})"
    if not probe.writable:
        return Status.FAIL, f"{what} {where} is not writable: {probe.error}", fix
    short = lacks_room(probe)
    if short:
        return Status.FAIL, f"{what} {where}: its file system has {short}", f"Free space there (df -h {probe.checked}; df -i) or {fix}"
    mount = find_mount(probe.checked, mounts) if mounts else None
    if mount:
        opts = set(mount.get("options") or [])
        if "ro" in opts:
            return Status.FAIL, f"{what} {where} is on a read-only mount ({mount.get('mount_point')})", fix
        if needs_exec and "noexec" in opts:
            return (
                Status.FAIL,
                f"{what} {where} is on a noexec mount ({mount.get('mount_point')}): compiled kernels (.so) written there "
                "cannot be loaded ('failed to map segment from shared object')",
                fix,
            )
        if is_network_fs(mount):
            via = f" (through the symlink {probe.links[-1][0]} -> {probe.links[-1][1]})" if probe.links else ""
            return (
                Status.WARN,
                f"{what} {where}{via} is on a network filesystem ({mount.get('fstype')} at {mount.get('mount_point')}): its file "
                "locks and atomic renames are unreliable (FileNotFoundError for cache objects, hangs with several ranks)",
                fix.replace("any writable local directory", "a local disk"),
            )
    for link, target in probe.links if mounts else ():
        hop = _mount_at(target, mounts)
        if is_network_fs(hop):
            return (
                Status.WARN,
                f"{what} {where} is reached through the symlink {link} -> {target}, on a network filesystem "
                f"({hop.get('fstype')} at {hop.get('mount_point')}): every lookup in the cache crosses it (stale handles hang, "
                "locks are unreliable)",
                fix.replace("any writable local directory", "a local disk, not through the link"),
            )
    room_left = f" ({_fmt_bytes(probe.free)} free)" if probe.free is not None else ""
    return Status.PASS, f"{what} {where} is writable{room_left}", ""
