"""torch itself: importable, which build, whether the driver and GPUs suit it, which libraries it
really loads, and the packages that must move in lock-step with it.

Static facts come from package metadata and ``torch/version.py`` (checks/packages.py); the one
``torch_runtime`` fact imports torch once, in the probe worker (checks/bodies/torch_info.py).
"""

from __future__ import annotations

import glob
import os
import re
import sys
from collections.abc import Mapping

from envdoctor import Fix, Item, Skip, Status, Unavailable, best_signature, check, fact, fail, lazy_pattern, ok, pip_fix, skip, warn
from envdoctor_checks._lazy import lazy
from envdoctor_checks.packages import canonical, executable, marker_applies, package_dir, requirements, search_path, version_or_none
from envdoctor_checks.signatures import hints_for

compat = lazy("envdoctor_checks._cuda_compat")
rd = lazy("envdoctor_checks._release_data")

PROBE_TIMEOUT = 120.0

# ---- facts ---------------------------------------------------------------------------------


def lib_version(path: str) -> str | None:
    m = re.search(r"\.so\.(\d+(?:\.\d+)*)$", os.path.realpath(path))
    return m.group(1) if m else None


def lib_kind(name: str) -> str:
    """``libcublasLt.so.13`` -> ``cublasLt``; ``libgomp-a34b3233.so.1`` -> ``gomp``."""
    m = re.match(r"lib([A-Za-z_]+?\d?)(?:[-.]|$)", name)
    base = m.group(1) if m else name
    if name[3 + len(base) :].startswith("-builtins"):
        # libnvrtc-builtins is NVRTC's companion library, not a second copy of libnvrtc.
        base += "-builtins"
    return re.sub(r"_?\d$", "", base) if base.startswith("cudnn") else base


def ld_library_path(env: Mapping[str, str]) -> list[str]:
    return [os.path.realpath(p) for p in (env.get("LD_LIBRARY_PATH") or "").split(":") if p]


def provenance(path: str, env: Mapping[str, str]) -> str:
    """Where a loaded library came from, in the words a user would use to fix it."""
    real = os.path.realpath(path)
    for p in (path, real):
        if re.search(r"/(site|dist)-packages/nvidia/", p):
            return "pip wheel (nvidia-*)"
        if re.search(r"/(site|dist)-packages/torch(/lib|\.libs)/", p):
            return "bundled with torch"
        m = re.search(r"/(site|dist)-packages/([^/]+)/", p)
        if m:
            return f"pip wheel ({m.group(2)})"
    if "/compat/" in real or "/compat/" in path:
        return "CUDA forward-compat package"
    conda = env.get("CONDA_PREFIX")
    if (conda and real.startswith(os.path.realpath(conda) + "/")) or re.search(
        r"/(ana|mini)conda\d*/|/mambaforge/|/miniforge\d*/|/conda/", real
    ):
        return "conda"
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = env.get(var)
        if root and real.startswith(os.path.realpath(root) + "/"):
            return var
    if re.match(r"/usr/local/cuda", path) or re.match(r"/usr/local/cuda", real):
        return "CUDA toolkit (/usr/local/cuda)"
    return "system"


def annotate_libs(libs: list[dict], env: Mapping[str, str]) -> list[dict]:
    llp = set(ld_library_path(env))
    out = []
    for lib in libs:
        path = lib.get("path", "")
        out.append(
            {
                **lib,
                "kind": lib_kind(lib.get("name", os.path.basename(path))),
                "version": lib_version(path),
                "provenance": provenance(path, env),
                "via_ld_library_path": os.path.dirname(os.path.realpath(path)) in llp or os.path.dirname(path) in llp,
            }
        )
    return out


def compact_runtime(value: dict) -> dict:
    """Each loaded library by name and where it came from: the paths are in torch.loaded_libraries'
    items, which judged them (--full-facts: as gathered)."""
    libs = value.get("loaded_libs") if isinstance(value, dict) else None
    if not isinstance(libs, list):
        return value
    short = []
    for lib in libs:
        if isinstance(lib, dict):
            lib = {k: v for k, v in lib.items() if k in ("name", "provenance") or (k == "via_ld_library_path" and v)}
        short.append(lib)
    return {**value, "loaded_libs": short}


# a shared stack fact: envdoctor.Stack reads it
@fact("torch_runtime", source="live", ask="the output of `python -m torch.utils.collect_env`", compact=compact_runtime)
def torch_runtime(probe, env, interpreter=None) -> dict:
    """What an imported torch reports (one import, in the probe worker, which runs the examined
    interpreter)."""
    try:
        package_dir("torch", interpreter)
    except Unavailable as e:
        if e.reason == "torch is not installed":
            raise
        return {"import_error": e.reason, "warnings": [], "loaded_libs": []}
    value = probe.call("envdoctor_checks.bodies.torch_info:collect", {}, timeout=PROBE_TIMEOUT, what="the torch probe (import torch)")
    value["loaded_libs"] = annotate_libs(value.get("loaded_libs") or [], env)
    return value


@fact("torch_spec")
def torch_spec(interpreter=None) -> dict:
    """Where ``import torch`` resolves (without importing it) and every other torch package
    directory on sys.path (B9: a PYTHONPATH checkout or ~/.local copy shadows the venv's)."""
    first = os.path.realpath(package_dir("torch", interpreter))
    copies, leftovers = [], []
    for entry in search_path(interpreter):
        if not entry or not os.path.isdir(entry):
            continue
        d = os.path.realpath(os.path.join(entry, "torch"))
        if os.path.isfile(os.path.join(d, "__init__.py")) and d not in copies:
            copies.append(d)
        leftovers += [p for p in glob.glob(os.path.join(entry, "~orch*")) if p not in leftovers]
    return {"dir": first, "copies": copies, "leftovers": leftovers}


