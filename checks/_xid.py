"""NVIDIA Xid errors: what each code means for a PyTorch user, and reading them from the kernel log.

An Xid is the NVIDIA kernel driver's numbered error report (``NVRM: Xid (PCI:0000:3b:00): 79, ...``).
A user whose training run died with ``CUDA error: an illegal memory access`` or ``uncorrectable ECC
error encountered`` needs one answer from it: is this my program, the driver, or the GPU?

Sources (facts only; the prose below is ours):

- NVIDIA, "Xid Errors" (https://docs.nvidia.com/deploy/xid-errors/), in particular "Analyzing Xid
  Errors with the Xid Catalog" (analyzing-xid-catalog.html): per code its mnemonic, description and
  resolution buckets (RESTART_APP, RESET_GPU, RESTART_BM, IGNORE, WORKFLOW_*, CONTACT_SUPPORT);
  the older table in index.html for the likely causes (hardware, driver, application, bus,
  thermal, frame-buffer corruption) of pre-Ampere codes such as 61, 68 and 69.
- The mnemonics as the driver defines them: ``src/common/sdk/nvidia/inc/nverror.h`` in
  NVIDIA/open-gpu-kernel-modules, and NVIDIA's machine-readable copy of the catalog's immediate
  actions, ``xiderrorsmapping.csv`` in NVIDIA/NVSentinel.
- NVIDIA, "GPU Memory Error Management" (docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/) and
  "Dynamic Page Retirement" for Xid 48/63/64/94/95 and the recovery actions behind Xid 154.

Reading the log never blocks: ``/dev/kmsg`` is read with O_NONBLOCK until EAGAIN, and the
fallbacks (``journalctl -k -b``, ``dmesg``) run as argv lists under one shared deadline.
"""

from __future__ import annotations

import enum
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from envdoctor import Status

CATALOG_URL = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"
KMSG = "/dev/kmsg"
JOURNALCTL = ("journalctl", "-k", "-b", "--no-pager", "-o", "short-monotonic")
DMESG = ("dmesg",)
LOG_TIMEOUT = 10.0


class Remedy(enum.IntEnum):
    """What to do, ordered so that the strongest remedy among several findings wins."""

    NONE = 0
    WATCH = 1
    FIX_APP = 2
    RESTART_APP = 3
    UPDATE_DRIVER = 4
    CHECK_HARDWARE = 5
    RESET = 6
    REBOOT = 7
    REPLACE = 8


# Kinds whose Xids say the machine, not the user's software, is at fault.
HARDWARE_KINDS = frozenset({"hardware", "memory", "interconnect", "thermal/power"})


@dataclass(frozen=True)
class XidInfo:
    code: int
    mnemonic: str  # as in nverror.h / NVIDIA's catalog
    name: str  # short human name
    kind: str  # application | driver | memory | hardware | interconnect | thermal/power | informational | unknown
    severity: Status  # PASS: informational, WARN: look at it, FAIL: the GPU needs recovery
    meaning: str  # what it means for someone running PyTorch
    action: str  # what to do about it
    remedy: Remedy
    nvidia_action: str  # the catalog's immediate-action bucket

    @property
    def hardware(self) -> bool:
        return self.kind in HARDWARE_KINDS


# Actions shared by several codes.
RESET = "reset the GPU (nvidia-smi -r) or reboot"
REPLACE = "replace the GPU / contact the provider"
APP_BUG = "an application bug, not the machine: rerun with CUDA_LAUNCH_BLOCKING=1 or compute-sanitizer to find the kernel"
DRIVER_RESET = f"{RESET}; update the NVIDIA driver if it recurs"
NVLINK_RESET = f"{RESET}; if NVLink errors recur, have the NVLink/NVSwitch hardware checked (contact the provider)"
NVLINK5 = f"a Fatal one: {RESET}, and contact the provider if it recurs; a Nonfatal one needs no action"
RECURS = f"{RESET}; {REPLACE} if it recurs"

_A, _D, _M, _H, _I, _T, _N = "application", "driver", "memory", "hardware", "interconnect", "thermal/power", "informational"
_P, _W, _F = Status.PASS, Status.WARN, Status.FAIL


