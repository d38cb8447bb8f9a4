"""Stack or silicon: is the GPU itself healthy?

When a smoke test or a training run fails, the expensive mistake is debugging torch, Triton or
the driver on a GPU that has an uncorrectable memory error, a pending row remap, a link down or
has fallen off the bus. These checks read that evidence and nothing else:

- NVML's health values (ECC counters, row remapping, retired pages, the driver's recovery
  action, PCIe link, NVLink, clock-event reasons), read in a contained child process
  (``bodies/nvml_child.py --health``, its own deadline): NVML never runs in the doctor;
- the kernel log's Xid events since boot (``_xid``: /dev/kmsg read without blocking, then
  ``journalctl -k -b``, then ``dmesg``), classified by code and mapped to a GPU by PCI bus id;
- the device nodes CUDA opens (``/dev/nvidiactl``, ``/dev/nvidia-uvm``, ``/dev/nvidiaN``).

Both NVML and the kernel log are gathered once, into the ``gpu_health`` fact, which the smoke
checks also take: a failing smoke cites its GPU's evidence, or says there is none. Judgements
are ``_gpu_health``'s; what cannot be read here (the log without root, a field this GPU does not
support) is a skip with the reason, never a verdict.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from envdoctor import Item, Result, Skip, Status, Unavailable, check, fact, fail, ok, run_command, skip, warn, worst
from envdoctor_checks import nvidia
from envdoctor_checks._lazy import lazy

if TYPE_CHECKING:  # the modules themselves, so their names type-check
    from envdoctor_checks import _gpu_health as gh
    from envdoctor_checks import _xid
else:
    gh = lazy("envdoctor_checks._gpu_health")
    _xid = lazy("envdoctor_checks._xid")
DEV = "/dev"
PROC_GPUS = "/proc/driver/nvidia/gpus"
SYS_UVM = "/sys/module/nvidia_uvm"
PROC_MODULES = "/proc/modules"
HEALTH_TIMEOUT = nvidia.DRIVER_QUERY_TIMEOUT
LOG_TIMEOUT = 5.0  # /dev/kmsg answers in milliseconds; this bounds the journalctl/dmesg fallbacks
KEEP_PER_CODE = 5  # Xid events kept per (code, GPU) in the fact; the rest are counted
CLASSES = {"application": "application", "driver": "driver", "informational": "informational", "unknown": "unknown"}


# ---- gathering -------------------------------------------------------------------------------


def _run_log_command(argv: list[str], timeout: float) -> tuple[int | None, str, str]:
    """journalctl/dmesg through envdoctor's runner, so they die with the doctor."""
    res = run_command(argv, timeout=timeout, env={**os.environ, "LC_ALL": "C", "SYSTEMD_PAGER": "", "PAGER": "cat"})
    if res.timed_out:
        return None, res.stdout, f"{argv[0]}: timed out after {timeout:.0f}s"
    if res.error:
        return 127, "", f"{argv[0]}: {res.error}"
    return res.returncode, res.stdout, res.stderr


def read_kernel_log() -> _xid.KernelLog:
    """Xid events since boot, compacted so a log flooded by one faulting program stays small."""
    log = _xid.read_xid_events(_xid.KMSG, timeout=LOG_TIMEOUT, run=_run_log_command)
    return _xid.KernelLog(log.source, tuple(_xid.compact(log.events, KEEP_PER_CODE)), log.reason, log.complete)


def query_nvml_health(nvidia_query: Mapping[str, Any], env: Mapping[str, str]) -> tuple[dict | None, str, bool]:
    """(NVML health values, why they are missing, whether the health query hung). The driver
    query has already told whether NVML answers at all: if it did not, NVML is not asked again
    (after a hang that would be a second deadline to wait for)."""
    if not nvidia_query.get("nvml"):
        return None, f"NVML is not available ({nvidia_query.get('errors', {}).get('nvml') or 'no answer'})", False
    try:
        value = nvidia.nvml_query(env, timeout=HEALTH_TIMEOUT, args=("--health",))
    except nvidia.DriverHung:
        return None, nvidia.hang_reason("NVML did not answer the GPU health query", HEALTH_TIMEOUT), True
    except Unavailable as e:
        return None, f"the NVML health query failed: {e.reason}", False
    if value.get("error"):
        return None, value["error"], False
    return value, "", False