# ---- helpers -------------------------------------------------------------------------------


def _runtime(torch_runtime) -> dict:
    """The runtime facts, or skip when import torch failed (torch.importable says why)."""
    if torch_runtime.get("import_error"):
        raise Skip("import torch fails (see torch.importable)")
    return torch_runtime


def _cuda_build(torch_build) -> str:
    if torch_build["kind"] != "cuda" or not torch_build.get("cuda"):
        raise Skip(f"torch {torch_build['version']} is a {torch_build['kind'].upper()} build, not a CUDA build")
    return torch_build["cuda"]


def _index_url(driver) -> str:
    tag = compat.best_index_for_driver(driver.get("cuda_version")) if driver else None
    return f"https://download.pytorch.org/whl/{tag or 'cu130'}"


def _index_hint(driver) -> str:
    return f"pip install --force-reinstall torch --index-url {_index_url(driver)}"


def _index_fix(driver, python_info) -> Fix:
    return pip_fix(python_info, "install", "--force-reinstall", "torch", "--index-url", _index_url(driver))


# ---- checks: torch itself ------------------------------------------------------------------


@check("torch.importable", tags=("build",))
def importable(torch_runtime, torch_build=None, dists=None):
    """import torch works"""
    err = torch_runtime.get("import_error")
    if not err:
        return ok(f"import torch {torch_runtime.get('version')} from {os.path.dirname(torch_runtime.get('file') or '') or '?'}")
    dist = (dists or {}).get("torch") if dists else None
    version = torch_build["version"] if torch_build else dist["version"] if dist else "<version>"
    origin = torch_runtime.get("origin")
    details = {"error": err, "origin": origin}
    first = f"import torch fails: {err.splitlines()[0][:300]}"
    if torch_runtime.get("incomplete"):
        where = os.path.dirname(origin or "") or "?"
        installed = f"; pip's torch {dist['version']} is in {dist.get('location')}" if dist else ""
        return fail(
            f"import torch loads an incomplete torch from {where}: it has no {', '.join('torch.' + m for m in torch_runtime['incomplete'])} "
            f"(a directory named torch shadowing the real one, a partial install, or a source checkout that was never built){installed}",
            hint=f"remove {os.path.dirname(where)} from PYTHONPATH or delete that copy; else reinstall: pip install --force-reinstall torch=={version}",
            details=details,
        )
    if origin and dist and dist.get("location"):
        site = os.path.realpath(os.path.dirname(dist["location"]))
        if os.path.dirname(os.path.dirname(os.path.realpath(origin))) != site:
            # The torch that fails is not the installed one (PYTHONPATH, a checkout, ~/.local).
            return fail(
                f"{first} (it loads {os.path.dirname(origin)}, not the installed torch {dist['version']} in {site})",
                hint=f"remove {os.path.dirname(os.path.dirname(origin))} from PYTHONPATH (or delete that copy) so the installed torch is imported",
                details=details,
            )
    found = best_signature(err, hints_for("torch.importable"))
    hint = found.fix if found else None
    if hint is None:
        hint = (
            f"python -c 'import torch' shows the full traceback; if {origin} is not the torch you meant, fix PYTHONPATH; "
            f"otherwise reinstall: pip install --force-reinstall torch=={version}"
        )
    return fail(first, hint=hint.format(v=version), details=details)


@check("torch.build", tags=("build",), sources=("live", "pasted"))
def build(torch_build):
    """torch build: CUDA, ROCm or CPU"""
    v, kind = torch_build["version"], torch_build["kind"]
    if kind == "cuda":
        return ok(f"torch {v} (CUDA {torch_build['cuda']} build)", details=dict(torch_build))
    if kind == "rocm":
        return ok(f"torch {v} (ROCm {torch_build['hip']} build)", details=dict(torch_build))
    return ok(f"torch {v} ({kind.upper()} build)", details=dict(torch_build))


@check("torch.cpu_build_on_gpu_machine", tags=("build", "gpu"), sources=("live", "pasted"))
def cpu_build_on_gpu_machine(torch_build, gpus=None, pci_gpus=None, driver=None, amd_gpus=None):
    """A CPU-only torch is not installed on a machine with NVIDIA GPUs"""
    # B5: "AssertionError: Torch not compiled with CUDA enabled"; is_available() is False with no warning.
    count = len(gpus) if gpus else len(pci_gpus) if pci_gpus else 0
    loaded = (driver or {}).get("version") if not count else None  # a loaded NVIDIA driver: the GPU is there
    amd = amd_gpus if not count and not loaded and isinstance(amd_gpus, list) else []
    asked = torch_build.get("cuda_asked")  # a paste only: "torch.cuda.is_available() returns False"
    if not count and not loaded and not amd and not (asked and torch_build["kind"] == "cpu"):
        return skip("no NVIDIA GPU on this machine")
    if torch_build["kind"] != "cpu":
        return ok(f"torch {torch_build['version']} is a {torch_build['kind'].upper()} build")
    if not count and not loaded and not amd:
        return fail(
            f"CPU-only torch {torch_build['version']}: it has no CUDA, so CUDA is unavailable whatever the GPU ({asked})",
            hint=f"on a machine with an NVIDIA GPU: {_index_hint(driver)}; without one, run on the CPU (device='cpu')",
        )
    if amd:
        targets = ", ".join(sorted({str(g.get("gfx")) for g in amd}))
        return fail(
            f"CPU-only torch {torch_build['version']} on a machine with {len(amd)} AMD GPU(s) ({targets})",
            hint="install torch's ROCm build for the installed ROCm: pip install --force-reinstall torch --index-url "
            "https://download.pytorch.org/whl/rocm<X.Y>",
        )
    if loaded:
        return fail(
            f"CPU-only torch {torch_build['version']} on a machine with the NVIDIA driver {loaded} loaded", hint=_index_hint(driver)
        )
    names = sorted({g.get("name", "?") for g in gpus}) if gpus else ["on the PCI bus"]
    hint = _index_hint(driver)
    import platform

    if platform.machine() == "aarch64":
        hint += " (PyPI torch < 2.11 is CPU-only on aarch64; use >= 2.11 or the cu* index)"
    return fail(f"CPU-only torch {torch_build['version']} on a machine with {count} NVIDIA GPU(s) ({', '.join(names)})", hint=hint)


