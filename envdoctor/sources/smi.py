"""``nvidia-smi`` (the table, or only its header row) and ``nvidia-smi -q`` into ``driver``,
``gpus`` and ``fabric_state`` values shaped as checks/nvidia.py builds them from NVML."""

from __future__ import annotations

import re

from envdoctor.core.patterns import lazy
from envdoctor.sources._acc import RANK_SMI, RANK_SMI_Q, Acc
from envdoctor.sources._text import known

HEADER = lazy(r"NVIDIA-SMI\s+(\d[\d.]{0,30})\s+Driver Version:\s*(\d[\d.]{0,30})(?:\s+CUDA Version:\s*(\d+\.\d+|N/A))?")
MEM = lazy(r"^\s*(\d+)\s*MiB\s*/\s*(\d+)\s*MiB\s*$")
PROC = lazy(r"^\|\s+(\d+)\s+(\S+)\s+(\S+)\s+(\d+)\s+(C|G|C\+G|M|M\+C)\s+(.{0,400}?)\s+(\d+)MiB\s*\|$")
PERSIST = {"On": True, "Off": False}
MODES = {"Default": "Default", "E. Process": "Exclusive_Process", "E. Thread": "Exclusive_Thread", "Prohibited": "Prohibited"}


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _first_row(cells: list[str]) -> dict | None:
    """``0  NVIDIA H200   On | 00000000:00:06.0 Off | 0``: index, name, persistence, bus id."""
    if len(cells) < 2:
        return None
    words = cells[0].split()
    if len(words) < 2 or not words[0].isdigit():
        return None
    persistence = words[-1] if words[-1] in ("On", "Off", "WDDM", "TCC", "N/A") and len(words) > 2 else None
    name = " ".join(words[1:-1] if persistence else words[1:])
    bus = cells[1].split()[0] if cells[1].split() else ""
    if not re.match(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$", bus):
        return None
    gpu = {"index": int(words[0]), "name": name, "pci_bus_id": bus, "persistence_mode": PERSIST.get(persistence or "")}
    if persistence in ("WDDM", "TCC"):
        gpu["driver_model"] = persistence
    if name.endswith("..."):
        gpu["name_truncated"] = True
    return gpu


def _second_row(cells: list[str], gpu: dict) -> None:
    m = MEM.match(cells[1]) if len(cells) > 1 else None
    if m:
        gpu["memory_used"], gpu["memory_total"] = int(m.group(1)) << 20, int(m.group(2)) << 20
    if len(cells) > 2:
        tail = cells[2].split(None, 1)
        mode = tail[1].strip() if len(tail) > 1 else ""
        gpu["compute_mode"] = MODES.get(mode)


def _third_row(cells: list[str], gpu: dict) -> None:
    if len(cells) > 2 and cells[2] in ("Enabled", "Disabled"):
        gpu["mig_mode"] = cells[2] == "Enabled"


def _processes(lines: list[str], start: int, gpus: list[dict]) -> None:
    by_index = {g["index"]: g for g in gpus}
    for line in lines[start : start + 400]:
        if "No running processes found" in line:
            for g in gpus:
                g["processes"] = []
            return
        m = PROC.match(line.strip())
        if m and int(m.group(1)) in by_index:
            g = by_index[int(m.group(1))]
            g.setdefault("processes", []).append({"pid": int(m.group(4)), "used_memory": int(m.group(7)) << 20, "name": m.group(6).strip()})
        elif line.strip().startswith("+-") and any("processes" in g for g in gpus):
            return


def _table(lines: list[str], start: int, acc: Acc) -> list[dict]:
    gpus: list[dict] = []
    row = 0
    for i in range(start, min(len(lines), start + 4000)):
        line = lines[i].strip()
        if not line.startswith("|"):
            if line and not line.startswith("+"):
                break
            row = 0
            continue
        if "Processes:" in line:
            _processes(lines, i + 1, gpus)
            break
        cells = _cells(line)
        gpu = _first_row(cells) if row == 0 else None
        if gpu:
            gpus.append(gpu)
            row = 1
            acc.consumed.add(i)
        elif row == 1 and gpus:
            _second_row(cells, gpus[-1])
            row = 2
        elif row == 2 and gpus:
            _third_row(cells, gpus[-1])
            row = 3
    return gpus


def read_smi_table(lines: list[str], acc: Acc) -> None:
    for i, line in enumerate(lines):
        if "NVIDIA-SMI" not in line:
            continue
        m = HEADER.search(line)
        if not m:
            continue
        acc.kind("nvidia_smi")
        acc.consumed.add(i)
        acc.put("driver", "version", m.group(2), line, RANK_SMI)
        cuda = known(m.group(3))
        if cuda:
            acc.put("driver", "cuda_version", cuda, line, RANK_SMI)
            acc.put("driver", "cuda_version_source", "nvidia-smi", line, RANK_SMI)
        gpus = _table(lines, i + 1, acc)
        if gpus:
            acc.add_gpus(gpus, RANK_SMI, line)
        if any(g.get("name_truncated") for g in gpus):
            acc.note("nvidia-smi cut the GPU name short ('...'); nvidia-smi -L or -q gives the full name")
        return


Q_GPU = lazy(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
Q_FIELDS = {
    ("", "Product Name"): "name",
    ("", "GPU UUID"): "uuid",
    ("", "Serial Number"): "serial",
    ("", "Product Brand"): "brand",
    ("", "Persistence Mode"): "persistence_mode",
    ("", "Compute Mode"): "compute_mode",
    ("MIG Mode", "Current"): "mig_mode",
    ("FB Memory Usage", "Total"): "memory_total",
    ("FB Memory Usage", "Used"): "memory_used",
    ("Fabric", "State"): "fabric_state",
    ("Fabric", "Status"): "fabric_status",
    ("", "Processes"): "processes",
}


def _q_value(field: str, value: str):
    if field in ("memory_total", "memory_used"):
        m = re.match(r"(\d+)\s*MiB", value)
        return int(m.group(1)) << 20 if m else None
    if field == "persistence_mode":
        return {"Enabled": True, "Disabled": False}.get(value)
    if field == "mig_mode":
        return {"Enabled": True, "Disabled": False}.get(value)
    if field == "compute_mode":
        return value.replace(" ", "_") if known(value) else None
    if field == "processes":
        return [] if value == "None" else None
    if field == "serial":
        return value if known(value) else ""
    return value


def _q_line(line: str, gpu: dict | None, sections: list[tuple[int, str]], acc: Acc) -> None:
    indent = len(line) - len(line.lstrip(" "))
    while sections and sections[-1][0] >= indent:
        sections.pop()
    key, sep, value = line.strip().partition(":")
    key, value = key.strip(), value.strip()
    if not sep:
        sections.append((indent, key))
        return
    parent = sections[-1][1] if sections else ""
    if gpu is None:
        if key in ("Driver Version", "CUDA Version") and indent == 0:
            name = "version" if key == "Driver Version" else "cuda_version"
            acc.put("driver", name, known(value), line, RANK_SMI_Q)
            if name == "cuda_version" and known(value):
                acc.put("driver", "cuda_version_source", "nvidia-smi -q", line, RANK_SMI_Q)
        elif parent == "Fabric" and key in ("State", "Status"):
            acc.fabric.setdefault("", {})[key.lower()] = value  # a Fabric block without its GPU header
        return
    field = Q_FIELDS.get((parent if len(sections) > 0 and parent in ("MIG Mode", "FB Memory Usage", "Fabric") else "", key))
    if field and (sections == [] or parent in ("MIG Mode", "FB Memory Usage", "Fabric") or indent <= 4):
        gpu[field] = _q_value(field, value)


def read_smi_q(lines: list[str], acc: Acc) -> None:
    start = next(
        (i for i, ln in enumerate(lines) if "NVSMI LOG" in ln or (ln.strip().startswith("Fabric") and ln.strip() == "Fabric")), None
    )
    if start is None:
        return
    acc.kind("nvidia_smi_q")
    gpus: list[dict] = []
    gpu: dict | None = None
    sections: list[tuple[int, str]] = []
    for i in range(start, len(lines)):
        line = lines[i]
        m = Q_GPU.match(line.strip()) if line.startswith("GPU ") else None
        if m:
            gpu = {"index": len(gpus), "pci_bus_id": m.group(1)}
            gpus.append(gpu)
            sections = []
            acc.consumed.add(i)
            continue
        if not line.strip() or (gpu is None and not line.startswith((" ", "Driver", "CUDA", "Attached", "Timestamp", "="))):
            if gpu is None and line.strip() and sections == [] and acc.fabric:
                break
            continue
        _q_line(line, gpu, sections, acc)
        acc.consumed.add(i)
    for g in gpus:
        state, status = g.pop("fabric_state", None), g.pop("fabric_status", None)
        if state:
            acc.fabric[g["pci_bus_id"].lower()] = {"state": state, **({"status": status} if status else {})}
    if gpus:
        acc.add_gpus(gpus, RANK_SMI_Q, next((ln for ln in lines if "Product Name" in ln), ""))