def _nvlink5(code: int, unit: str) -> XidInfo:
    meaning = f"an error in the {unit} unit of fifth-generation NVLink (Blackwell); the message says Fatal or Nonfatal"
    return XidInfo(
        code=code,
        mnemonic=f"NVLINK_{unit}_ERROR",
        name=f"NVLink {unit} error",
        kind=_I,
        severity=_F,
        meaning=meaning,
        action=NVLINK5,
        remedy=Remedy.RESET,
        nvidia_action="WORKFLOW_NVLINK5_ERR",
    )


# fmt: off
XIDS: dict[int, XidInfo] = {
    x.code: x
    for x in (
        XidInfo(code=8, mnemonic="ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", name="GPU stopped processing", kind=_D, severity=_W,
                meaning="the GPU made no progress on a program's work queue: a hung kernel, or a driver or hardware fault",
                action=f"restart the application; {RESET} if it repeats", remedy=Remedy.RESTART_APP, nvidia_action="RESTART_APP"),
        XidInfo(code=13, mnemonic="ROBUST_CHANNEL_GR_EXCEPTION", name="graphics engine exception", kind=_A, severity=_P,
                meaning="a kernel faulted on the GPU (out-of-bounds access, illegal instruction, device-side assert): "
                "the program or a library kernel, not the GPU", action=APP_BUG, remedy=Remedy.FIX_APP, nvidia_action="RESTART_APP"),
        XidInfo(code=31, mnemonic="ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", name="GPU memory page fault", kind=_A, severity=_P,
                meaning="a kernel touched GPU memory it does not own (CUDA: 'an illegal memory access was encountered'); "
                "the program is at fault unless this began right after a driver change", action=APP_BUG, remedy=Remedy.FIX_APP, nvidia_action="RESTART_APP"),
        XidInfo(code=32, mnemonic="ROBUST_CHANNEL_PBDMA_ERROR", name="corrupted push buffer stream", kind=_I, severity=_W,
                meaning="the command stream the GPU fetched over PCIe was corrupt: PCIe signal quality (slot, riser), system memory or the driver",
                action=f"restart the application; if it recurs, reseat the GPU and check its slot/riser, then {REPLACE}",
                remedy=Remedy.RESTART_APP, nvidia_action="RESTART_APP"),
        XidInfo(code=38, mnemonic="ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT", name="driver firmware error", kind=_D, severity=_W,
                meaning="the GPU's context-switch firmware watchdog fired: a driver/firmware fault",
                action=f"update the NVIDIA driver; {RESET} if CUDA calls fail", remedy=Remedy.UPDATE_DRIVER, nvidia_action="IGNORE"),
        XidInfo(code=43, mnemonic="ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", name="GPU stopped processing a program", kind=_A, severity=_P,
                meaning="the driver stopped one program's GPU work after it faulted, hung or was killed; the GPU is fine",
                action="nothing to fix on the machine: look at the program that crashed", remedy=Remedy.FIX_APP, nvidia_action="IGNORE"),
        XidInfo(code=45, mnemonic="ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", name="preemptive cleanup", kind=_N, severity=_P,
                meaning="the driver tore down a program's GPU context, after an earlier Xid or because the process was killed "
                "(Ctrl-C, OOM killer, a crash)", action="follow the Xid that came before it; on its own it needs nothing",
                remedy=Remedy.NONE, nvidia_action="WORKFLOW_XID_45"),
        XidInfo(code=46, mnemonic="ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", name="GPU timeout", kind=_D, severity=_F,
                meaning="the GPU stopped responding to the driver", action=RECURS, remedy=Remedy.RESET, nvidia_action="RESET_GPU"),
        XidInfo(code=48, mnemonic="ROBUST_CHANNEL_GPU_ECC_DBE", name="double-bit ECC error", kind=_M, severity=_F,
                meaning="an uncorrectable GPU memory error: the job using that memory read corrupt data "
                "(CUDA: 'uncorrectable ECC error encountered')",
                action=f"{RESET} so the bad page/row is retired; {REPLACE} if it recurs or Xid 64 follows", remedy=Remedy.RESET, nvidia_action="WORKFLOW_XID_48"),
        XidInfo(code=54, mnemonic="SILENT_RUNNING_PWR_REDUCED_CLOCKING", name="reduced clocks for lack of power", kind=_T, severity=_W,
                meaning="the board is not getting its full auxiliary power and runs at reduced clocks",
                action="check the GPU's power cables and the power supply", remedy=Remedy.CHECK_HARDWARE, nvidia_action="CHECK_MECHANICALS"),
        XidInfo(code=61, mnemonic="PMU_BREAKPOINT", name="internal micro-controller breakpoint/warning", kind=_D, severity=_W,
                meaning="the GPU's power-management micro-controller hit a breakpoint or warning (firmware, sometimes hardware)",
                action=f"update the NVIDIA driver; {RESET} if the GPU misbehaves; contact the provider if it recurs",
                remedy=Remedy.UPDATE_DRIVER, nvidia_action="CONTACT_SUPPORT"),
        XidInfo(code=62, mnemonic="PMU_HALT_ERROR", name="internal micro-controller halt", kind=_H, severity=_F,
                meaning="the GPU's power-management micro-controller halted (hardware, firmware or overheating)", action=RECURS,
                remedy=Remedy.RESET, nvidia_action="RESET_GPU"),
        XidInfo(code=63, mnemonic="INFOROM_DRAM_RETIREMENT_EVENT", name="page retirement / row remap recorded", kind=_M, severity=_W,
                meaning="after a memory error the GPU recorded a bad page or row to retire/remap; it takes effect at the next GPU reset",
                action=f"{RESET} so the remap takes effect; {REPLACE} if new ones keep appearing", remedy=Remedy.RESET, nvidia_action="IGNORE"),
        XidInfo(code=64, mnemonic="INFOROM_DRAM_RETIREMENT_FAILURE", name="page retirement / row remap failed", kind=_M, severity=_F,
                meaning="the GPU could not retire or remap a bad memory location: its memory repair is exhausted",
                action=f"{REPLACE} (a reset only recovers it for now)", remedy=Remedy.REPLACE, nvidia_action="RESET_GPU"),
        XidInfo(code=68, mnemonic="ROBUST_CHANNEL_NVDEC0_ERROR", name="video decoder (NVDEC) exception", kind=_D, severity=_W,
                meaning="the hardware video decoder faulted (torchvision/DALI/ffmpeg GPU decoding): bad input, the driver or hardware",
                action="restart the application; update the NVIDIA driver if it recurs", remedy=Remedy.RESTART_APP, nvidia_action="RESTART_APP"),
        XidInfo(code=69, mnemonic="ROBUST_CHANNEL_GR_CLASS_ERROR", name="graphics engine class error", kind=_D, severity=_W,
                meaning="the GPU rejected a command for the graphics/compute engine: usually a driver or user-space library problem",
                action="restart the application; check that libcuda matches the kernel driver; update the driver if it recurs",
                remedy=Remedy.RESTART_APP, nvidia_action="RESTART_APP"),
        XidInfo(code=74, mnemonic="NVLINK_ERROR", name="NVLink error", kind=_I, severity=_F,
                meaning="an NVLink connection between GPUs reported errors; NCCL over NVLink fails ('uncorrectable NVLink error')",
                action=NVLINK_RESET, remedy=Remedy.RESET, nvidia_action="WORKFLOW_NVLINK_ERR"),
        XidInfo(code=79, mnemonic="ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", name="GPU has fallen off the bus", kind=_H, severity=_F,
                meaning="the GPU stopped answering on PCIe (power, overheating, slot/riser or the board); every process on it is dead "
                "and NVML may no longer list it",
                action=f"reboot the machine (power it off fully if the GPU stays missing); if it recurs, check power, cooling and "
                f"seating, then {REPLACE}", remedy=Remedy.REBOOT, nvidia_action="RESTART_BM"),
        XidInfo(code=92, mnemonic="EXCESSIVE_SBE_INTERRUPTS", name="high single-bit ECC error rate", kind=_M, severity=_W,
                meaning="the GPU is correcting memory errors at a high rate: nothing was lost yet, but the memory may be degrading",
                action="no action now; watch the ECC and row-remap counters", remedy=Remedy.WATCH, nvidia_action="IGNORE"),
        XidInfo(code=94, mnemonic="ROBUST_CHANNEL_CONTAINED_ERROR", name="contained ECC error", kind=_M, severity=_W,
                meaning="an uncorrectable memory error was contained to the program that touched it: that program must restart, "
                "the GPU and other programs keep working", action="restart the affected application; the remap applies at the next GPU reset",
                remedy=Remedy.RESTART_APP, nvidia_action="RESTART_APP"),
        XidInfo(code=95, mnemonic="ROBUST_CHANNEL_UNCONTAINED_ERROR", name="uncontained ECC error", kind=_M, severity=_F,
                meaning="an uncorrectable memory error could not be contained: every program on this GPU is affected", action=RECURS,
                remedy=Remedy.RESET, nvidia_action="RESET_GPU"),
        XidInfo(code=109, mnemonic="ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", name="context switch timeout", kind=_D, severity=_F,
                meaning="the GPU did not switch between programs in time: a hung kernel, a driver bug or a hardware fault",
                action=DRIVER_RESET, remedy=Remedy.RESET, nvidia_action="RESET_GPU"),
        XidInfo(code=119, mnemonic="GSP_RPC_TIMEOUT", name="GSP RPC timeout", kind=_D, severity=_F,
                meaning="the GPU System Processor firmware stopped answering the driver; nvidia-smi and CUDA calls hang or fail",
                action=DRIVER_RESET, remedy=Remedy.RESET, nvidia_action="RESET_GPU"),
        XidInfo(code=120, mnemonic="GSP_ERROR", name="GSP error", kind=_D, severity=_F,
                meaning="the GPU System Processor firmware reported an internal error", action=DRIVER_RESET, remedy=Remedy.RESET, nvidia_action="RESET_GPU"),
        XidInfo(code=121, mnemonic="C2C_ERROR", name="C2C link corrected error", kind=_I, severity=_P,
                meaning="a corrected error on the chip-to-chip link between a Grace CPU and the GPU; nothing was lost",
                action="no action; watch for repeats", remedy=Remedy.WATCH, nvidia_action="IGNORE"),
        XidInfo(code=136, mnemonic="ALI_TRAINING_FAIL", name="NVLink link training failed", kind=_I, severity=_F,
                meaning="an NVLink link failed to train, so NVLink between these GPUs is degraded or absent", action=NVLINK_RESET,
                remedy=Remedy.RESET, nvidia_action="RESET_GPU"),
        XidInfo(code=140, mnemonic="UNRECOVERABLE_ECC_ERROR_ESCAPE", name="unrecovered ECC error", kind=_M, severity=_F,
                meaning="an uncorrectable memory error escaped the GPU's containment", action=RECURS, remedy=Remedy.RESET, nvidia_action="RESET_GPU"),
        XidInfo(code=143, mnemonic="GPU_INIT_ERROR", name="GPU initialization failure", kind=_H, severity=_F,
                meaning="the GPU failed to initialise: CUDA sees no usable device or fails at init", action=RECURS, remedy=Remedy.RESET, nvidia_action="RESET_GPU"),
        _nvlink5(144, "SAW"),
        _nvlink5(145, "RLW"),
        _nvlink5(146, "TLW"),
        _nvlink5(147, "TREX"),
        _nvlink5(148, "NVLPW_CTRL"),
        _nvlink5(149, "NETIR"),
        _nvlink5(150, "MSE"),
        XidInfo(code=154, mnemonic="GPU_RECOVERY_ACTION_CHANGED", name="GPU recovery action changed", kind=_N, severity=_P,
                meaning="after another error the driver changed the recovery this GPU needs (none, reset, reboot, drain)",
                action="do what the new recovery action says", remedy=Remedy.NONE, nvidia_action="XID_154"),
    )
}
# fmt: on