@check("torch.driver_supports_cuda", tags=("gpu", "health"), sources=("live", "pasted"))
def driver_supports_cuda(torch_build, driver, python_info=None):
    """The NVIDIA driver is new enough for torch's CUDA"""
    # B1: "The NVIDIA driver on your system is too old (found version 12080)" / "CUDA driver
    # version is insufficient for CUDA runtime version". PyPI torch >= 2.11 is CUDA 13 (R580+).
    tcuda = _cuda_build(torch_build)
    dcuda = driver.get("cuda_version")
    if not dcuda:
        return skip("the driver's CUDA version could not be read")
    libcuda = driver.get("libcuda") or {}
    forward = "compat" in (libcuda.get("realpath") or "") and libcuda.get("version") != driver.get("kernel_module")
    verdict = compat.judge_driver(tcuda, dcuda, None if forward else driver.get("version"))
    subject = f"torch {torch_build['version']} (CUDA {tcuda}), driver {driver['version']} (CUDA {dcuda})"
    details = {"torch_cuda": tcuda, "driver_cuda": dcuda, "driver": driver["version"], "forward_compat": forward}
    if verdict.level in ("too_old", "below_floor"):
        need = f"driver >= {verdict.needed_driver}" if verdict.needed_driver else "a newer driver"
        if not compat.best_index_for_driver(dcuda):  # older than every current torch index: only the driver can move
            oldest = compat.TORCH_INDEXES[-1]
            return fail(
                f"{subject}: {verdict.message}; CUDA fails with 'driver version is insufficient'",
                hint=f"upgrade the NVIDIA driver to {need} (current torch builds need at least CUDA {oldest}, driver >= "
                f"{compat.ga_driver(oldest) or oldest}); or install an old torch release built for CUDA <= {dcuda}",
                details=details,
            )
        return fail(
            f"{subject}: {verdict.message}; CUDA fails with 'driver version is insufficient'",
            hint=f"upgrade the NVIDIA driver to {need}, or install the torch build for your driver: {_index_hint(driver)}",
            details=details,
            fixes=[_index_fix(driver, python_info)],
        )
    if verdict.level == "minor_compat":
        return warn(
            f"{subject}: {verdict.message} (PTX JIT and some newer APIs are unavailable)",
            hint=f"upgrade the NVIDIA driver to >= {verdict.needed_driver or 'the CUDA ' + tcuda + ' release driver'}, or: {_index_hint(driver)}",
            details=details,
            fixes=[_index_fix(driver, python_info)],
        )
    return ok(f"{subject}" + (" via forward compatibility" if forward else ""), details=details)


def _gpus_for_arch(visible_gpus, gpus, torch_runtime) -> list[dict]:
    gs = visible_gpus if visible_gpus else gpus
    if not gs:
        raise Skip(getattr(gpus, "reason", "") or "no GPU visible")
    return gs


ARCH_CAUSE = "arch_not_in_torch_build"  # the catalog's category for a GPU a build has no kernels for


def _arch_item(g: dict, flags, cuda: str | None) -> Item:
    """How one GPU runs a build: native kernels, PTX JIT, or not at all (below the build's
    lowest arch, beside it, or newer than the build's CUDA)."""
    cc = g.get("cc") or ""
    sm = "sm_" + (cc or "?").replace(".", "")
    if not compat.cc_tuple(cc):
        return Item(_label(g), Status.SKIP, "compute capability unknown (the GPU's name is not in the table)")
    m = compat.arch_match(cc, flags)
    first = rd.cuda_first(cc)
    if m.how == "ptx" and first and (compat.cuda_tuple(cuda) or (99, 0)) < (compat.cuda_tuple(first) or (0, 0)):
        return Item(
            _label(g),
            Status.FAIL,
            f"{sm} only through PTX, but CUDA {cuda} predates {sm} (first in CUDA {first}): its libraries have no kernels for it",
        )
    if m.how == "sass":
        return Item(_label(g), Status.PASS, f"{sm}: native kernels ({m.flag})")
    if m.how == "ptx":
        return Item(_label(g), Status.PASS, f"{sm}: through PTX JIT of {m.flag} (first use compiles)")
    low = compat.lowest_arch(flags)
    if low and compat.cc_tuple(cc) < low[1]:
        return Item(_label(g), Status.FAIL, f"{sm} is below the build's lowest arch ({low[0]}): the GPU is too old for this torch")
    return Item(_label(g), Status.FAIL, f"{sm} is not in torch's arch list")


