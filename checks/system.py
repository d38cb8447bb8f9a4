"""The machine under the stack: OS, C library, Python, CPU/RAM, /dev/shm, mounts, containers.

Facts shared with other areas: ``python_info``, ``ldconfig``, ``mounts`` (with
:func:`find_mount`, in _dirs), ``container``.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import sys
from pathlib import Path

from envdoctor import Status, Unavailable, check, compile_locations, fact, fail, ok, skip, warn
from envdoctor import run_command as run
from envdoctor_checks import _dirs
from envdoctor_checks._dirs import GIB, _fmt_bytes, find_mount, is_network_fs  # noqa: F401 - named from here before they moved
from envdoctor_checks.packages import examined

_PYTHON_KEYS = (
    "version",
    "version_info",
    "implementation",
    "executable",
    "include_dir",
    "python_h",
    "free_threading",
    "purelib",
    "platlib",
    "user_site_enabled",
)


# a shared stack fact: envdoctor.Stack reads it
@fact("python_info", source="live", ask="the output of `python -m torch.utils.collect_env`")
def python_info(interpreter=None) -> dict:
    other = examined(interpreter)
    if other is not None:  # --python: read by that interpreter
        return {k: other.get(k) for k in _PYTHON_KEYS}
    from envdoctor import python_facts  # here: it loads importlib.metadata (see packages.dists)

    return python_facts()


def parse_ldconfig(text: str) -> dict[str, list[str]]:
    """``ldconfig -p`` lines look like
    ``\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1``."""
    libs: dict[str, list[str]] = {}
    for line in text.splitlines():
        name, sep, path = line.strip().partition(" => ")
        if not sep:
            continue
        soname = name.split(" (", 1)[0].strip()
        libs.setdefault(soname, []).append(path.strip())
    return libs


LDCONFIG_CANDIDATES = ("/sbin/ldconfig", "/usr/sbin/ldconfig", "/sbin/ldconfig.real")
# The libraries of the GPU stack: what triton.libcuda reads (libcuda.so.1, libcuda.so) and what a
# maintainer asks for when torch loads the wrong copy ("which cuDNN does the system have?").
# The rest of a GPU node's cache (1,500 libraries: X11, ICU, ...) judges nothing.
_STACK_LIBS = re.compile(
    r"^lib(cuda|nvidia-ml|nvidia-ptxjitcompiler|nvidia-nvvm|cudnn\w*|cublas\w*|nccl|cudart|nvrtc\w*|nvJitLink|cusparse\w*|"
    r"cufft\w*|curand|cusolver\w*|cupti|nvToolsExt|gomp|iomp5|omp|tpu|amdhip64|hsa-runtime64)([-.]\S*)?\.so(\.[\d.]+)?$"
)


# Development links the checks read by name stay with their paths (Triton links with -lcuda).
_READ_LINKS = frozenset({"libcuda.so"})


def _dev_link(name: str, paths: list, libs: dict) -> bool:
    """Whether ``name`` is an unversioned development link (``libX.so``) whose every path sits
    beside a versioned ``libX.so.N`` of the cache: the report then names it without the paths."""
    if not name.endswith(".so") or name in _READ_LINKS or not isinstance(paths, list):
        return False
    beside = {os.path.dirname(p) for n, ps in libs.items() if n.startswith(name + ".") and isinstance(ps, list) for p in ps}
    return bool(paths) and all(isinstance(p, str) and os.path.dirname(p) in beside for p in paths)


def compact_ldconfig(value: dict) -> dict:
    """The report keeps the GPU stack's libraries and how many the cache holds, the development
    links that sit beside their versioned library by name only (--full-facts: all)."""
    libs = value.get("libs") if isinstance(value, dict) else None
    if not isinstance(libs, dict):
        return value
    stack = {name: paths for name, paths in libs.items() if _STACK_LIBS.match(name)}
    links = sorted(name for name, paths in stack.items() if _dev_link(name, paths, stack))
    kept = {name: paths for name, paths in stack.items() if name not in links}
    return {**value, "libs": kept, "dev_links": links, "libs_total": len(libs)}


@fact("ldconfig", ask="the output of `ldconfig -p | grep -E 'libcuda|libnvidia'`", compact=compact_ldconfig)
def ldconfig() -> dict:
    # Triton runs /sbin/ldconfig by absolute path; distroless and NixOS have none.
    exe = next((p for p in LDCONFIG_CANDIDATES if os.access(p, os.X_OK)), None) or shutil.which("ldconfig")
    if not exe:
        raise Unavailable("ldconfig not found")
    done = run([exe, "-p"], timeout=10)
    if not done.ok:
        raise Unavailable(f"ldconfig -p failed: {done.describe()}")
    return {"path": exe, "libs": parse_ldconfig(done.stdout)}


def _unescape(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as octal.
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def parse_mountinfo(text: str) -> list[dict]:
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        a, b = left.split(), right.split()
        if len(a) < 6 or len(b) < 2:
            continue
        options = a[5].split(",") + (b[2].split(",") if len(b) > 2 else [])
        mounts.append({"mount_point": _unescape(a[4]), "fstype": b[0], "source": _unescape(b[1]), "options": sorted(set(options))})
    return mounts


# Kernel and device file systems: no cache or data directory lives on them.
_PSEUDO_FS = frozenset(
    {"proc", "sysfs", "cgroup", "cgroup2", "devpts", "mqueue", "securityfs", "debugfs", "tracefs", "bpf", "pstore", "configfs"}
    | {"fusectl", "hugetlbfs", "binfmt_misc", "autofs", "nsfs", "rpc_pipefs", "efivarfs", "selinuxfs", "devtmpfs"}
)


def _kernel_mount(m: dict) -> bool:
    mp = str(m.get("mount_point", ""))
    if mp == "/dev/shm" or mp.startswith("/dev/shm/"):
        return False
    return m.get("fstype") in _PSEUDO_FS or mp.startswith(("/proc/", "/sys/", "/dev/")) or mp in ("/proc", "/sys", "/dev")


# The NVIDIA container runtime binds each driver library into the container: one mount per file.
_SHARED_LIBRARY = re.compile(r"/[^/]+\.so(\.\d+)*$")


def compact_mounts(value: list) -> list:
    """The report keeps the mounts a directory can live on (caches, data, /dev/shm) with their
    flags (ro, noexec); kernel file systems, single-library binds and overlayfs' long layer lists
    go (--full-facts: all)."""
    if not isinstance(value, list):
        return value
    out = []
    for m in value:
        if not isinstance(m, dict) or _kernel_mount(m) or _SHARED_LIBRARY.search(str(m.get("mount_point", ""))):
            continue
        out.append({**m, "options": [o for o in m.get("options") or [] if "=" not in str(o)]})
    return out


@fact("mounts", compact=compact_mounts)
def mounts() -> list:
    try:
        return parse_mountinfo(Path("/proc/self/mountinfo").read_text())
    except OSError as e:
        raise Unavailable(f"cannot read /proc/self/mountinfo: {e.strerror}") from e


@fact("container", ask="whether this runs in a container, and how it was started")
def container(env) -> dict:
    evidence = []
    kind = None
    if os.path.exists("/.dockerenv"):
        evidence.append("/.dockerenv exists")
        kind = "docker"
    if os.path.exists("/run/.containerenv"):
        evidence.append("/run/.containerenv exists")
        kind = kind or "podman"
    if env.get("KUBERNETES_SERVICE_HOST"):
        evidence.append("KUBERNETES_SERVICE_HOST is set")
        kind = "kubernetes"
    try:
        cgroup = Path("/proc/1/cgroup").read_text()
        for word in ("docker", "kubepods", "containerd", "libpod"):
            if word in cgroup:
                evidence.append(f"/proc/1/cgroup mentions {word}")
                kind = kind or "container"
                break
    except OSError:
        pass
    if env.get("container"):
        evidence.append(f"container={env['container']}")
        kind = kind or "container"
    return {"in_container": bool(evidence), "kind": kind, "evidence": evidence}


@check("system.python", tags=("build",))
def python_version(python_info):
    """Python version"""
    # Python.h is judged by toolchain.python_h, where Triton and Inductor need it.
    v = python_info["version"]
    extra = " (free-threaded build)" if python_info["free_threading"] else ""
    if tuple(python_info["version_info"][:2]) < (3, 9):
        return fail(f"Python {v} is too old for current PyTorch releases", hint="Use Python 3.10 or newer.")
    return ok(f"Python {v}{extra} at {python_info['executable']}")


# a shared stack fact: envdoctor.Stack reads it
@fact("os_release", source="live", ask="the output of `python -m torch.utils.collect_env`")
def os_release() -> dict:
    import distro

    return {
        "id": distro.id(),
        "name": distro.name(pretty=True) or platform.system(),
        "version": distro.version(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "libc": list(platform.libc_ver()),
    }


@check("system.os", tags=("build",))
def os_info(os_release):
    """Operating system and C library"""
    libc, libc_version = (os_release["libc"] + ["", ""])[:2]
    msg = f"{os_release['name']} ({os_release['machine']}), kernel {os_release['kernel']}"
    if sys.platform.startswith("linux") and libc != "glibc":
        return warn(
            f"{msg}: not a glibc system ({libc or 'musl?'}); PyPI torch wheels need glibc",
            hint="Use a glibc-based image (Debian, Ubuntu, RHEL), not Alpine.",
        )
    if libc == "glibc":
        msg += f", glibc {libc_version}"
        major_minor = tuple(int(x) for x in libc_version.split(".")[:2] if x.isdigit())
        # PyPI torch moved from manylinux2014 (glibc 2.17) to manylinux_2_28 from torch 2.7.
        if major_minor and major_minor < (2, 28):
            return warn(
                f"{msg}: torch 2.7 and newer wheels need glibc 2.28 or newer",
                hint="Move to a newer base image (Ubuntu 20.04+, Debian 10+, RHEL 8+), or stay on torch 2.6 or older.",
            )
    return ok(msg)


@check("system.resources", tags=("build",))
def resources():
    """CPU and memory"""
    import psutil

    cpus = psutil.cpu_count(logical=True) or 0
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = cpus
    mem = psutil.virtual_memory()
    msg = f"{usable} CPU(s) usable of {cpus}, {_fmt_bytes(mem.total)} RAM ({_fmt_bytes(mem.available)} available)"
    details = {"cpus": cpus, "usable_cpus": usable, "memory_total": mem.total, "memory_available": mem.available}
    if mem.available < 1 * GIB:
        return warn(
            msg + ": less than 1 GiB of memory is available", hint="Free memory or raise the container's memory limit.", details=details
        )
    return ok(msg, details=details)


SHM_WARN = 1 * GIB


@fact("shm", ask="the output of `df -h /dev/shm` (and the `docker run` options, in a container)")
def shm() -> dict:
    try:
        st = os.statvfs("/dev/shm")
    except OSError as e:
        raise Unavailable(f"/dev/shm is not available: {e.strerror}") from e
    return {"size": st.f_frsize * st.f_blocks, "free": st.f_frsize * st.f_bavail}


@check("system.shm", tags=("build",))
def shm_size(shm=None, container=None):
    """/dev/shm is large enough for DataLoader workers and NCCL"""
    if not shm:
        if sys.platform.startswith("linux"):
            return fail(
                f"{shm.reason}: DataLoader workers and NCCL need shared memory",
                hint="Mount a tmpfs at /dev/shm (docker run --shm-size=16g, or --ipc=host).",
            )
        return skip("no /dev/shm on this platform")
    size = shm["size"]
    details = {"size": size, "free": shm["free"]}
    if size < SHM_WARN:
        where = " (Docker's default is 64 MiB)" if container and container.get("in_container") else ""
        return warn(
            f"/dev/shm is only {_fmt_bytes(size)}{where}: DataLoader workers can die with 'Bus error'",
            hint="docker run --shm-size=16g (or --ipc=host); on Kubernetes mount an emptyDir with medium: Memory at /dev/shm.",
            details=details,
        )
    return ok(f"/dev/shm is {_fmt_bytes(size)} ({_fmt_bytes(shm['free'])} free)", details=details)


@check("system.container", tags=("build",))
def container_info(container):
    """Container detection"""
    if not container["in_container"]:
        return ok("not in a container")
    return ok(f"in a container ({container['kind']}): {'; '.join(container['evidence'])}", details=container)


DISK_WARN = 5 * GIB


@check("system.disk", tags=("build",))
def disk_space(env):
    """The temporary directory and HOME's cache can take what compiling writes there"""
    items, warn_at, details = [], [], {}
    for key in ("temp", "home_cache"):
        loc = compile_locations(env)[key]
        if loc.path is None:
            continue
        probe = _dirs.probe_dir(loc.path)
        label = f"{loc.what} ({loc.chosen_by()})"
        status, message, hint = _dirs.judge_cache_dir(
            label, probe, None, env_var=loc.variable, suggest="<a directory on a disk with room>", needs_exec=False
        )
        details[key] = {"path": probe.path, "source": loc.source, "free": probe.free, "inodes_free": probe.inodes_free}
        if status is Status.PASS and probe.free is not None:
            message = f"{loc.what} {probe.path}: {_fmt_bytes(probe.free)} free"
            if probe.free < DISK_WARN:
                status = Status.WARN
                warn_at.append(message)
        items.append((status, message, hint))
    if not items:
        return skip("neither the temporary directory nor HOME's cache could be resolved")
    failed = [(m, h) for st, m, h in items if st is Status.FAIL]
    if failed:
        return fail("; ".join(m for m, _ in failed), failed[0][1], details=details)
    text = ", ".join(m for _, m, _ in items)
    if warn_at:
        return warn(
            f"little disk space: {text}",
            hint="Free space or point TRITON_CACHE_DIR / TORCHINDUCTOR_CACHE_DIR / TMPDIR at a larger volume.",
            details=details,
        )
    return ok(text, details=details)
