"""Is the GPU itself broken? Judgements over NVML-shaped values and Xid events, no I/O.

When a smoke test or a training run fails, the expensive mistake is debugging the software stack
on a GPU that has an uncorrectable memory error, a pending row remap or has fallen off the bus.
This module turns what NVML reports per GPU (as plain dicts, the shape ``gather_health`` returns
from a subprocess) plus the kernel's Xid events into one verdict per GPU: hardware evidence and
what to do about it, or "no hardware evidence" with what was checked.

Sources: nvidia-ml-py's ``pynvml.py`` (the nvmlClocksEventReason* bits, NVML_GPU_RECOVERY_ACTION_*
values, field NVML_FI_DEV_GET_GPU_RECOVERY_ACTION = 230), NVIDIA's "GPU Memory Error Management"
(row remapping: pending means a reset applies it, failure means the memory can no longer be
repaired; the recovery-action flag and what each value asks of the user) and "Dynamic Page
Retirement" (pages pending retirement are retired at the next driver reload).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from envdoctor import ACTIONS, Item, Status
from envdoctor_checks._xid import KernelLog, Remedy, XidEvent, event_severity, pci_key
from envdoctor_checks.bodies.nvml_health import (  # noqa: F401 - re-exported: gathering lives with the NVML child
    FI_DRAIN_AND_RESET_STATUS,
    FI_GPU_RECOVERY_ACTION,
    FI_RESET_STATUS,
    NOT_IN_DRIVER,
    NOT_SUPPORTED,
    gather_gpu,
    gather_health,
)

NVML_GPU_IS_LOST = 15
NVML_RESET_REQUIRED = 16
LOAD_UTILIZATION = 50  # % GPU busy at which a downshifted PCIe link is no longer power saving

# nvmlClocksEventReason* (pynvml 13.615); 0x200 and 0x400 exist only as nvmlClocksThrottleReason*.
CLOCK_REASONS: tuple[tuple[int, str], ...] = (
    (0x1, "GPU idle"),
    (0x2, "applications clocks setting"),
    (0x4, "SW power cap"),
    (0x8, "HW slowdown"),
    (0x10, "sync boost"),
    (0x20, "SW thermal slowdown"),
    (0x40, "HW thermal slowdown"),
    (0x80, "HW power brake slowdown"),
    (0x100, "display clock setting"),
    (0x200, "board limit"),
    (0x400, "reliability"),
)
# Reasons that mean cooling or power delivery is failing, not that the GPU is idle or capped by policy.
CLOCKS_HARDWARE = 0x8 | 0x20 | 0x40 | 0x80

# NVML_GPU_RECOVERY_ACTION_* -> (what the driver asks, remedy, what to do)
RECOVERY_ACTIONS: dict[int, tuple[str, Remedy, str]] = {
    0: ("none", Remedy.NONE, ""),
    1: ("GPU reset required", Remedy.RESET, "stop the processes on it and reset it (nvidia-smi -r), or reboot"),
    2: ("node reboot required", Remedy.REBOOT, "reboot the machine"),
    3: ("drain peer-to-peer traffic", Remedy.RESET, "let running multi-GPU (P2P/NVLink) jobs finish and start no new ones on it"),
    4: ("drain and reset", Remedy.RESET, "let running multi-GPU jobs finish, then reset the GPU (nvidia-smi -r)"),
    5: ("recover the IMEX domain", Remedy.RESET, "recover the multi-node NVLink (IMEX) domain: ask the cluster admin/provider"),
    6: ("PCIe bus reset required", Remedy.REBOOT, "reset the GPU's PCIe bus, or reboot"),
    7: ("system reboot required", Remedy.REBOOT, "reboot the machine"),
}
# NVML_GPU_RECOVERY_ACTION_* -> the report's recommended action (envdoctor.core.api.ACTIONS):
# the drains ask that no new job lands on the node while the GPU waits for its reset.
RECOVERY_RECOMMEND = {1: "reset-gpu", 2: "reboot", 3: "drain-node", 4: "drain-node", 5: "drain-node", 6: "reboot", 7: "reboot"}
# A remedy (the Xid catalog's, or a finding's) -> the recommended action.
REMEDY_ACTION = {
    Remedy.NONE: "none",
    Remedy.WATCH: "none",
    Remedy.FIX_APP: "restart-process",
    Remedy.RESTART_APP: "restart-process",
    Remedy.UPDATE_DRIVER: "reinstall-package",
    Remedy.CHECK_HARDWARE: "hardware-inspection",
    Remedy.RESET: "reset-gpu",
    Remedy.REBOOT: "reboot",
    Remedy.REPLACE: "hardware-inspection",
}
REMEDY_TEXT = {
    Remedy.WATCH: "keep an eye on it",
    Remedy.RESTART_APP: "restart the affected application",
    Remedy.UPDATE_DRIVER: "update the NVIDIA driver",
    Remedy.CHECK_HARDWARE: "check cooling, power delivery and the GPU's seating",
    Remedy.RESET: "reset the GPU (nvidia-smi -r) or reboot",
    Remedy.REBOOT: "reboot the machine",
    Remedy.REPLACE: "replace the GPU / contact the provider",
}


@dataclass(frozen=True)
class Finding:
    topic: str  # ecc | retired_pages | remapped_rows | recovery_action | pcie | nvlink | clocks | nvml | xid
    status: Status
    message: str  # a phrase: "2 uncorrectable ECC errors since the driver loaded", "ECC clean"
    remedy: Remedy = Remedy.NONE
    hardware: bool = False  # the GPU or the machine around it is at fault, not the software
    action: str = ""  # specific advice where the remedy's generic text is not enough
    kind: str = ""  # for Xid findings, the Xid's kind (application, driver, memory, ...)
    recommend: str = ""  # the recommended action where the remedy does not say it (NVML's recovery action)

    @property
    def recommended(self) -> str:
        """The report's recommended action for this finding (envdoctor.core.api.ACTIONS)."""
        return self.recommend or REMEDY_ACTION.get(self.remedy, "fix-environment")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def why_absent(gpu: Mapping[str, Any], key: str) -> str:
    """Why a field is missing: NVML said unsupported, NVML failed, or it was not read."""
    if key in gpu.get("unsupported", {}):
        return gpu["unsupported"][key]
    err = gpu.get("errors", {}).get(key)
    return f"NVML error: {err['text'] if isinstance(err, Mapping) else err}" if err else "not read"