@check("torch.arch_support", tags=("gpu",), sources=("live", "pasted"))
def arch_support(torch_build, gpus, torch_runtime=None, visible_gpus=None, os_release=None):
    """torch has kernels for each GPU's compute capability"""
    # B3: "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the
    # current PyTorch installation" then "no kernel image is available for execution on the device".
    cuda = _cuda_build(torch_build)
    # Without the imported torch's own list (a paste of `pip list` and `nvidia-smi`, or versions
    # written by hand), the release table's list for this build: a GTX 1080 under a cu128 build
    # is judged, not asked about.
    rt = _runtime(torch_runtime) if torch_runtime else {}  # an optional fact not there is a falsy Missing
    flags = rt.get("arch_list") or []
    if not flags and (other := rd.other_machine(os_release)):
        return skip(f"torch reports no CUDA arch list, and the release table's are the x86_64 wheels' (this is {other})")
    flags = flags or list(rd.arch_flags(torch_build.get("version"), cuda) or ())
    if not flags:
        return skip("torch reports no CUDA arch list")
    gs = _gpus_for_arch(visible_gpus, gpus, rt)
    items = [_arch_item(g, flags, cuda) for g in gs]
    bad = [(g, i) for g, i in zip(gs, items, strict=True) if i.status is Status.FAIL]
    details = {"arch_list": flags, "cause_id": ARCH_CAUSE}
    if bad:
        g0, i0 = bad[0]
        return fail(
            f"{i0.name} has compute capability {g0.get('cc')}, which torch {torch_build['version']} has no kernels for "
            f"({i0.message}; built for {' '.join(flags)}): 'no kernel image is available for execution on the device'",
            hint="install " + compat.recommend_variant(g0.get("cc") or ""),
            items=items,
            details=details,
        )
    if all(i.status is Status.SKIP for i in items):
        return skip("no GPU's compute capability is known", details=details)
    return ok("; ".join(f"{i.name}: {i.message}" for i in items), items=items, details=details)


def _line_builds(version: str | None) -> tuple[dict[str, tuple[str, ...]], str]:
    """The CUDA builds to judge a GPU against, and how to name them: the release line's (for a
    version without its variant), or every line since the table's oldest (no version: then only
    a GPU below all of them is judged, as a newer torch than the table may cover a new GPU)."""
    if version:
        return rd.line_arch_flags(version), f"every CUDA build of torch {version}"
    builds = rd.all_arch_flags()
    return builds, "every CUDA build of torch since " + min(builds, key=_line_key).split()[0] if builds else ""


def _covered(g: dict, builds: dict[str, tuple[str, ...]]) -> bool:
    """Whether any of the builds (``cu118`` or ``"2.1 cu118"`` -> arch flags) runs the GPU."""
    for key, flags in builds.items():
        tag = key.split()[-1]
        if _arch_item(g, list(flags), f"{tag[2:-1]}.{tag[-1]}").status is Status.PASS:
            return True
    return False


@check("torch.line_arch_support", tags=("gpu",), sources=("live", "pasted"))
def line_arch_support(gpus, torch_build=None, dists=None, os_release=None):
    """Some CUDA build of the installed torch release has kernels for each GPU"""
    # pytorch#31876-like: a GeForce 210 (cc 1.2) with torch 1.2.0 and `Is CUDA available: No`,
    # no error text and no CUDA variant: every CUDA build of the line starts at sm_35. The same
    # for a GPU newer than every build of the line (an RTX 5090 under any torch 2.5 build).
    if torch_build and torch_build.get("kind") not in (None, "cuda"):
        return skip(f"torch {torch_build['version']} is a {torch_build['kind'].upper()} build")
    version = (torch_build or {}).get("version") or ((dists or {}).get("torch") or {}).get("version")
    if torch_build and rd.arch_flags(version, torch_build.get("cuda")):
        return skip("torch.arch_support judges this build's arch list")
    if other := rd.other_machine(os_release):
        return skip(f"the release table's arch lists are the x86_64 wheels' (this is {other})")
    builds, what = _line_builds(version)
    if not builds:
        return skip(f"the tables know no CUDA build of torch {version}")
    # Jetson/DRIVE iGPUs run NVIDIA's own torch builds, not the wheels the tables list
    known = [g for g in gpus or [] if (cc := compat.cc_tuple(g.get("cc"))) and cc not in compat.IGPU_CC]
    if not known:
        return skip("no discrete GPU's compute capability is known")
    lowest = min((low for f in builds.values() if (low := compat.lowest_arch(list(f)))), key=lambda x: x[1])
    bad = [g for g in known if not _covered(g, builds) and (version or compat.cc_tuple(g["cc"]) < lowest[1])]
    if not bad:
        return ok(f"each GPU is covered by a CUDA build of {what.removeprefix('every CUDA build of ')}")
    g0 = bad[0]
    if compat.cc_tuple(g0["cc"]) < lowest[1]:
        return fail(
            f"{_label(g0)} has compute capability {g0.get('cc')}, below {what} (the lowest arch is {lowest[0]}): the GPU is too old for it",
            hint="use an older torch release that still has kernels for this GPU, build torch from source for it, or use a newer GPU",
            details={"cause_id": ARCH_CAUSE, "lowest_arch": lowest[0]},
        )
    return fail(
        f"{_label(g0)} has compute capability {g0.get('cc')}, which {what} lacks kernels for (the newest arch is "
        f"{max((compat.highest_arch(list(f)) for f in builds.values()), key=lambda x: x[1])[0]}): the GPU is newer than this torch",
        hint="install " + compat.recommend_variant(g0.get("cc") or ""),
        details={"cause_id": ARCH_CAUSE},
    )