def lookup(code: int) -> XidInfo:
    """The table entry, or a neutral one for codes it does not describe (new drivers add codes)."""
    return XIDS.get(code) or XidInfo(
        code=code,
        mnemonic="",
        name="not in envdoctor's table",
        kind="unknown",
        severity=Status.WARN,
        meaning="an Xid this table does not describe",
        action=f"look it up in NVIDIA's Xid catalog ({CATALOG_URL})",
        remedy=Remedy.WATCH,
        nvidia_action="",
    )


# ---- parsing ---------------------------------------------------------------------------------

# "NVRM: Xid (PCI:0000:3b:00): 79, ..." and the pre-PCI-prefix form "Xid (0000:01:00): 13, ...".
# The parenthesis is taken whole because users redact it ("Xid (PCI:...): 145").
_XID = re.compile(r"\bXid \((?:PCI:)?(?P<pci>[^)]*)\):\s*(?P<code>\d+)\s*,?\s*(?P<rest>.*)$")
_PID = re.compile(r"^pid=(?P<pid>'[^']*'|[^,\s]+),\s*(?:name=(?P<name>[^,]*),\s*)?")
_PCI = re.compile(r"^(?:(?P<dom>[0-9a-fA-F]{1,8}):)?(?P<bus>[0-9a-fA-F]{1,2}):(?P<dev>[0-9a-fA-F]{1,2})(?:\.[0-7])?$")
_KMSG = re.compile(r"^\d+,\d+,(?P<usec>\d+),[^;]*;")
_MONO = re.compile(r"\[\s*(?P<s>\d+\.\d+)\]")
_CTIME = re.compile(r"\[(?P<t>[A-Z][a-z]{2} [A-Z][a-z]{2} +\d+ \d\d:\d\d:\d\d \d{4})\]")
_SYSLOG = re.compile(r"^(?P<t>[A-Z][a-z]{2} +\d+ \d\d:\d\d:\d\d)\b")
_ISO = re.compile(r"(?:^|\[)(?P<t>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d[^\s\]]*)")
_CLOCK = re.compile(r"^(?P<t>\d\d:\d\d:\d\d)\s")
_CAUSED_BY = re.compile(r"caused by previous Xid (?P<code>\d+)")