# ---- judgements, one NVML topic each ---------------------------------------------------------


def judge_ecc(gpu: Mapping[str, Any]) -> Finding:
    """Uncorrectable ECC errors: volatile (since the driver loaded) fails, aggregate (lifetime) warns."""
    mode = gpu.get("ecc_mode")
    if mode is not None and not mode.get("current"):
        return Finding("ecc", Status.PASS, "ECC off (memory errors go undetected)")
    ecc = gpu.get("ecc")
    if ecc is None:
        return Finding("ecc", Status.SKIP, f"ECC {why_absent(gpu, 'ecc')}")
    volatile = (ecc.get("volatile") or {}).get("uncorrected") or 0
    aggregate = (ecc.get("aggregate") or {}).get("uncorrected") or 0
    if volatile:
        return Finding(
            "ecc",
            Status.FAIL,
            f"{_plural(volatile, 'uncorrectable ECC error')} since the driver loaded",
            remedy=Remedy.RESET,
            hardware=True,
            action="reset the GPU (nvidia-smi -r) or reboot; replace it if they return",
        )
    if aggregate:
        # None since the driver loaded: row remapping or page retirement dealt with these, so a
        # lifetime count is a trend to watch, not evidence that the GPU caused today's failure.
        message = f"{_plural(aggregate, 'uncorrectable ECC error')} in the GPU's lifetime, none since the driver loaded"
        return Finding("ecc", Status.WARN, message, remedy=Remedy.WATCH, action="watch the ECC and row-remap counters")
    corrected = (ecc.get("volatile") or {}).get("corrected") or 0
    return Finding("ecc", Status.PASS, f"ECC clean ({corrected} corrected)" if corrected else "ECC clean")


def judge_retired_pages(gpu: Mapping[str, Any]) -> Finding | None:
    """Dynamic page retirement (Kepler to Volta; Ampere and later remap rows instead)."""
    pages = gpu.get("retired_pages")
    if pages is None:
        return None
    if pages.get("pending"):
        return Finding(
            "retired_pages",
            Status.WARN,
            "memory pages pending retirement",
            remedy=Remedy.RESET,
            hardware=True,
            action="reset the GPU (nvidia-smi -r) or reboot to retire them",
        )
    retired = (pages.get("sbe") or 0) + (pages.get("dbe") or 0)
    return Finding("retired_pages", Status.PASS, f"{_plural(retired, 'retired page')}, none pending" if retired else "no retired pages")


