"""The NVIDIA driver and GPUs, read without importing torch and without creating a CUDA context.

Sources, cheapest and most truthful first: NVML through nvidia-ml-py (every attribute asked for
separately, because one unsupported query must not lose the rest), then
``/proc/driver/nvidia/version`` and ``nvidia-smi --query-gpu`` with a timeout. The CUDA version
the driver supports comes from ``cuDriverGetVersion`` in ``libcuda.so.1`` through ctypes (no
``cuInit``: that would touch the GPUs). PCI config space tells "no GPU" from "GPU but no driver".

Facts: ``driver``, ``gpus``, ``visible_gpus``, ``pci_gpus`` (shared), ``nvidia_query`` and
``pci_nvswitches`` (this module's own).
"""

from __future__ import annotations

import ctypes
import io
import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from envdoctor import (
    Item,
    ProbeError,
    ProbeRaised,
    Skip,
    Status,
    Unavailable,
    check,
    describe_signal,
    env_fix,
    fact,
    fail,
    last_line,
    ok,
    skip,
    warn,
)
from envdoctor import run_command as run
from envdoctor_checks._lazy import lazy
from envdoctor_checks.bodies.nvml_child import lib_info, loaded_library  # as the NVML child reports libnvidia-ml

compat = lazy("envdoctor_checks._cuda_compat")

PROC_VERSION = "/proc/driver/nvidia/version"
SYS_MODULE_VERSION = "/sys/module/nvidia/version"
PCI_DEVICES = "/sys/bus/pci/devices"
IOMMU_GROUPS = "/sys/kernel/iommu_groups"
# One short deadline for every driver query: a healthy driver answers in well under a second,
# one that takes 10 s is wedged, and the rest of the run must not wait for it.
DRIVER_QUERY_TIMEOUT = 10.0
NVIDIA_SMI_TIMEOUT = DRIVER_QUERY_TIMEOUT
NVML_TIMEOUT = DRIVER_QUERY_TIMEOUT
WEDGED_CAUSE = "the driver or a GPU is likely wedged"
WEDGED_FIX = "look for Xid errors in `dmesg`/`journalctl -k`, then reset the GPU (`nvidia-smi -r`) or reboot"
WEDGED = f"{WEDGED_CAUSE}; {WEDGED_FIX}"

COMPUTE_MODES = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}
FABRIC_STATES = {0: "not supported", 1: "not started", 2: "in progress", 3: "completed"}
SMI_FIELDS = (
    "index",
    "name",
    "uuid",
    "serial",
    "compute_cap",
    "memory.total",
    "memory.used",
    "mig.mode.current",
    "persistence_mode",
    "compute_mode",
    "pci.bus_id",
    "driver_version",
)


# ---- static sources ------------------------------------------------------------------------


def read_kernel_module(proc_path: str | None = None, sys_path: str | None = None) -> str | None:
    """The loaded kernel module's version: ``NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06 ...``
    (or "Open Kernel Module"), else ``/sys/module/nvidia/version``."""
    proc_path, sys_path = proc_path or PROC_VERSION, sys_path or SYS_MODULE_VERSION
    try:
        with open(proc_path, encoding="utf-8", errors="replace") as f:
            m = re.search(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)", f.read())
            if m:
                return m.group(1)
    except OSError:
        pass
    try:
        with open(sys_path, encoding="utf-8", errors="replace") as f:
            text = f.read().strip()
            return text if compat.driver_tuple(text) else None
    except OSError:
        return None


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return ""


def scan_pci(root: str | None = None) -> list[dict]:
    """Every NVIDIA (vendor 0x10de) PCI function: {"address", "device", "class"}."""
    root = root or PCI_DEVICES
    out = []
    import glob  # on use: a paste's triage lists no device

    for dev in sorted(glob.glob(os.path.join(root, "*"))):
        if _read(os.path.join(dev, "vendor")).lower() != "0x10de":
            continue
        out.append(
            {
                "address": os.path.basename(dev),
                "device": _read(os.path.join(dev, "device")),
                "class": _read(os.path.join(dev, "class")).lower(),
            }
        )
    return out


@fact("pci_gpus")
def pci_gpus() -> list[dict]:
    """NVIDIA display/3D controllers on the PCI bus (class 0x03xxxx), driver or not."""
    if not os.path.isdir(PCI_DEVICES):
        raise Unavailable(f"{PCI_DEVICES} is not readable")
    return [d for d in scan_pci(PCI_DEVICES) if d["class"].startswith("0x03")]


@fact("pci_nvswitches")
def pci_nvswitches() -> list[dict]:
    """NVSwitch chips (NVIDIA PCI functions of class 0x0680) of HGX/DGX baseboards."""
    if not os.path.isdir(PCI_DEVICES):
        raise Unavailable(f"{PCI_DEVICES} is not readable")
    return [d for d in scan_pci(PCI_DEVICES) if d["class"].startswith("0x0680")]