@fact("gpu_health")
def gpu_health(nvidia_query, env, gpus=None, pci_gpus=None) -> dict:
    """GPU hardware evidence, gathered once: NVML's health values per GPU (from a contained
    child) and the kernel log's Xid events since boot. JSON-ready; ``kernel_log.live`` says the
    log is this machine's now, so a failing smoke may read it again for Xids it caused."""
    if not gpus and not pci_gpus:
        raise Unavailable(getattr(gpus, "reason", "") or "no NVIDIA GPU on this machine")
    nvml, reason, hung = query_nvml_health(nvidia_query, env)
    listed = [{"index": g.get("index"), "name": g.get("name"), "pci_bus_id": g.get("pci_bus_id")} for g in (gpus or [])]
    return {
        "nvml": nvml,
        "nvml_reason": reason,
        "nvml_hung": hung,
        "gpus": listed,
        "kernel_log": {**read_kernel_log().to_dict(), "live": True},
    }


# ---- evidence per GPU (also used by the smoke checks) ------------------------------------------


def judged_gpus(health: Mapping[str, Any]) -> list[dict]:
    """NVML's health values per GPU; without them, the GPUs the driver lists (index and PCI
    address only), so that Xid events can still be matched to a GPU."""
    if health.get("nvml"):
        return list(health["nvml"].get("gpus") or [])
    why = f"not read ({health.get('nvml_reason') or 'NVML unavailable'})"
    return [{**g, "unsupported": {"ecc": why}} for g in health.get("gpus") or []]


def kernel_log(health: Mapping[str, Any], refresh: bool = False) -> _xid.KernelLog:
    """The log as gathered; ``refresh`` reads it again where it came from this machine, so a
    smoke that just failed sees the Xid its failure caused."""
    saved = health.get("kernel_log") or {}
    if refresh and saved.get("live"):
        return read_kernel_log()
    return _xid.KernelLog.from_dict(saved)


def evidence_for(health: Any, target: Mapping[str, Any] | None, label: str, refresh: bool = True) -> gh.GpuEvidence | None:
    """One GPU's evidence sentence (``target``: a GPU as the gpus fact lists it), or None when
    there is no health fact or the GPU cannot be found in it."""
    if not health or target is None:
        return None
    gpus = judged_gpus(health)
    key = _xid.pci_key(target.get("pci_bus_id"))
    gpu = next((g for g in gpus if key and _xid.pci_key(g.get("pci_bus_id")) == key), None)
    gpu = gpu or next((g for g in gpus if g.get("index") == target.get("index")), None)
    if gpu is None:
        return None
    log = kernel_log(health, refresh)
    per_gpu, _ = gh.assign_events(list(log.events), gpus)
    peers = any((g.get("nvlink") or {}).get("active") for g in gpus if g is not gpu)
    return gh.summarize_gpu(label, gpu, per_gpu.get(gpu["index"], ()), log, peers)


# ---- the NVML checks ---------------------------------------------------------------------------


def gpu_label(g: Mapping[str, Any]) -> str:
    return f"GPU {g.get('index')}" + (f" ({g['name']})" if g.get("name") else "")


def _nvml_gpus(health: Mapping[str, Any]) -> list[dict]:
    if not health.get("nvml"):
        raise Skip(health.get("nvml_reason") or "NVML's health values could not be read")
    gpus = health["nvml"].get("gpus") or []
    if not gpus:
        raise Skip("NVML lists no GPU")
    return gpus


def _advice(f: gh.Finding) -> str:
    text = f.action or gh.REMEDY_TEXT.get(f.remedy, "")
    return f"{text}; the GPU, not the software, is at fault" if f.hardware and text else text


def _raw(g: Mapping[str, Any], key: str) -> dict:
    """What NVML said about one field of one GPU: its value, or why there is none."""
    why = g.get("unsupported", {}).get(key) or (g.get("errors", {}).get(key) or {}).get("text")
    return {key: g.get(key)} if why is None else {key: None, "why": why}