def judge_remapped_rows(gpu: Mapping[str, Any]) -> Finding | None:
    """nvmlDeviceGetRemappedRows: a failure is beyond repair, a pending remap needs a reset."""
    rows = gpu.get("remapped_rows")
    if rows is None:
        return None
    if rows.get("failure"):
        return Finding(
            "remapped_rows",
            Status.FAIL,
            "row remapping failed (GPU memory can no longer be repaired)",
            remedy=Remedy.REPLACE,
            hardware=True,
        )
    if rows.get("pending"):
        return Finding(
            "remapped_rows",
            Status.WARN,
            "row remap pending",
            remedy=Remedy.RESET,
            hardware=True,
            action="reset the GPU (nvidia-smi -r) or reboot so the remap takes effect",
        )
    unc = rows.get("uncorrectable") or 0
    return Finding("remapped_rows", Status.PASS, f"{_plural(unc, 'row')} remapped, none pending" if unc else "no pending remap")


def judge_recovery_action(gpu: Mapping[str, Any]) -> Finding | None:
    """NVML_FI_DEV_GET_GPU_RECOVERY_ACTION, or the reset/drain status flags of older drivers."""
    value = gpu.get("recovery_action")
    if value is None:
        status = gpu.get("reset_status") or {}
        value = 4 if status.get("drain_and_reset") else 1 if status.get("reset_required") else None
        if value is None:
            return None if not status else Finding("recovery_action", Status.PASS, "no recovery pending")
    what, remedy, action = RECOVERY_ACTIONS.get(value, (f"unknown recovery action {value}", Remedy.RESET, ""))
    if value == 0:
        return Finding("recovery_action", Status.PASS, "no recovery pending")
    return Finding(
        "recovery_action",
        Status.FAIL,
        f"driver reports {what}",
        remedy=remedy,
        hardware=True,
        action=action,
        recommend=RECOVERY_RECOMMEND.get(value, "reset-gpu"),
    )


def judge_nvml_errors(gpu: Mapping[str, Any]) -> Finding | None:
    """NVML answering "GPU is lost" or "GPU requires reset" to plain queries is itself the verdict."""
    codes = {e.get("code") for e in gpu.get("errors", {}).values() if isinstance(e, Mapping)}
    if NVML_GPU_IS_LOST in codes:
        return Finding("nvml", Status.FAIL, "NVML reports the GPU is lost", remedy=Remedy.REBOOT, hardware=True)
    if NVML_RESET_REQUIRED in codes:
        return Finding("nvml", Status.FAIL, "NVML reports the GPU requires a reset", remedy=Remedy.RESET, hardware=True)
    return None


def judge_pcie(gpu: Mapping[str, Any]) -> Finding | None:
    """A link below its maximum only matters under load: idle GPUs drop to Gen1 to save power."""
    link = gpu.get("pcie")
    if not link or link.get("gen") is None or link.get("width") is None:
        return None
    gen, width = link["gen"], link["width"]
    max_gen, max_width = link.get("max_gen") or gen, link.get("max_width") or width
    now = f"PCIe Gen{gen} x{width}"
    if gen >= max_gen and width >= max_width:
        return Finding("pcie", Status.PASS, now)
    util = gpu.get("utilization_gpu")
    if util is None or util < LOAD_UTILIZATION:
        return Finding(
            "pcie", Status.PASS, f"{now} of Gen{max_gen} x{max_width} at idle (links slow down when idle; meaningful only under load)"
        )
    return Finding(
        "pcie",
        Status.WARN,
        f"{now} of Gen{max_gen} x{max_width} under load ({util}% busy)",
        remedy=Remedy.CHECK_HARDWARE,
        hardware=True,
        action="reseat the GPU and check its slot/riser: host-GPU copies run at a fraction of their speed",
    )


def judge_nvlink(gpu: Mapping[str, Any], peers_have_links: bool = False) -> Finding | None:
    """Links down next to links up is a fault; all down is one only if other GPUs have links up."""
    nvlink = gpu.get("nvlink")
    if not nvlink:
        return None
    up, down = list(nvlink.get("active", ())), list(nvlink.get("inactive", ()))
    total = len(up) + len(down)
    if not down:
        return Finding("nvlink", Status.PASS, f"NVLink {len(up)}/{total} up") if total else None
    if not up and not peers_have_links:
        return Finding("nvlink", Status.PASS, "no NVLink link active (none connected)")
    names = ", ".join(str(i) for i in down)
    return Finding(
        "nvlink",
        Status.WARN,
        f"NVLink {len(up)}/{total} up (down: {names})",
        remedy=Remedy.RESET,
        hardware=True,
        action="reset the GPU (nvidia-smi -r) or reboot; if links stay down, have the NVLink hardware checked",
    )


def decode_clock_reasons(mask: int) -> list[str]:
    """nvmlDeviceGetCurrentClocksEventReasons' bitmask as names, unknown bits in hex."""
    names = [name for bit, name in CLOCK_REASONS if mask & bit]
    rest = mask & ~sum(bit for bit, _ in CLOCK_REASONS)
    return names + ([f"unknown 0x{rest:x}"] if rest else [])