@dataclass(frozen=True)
class XidEvent:
    code: int
    pci: str | None  # "0000:3b:00" (domain:bus:device), None when the line does not name one
    pid: int | None
    process: str | None
    message: str
    since_boot: float | None  # seconds, from /dev/kmsg, dmesg "[12345.678]" or journalctl short-monotonic
    wall_time: str | None  # as printed by syslog/journalctl/dmesg -T, when that is all there is
    raw: str
    repeated: int = 0  # further events of this code on this GPU that were counted, not kept (see compact)

    @property
    def info(self) -> XidInfo:
        return lookup(self.code)

    @property
    def caused_by(self) -> int | None:
        """Newer drivers say which earlier Xid an Xid 45 cleans up after."""
        m = _CAUSED_BY.search(self.message)
        return int(m.group("code")) if m else None

    def to_dict(self) -> dict[str, Any]:
        # The raw line stays out of reports: syslog and journal lines carry the host name.
        return {
            "code": self.code,
            "name": self.info.name,
            "kind": self.info.kind,
            "pci": self.pci,
            "pid": self.pid,
            "process": self.process,
            "message": self.message,
            "since_boot": self.since_boot,
            "wall_time": self.wall_time,
            "repeated": self.repeated,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> XidEvent:
        """The inverse of to_dict (without the raw line, which reports never carry)."""
        return cls(
            code=int(d["code"]), pci=d.get("pci"), pid=d.get("pid"), process=d.get("process"), message=d.get("message") or "",
            since_boot=d.get("since_boot"), wall_time=d.get("wall_time"), raw="", repeated=int(d.get("repeated") or 0),
        )  # fmt: skip


def pci_key(bus_id: str | None) -> str | None:
    """One spelling for a GPU's PCI address: the kernel's "0000:3b:00" and NVML's
    "00000000:3B:00.0" both become "0000:3b:00" (Xid lines carry no PCI function)."""
    m = _PCI.match((bus_id or "").strip())
    if not m:
        return None
    return f"{int(m.group('dom') or '0', 16):04x}:{int(m.group('bus'), 16):02x}:{int(m.group('dev'), 16):02x}"


def _times(prefix: str) -> tuple[float | None, str | None]:
    """Seconds since boot and/or the wall-clock stamp found in whatever precedes "Xid"."""
    since_boot = None
    m = _KMSG.match(prefix)
    if m:
        since_boot = int(m.group("usec")) / 1e6
    elif mono := _MONO.search(prefix):
        since_boot = float(mono.group("s"))
    for pattern in (_CTIME, _ISO, _SYSLOG, _CLOCK):
        if wall := (pattern.match(prefix) if pattern in (_SYSLOG, _CLOCK) else pattern.search(prefix)):
            return since_boot, wall.group("t")
    return since_boot, None


def _pid_name(rest: str) -> tuple[int | None, str | None, str]:
    m = _PID.match(rest)
    if not m:
        return None, None, rest
    pid_text, name = m.group("pid").strip("'"), (m.group("name") or "").strip()
    pid = int(pid_text) if pid_text.isdigit() else None
    return pid, (name if name and name != "<unknown>" else None), rest[m.end() :]


def parse_line(line: str) -> XidEvent | None:
    """One Xid event from one kernel log line as users post it, else None."""
    if "Xid" not in line:
        return None
    line = line.rstrip("\r\n")
    m = _XID.search(line)
    if not m:
        return None
    since_boot, wall = _times(line[: m.start()].strip("` "))
    pid, process, message = _pid_name(m.group("rest"))
    return XidEvent(
        code=int(m.group("code")),
        pci=pci_key(m.group("pci")),
        pid=pid,
        process=process,
        message=message.strip(),
        since_boot=since_boot,
        wall_time=wall,
        raw=line,
    )


def parse_lines(lines: Iterable[str]) -> list[XidEvent]:
    return [e for e in map(parse_line, lines) if e is not None]


def compact(events: Iterable[XidEvent], keep: int = 5) -> list[XidEvent]:
    """The first ``keep`` events of each (code, GPU) and the last one, which counts the rest in
    ``repeated``, in log order: a program that faults in a loop logs thousands of Xid 13s, and a
    report must stay small while still saying how many there were and when they began and ended."""
    events = list(events)
    groups: dict[tuple[int, str | None], list[int]] = {}
    for i, e in enumerate(events):
        groups.setdefault((e.code, e.pci), []).append(i)
    kept: dict[int, XidEvent] = {}
    for idx in groups.values():
        kept.update((i, events[i]) for i in idx[:keep])
        if len(idx) > keep:
            kept[idx[-1]] = replace(events[idx[-1]], repeated=len(idx) - keep - 1)
    return [kept[i] for i in sorted(kept)]


_RECOVERY_IN_MESSAGE = re.compile(r"\bto 0x(?P<v>[0-9a-fA-F]+)")


def event_severity(event: XidEvent) -> Status:
    """The table's severity, refined by what this one message says."""
    info = event.info
    if 144 <= event.code <= 150:
        # NVLink5 Xids carry their own verdict: "SAW_MVB Nonfatal ..." vs "NETIR Fatal ...".
        return Status.PASS if re.search(r"\bNon-?fatal\b", event.message, re.I) else Status.FAIL
    if event.code == 154:
        m = _RECOVERY_IN_MESSAGE.search(event.message)
        return Status.FAIL if m and int(m.group("v"), 16) != 0 else Status.PASS
    return info.severity


# ---- reading the kernel log ------------------------------------------------------------------

Runner = Callable[[list[str], float], tuple[int | None, str, str]]


@dataclass(frozen=True)
class KernelLog:
    source: str  # "/dev/kmsg", "journalctl", "dmesg"; "" when nothing could be read
    events: tuple[XidEvent, ...] = ()
    reason: str = ""  # why the log could not be read; "" when it was
    complete: bool = True  # False when the ring buffer had already dropped the earliest records

    @property
    def readable(self) -> bool:
        return not self.reason

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "reason": self.reason,
            "complete": self.complete,
            "events": [e.to_dict() for e in self.events],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> KernelLog:
        events = tuple(XidEvent.from_dict(e) for e in d.get("events") or ())
        return cls(d.get("source") or "", events, d.get("reason") or "", bool(d.get("complete", True)))


def read_kmsg(path: str = KMSG, deadline: float | None = None, max_records: int = 500_000) -> tuple[list[str], bool]:
    """Every record /dev/kmsg holds now, as "prio,seq,usec,flags;text" lines, and whether the
    first one is the first since boot. Never blocks: O_NONBLOCK makes read() raise EAGAIN once
    the reader has caught up, and the deadline and record cap bound a log that floods meanwhile.
    Raises OSError (PermissionError when dmesg_restrict keeps non-root out) if it cannot open."""
    deadline = time.monotonic() + 2.0 if deadline is None else deadline
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    records: list[str] = []
    try:
        while len(records) < max_records and time.monotonic() < deadline:
            try:
                chunk = os.read(fd, 16384)  # one record per read; records are at most 8 KiB
            except BlockingIOError:
                break
            except (BrokenPipeError, InterruptedError):
                continue  # EPIPE: records were overwritten under us; the next read resumes after them
            if not chunk:
                break
            records.append(chunk.decode("utf-8", "replace").split("\n", 1)[0])
    finally:
        os.close(fd)
    first_seq = records[0].split(",", 2)[1] if records and records[0].count(",") >= 2 else "0"
    return records, first_seq == "0"


def run_argv(argv: list[str], timeout: float) -> tuple[int | None, str, str]:
    """(returncode or None on timeout, stdout, stderr). The child gets its own session so a
    timeout kills it and anything it spawned; no shell, no pager, no stdin."""
    env = {**os.environ, "LC_ALL": "C", "SYSTEMD_PAGER": "", "PAGER": "cat"}
    try:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, errors="replace", env=env, start_new_session=True,
        )  # fmt: skip
    except OSError as e:
        return 127, "", f"{argv[0]}: {e.strerror or e}"
    try:
        out, err = proc.communicate(timeout=max(timeout, 0.1))
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            proc.communicate(timeout=2)
        except subprocess.TimeoutExpired:
            pass  # a grandchild still holds the pipes: give up on them rather than wait
        return None, "", f"{argv[0]}: timed out after {timeout:.0f}s"