def _line_key(label: str) -> tuple[int, ...]:
    return tuple(int(x) for x in label.split()[0].split("."))


def _label(g: dict) -> str:
    return f"GPU {g.get('index')} ({g.get('name', '?')})"


@check("torch.ptx_jit", tags=("gpu",), sources=("live", "pasted"))
def ptx_jit(torch_build, torch_runtime, driver, gpus, visible_gpus=None):
    """GPUs served only by PTX have a driver that can JIT torch's PTX"""
    # B19: "the provided PTX was compiled with an unsupported toolchain" — minor-version
    # compatibility does not cover JIT-compiling PTX from a newer toolkit than the driver.
    tcuda = _cuda_build(torch_build)
    rt = _runtime(torch_runtime)
    flags = rt.get("arch_list") or []
    if not flags:
        return skip("torch reports no CUDA arch list")
    ptx_only = [(g, m) for g in _gpus_for_arch(visible_gpus, gpus, rt) if (m := compat.arch_match(g.get("cc") or "", flags)).how == "ptx"]
    if not ptx_only:
        return skip("every GPU has native (SASS) kernels in torch; no PTX JIT needed")
    d, t = compat.cuda_tuple(driver.get("cuda_version")), compat.cuda_tuple(tcuda)
    names = ", ".join(_label(g) for g, _ in ptx_only)
    if d and t and d < t:
        return fail(
            f"{names} run torch only through PTX JIT ({ptx_only[0][1].flag}), but the driver supports CUDA {driver['cuda_version']} < torch's CUDA {tcuda}: "
            "'the provided PTX was compiled with an unsupported toolchain'",
            hint=f"upgrade the NVIDIA driver to >= {compat.ga_driver(tcuda) or 'the CUDA ' + tcuda + ' release driver'}",
        )
    return ok(f"{names} use PTX JIT ({ptx_only[0][1].flag}); the driver (CUDA {driver.get('cuda_version')}) can compile it")


@check("torch.cuda_available", tags=("gpu", "health"), sources=("live", "pasted"))
def cuda_available(torch_build, torch_runtime, gpus, visible_gpus=None):
    """torch sees the GPUs the driver reports (as CUDA_VISIBLE_DEVICES selects)"""
    _cuda_build(torch_build)
    rt = _runtime(torch_runtime)
    if not gpus:
        return skip("the driver reports no GPU")
    expected = len(visible_gpus) if isinstance(visible_gpus, list) else len(gpus)
    seen = rt.get("device_count") or 0
    avail = rt.get("cuda_available") is True
    msgs = [w for w in rt.get("warnings") or [] if "CUDA" in w or "cuda" in w or "NVIDIA" in w]
    details = {"device_count": seen, "expected": expected, "cuda_available": rt.get("cuda_available"), "warnings": msgs}
    if expected == 0:
        return skip(f"CUDA_VISIBLE_DEVICES selects none of the {len(gpus)} GPU(s) (see nvidia.cuda_visible_devices)")
    if avail and seen == expected:
        names = sorted({str(d.get("name")) for d in rt.get("devices") or []})
        return ok(f"torch.cuda.is_available() is True; {seen} device(s): {', '.join(names)}", details=details)
    said = msgs[0].strip().splitlines()[0][:300] if msgs else ""
    found = best_signature(said, hints_for("torch.cuda_available")) if said else None
    hint = found.fix if found else None
    if not avail or seen == 0:
        return fail(
            f"torch.cuda.is_available() is False although the driver reports {expected} usable GPU(s)" + (f": {said}" if said else ""),
            hint=hint
            or "run python -c 'import torch; torch.cuda.init()' to see CUDA's error; check the driver (nvidia.driver) and CUDA_VISIBLE_DEVICES",
            details=details,
        )
    return warn(
        f"torch sees {seen} GPU(s) but CUDA_VISIBLE_DEVICES and the driver select {expected}" + (f": {said}" if said else ""),
        hint=hint or "compare `nvidia-smi -L` with CUDA_VISIBLE_DEVICES; with MIG a process sees one instance",
        details=details,
    )


# ---- checks: packages around torch ---------------------------------------------------------

_CUDA_PKG = lazy_pattern(r"^(nvidia-|cuda-toolkit|cuda-bindings)")