def judge_each(health: Mapping[str, Any], judge: Callable[[dict], gh.Finding | None], what: str, key: str) -> Result:
    """One item per GPU from ``judge``; GPUs it cannot judge are skipped items with the reason;
    the row is the worst of them, or a skip when no GPU could be judged."""
    gpus = _nvml_gpus(health)
    items: list[Item] = []
    judged: list[tuple[dict, gh.Finding]] = []
    for g in gpus:
        f = judge(g)
        if f is None or f.status is Status.SKIP:
            items.append(Item(gpu_label(g), Status.SKIP, f.message if f else f"{what} {gh.why_absent(g, key)}"))
        else:
            items.append(Item(gpu_label(g), f.status, f.message))
            judged.append((g, f))
    details = {"gpus": {str(g.get("index")): _raw(g, key) for g in gpus}}
    if not judged:
        reasons = sorted({i.message for i in items})
        return skip(f"{'; '.join(reasons)} ({', '.join(i.name for i in items)})")
    bad = [(g, f) for g, f in judged if f.status in (Status.WARN, Status.FAIL)]
    if not bad:
        messages = sorted({f.message for _, f in judged})
        text = (
            f"{messages[0]} ({len(judged)} GPU(s))" if len(messages) == 1 else "; ".join(f"{gpu_label(g)}: {f.message}" for g, f in judged)
        )
        return ok(text, details=details, items=items)
    message = "; ".join(f"{gpu_label(g)}: {f.message}" for g, f in bad)
    top = max(bad, key=lambda gf: (gf[1].status.severity, gf[1].remedy))[1]
    return (fail if worst(items) is Status.FAIL else warn)(message, _advice(top), details=details, items=items, action=top.recommended)


@check("health.ecc", tags=("gpu", "health", "liveness"))
def ecc(gpu_health):
    """No uncorrectable GPU memory (ECC) errors"""
    # Volatile (since the driver loaded) uncorrectable errors fail: the memory corrupted data a
    # job read. Aggregate (lifetime) ones only warn: repair already dealt with them.
    return judge_each(gpu_health, gh.judge_ecc, "ECC", "ecc")


@check("health.remapped_rows", tags=("gpu", "health", "liveness"))
def remapped_rows(gpu_health):
    """No GPU memory row remap pending or failed"""
    return judge_each(gpu_health, gh.judge_remapped_rows, "row remapping", "remapped_rows")


@check("health.retired_pages", tags=("gpu", "health", "liveness"))
def retired_pages(gpu_health):
    """No GPU memory pages pending retirement"""
    # Kepler to Volta retire pages; Ampere and later (the H200 included) remap rows instead and
    # answer Not Supported here, which is a skip, not a finding.
    row = judge_each(gpu_health, gh.judge_retired_pages, "page retirement", "retired_pages")
    if row.status is Status.SKIP and gh.NOT_SUPPORTED in row.message:
        return skip(row.message + "; Ampere and later GPUs remap rows instead (see health.remapped_rows)")
    return row


def _recovery(g: dict) -> gh.Finding | None:
    lost = gh.judge_nvml_errors(g)
    return lost if lost is not None else gh.judge_recovery_action(g)


@check("health.recovery", tags=("gpu", "health", "liveness"))
def recovery(gpu_health):
    """The driver asks for no GPU reset or other recovery"""
    if gpu_health.get("nvml_hung"):
        # The one row for a health query that hung; the other NVML health checks skip with it.
        return fail(
            gpu_health["nvml_reason"].replace(f"; {nvidia.WEDGED_FIX}", ""),
            nvidia.WEDGED_FIX[0].upper() + nvidia.WEDGED_FIX[1:],
            action="reset-gpu",
        )
    return judge_each(gpu_health, _recovery, "recovery action", "recovery_action")


@check("health.pcie", tags=("gpu",))
def pcie(gpu_health):
    """PCIe links run at their maximum generation and width under load"""
    # An idle GPU drops its link to Gen1 to save power: that is normal and passes; only a
    # downshift while the GPU is busy is a finding (a bad slot, riser or seating).
    return judge_each(gpu_health, gh.judge_pcie, "PCIe link", "pcie")