_BOOT_START = re.compile(r"^\[\s*0\.0+\]")
_DENIED = ("permission denied", "operation not permitted", "insufficient permissions", "not seeing messages from other users")


def _from_command(name: str, argv: tuple[str, ...], remaining: float, run: Runner) -> tuple[KernelLog | None, str, bool]:
    """(log, problem, denied): a KernelLog when the command produced kernel lines."""
    if remaining <= 0:
        return None, f"{name}: no time left", False
    rc, out, err = run(list(argv), remaining)
    lines = [ln for ln in out.splitlines() if ln.strip() and not ln.startswith("-- ")]
    if not lines and any(d in err.lower() for d in _DENIED):
        # journalctl as a user outside adm/systemd-journal prints "-- No entries --" and a hint;
        # dmesg under kernel.dmesg_restrict=1 says "Operation not permitted".
        return None, f"{name}: {err.strip().splitlines()[0]}", True
    if rc == 0 and lines:
        # journalctl -b holds the whole boot; dmesg shows only what the ring buffer still has.
        complete = name != "dmesg" or bool(_BOOT_START.match(lines[0]))
        return KernelLog(name, tuple(parse_lines(lines)), complete=complete), "", False
    problem = (err.strip().splitlines() or ["no kernel messages"])[0]
    return None, f"{name}: {problem}", False


def read_xid_events(kmsg_path: str = KMSG, timeout: float = LOG_TIMEOUT, run: Runner = run_argv) -> KernelLog:
    """Xid events since boot, from /dev/kmsg, else journalctl, else dmesg; or the reason none of
    them could be read. Everything together stays within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    problems: list[str] = []
    denied = False
    try:
        records, complete = read_kmsg(kmsg_path, min(deadline, time.monotonic() + timeout / 2))
        if records:
            return KernelLog(kmsg_path, tuple(parse_lines(records)), complete=complete)
        problems.append(f"{kmsg_path}: no records")  # some containers offer an empty stand-in
    except OSError as e:
        denied = isinstance(e, PermissionError)
        problems.append(f"{kmsg_path}: {e.strerror or e}")
    for name, argv in (("journalctl", JOURNALCTL), ("dmesg", DMESG)):
        log, problem, was_denied = _from_command(name, argv, deadline - time.monotonic(), run)
        if log is not None:
            return log
        problems.append(problem)
        denied = denied or was_denied
    head = "not root: the kernel log is not readable" if denied else "the kernel log could not be read"
    return KernelLog("", reason=f"{head} ({'; '.join(problems)})")