@check("torch.nvidia_wheel_pins", tags=("build",), sources=("live", "pasted"))
def nvidia_wheel_pins(dists, python_info=None):
    """The nvidia-* CUDA packages match torch's exact pins"""
    # B7: JAX/TF/vLLM install other nvidia-* versions into the same site-packages/nvidia tree:
    # "torch 2.x requires nvidia-cudnn-cu12==9.1.0.70, but you have nvidia-cudnn-cu12 9.8..."
    torch = dists.get("torch")
    if not torch:
        return skip("torch is not installed")
    pins = [r for r in requirements(torch) if _CUDA_PKG.match(canonical(r.name)) and marker_applies(r)]
    items, missing, wrong = [], [], []
    for r in pins:
        key = canonical(r.name)
        d = dists.get(key)
        spec = str(r.specifier)
        if d is None:
            missing.append(f"{r.name}{spec}")
            items.append(Item(r.name, Status.FAIL, f"not installed (torch requires {spec})"))
        elif r.specifier and not r.specifier.contains(d["version"], prereleases=True):
            wrong.append(f"{r.name} {d['version']} (torch requires {spec})")
            items.append(Item(r.name, Status.WARN, f"{d['version']} installed, torch requires {spec}"))
        else:
            items.append(Item(r.name, Status.PASS, d["version"]))
    families: dict[str, set[str]] = {}
    for key in dists:
        m = re.match(r"nvidia-([a-z-]+?)-cu(\d+)$", key)
        if m:
            families.setdefault(m.group(1), set()).add(m.group(2))
    clash = sorted(f"nvidia-{c}-cu{'/cu'.join(sorted(v))}" for c, v in families.items() if len(v) > 1)
    if not pins:
        return skip(f"torch {torch['version']} pins no nvidia-* packages (a CPU/ROCm build or a build with bundled CUDA libraries)")
    if missing:
        return fail(
            f"torch {torch['version']} requires {', '.join(missing)}, which is not installed: import torch fails with 'cannot open shared object file'",
            hint=f"pip install --force-reinstall 'torch=={torch['version']}' (without --no-deps) to restore its pinned CUDA libraries",
            items=items,
            fixes=[pip_fix(python_info, "install", "--force-reinstall", f"torch=={torch['version']}")],
        )
    if wrong or clash:
        what = "; ".join(wrong + ([f"both CUDA families installed: {', '.join(clash)}"] if clash else []))
        return warn(
            f"CUDA packages differ from torch {torch['version']}'s pins: {what}",
            hint=f"pip install --force-reinstall --no-cache-dir 'torch=={torch['version']}' restores the pins; keep JAX/TF in a separate environment",
            items=items,
            fixes=[pip_fix(python_info, "install", "--force-reinstall", "--no-cache-dir", f"torch=={torch['version']}")],
        )
    return ok(f"{len(pins)} pinned CUDA package(s) match torch {torch['version']}", items=items)


_CUDA_LIBS = ("cudnn", "cublas", "cublasLt", "nccl", "cudart", "nvJitLink", "cusparse", "cufft", "curand", "cusolver", "nvrtc")
_OMP = {"gomp": "GNU libgomp", "iomp5": "Intel libiomp5", "omp": "LLVM libomp"}


def scan_ld_library_path(env: Mapping[str, str], kinds: set[str]) -> list[dict]:
    """Copies of CUDA libraries in LD_LIBRARY_PATH directories (candidates for shadowing)."""
    out = []
    for d in ld_library_path(env):
        for p in sorted(glob.glob(os.path.join(d, "lib*.so*"))):
            k = lib_kind(os.path.basename(p))
            if k in kinds and not os.path.islink(p):
                out.append({"path": p, "kind": k, "version": lib_version(p)})
    return out


def _cudnn_text(v) -> str:
    return (
        f"{v // 10000}.{(v % 10000) // 100}.{v % 100}"
        if isinstance(v, int) and v >= 10000
        else f"{v // 1000}.{(v % 1000) // 100}.{v % 100}"
        if isinstance(v, int)
        else str(v)
    )


def _loaded_lib_problems(libs: list[dict]) -> tuple[list[str], str]:
    """Shadowed pip libraries, two copies of one CUDA library, and mixed OpenMP runtimes; plus a
    note for two harmless libgomp copies."""
    problems = []
    kinds: dict[str, list[dict]] = {}
    for lib in libs:
        kinds.setdefault(lib["kind"], []).append(lib)
    uses_pip = any(lib["provenance"] == "pip wheel (nvidia-*)" for lib in libs)
    shadow = [
        lib
        for lib in libs
        if lib["kind"] in _CUDA_LIBS and uses_pip and lib["provenance"] != "pip wheel (nvidia-*)" and lib.get("via_ld_library_path")
    ]
    for lib in shadow:
        problems.append(f"{lib['name']} loaded from {lib['realpath']} (LD_LIBRARY_PATH) instead of torch's pip nvidia-* copy")
    for k, group in kinds.items():
        reals = sorted({lib["realpath"] for lib in group})
        if k in _CUDA_LIBS and len(reals) > 1:
            problems.append(f"two copies of lib{k} loaded: {', '.join(reals)}")
    omp = {k: sorted({lib["realpath"] for lib in kinds[k]}) for k in _OMP if k in kinds}
    omp_note = ""
    if len(omp) > 1 or any(len(v) > 1 for k, v in omp.items() if k != "gomp"):
        problems.append("more than one OpenMP runtime loaded: " + "; ".join(f"{_OMP[k]} {', '.join(v)}" for k, v in omp.items()))
    elif len(omp.get("gomp", [])) > 1:
        omp_note = f" (two libgomp copies: {', '.join(omp['gomp'])})"
    return problems, omp_note


def _cudnn_mismatch(rt: dict) -> list[str]:
    cudnn = rt.get("cudnn")
    if isinstance(cudnn, int) and isinstance(rt.get("cudnn_compile"), list) and rt["cudnn_compile"]:
        built = rt["cudnn_compile"]
        run_major = cudnn // 10000 if cudnn >= 10000 else cudnn // 1000
        if run_major != built[0]:
            return [f"cuDNN {_cudnn_text(cudnn)} loaded but torch was built for cuDNN {'.'.join(map(str, built))}"]
    return []