def cuda_driver_version() -> tuple[str | None, dict | None, str]:
    """(driver CUDA version, the libcuda loaded, error) via cuDriverGetVersion — no cuInit."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return None, None, f"libcuda.so.1 cannot be loaded ({e})"
    value = ctypes.c_int(0)
    try:
        rc = lib.cuDriverGetVersion(ctypes.byref(value))
    except (AttributeError, OSError) as e:
        return None, lib_info(loaded_library("libcuda.so")), f"cuDriverGetVersion unavailable ({e})"
    info = lib_info(loaded_library("libcuda.so"))
    if rc != 0 or value.value <= 0:
        return None, info, f"cuDriverGetVersion returned error {rc}"
    return compat.cuda_from_int(value.value), info, ""


# ---- NVML ----------------------------------------------------------------------------------

NVML_CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bodies", "nvml_child.py")


class DriverHung(Unavailable):
    """NVML or nvidia-smi did not answer within the deadline: the classic sign of a wedged driver."""


class NvmlFailed(Unavailable):
    """NVML answered with an error; ``library``: the libnvidia-ml the NVML child had loaded, if any."""

    def __init__(self, reason: str, library: Any = None) -> None:
        super().__init__(reason)
        self.library = library


def hang_reason(what: str, timeout: float) -> str:
    return f"{what} within {timeout:.0f}s: {WEDGED}"


def last_json(stdout: str) -> dict | None:
    """A contained child's answer: the JSON object on its last line of output, or None."""
    lines = stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else None
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def nvml_query(env: Mapping[str, str] | None = None, timeout: float | None = None, args: tuple[str, ...] = ()) -> dict:
    """NVML's view, or raise Unavailable with NVML's own error text (:class:`DriverHung` when it
    did not answer). NVML has no timeout of its own, blocks forever on a wedged GPU and has
    crashed an interpreter, so it runs in a child process (``bodies/nvml_child.py``, its own
    process group) that is killed at the deadline. The error carries ``library``: the
    libnvidia-ml the child loaded, which tells a library/kernel-module mismatch. ``args``
    select another query of the same child (``--health``)."""
    timeout = timeout or NVML_TIMEOUT
    res = run([sys.executable, NVML_CHILD, *args], timeout=timeout, env=env)
    if res.timed_out:
        raise DriverHung(hang_reason("NVML did not answer", timeout))
    answer = last_json(res.stdout)
    if answer is None:
        how = describe_signal(res.signal) if res.signal else res.describe()
        tail = last_line(res.stderr)
        raise Unavailable(f"the NVML query {how}" + (f" ({tail})" if tail and not res.signal else ""))
    if not answer.get("ok"):
        raise NvmlFailed(str(answer.get("error") or "NVML failed"), answer.get("library"))
    return answer["value"]


# ---- nvidia-smi ----------------------------------------------------------------------------


def _smi_int_mib(text: str) -> int | None:
    try:
        return int(float(text)) << 20
    except ValueError:
        return None


def parse_smi_csv(text: str) -> list[dict]:
    gpus: list[dict] = []
    import csv  # on use: a paste's triage reads no nvidia-smi query

    for row in csv.reader(io.StringIO(text)):
        row = [c.strip() for c in row]
        if len(row) != len(SMI_FIELDS):
            continue
        r = dict(zip(SMI_FIELDS, row, strict=True))
        na = {"[N/A]", "N/A", "[Not Supported]", ""}
        gpus.append(
            {
                "index": int(r["index"]) if r["index"].isdigit() else len(gpus),
                "name": r["name"],
                "uuid": r["uuid"],
                "serial": "" if r["serial"] in na else r["serial"],
                "cc": None if r["compute_cap"] in na else r["compute_cap"],
                "memory_total": _smi_int_mib(r["memory.total"]),
                "memory_used": _smi_int_mib(r["memory.used"]),
                "mig_mode": r["mig.mode.current"] == "Enabled",
                "mig_devices": [],
                "persistence_mode": {"Enabled": True, "Disabled": False}.get(r["persistence_mode"]),
                "compute_mode": r["compute_mode"].replace("Exclusive Process", "Exclusive_Process")
                if r["compute_mode"] not in na
                else None,
                "brand": "",
                "pci_bus_id": r["pci.bus_id"],
                "processes": None,
                "driver_version": r["driver_version"],
            }
        )
    return gpus


def _raise_unless_ok(res, timeout: float) -> None:
    if res.timed_out:
        raise DriverHung(hang_reason("nvidia-smi did not finish", timeout))
    if not res.ok:
        raise Unavailable(res.describe())