@check("health.nvlink", tags=("gpu",))
def nvlink(gpu_health):
    """NVLink links are up (GPUs with NVLink)"""
    gpus = _nvml_gpus(gpu_health)
    with_links = {g["index"] for g in gpus if (g.get("nvlink") or {}).get("active")}
    return judge_each(gpu_health, lambda g: gh.judge_nvlink(g, bool(with_links - {g["index"]})), "NVLink", "nvlink")


@check("health.clocks", tags=("gpu",))
def clocks(gpu_health):
    """GPU clocks are not cut by thermal or power-delivery limits"""
    # Idle, the SW power cap and application clocks are policy; HW slowdown, thermal slowdown
    # and the power brake mean cooling or power delivery is failing.
    return judge_each(gpu_health, gh.judge_clocks, "clock event reasons", "clocks_event_reasons")


# ---- Xid events --------------------------------------------------------------------------------


def xid_class(kind: str) -> str:
    """hardware (memory, board, interconnect, thermal/power), driver, application, informational."""
    return "hardware" if kind in _xid.HARDWARE_KINDS else CLASSES.get(kind, "unknown")


@check("health.xid", tags=("gpu", "health", "liveness"))
def xid(gpu_health):
    """No GPU error (Xid) in the kernel log since boot"""
    log = kernel_log(gpu_health)
    if not log.readable:
        return skip(f"Xid not checked: {log.reason}; as root: dmesg | grep -i xid")
    if not log.events:
        scope = "since boot" if log.complete else "in the kernel log (its earliest records were already dropped)"
        return ok(f"no Xid {scope} (read from {log.source})", details={"source": log.source, "complete": log.complete})
    items, worst_finding = [], None
    for ev in gh.summarize({"gpus": judged_gpus(gpu_health)}, log):
        found = [f for f in ev.findings if f.topic == "xid" and f.kind]
        if not found:
            continue
        text = "; ".join(f"{f.message} [{xid_class(f.kind)}]" for f in found)
        items.append(Item(ev.label, ev.status if ev.status is not Status.SKIP else Status.PASS, text))
        for f in found:
            if worst_finding is None or (f.status.severity, f.remedy) > (worst_finding.status.severity, worst_finding.remedy):
                worst_finding = f
    details = {"source": log.source, "complete": log.complete, "events": [e.to_dict() for e in log.events]}
    message = "; ".join(f"{i.name}: {i.message}" for i in items)
    status = worst(items)
    if status is Status.PASS or worst_finding is None:  # (no item, no finding: PASS)
        return ok(f"{message} (not the machine: see the programs that ran)", details=details, items=items)
    hint = f"{worst_finding.action}" + ("; the GPU, not the software, is at fault" if worst_finding.hardware else "")
    hint += f" (Xid catalog: {_xid.CATALOG_URL})"
    return (fail if status is Status.FAIL else warn)(message, hint, details=details, items=items, action=worst_finding.recommended)


# ---- device nodes ------------------------------------------------------------------------------


def proc_minors(root: str | None = None) -> dict[str, int]:
    """{PCI key: minor number} from /proc/driver/nvidia/gpus/<bus id>/information ("Device Minor")."""
    root = root or PROC_GPUS
    out: dict[str, int] = {}
    try:
        names = os.listdir(root)
    except OSError:
        return out
    for name in names:
        try:
            with open(os.path.join(root, name, "information"), encoding="utf-8", errors="replace") as f:
                m = re.search(r"^Device Minor:\s*(\d+)", f.read(), re.M)
        except OSError:
            continue
        if m and (key := _xid.pci_key(name)):
            out[key] = int(m.group(1))
    return out


def _minor(g: Mapping[str, Any], health: Any, from_proc: Mapping[str, int]) -> int | None:
    key = _xid.pci_key(g.get("pci_bus_id"))
    for h in judged_gpus(health) if health else ():
        if h.get("minor_number") is not None and key and _xid.pci_key(h.get("pci_bus_id")) == key:
            return int(h["minor_number"])
    return from_proc.get(key) if key else None