def _stray_copies(libs: list[dict], env) -> list[dict]:
    # Copies of the same libraries elsewhere on LD_LIBRARY_PATH, of another version, are picked
    # up by libraries loaded later (cuDNN's sub-libraries, nvJitLink for cuSPARSE).
    loaded_kinds = {lib["kind"] for lib in libs if lib["kind"] in _CUDA_LIBS and lib["provenance"] == "pip wheel (nvidia-*)"}
    loaded_real = {lib["realpath"] for lib in libs}
    return [c for c in scan_ld_library_path(env, loaded_kinds) if os.path.realpath(c["path"]) not in loaded_real]


def _loaded_summary(libs: list[dict], rt: dict) -> str:
    parts = []
    if isinstance(rt.get("cudnn"), int):
        parts.append(f"cuDNN {_cudnn_text(rt['cudnn'])}")
    if isinstance(rt.get("nccl"), str):
        parts.append(f"NCCL {rt['nccl']}")
    by_kind: dict[str, str] = {}
    for lib in libs:
        if lib["kind"] in ("cudnn", "cublas", "nccl", "cudart", "gomp", "iomp5", "omp"):
            by_kind.setdefault(lib["kind"], f"{lib['name']} ({lib['provenance']})")
    return ", ".join(parts + list(by_kind.values())) or "no CUDA/OpenMP library loaded"


@check("torch.loaded_libraries", tags=("build",))
def loaded_libraries(torch_runtime, env, torch_build=None):
    """The cuDNN, cuBLAS, NCCL and OpenMP libraries torch really loaded"""
    # B6/B8: an older toolkit on LD_LIBRARY_PATH wins over the pip nvidia-* libraries ("undefined
    # symbol: __nvJitLinkAddData_12_1"); two OpenMP runtimes in one process crash or oversubscribe.
    # Only what torch loaded counts: a system cuDNN that ldconfig lists but torch does not load is harmless.
    rt = _runtime(torch_runtime)
    libs = rt.get("loaded_libs") or []
    items = []
    for lib in libs:
        where = " via LD_LIBRARY_PATH" if lib.get("via_ld_library_path") else ""
        items.append(Item(lib["name"], Status.PASS, f"{lib['realpath']} ({lib['provenance']}{where})"))
    problems, omp_note = _loaded_lib_problems(libs)
    stray = _stray_copies(libs, env)
    cudnn = rt.get("cudnn")
    problems += _cudnn_mismatch(rt)
    # Each library's provenance is in its item and the torch_runtime fact: the details name them only.
    # The libraries themselves are in the torch_runtime fact and in this check's items.
    details = {"ld_library_path_copies": stray, "cudnn": cudnn, "nccl": rt.get("nccl")}
    if isinstance(cudnn, dict) and cudnn.get("error"):
        # torch refuses the cuDNN it found: every convolution on the GPU fails.
        return fail(
            "; ".join([f"cuDNN fails to load: {cudnn['error']}", *problems]),
            hint="remove the directory holding the other cuDNN from LD_LIBRARY_PATH (unset LD_LIBRARY_PATH for torch processes) "
            "so torch loads the cuDNN of its nvidia-cudnn wheel",
            items=items,
            details=details,
        )
    if problems:
        return warn(
            "; ".join(problems),
            hint="remove CUDA toolkit/conda directories from LD_LIBRARY_PATH for torch processes (unset LD_LIBRARY_PATH), "
            "and load a single OpenMP runtime (do not mix conda MKL/intel-openmp with pip torch)",
            items=items,
            details=details,
        )
    differing = [c for c in stray if c["version"] and not any(c["version"] == (lib.get("version") or "") for lib in libs)]
    if differing:
        return warn(
            "LD_LIBRARY_PATH holds other versions of libraries torch uses from pip: "
            + ", ".join(f"{c['path']} ({c['version']})" for c in differing[:4])
            + "; libraries torch loads later (cuDNN sub-libraries, nvJitLink) may come from there",
            hint="remove "
            + ", ".join(sorted({os.path.dirname(c["path"]) for c in differing}))
            + " from LD_LIBRARY_PATH for torch processes",
            items=items,
            details=details,
        )
    return ok(_loaded_summary(libs, rt) + omp_note, items=items, details=details)


@check("torch.duplicate_installs", tags=("build",))
def duplicate_installs(torch_spec, dists):
    """Only one torch installed; import torch loads the installed one"""
    # B9: "import torch gives a different version than pip list"; pip's "WARNING: Ignoring
    # invalid distribution ~orch" after an interrupted upgrade.
    problems = []
    dist = dists.get("torch")
    if dist and dist.get("location"):
        site = os.path.realpath(os.path.dirname(dist["location"]))
        if os.path.dirname(torch_spec["dir"]) != site:
            problems.append(f"import torch loads {torch_spec['dir']}, but pip's torch {dist['version']} is installed in {site}")
    for other in (dist or {}).get("others", []):
        problems.append(f"another torch {other['version']} dist-info at {other['location']}")
    extra = [c for c in torch_spec["copies"] if c != torch_spec["dir"]]
    if extra:
        problems.append(f"other torch packages on sys.path, shadowed: {', '.join(extra)}")
    if torch_spec["leftovers"]:
        problems.append(f"leftovers of an interrupted pip run: {', '.join(torch_spec['leftovers'])}")
    if problems:
        return warn(
            "; ".join(problems),
            hint="pip uninstall torch (repeat until `python -c 'import torch'` fails), delete ~orch* directories, "
            "check PYTHONPATH and ~/.local (PYTHONNOUSERSITE=1), then install torch once",
        )
    return ok(f"one torch, at {torch_spec['dir']}")