def smi_query(env: Mapping[str, str], timeout: float | None = None) -> dict:
    import shutil  # on use: a paste's triage runs no command

    exe = shutil.which("nvidia-smi", path=env.get("PATH", os.defpath))
    if not exe:
        raise Unavailable("nvidia-smi not found on PATH")
    timeout = timeout or NVIDIA_SMI_TIMEOUT
    res = run([exe, f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader,nounits"], timeout=timeout)
    _raise_unless_ok(res, timeout)
    gpus = parse_smi_csv(res.stdout)
    if not gpus and res.stdout.strip():
        raise Unavailable(f"nvidia-smi printed something unexpected: {res.stdout.strip().splitlines()[0][:200]}")
    driver = next((g.pop("driver_version") for g in gpus), None)
    for g in gpus:
        g.pop("driver_version", None)
    return {"driver_version": driver, "gpus": gpus, "path": exe}


@fact("nvidia_query")
def nvidia_query(env) -> dict:
    """Everything the driver says, from the best source that answers: {"source", "nvml", "smi",
    "kernel_module", "errors"}. nvidia-smi runs only when NVML cannot answer."""
    errors: dict[str, str] = {}
    out: dict[str, Any] = {"kernel_module": read_kernel_module(), "nvml": None, "smi": None, "errors": errors, "hung": {}}
    library = None
    try:
        out["nvml"] = nvml_query(env)
    except DriverHung as e:
        errors["nvml"] = out["hung"]["nvml"] = e.reason
    except Unavailable as e:
        errors["nvml"] = e.reason
        library = getattr(e, "library", None)
    # Even when NVML failed to initialise it has loaded libnvidia-ml: its version tells B17.
    out["nvml_library"] = (out["nvml"] or {}).get("library") or library
    if out["nvml"] is None and "nvml" in out["hung"]:
        # nvidia-smi is built on NVML: after NVML hung it would hang too, for another deadline.
        errors["nvidia-smi"] = "not run: NVML did not answer and nvidia-smi relies on it"
    elif out["nvml"] is None:
        try:
            out["smi"] = smi_query(env)
        except DriverHung as e:
            errors["nvidia-smi"] = out["hung"]["nvidia-smi"] = e.reason
        except Unavailable as e:
            errors["nvidia-smi"] = e.reason
    return out


def parse_smi_fabric(text: str) -> dict[str, dict]:
    """{pci bus id (lower case): {"state", "status"}} from ``nvidia-smi -q``'s "Fabric" sections."""
    out: dict[str, dict] = {}
    bus, in_fabric = None, False
    for line in text.splitlines():
        m = re.match(r"^GPU ([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.[0-9A-Fa-f])\s*$", line)
        if m:
            bus, in_fabric = m.group(1).lower(), False
            continue
        stripped = line.strip()
        if stripped == "Fabric":
            in_fabric = True
            continue
        if in_fabric and bus and ":" in stripped:
            key, _, value = (x.strip() for x in stripped.partition(":"))
            if key in ("State", "Status"):
                out.setdefault(bus, {})[key.lower()] = value
                continue
            in_fabric = key in ("CliqueId", "ClusterUUID", "Clique ID", "Cluster UUID", "Bandwidth")
    return out


@fact("fabric_state", ask="the output of `nvidia-smi -q` (its Fabric section)")
def fabric_state(env, gpus, pci_nvswitches=None) -> dict[str, dict]:
    """NVLink fabric state per GPU, on NVSwitch systems only. Read through ``nvidia-smi -q`` in a
    child process: an in-process nvmlDeviceGetGpuFabricInfoV call crashed the interpreter
    (SIGSEGV) on the H200 test machine, and the doctor must never die."""
    if not compat.fabric_possible(gpus, pci_nvswitches):
        raise Unavailable("no NVSwitch fabric on this machine (not an HGX/DGX NVSwitch system)")
    import shutil  # on use: a paste's triage runs no command

    exe = shutil.which("nvidia-smi", path=env.get("PATH", os.defpath))
    if not exe:
        raise Unavailable("nvidia-smi not found on PATH (needed to read the fabric state)")
    res = run([exe, "-q"], timeout=NVIDIA_SMI_TIMEOUT)
    _raise_unless_ok(res, NVIDIA_SMI_TIMEOUT)
    return parse_smi_fabric(res.stdout)


# ---- shared facts --------------------------------------------------------------------------


def _no_driver_reason(query: dict, pci_gpus) -> str:
    errs = query["errors"]
    hung = list((query.get("hung") or {}).values())
    if hung:
        return hung[0]  # the one cause that matters: the driver stopped answering
    tried = f"NVML: {errs.get('nvml', '?')}; nvidia-smi: {errs.get('nvidia-smi', '?')}"
    if isinstance(pci_gpus, list) and pci_gpus:
        return f"no NVIDIA driver loaded although {len(pci_gpus)} NVIDIA GPU(s) are on the PCI bus ({tried})"
    if errs.get("nvidia-smi", "").endswith("not found on PATH") and any(
        t in errs.get("nvml", "") for t in ("Library Not Found", "not installed")
    ):
        # Nothing NVIDIA anywhere: say so plainly.
        return "no NVIDIA GPU or driver on this machine" if isinstance(pci_gpus, list) else f"no NVIDIA driver found ({tried})"
    return f"no NVIDIA driver answered ({tried})"


# a shared stack fact: envdoctor.Stack reads it
@fact("driver", source="live", ask="the output of `nvidia-smi`")
def driver(nvidia_query, pci_gpus=None) -> dict:
    """The NVIDIA driver: version, the CUDA version it supports, where that was read."""
    q = nvidia_query
    kernel = q["kernel_module"]
    if q["nvml"]:
        version, source = q["nvml"]["driver_version"], "nvml"
    elif kernel:
        version, source = kernel, "proc"
    elif q["smi"] and q["smi"]["driver_version"]:
        version, source = q["smi"]["driver_version"], "nvidia-smi"
    else:
        raise Unavailable(_no_driver_reason(q, pci_gpus))
    cuda, libcuda, cuda_err = cuda_driver_version()
    cuda_source = "cuDriverGetVersion"
    if not cuda and q["nvml"] and q["nvml"].get("cuda_version"):
        cuda, cuda_source = q["nvml"]["cuda_version"], "nvml"
    if not cuda:
        cuda, cuda_source = compat.cuda_for_branch(version), "driver branch table"
    return {
        "version": version,
        "cuda_version": cuda,
        "cuda_version_source": cuda_source,
        "source": source,
        "kernel_module": kernel,
        "libcuda": libcuda,
        "libcuda_error": cuda_err,
        "libnvidia_ml": q.get("nvml_library"),
        "nvml_error": q["errors"].get("nvml", ""),
    }


# a shared stack fact: envdoctor.Stack reads it
@fact("gpus", source="live", ask="the output of `nvidia-smi`")
def gpus(nvidia_query, driver) -> list[dict]:
    """Every GPU the driver reports (NVML order, ignoring CUDA_VISIBLE_DEVICES)."""
    if nvidia_query["nvml"]:
        return nvidia_query["nvml"]["gpus"]
    if nvidia_query["smi"]:
        return nvidia_query["smi"]["gpus"]
    raise Unavailable(
        f"the driver is loaded (kernel module {driver['version']}) but neither NVML nor nvidia-smi lists GPUs: {driver['nvml_error']}"
    )


# ---- CUDA_VISIBLE_DEVICES ------------------------------------------------------------------


@dataclass(frozen=True)
class Visible:
    """The GPUs CUDA_VISIBLE_DEVICES leaves visible, and where CUDA stopped reading it."""

    selected: tuple[dict, ...]
    setting: str | None  # the raw value, None when unset
    stopped_at: str | None = None  # the first token CUDA rejected (it ignores it and all after)
    why: str = ""  # why that token was rejected
    duplicate: str | None = None  # a repeated device: CUDA then sees no device at all
    uses_indices: bool = False


def _strtoul(token: str) -> int | None:
    """CUDA reads an index like strtoul: leading digits count ("1gpu" is 1); none is invalid."""
    m = re.match(r"[+]?(\d+)", token)
    return int(m.group(1)) if m else None


def _cuda_order(gpus: list[dict], order: str | None) -> list[dict]:
    # CUDA_DEVICE_ORDER=PCI_BUS_ID numbers GPUs like NVML; the default FASTEST_FIRST puts the
    # fastest first and leaves the rest unspecified. For identical GPUs both agree, for mixed
    # ones the best guess is "newest architecture, then most memory" first, ties in PCI order.
    if (order or "FASTEST_FIRST") == "PCI_BUS_ID" or len({(g.get("name"), g.get("cc")) for g in gpus}) <= 1:
        return list(gpus)
    return sorted(
        gpus,
        key=lambda g: (
            -(compat.cc_tuple(g.get("cc")) or (0, 0))[0] * 100 - (compat.cc_tuple(g.get("cc")) or (0, 0))[1],
            -(g.get("memory_total") or 0),
        ),
    )


def parse_visible(value: str | None, gpus: list[dict], order: str | None = None) -> Visible:
    """Apply ``CUDA_VISIBLE_DEVICES`` the way the CUDA driver does: unset -> all; "" -> none;
    comma-separated indices, ``GPU-`` UUIDs (a unique prefix is enough) or ``MIG-`` UUIDs; the
    first invalid token ends the list; a device named twice leaves none."""
    ordered = _cuda_order(gpus, order)
    if value is None:
        return Visible(tuple(ordered), None)
    selected: list[dict] = []
    seen: set[str] = set()
    uses_indices = False
    if value.strip() == "":
        return Visible((), value)
    for raw in value.split(","):
        token = raw.strip()
        target: dict | None = None
        why = ""
        if token.upper().startswith("MIG-"):
            parent = next((g for g in gpus for m in g.get("mig_devices") or [] if m.get("uuid") and m["uuid"].startswith(token)), None)
            if parent is None:
                parent = next((g for g in gpus if g.get("uuid") and token.startswith("MIG-" + g["uuid"])), None)  # MIG-GPU-<uuid>/gi/ci
            target, why = (dict(parent, mig_instance=token) if parent else None), "no MIG device has that UUID"
        elif token.upper().startswith("GPU-"):
            matches = [g for g in gpus if g.get("uuid", "").lower().startswith(token.lower())]
            target = matches[0] if len(matches) == 1 else None
            why = "no GPU has that UUID" if not matches else "that UUID prefix matches more than one GPU"
        else:
            idx = _strtoul(token)
            uses_indices = True
            if idx is None:
                why = "not a device index or UUID"
            elif idx >= len(ordered):
                why = f"there is no GPU {idx} (this machine has {len(ordered)})"
            else:
                target = ordered[idx]
        if target is None:
            return Visible(tuple(selected), value, stopped_at=token, why=why, uses_indices=uses_indices)
        key = target.get("mig_instance") or target.get("uuid") or str(target.get("index"))
        if key in seen:
            return Visible((), value, duplicate=token, uses_indices=uses_indices)
        seen.add(key)
        selected.append(target)
    return Visible(tuple(selected), value, uses_indices=uses_indices)


# a shared stack fact: envdoctor.Stack reads it
@fact("visible_gpus", source="live", ask="the output of `nvidia-smi` and the value of CUDA_VISIBLE_DEVICES")
def visible_gpus(gpus, env) -> list[dict]:
    """The GPUs CUDA_VISIBLE_DEVICES selects, in CUDA's order."""
    return list(parse_visible(env.get("CUDA_VISIBLE_DEVICES"), gpus, env.get("CUDA_DEVICE_ORDER")).selected)


# ---- checks --------------------------------------------------------------------------------


def _gib(n: int | None) -> str:
    return f"{n / (1 << 30):.0f} GiB" if n else "? GiB"


def _gpu_label(g: dict) -> str:
    return f"GPU {g.get('index')} ({g.get('name', 'unknown')})"


def _need_gpus(gpus) -> list[dict]:
    if not gpus:
        raise Skip(getattr(gpus, "reason", "") or "no NVIDIA GPU visible to the driver")
    return gpus


@check("nvidia.driver", tags=("gpu", "health", "liveness"))
def driver_present(driver=None, pci_gpus=None, container=None, nvidia_query=None):
    """NVIDIA driver loaded; its version and the CUDA version it supports"""
    hung = list(((nvidia_query or {}).get("hung") or {}).values())
    if hung:
        # The one row for a wedged driver; the checks that needed its answer skip with the same text.
        return fail(
            hung[0].replace(f"; {WEDGED_FIX}", ""), hint=WEDGED_FIX[0].upper() + WEDGED_FIX[1:], details={"hung": nvidia_query["hung"]}
        )
    if driver:
        cuda = driver["cuda_version"] or "unknown"
        how = "" if driver["cuda_version_source"] == "cuDriverGetVersion" else f", from {driver['cuda_version_source']}"
        return ok(f"driver {driver['version']} (supports CUDA {cuda}{how}; read via {driver['source']})", details=dict(driver))
    if pci_gpus:
        names = ", ".join(sorted({d["address"] for d in pci_gpus}))
        if container and container.get("in_container"):
            return fail(
                f"{len(pci_gpus)} NVIDIA GPU(s) on the PCI bus ({names}) but the container has no NVIDIA driver",
                hint="start the container with the GPUs exposed: docker run --gpus all ... (needs nvidia-container-toolkit; "
                "`nvidia-ctk runtime configure` on the host); in Kubernetes request nvidia.com/gpu",
                details={"reason": driver.reason if driver is not None else ""},
            )
        return fail(
            f"{len(pci_gpus)} NVIDIA GPU(s) on the PCI bus ({names}) but no NVIDIA driver is loaded",
            hint="install the NVIDIA driver (e.g. `sudo apt install nvidia-driver-580` or `sudo ubuntu-drivers install`) and reboot; "
            "if it is installed, `sudo modprobe nvidia` and check `dmesg | grep -i nvrm` (Secure Boot, kernel upgrade without DKMS)",
            details={"reason": driver.reason if driver is not None else ""},
        )
    return skip("no NVIDIA GPU on this machine" if pci_gpus is not None else "no NVIDIA driver found and the PCI bus is not readable")


@check("nvidia.gpus", tags=("gpu", "health", "liveness"), sources=("live", "pasted"))
def gpu_list(gpus):
    """GPUs: name, compute capability, memory"""
    if not gpus:
        return skip("the driver reports no GPU")
    items = [
        Item(
            _gpu_label(g),
            Status.PASS,
            f"CC {g.get('cc') or '?'}, {_gib(g.get('memory_total'))}" + (", MIG on" if g.get("mig_mode") else ""),
        )
        for g in gpus
    ]
    names = sorted({g.get("name", "?") for g in gpus})
    return ok(
        f"{len(gpus)} GPU(s): "
        + ", ".join(f"{n} (CC {next((g.get('cc') for g in gpus if g.get('name', '?') == n), None) or '?'})" for n in names),
        items=items,
        details={"gpus": gpus},
    )


@check("nvidia.driver_library_mismatch", tags=("gpu", "health", "liveness"))
def driver_library_mismatch(driver):
    """The kernel module and the user-space driver libraries are the same version"""
    # B17: after an unattended driver upgrade without a reboot, user space is new and the kernel
    # module old: "Failed to initialize NVML: Driver/library version mismatch".
    kernel = driver.get("kernel_module")
    if not kernel:
        return skip("the kernel module's version is not readable (/proc/driver/nvidia/version)")
    libs = {}
    for key, label in (("libnvidia_ml", "libnvidia-ml"), ("libcuda", "libcuda")):
        info = driver.get(key) or {}
        if info.get("version") and "compat" not in (info.get("realpath") or ""):
            libs[label] = info
    bad = {k: v for k, v in libs.items() if v["version"] != kernel}
    if bad:
        desc = ", ".join(f"{k} {v['version']} ({v['realpath']})" for k, v in bad.items())
        return fail(
            f"kernel module {kernel} but user-space driver libraries are {desc}: the driver was upgraded without a reboot",
            hint="reboot (or unload and reload the nvidia kernel modules); to stop it recurring: sudo apt-mark hold the nvidia driver packages",
            details={"kernel_module": kernel, "libraries": libs},
        )
    if "mismatch" in (driver.get("nvml_error") or "").lower():
        return fail(
            f"NVML reports a driver/library version mismatch ({driver['nvml_error']}); kernel module {kernel}",
            hint="reboot (or unload and reload the nvidia kernel modules) so the kernel module matches the installed driver libraries",
        )
    if not libs:
        return skip("no user-space driver library version could be read")
    return ok(f"kernel module and {', '.join(libs)} are all {kernel}")


@check("nvidia.cuda_visible_devices", tags=("gpu", "health", "liveness"), sources=("live", "pasted"))
def cuda_visible_devices(gpus, env_vars):
    """CUDA_VISIBLE_DEVICES selects GPUs that exist"""
    # B4: "" hides every GPU ("No CUDA GPUs are available"); an invalid token silently truncates
    # the list ("invalid device ordinal" later); a repeated one leaves no device at all.
    value = env_vars.get("CUDA_VISIBLE_DEVICES")
    order = env_vars.get("CUDA_DEVICE_ORDER")
    if not gpus:
        return skip("the driver reports no GPU")
    if value is None and any(g.get("source") == "pasted" for g in gpus):
        return skip("the paste does not show CUDA_VISIBLE_DEVICES")  # a paste's variables are those it shows
    v = parse_visible(value, gpus, order)
    n = len(gpus)
    details = {"CUDA_VISIBLE_DEVICES": value, "CUDA_DEVICE_ORDER": order, "selected": [g.get("uuid") for g in v.selected]}
    if value is None:
        mixed = len({(g.get("name"), g.get("cc")) for g in gpus}) > 1
        return ok(
            f"unset: CUDA sees all {n} GPU(s)"
            + (" (mixed models: CUDA numbers the fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID)" if mixed else ""),
            details=details,
        )
    if value.strip() == "":
        return fail(
            f"CUDA_VISIBLE_DEVICES is set to an empty string: CUDA and torch see none of the {n} GPU(s)",
            hint="unset CUDA_VISIBLE_DEVICES (or set it to the GPUs to use, e.g. CUDA_VISIBLE_DEVICES=0)",
            details=details,
        )
    if v.duplicate:
        return fail(
            f"CUDA_VISIBLE_DEVICES={value!r} names {v.duplicate!r} twice: CUDA then sees no GPU at all",
            hint="list each GPU once, e.g. CUDA_VISIBLE_DEVICES=0,1",
            details=details,
        )
    if v.stopped_at is not None:
        shown = f"only {len(v.selected)} GPU(s) visible" if v.selected else "no GPU visible"
        msg = f"CUDA_VISIBLE_DEVICES={value!r}: {v.stopped_at!r} is invalid ({v.why}), so CUDA ignores it and everything after it: {shown}"
        hint = f"use indices 0..{n - 1} or GPU UUIDs from `nvidia-smi -L`, or unset CUDA_VISIBLE_DEVICES"
        return (warn if v.selected else fail)(msg, hint=hint, details=details)
    mixed = len({(g.get("name"), g.get("cc")) for g in gpus}) > 1
    if mixed and v.uses_indices and (order or "FASTEST_FIRST") != "PCI_BUS_ID":
        return warn(
            f"CUDA_VISIBLE_DEVICES={value!r} uses indices on a machine with different GPU models; without CUDA_DEVICE_ORDER=PCI_BUS_ID "
            "CUDA numbers them fastest-first, not as nvidia-smi does, so the index may pick another GPU",
            hint="export CUDA_DEVICE_ORDER=PCI_BUS_ID (or select GPUs by UUID from `nvidia-smi -L`)",
            details=details,
            fixes=[env_fix("CUDA_DEVICE_ORDER", "PCI_BUS_ID")],
        )
    return ok(
        f"CUDA_VISIBLE_DEVICES={value!r} selects {len(v.selected)} of {n} GPU(s): " + ", ".join(_gpu_label(g) for g in v.selected),
        details=details,
    )


@check("nvidia.mig", tags=("gpu",))
def mig(gpus, env):
    """MIG mode: CUDA sees one MIG instance per process"""
    # B18: "With CUDA 11/R450 and CUDA 12/R525, only enumeration of a single MIG instance is
    # supported": torch.cuda.device_count() is 1 however many slices exist.
    on = [g for g in _need_gpus(gpus) if g.get("mig_mode")]
    if not on:
        return ok("MIG is off on every GPU")
    # A MIG-enabled GPU without instances offers CUDA no device at all.
    empty = [g for g in on if not g.get("mig_devices") and "mig_count" not in (g.get("errors") or {})]
    if empty:
        usable = len(gpus) - len(empty)
        return (fail if usable == 0 else warn)(
            f"MIG is on for {', '.join(_gpu_label(g) for g in empty)} but no MIG instance exists there: CUDA sees no device on it",
            hint="create instances (sudo nvidia-smi mig -cgi <profile> -C) or disable MIG (sudo nvidia-smi -i <gpu> -mig 0, then reset the GPU)",
        )
    value = env.get("CUDA_VISIBLE_DEVICES")
    total = sum(len(g.get("mig_devices") or []) for g in on)
    selected_mig = [t for t in (value or "").split(",") if t.strip().upper().startswith("MIG-")]
    if len(selected_mig) > 1 or (value is None and total > 1):
        return warn(
            f"MIG is on ({total} MIG instance(s) on {len(on)} GPU(s)) but a CUDA process can use only one MIG instance: torch will see 1 device",
            hint="run one process per MIG instance with CUDA_VISIBLE_DEVICES=MIG-<uuid> (see `nvidia-smi -L`), or disable MIG for multi-GPU jobs",
        )
    return ok(f"MIG is on for {len(on)} GPU(s); one MIG instance per process" + (f" ({value})" if value else ""))


@check("nvidia.compute_mode", tags=("gpu",))
def compute_mode(gpus):
    """GPU compute mode lets this process use the GPU"""
    # B18: Prohibited, or Exclusive_Process with another process on it, gives
    # "all CUDA-capable devices are busy or unavailable" (error 46).
    items = []
    for g in _need_gpus(gpus):
        mode = g.get("compute_mode")
        others = _other_processes(g)
        if mode == "Prohibited":
            items.append(Item(_gpu_label(g), Status.FAIL, "compute mode Prohibited: no CUDA context can be created"))
        elif mode in ("Exclusive_Process", "Exclusive_Thread") and others:
            items.append(
                Item(_gpu_label(g), Status.FAIL, f"compute mode {mode} and already used by pid {', '.join(str(p['pid']) for p in others)}")
            )
        else:
            items.append(Item(_gpu_label(g), Status.PASS, f"compute mode {mode or 'unknown'}"))
    bad = [i for i in items if i.status is Status.FAIL]
    if bad:
        return fail(
            "; ".join(f"{i.name}: {i.message}" for i in bad),
            hint="set the default compute mode (sudo nvidia-smi -i <gpu> -c DEFAULT) or free the GPU, or pick another via CUDA_VISIBLE_DEVICES",
            items=items,
        )
    modes = sorted({g.get("compute_mode") or "unknown" for g in gpus})
    return ok(f"compute mode {', '.join(modes)}", items=items)


@check("nvidia.persistence", tags=("gpu",))
def persistence(gpus):
    """Persistence mode (information)"""
    # B18 (info): with persistence off the driver tears down between jobs and the first CUDA
    # call pays a slow re-initialisation; nothing breaks, so this never warns.
    gs = _need_gpus(gpus)
    on = [g for g in gs if g.get("persistence_mode")]
    off = [g for g in gs if g.get("persistence_mode") is False]
    if off:
        return ok(
            f"persistence mode off on {len(off)} of {len(gs)} GPU(s): the first CUDA init of each job is slower (sudo nvidia-smi -pm 1 or nvidia-persistenced)"
        )
    if on:
        return ok(f"persistence mode on for all {len(on)} GPU(s)")
    return ok("persistence mode not reported (typical inside containers and on some platforms)")


@check("nvidia.fabric_manager", tags=("gpu", "health"), sources=("live", "pasted"))
def fabric_manager(gpus, fabric_state):
    """NVSwitch fabric is initialised (fabric manager running)"""
    # B15: on HGX/DGX NVSwitch systems CUDA fails with "Error 802: system not yet initialized"
    # until nvidia-fabricmanager (same version as the driver) has trained the fabric.
    gs = _need_gpus(gpus)
    items = []
    for g in gs:
        f = fabric_state.get(str(g.get("pci_bus_id", "")).lower())
        if not f or f.get("state", "").lower() in ("n/a", "not supported", ""):
            continue
        good = f.get("state", "").lower() == "completed" and f.get("status", "Success").lower() == "success"
        items.append(Item(_gpu_label(g), Status.PASS if good else Status.FAIL, f"fabric {f.get('state')}, status {f.get('status', '?')}"))
    if not items:
        return skip("the driver reports no GPU fabric state (no NVSwitch fabric, or a pre-Hopper GPU)")
    bad = [i for i in items if i.status is Status.FAIL]
    if bad:
        return fail(
            f"the NVSwitch fabric is not ready on {len(bad)} GPU(s) ({bad[0].message}): CUDA will fail with error 802 'system not yet initialized'",
            hint="install nvidia-fabricmanager of exactly the driver's version and start it: sudo systemctl enable --now nvidia-fabricmanager "
            "(then wait until `nvidia-smi -q | grep -A2 Fabric` shows State: Completed)",
            items=items,
        )
    return ok(f"NVSwitch fabric initialised on {len(items)} GPU(s)", items=items)


def _own_pids() -> set[int]:
    """This process and its descendants (the probe worker may hold GPU memory during smoke tests)."""
    pids = {os.getpid()}
    try:
        import psutil

        pids |= {p.pid for p in psutil.Process().children(recursive=True)}
    except Exception:  # noqa: BLE001
        pass
    return pids


def _other_processes(g: dict) -> list[dict]:
    own = _own_pids()
    return [p for p in (g.get("processes") or []) if p.get("pid") not in own]


SUBSTANTIAL = 0.10  # of a GPU's memory held by others before we call it out


@check("nvidia.gpu_processes", tags=("gpu",))
def gpu_processes(gpus):
    """No other process holds a large share of GPU memory"""
    gs = _need_gpus(gpus)
    if all(g.get("processes") is None for g in gs):
        return skip("the driver does not list GPU processes here (nvidia-smi without NVML, or not permitted)")
    items, heavy = [], []
    for g in gs:
        others = _other_processes(g)
        used = sum(p.get("used_memory") or 0 for p in others)
        total = g.get("memory_total") or 0
        msg = f"{len(others)} other process(es), {_gib(used)}" if others else "no other process"
        if total and used > SUBSTANTIAL * total:
            heavy.append((g, others, used))
            items.append(Item(_gpu_label(g), Status.WARN, msg))
        else:
            items.append(Item(_gpu_label(g), Status.PASS, msg))
    if heavy:
        desc = "; ".join(
            f"{_gpu_label(g)}: pid {', '.join(str(p['pid']) for p in ps)} hold {_gib(u)} of {_gib(g.get('memory_total'))}"
            for g, ps, u in heavy
        )
        return warn(
            f"other processes hold GPU memory ({desc}): your job may run out of memory",
            hint="see them with `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv`; stop them or select a free GPU via CUDA_VISIBLE_DEVICES",
            items=items,
        )
    return ok("no other process holds a significant share of GPU memory", items=items)


@check("nvidia.forward_compat", tags=("gpu",))
def forward_compat(driver, gpus=None):
    """CUDA forward-compatibility libraries are used only where supported"""
    # B16: NGC/CUDA images put /usr/local/cuda/compat (a newer libcuda) on LD_LIBRARY_PATH. On a
    # GeForce/RTX it gives "Error 804: forward compatibility was attempted on non supported HW";
    # a user-space libcuda of another branch than the kernel module gives error 803.
    lib = driver.get("libcuda") or {}
    path = lib.get("realpath") or lib.get("path") or ""
    kernel = driver.get("kernel_module")
    if not path:
        return skip("libcuda.so.1 could not be loaded: " + (driver.get("libcuda_error") or "unknown reason"))
    compat_lib = "compat" in path
    if not compat_lib:
        return ok(f"libcuda is the driver's own ({path})")
    if kernel and lib.get("version") == kernel:
        return ok(f"libcuda from {path} matches the kernel module {kernel}")
    consumer = [g for g in (gpus or []) if compat.is_consumer(g)]
    if consumer:
        return fail(
            f"the CUDA forward-compatibility libcuda {lib.get('version')} ({path}) is loaded on {consumer[0].get('name')}: "
            "forward compatibility works only on data-center GPUs, CUDA fails with error 804",
            hint="remove the compat directory from LD_LIBRARY_PATH (e.g. /usr/local/cuda/compat), or upgrade the host driver to one that supports the image's CUDA",
        )
    return ok(f"CUDA forward compatibility in use: libcuda {lib.get('version')} ({path}) on kernel module {kernel or 'unknown'}")


P2P_PAIR_TIMEOUT = 20.0  # one pair's copies both ways; a working pair takes well under a second
P2P_MB = 8


def measure_peer_copies(probe, *, pair_timeout: float = P2P_PAIR_TIMEOUT, mb: int = P2P_MB) -> dict:
    """Real peer copies for every GPU pair CUDA says can access each other (any GPUs: the
    caller decides where). A pair that hangs ends the measurement: the others would only hang
    too, each costing a fresh worker and a deadline."""
    listing = probe.call("envdoctor_checks.bodies.p2p:peer_pairs", timeout=60, what="the peer-to-peer probe (listing GPU pairs)")
    results = []
    for src, dst in listing.get("pairs") or []:
        what = f"the peer copy between GPU {src} and GPU {dst}"
        try:
            r = probe.call("envdoctor_checks.bodies.p2p:peer_copy", {"src": src, "dst": dst, "mb": mb}, timeout=pair_timeout, what=what)
        except ProbeError as e:
            results.append({"src": src, "dst": dst, "ok": False, "hung": "did not finish" in e.diagnosis, "error": e.diagnosis})
            if results[-1]["hung"]:
                break
            continue
        except ProbeRaised as e:
            r = {"src": src, "dst": dst, "ok": False, "error": f"{e.exc_type}: {e.message}"[:500]}
        results.append(r)
    untested = [p for p in listing.get("pairs") or [] if not any(r["src"] == p[0] and r["dst"] == p[1] for r in results)]
    return {**listing, "copies": results, "untested": untested}


@fact("peer_copies")
def peer_copies(probe, gpus=None) -> dict:
    """Real peer-to-peer copies between the consumer GPUs (B20); only where there are two or
    more: data-center GPUs' NVLink/NVSwitch paths are the distributed checks' business."""
    consumer = [g for g in (gpus or []) if compat.is_consumer(g)]
    if len(consumer) < 2:
        raise Unavailable("fewer than two consumer GPUs")
    try:
        return measure_peer_copies(probe)
    except (ProbeError, ProbeRaised) as e:  # CUDA itself failing: the smoke checks name it
        raise Unavailable(f"the peer-to-peer probe could not run: {e}") from e


def _copy_problem(r: Mapping) -> str:
    pair = f"GPU {r.get('src')} <-> GPU {r.get('dst')}"
    if r.get("hung"):
        return f"the peer copy {pair} hung: {r.get('error')}"
    if r.get("error"):
        return f"the peer copy {pair} failed: {r.get('error')}"
    wrong = int(r.get("wrong_there") or 0) + int(r.get("wrong_back") or 0)
    return f"the peer copy {pair} returned wrong data ({wrong} of {2 * int(r.get('bytes') or 0)} bytes differ)"


def judge_peer_copies(copies: Mapping, env: Mapping[str, str]):
    """The verdict on measured peer copies, or None when none were made (no pair with peer access)."""
    done = copies.get("copies") or []
    if not done:
        return None
    bad = [r for r in done if not r.get("ok")]
    if bad:
        nccl = "NCCL_P2P_DISABLE=1 is set, but " if env.get("NCCL_P2P_DISABLE") == "1" else ""
        return fail(
            f"{nccl}the driver reports peer-to-peer access and {_copy_problem(bad[0])}"
            + (f" ({len(bad)} of {len(done)} pair(s) broken)" if len(bad) > 1 else "")
            + ": NCCL hangs and cross-GPU tensor copies can be wrong",
            hint="export NCCL_P2P_DISABLE=1 for NCCL jobs, and disable the IOMMU (or ACS) in the BIOS or with the kernel "
            "parameter iommu=off / amd_iommu=off so that peer copies (also torch's own x.to('cuda:1')) work",
            details={"copies": done, "untested": copies.get("untested") or []},
            fixes=[env_fix("NCCL_P2P_DISABLE", "1"), env_fix("NCCL_IB_DISABLE", "1")],
        )
    slowest = min((r.get("gbps") or 0.0) for r in done)
    return ok(
        f"peer copies between {len(done)} GPU pair(s) are exact both ways ({P2P_MB} MiB, slowest {slowest:.1f} GB/s)",
        details={"copies": done},
    )


@check("nvidia.p2p_consumer", tags=("gpu",))
def p2p_consumer(gpus, env, nvidia_query=None, peer_copies=None):
    """Several consumer GPUs: NCCL peer-to-peer set up safely"""
    # B20: NCCL all_reduce hangs on several RTX 4090/5090 where P2P is advertised but broken
    # (IOMMU/ACS); accelerate refuses with "RTX 4000 series doesn't support faster communication...".
    gs = _need_gpus(gpus)
    if len(gs) < 2:
        return skip("fewer than two GPUs")
    consumer = [g for g in gs if compat.is_consumer(g)]
    if len(consumer) < 2:
        return skip("not a multi-GPU consumer (GeForce) machine")
    # The driver saying "peer access works" is exactly when a broken path goes unseen: a real copy decides.
    measured = judge_peer_copies(peer_copies, env) if peer_copies else None
    if measured is not None:
        return measured
    if env.get("NCCL_P2P_DISABLE") == "1":
        return ok("NCCL_P2P_DISABLE=1 is set for the consumer GPUs")
    p2p = ((nvidia_query or {}).get("nvml") or {}).get("p2p_read")
    import glob

    iommu = bool(glob.glob(os.path.join(IOMMU_GROUPS, "*")))
    if p2p == "ok" and not iommu:
        return ok(f"{len(consumer)} consumer GPUs with working peer-to-peer reads and no IOMMU in the way")
    why = (
        "the driver reports peer-to-peer unsupported"
        if p2p and p2p != "ok"
        else "the IOMMU is enabled"
        if iommu
        else "peer-to-peer support is unknown"
    )
    return warn(
        f"{len(consumer)} consumer GPUs ({consumer[0].get('name')}) and {why}: multi-GPU NCCL jobs can hang in all_reduce",
        hint="export NCCL_P2P_DISABLE=1 NCCL_IB_DISABLE=1 for multi-GPU jobs (or disable the IOMMU/ACS in the BIOS)",
        fixes=[env_fix("NCCL_P2P_DISABLE", "1"), env_fix("NCCL_IB_DISABLE", "1")],
    )