def judge_clocks(gpu: Mapping[str, Any]) -> Finding | None:
    mask = gpu.get("clocks_event_reasons")
    if mask is None:
        return None
    names = decode_clock_reasons(mask)
    if mask & CLOCKS_HARDWARE:
        hot = ", ".join(decode_clock_reasons(mask & CLOCKS_HARDWARE))
        return Finding(
            "clocks",
            Status.WARN,
            f"clocks cut by {hot}",
            remedy=Remedy.CHECK_HARDWARE,
            hardware=True,
            action="check cooling (airflow, fans, inlet temperature) and the power supply",
        )
    return Finding("clocks", Status.PASS, f"clocks: {', '.join(names)}" if names else "clocks not throttled")


# ---- Xid events ------------------------------------------------------------------------------


def since_boot_text(seconds: float) -> str:
    """boot+45s, boot+12m, boot+2h, boot+2h05m."""
    s = int(seconds)
    if s < 60:
        return f"boot+{s}s"
    if s < 3600:
        return f"boot+{s // 60}m"
    h, m = divmod(s // 60, 60)
    return f"boot+{h}h{m:02d}m" if m else f"boot+{h}h"


def _when(event: XidEvent) -> str:
    if event.since_boot is not None:
        return f" at {since_boot_text(event.since_boot)}"
    return f" at {event.wall_time}" if event.wall_time else ""


def judge_xids(events: Sequence[XidEvent], log: KernelLog | None) -> list[Finding]:
    """One finding per Xid code (first occurrence, count), or what the log said about their absence."""
    if log is not None and not log.readable and not events:
        return [Finding("xid", Status.SKIP, f"Xid not checked: {log.reason}")]
    if not events:
        scope = "since boot" if log is None or log.complete else "in the kernel log (early boot records dropped)"
        return [Finding("xid", Status.PASS, f"no Xid {scope}")]
    by_code: dict[int, list[XidEvent]] = defaultdict(list)
    for e in events:
        by_code[e.code].append(e)
    findings = []
    for code, group in by_code.items():
        info, first = group[0].info, group[0]
        status = max((event_severity(e) for e in group), key=lambda s: s.severity)
        count = sum(1 + e.repeated for e in group)
        times = f" ×{count}" if count > 1 else ""
        message = f"Xid {code} ({info.name}){times}{_when(first)}"
        hardware = info.hardware and status is not Status.PASS
        remedy = info.remedy if status is not Status.PASS else Remedy.NONE
        findings.append(Finding("xid", status, message, remedy=remedy, hardware=hardware, action=info.action, kind=info.kind))
    return findings


def assign_events(events: Sequence[XidEvent], gpus: Sequence[Mapping[str, Any]]) -> tuple[dict[int, list[XidEvent]], list[XidEvent]]:
    """Xid events per GPU index, matched on PCI bus id (NVML's "00000000:3B:00.0" against the
    kernel's "0000:3b:00"), and the events that match no GPU NVML lists: a GPU that fell off
    the bus is often missing from NVML, and its Xid is the only trace left of it."""
    index_of = {pci_key(g.get("pci_bus_id")): g["index"] for g in gpus if pci_key(g.get("pci_bus_id"))}
    per_gpu: dict[int, list[XidEvent]] = defaultdict(list)
    unmatched: list[XidEvent] = []
    for e in events:
        if e.pci is not None and e.pci in index_of:
            per_gpu[index_of[e.pci]].append(e)
        else:
            unmatched.append(e)
    return dict(per_gpu), unmatched


# ---- the per-GPU verdict ---------------------------------------------------------------------


@dataclass(frozen=True)
class GpuEvidence:
    label: str  # "GPU 3", or "GPU at PCI 0000:2b:00" for one NVML no longer lists
    status: Status
    line: str  # the sentence a failing smoke test prints
    hardware_fault: bool
    findings: tuple[Finding, ...]

    def to_item(self) -> Item:
        return Item(self.label, self.status, self.line)

    @property
    def action(self) -> str:
        """What to do about the hardware evidence ("" when there is none)."""
        faults = [f for f in self.findings if f.hardware and f.status in (Status.WARN, Status.FAIL)]
        return _action_for(faults) if faults else ""

    @property
    def recommended(self) -> str:
        """The strongest recommended action of the hardware evidence ("" when there is none)."""
        faults = [f for f in self.findings if f.hardware and f.status in (Status.WARN, Status.FAIL)]
        return max((f.recommended for f in faults), key=ACTIONS.index, default="")

    def to_dict(self) -> dict[str, Any]:
        findings = [{"topic": f.topic, "status": f.status.value, "message": f.message, "hardware": f.hardware} for f in self.findings]
        return {
            "label": self.label,
            "status": self.status.value,
            "line": self.line,
            "hardware_fault": self.hardware_fault,
            "findings": findings,
        }


def judge_gpu(gpu: Mapping[str, Any] | None, peers_have_links: bool = False) -> list[Finding]:
    """Every NVML judgement for one GPU's gathered values."""
    if gpu is None:
        return []
    judged = (
        judge_nvml_errors(gpu),
        judge_recovery_action(gpu),
        judge_ecc(gpu),
        judge_remapped_rows(gpu),
        judge_retired_pages(gpu),
        judge_nvlink(gpu, peers_have_links),
        judge_pcie(gpu),
        judge_clocks(gpu),
    )
    return [f for f in judged if f is not None]


def _action_for(faults: Sequence[Finding]) -> str:
    if len(faults) == 1 and faults[0].action:
        return faults[0].action  # one fault: its own advice is more precise than the generic remedy
    top = max(f.remedy for f in faults)
    text = REMEDY_TEXT.get(top, "")
    if top in (Remedy.RESET, Remedy.REBOOT) and any(f.status is Status.FAIL for f in faults):
        text += ", and replace the GPU / contact the provider if it happens again"
    return text


_CLEAN_TOPICS = ("ecc", "xid", "remapped_rows", "retired_pages")


def _note(f: Finding) -> str:
    """A non-hardware finding as "what: what to do"."""
    if f.status is Status.PASS:
        return f"{f.message}: {'an application bug, not the machine' if f.kind == 'application' else 'informational'}"
    blame = "; the driver or its firmware is at fault, not your program" if f.kind == "driver" else ""
    return f"{f.message}: {f.action or REMEDY_TEXT.get(f.remedy, '')}{blame}"


def _sentence(label: str, findings: Sequence[Finding]) -> tuple[str, bool]:
    """The one line for a failing smoke, and whether it blames the hardware."""
    faults = [f for f in findings if f.hardware and f.status in (Status.WARN, Status.FAIL)]
    if faults:
        evidence = ", ".join(f.message for f in faults)
        return f"{label}: {evidence}: {_action_for(faults)}; the software is not the cause", True
    # What was checked and found clean; per-code Xid findings (those with a kind) come as notes.
    checked = [f.message for t in _CLEAN_TOPICS for f in findings if f.topic == t and f.status in (Status.PASS, Status.SKIP) and not f.kind]
    line = f"{label}: no hardware evidence" + (f" ({', '.join(checked)})" if checked else "")
    notes = [f for f in findings if f.status in (Status.WARN, Status.FAIL)]
    notes += [f for f in findings if f.topic == "xid" and f.status is Status.PASS and f.kind]
    return line + "".join(f"; {_note(f)}" for f in notes), False


def summarize_gpu(
    label: str,
    gpu: Mapping[str, Any] | None,
    events: Sequence[XidEvent] = (),
    log: KernelLog | None = None,
    peers_have_links: bool = False,
) -> GpuEvidence:
    """One GPU's verdict from its NVML values (None when NVML could not read it) and its Xids."""
    findings = judge_gpu(gpu, peers_have_links) + judge_xids(events, log)
    status = max((f.status for f in findings), key=lambda s: s.severity, default=Status.PASS)
    status = Status.PASS if status is Status.SKIP else status
    line, hardware = _sentence(label, findings)
    return GpuEvidence(label, status, line, hardware, tuple(findings))


def summarize(health: Mapping[str, Any], log: KernelLog | None) -> list[GpuEvidence]:
    """Every GPU NVML lists, plus one entry per PCI address that has Xids but no NVML GPU."""
    gpus = list(health.get("gpus", ()))
    events = list(log.events) if log is not None else []
    per_gpu, unmatched = assign_events(events, gpus)
    with_links = {g["index"] for g in gpus if (g.get("nvlink") or {}).get("active")}
    out = [summarize_gpu(f"GPU {g['index']}", g, per_gpu.get(g["index"], ()), log, bool(with_links - {g["index"]})) for g in gpus]
    orphans: dict[str, list[XidEvent]] = defaultdict(list)
    for e in unmatched:
        orphans[e.pci or "unknown"].append(e)
    missing = " (not listed by NVML)" if gpus else ""
    for pci, group in orphans.items():
        out.append(summarize_gpu(f"GPU at PCI {pci}{missing}", None, group, log))
    return out