def _cache_tag(interpreter) -> str:
    if not interpreter or interpreter.own:  # not given (Missing, falsy) or envdoctor's own Python
        return sys.implementation.cache_tag or ""
    major, minor = (interpreter.version.split(".") + ["0"])[:2]
    return f"cpython-{major}{minor}"


def bytecode_coverage(package: str, tag: str, prefix: str | None = None) -> tuple[int, int, int]:
    """(modules, modules without bytecode, bytes of their source) under ``package``, tests left
    out. Bytecode is looked for where the examined Python looks: ``__pycache__`` beside each
    source, or under PYTHONPYCACHEPREFIX when that is set."""
    total = missing = size = 0
    for directory, dirs, files in os.walk(package):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "tests", "test")]
        cache = os.path.join(prefix, os.path.abspath(directory).lstrip(os.sep)) if prefix else os.path.join(directory, "__pycache__")
        try:
            have = set(os.listdir(cache))
        except OSError:
            have = set()
        for f in files:
            if not f.endswith(".py"):
                continue
            total += 1
            if f"{f[:-3]}.{tag}.pyc" not in have:
                missing += 1
                try:
                    size += os.path.getsize(os.path.join(directory, f))
                except OSError:
                    pass
    return total, missing, size


def _bytecode_blocked(package: str, env: Mapping[str, str], prefix: str | None = None) -> str:
    """Why Python cannot save the bytecode it compiles ('' when it can). Under PYTHONPYCACHEPREFIX
    it saves there, not beside the sources, but PYTHONDONTWRITEBYTECODE still stops it."""
    if env.get("PYTHONDONTWRITEBYTECODE"):
        return f"PYTHONDONTWRITEBYTECODE={env['PYTHONDONTWRITEBYTECODE']} stops Python from saving it"
    if not prefix and not os.access(package, os.W_OK):
        return f"{package} is not writable here, so Python cannot save it"
    return ""


@check("torch.bytecode", tags=("build",))
def bytecode(torch_spec, env, interpreter=None):
    """torch is compiled to bytecode once, not again by every process that imports it"""
    package = torch_spec["dir"]
    prefix = env.get("PYTHONPYCACHEPREFIX") or None
    total, missing, size = bytecode_coverage(package, _cache_tag(interpreter), prefix)
    if not total:
        return skip(f"no Python sources under {package}")
    if missing * 2 <= total:
        return ok(f"{total - missing} of {total} modules have bytecode" + (f" (under PYTHONPYCACHEPREFIX={prefix})" if prefix else ""))
    blocked = _bytecode_blocked(package, env, prefix)
    if not blocked:
        return ok(f"{missing} of {total} modules have no bytecode yet; Python saves it at their first import")
    python = executable(interpreter)
    site = os.path.dirname(package)
    return warn(
        f"torch has no bytecode ({missing} of {total} modules, {size / 1e6:.0f} MB of source) and {blocked}: every process that "
        "imports torch compiles them again (seconds each, for every DataLoader worker and torchrun rank)",
        f"Compile once where torch is installed (in the image build): {python} -m compileall -q -j 0 {site}; "
        "uv installs without bytecode unless told (UV_COMPILE_BYTECODE=1 or --compile-bytecode), as does pip --no-compile",
        details={"package": package, "modules": total, "without_bytecode": missing, "source_bytes": size},
        fixes=[Fix((python, "-m", "compileall", "-q", "-j", "0", site), scope="venv", needs_root=not os.access(site, os.W_OK))],
    )


@check("torch.numpy_abi", tags=("build",), sources=("live", "pasted"), blame=("numpy", "torch"))
def numpy_abi(dists, python_info=None):
    """NumPy's major version suits torch and the installed packages"""
    # B10: "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.0.0 as it may crash."
    np, torch = dists.get("numpy"), dists.get("torch")
    if not np:
        return skip("numpy is not installed (torch works without it; torch.from_numpy and .numpy() need it)")
    npv = version_or_none(np["version"])
    if torch is None or npv is None:
        return skip("torch is not installed" if torch is None else f"numpy version {np['version']!r} is not readable")
    tv = version_or_none(torch["version"])
    if npv.major >= 2 and tv is not None and tv.release < (2, 3):
        return fail(
            f"numpy {np['version']} with torch {torch['version']}: torch < 2.3 was built against NumPy 1.x ('Failed to initialize NumPy: _ARRAY_API not found')",
            hint="pip install 'numpy<2' (or upgrade torch to >= 2.3)",
            fixes=[pip_fix(python_info, "install", "numpy<2")],
        )
    unsatisfied = []
    for d in dists.values():
        for r in requirements(d):
            if (
                canonical(r.name) == "numpy"
                and r.specifier
                and marker_applies(r)
                and not r.specifier.contains(np["version"], prereleases=True)
            ):
                unsatisfied.append(f"{d['name']} {d['version']} requires numpy{r.specifier}")
    if unsatisfied:
        return warn(
            f"numpy {np['version']} is outside what installed packages declare: {'; '.join(sorted(unsatisfied)[:5])}",
            hint="pip install 'numpy<2' or upgrade those packages (pip check lists every conflict)",
        )
    return ok(f"numpy {np['version']} suits torch {torch['version']}")


# torch.extension_abi lives in checks/extensions.py (it loads every extension in the probe).