def node_problem(path: str) -> str:
    """ "" when ``path`` is a character device this user may read and write; else what is wrong."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "missing"
    except OSError as e:
        return f"not readable ({e.strerror or e})"
    if not stat.S_ISCHR(st.st_mode):
        return "not a character device"
    if not os.access(path, os.R_OK | os.W_OK):
        return f"not readable and writable by uid {os.getuid()} (mode {stat.filemode(st.st_mode)}, owner {st.st_uid}:{st.st_gid})"
    return ""


def uvm_state() -> str:
    """What the kernel says about nvidia_uvm: loaded, not loaded, or "" when it cannot tell
    (a container's /sys, or a kernel with the driver built in does not list it)."""
    if os.path.isdir(SYS_UVM):
        return "loaded"
    try:
        with open(PROC_MODULES, encoding="utf-8", errors="replace") as f:
            modules = {line.split(" ", 1)[0] for line in f}
    except OSError:
        return ""
    return "not loaded" if "nvidia" in modules and "nvidia_uvm" not in modules else ""


def _uvm_fix(in_container: bool) -> str:
    if in_container:
        return (
            "on the host, load nvidia_uvm and create its node (sudo modprobe nvidia-uvm && sudo nvidia-modprobe -u -c=0), "
            "then restart the container with the GPUs exposed (docker run --gpus all / the NVIDIA runtime)"
        )
    return "sudo modprobe nvidia-uvm && sudo nvidia-modprobe -u -c=0 (loads nvidia_uvm and creates /dev/nvidia-uvm)"


def _node_rows(gs: Sequence[dict], gpu_health: Any) -> list[tuple[str, str, str]]:
    """(name, path, problem) for nvidiactl, nvidia-uvm and each GPU's node."""
    from_proc = proc_minors()
    rows = [("nvidiactl", os.path.join(DEV, "nvidiactl")), ("nvidia-uvm", os.path.join(DEV, "nvidia-uvm"))]
    out = [(name, path, node_problem(path)) for name, path in rows]
    for g in gs:
        minor = _minor(g, gpu_health, from_proc)
        if minor is None:
            out.append((gpu_label(g), "", "device minor number unknown (neither NVML nor /proc/driver/nvidia says it)"))
            continue
        path = os.path.join(DEV, f"nvidia{minor}")
        out.append((gpu_label(g), path, node_problem(path)))
    return out


@check("nvidia.device_nodes", tags=("gpu", "health", "liveness"))
def device_nodes(gpus, gpu_health=None, container=None):
    """The /dev/nvidia* nodes CUDA opens (nvidiactl, nvidia-uvm, one per GPU) are there and usable"""
    # nvidia-smi works without nvidia_uvm, CUDA does not: a missing /dev/nvidia-uvm is the classic
    # "CUDA unknown error" / "no CUDA-capable device is detected" in containers. lsmod may list no
    # nvidia module at all (built into the kernel, or a container's view), so the node decides.
    if not gpus:
        return skip(getattr(gpus, "reason", "") or "the driver reports no GPU")
    rows = _node_rows(gpus, gpu_health)
    items = [
        Item(name, Status.SKIP if not path else Status.FAIL if problem else Status.PASS, f"{path or name}: {problem or 'ok'}")
        for name, path, problem in rows
    ]
    bad = [(name, path, problem) for name, path, problem in rows if path and problem]
    if not bad:
        return ok(f"{', '.join(path for _, path, _ in rows if path)} present and readable/writable", items=items)
    in_container = bool(container and container.get("in_container"))
    parts, hints = [], []
    for name, path, problem in bad:
        if name == "nvidia-uvm" and problem == "missing":
            state = uvm_state()
            why = {"loaded": " (nvidia_uvm is loaded but its node was not created)", "not loaded": " (the nvidia_uvm module is not loaded)"}
            parts.append(
                f"{path} is missing{why.get(state, '')}: CUDA fails with 'CUDA unknown error' or 'no CUDA-capable device is detected' although nvidia-smi works"
            )
            hints.append(_uvm_fix(in_container))
        else:
            parts.append(f"{path} is {problem}")
    if any(p != "missing" and "uid" in p for _, _, p in bad):
        hints.append("give this user access to the NVIDIA device nodes (the `video` group, or the container's device cgroup / --gpus)")
    if any(name not in ("nvidia-uvm",) and p == "missing" for name, _, p in bad):
        hints.append("expose the GPU's device node to this process (docker run --gpus all; on the host: sudo nvidia-modprobe -c=<minor>)")
    return fail("; ".join(parts), "; ".join(dict.fromkeys(hints)), items=items)
