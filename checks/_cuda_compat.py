"""CUDA compatibility tables and the rules envdoctor applies to them (no I/O, no imports of torch).

Sources (see shared/knowledge/failure-catalog.md §2.3/§2.4): NVIDIA's "CUDA Compatibility" guide
(minor-version floors per CUDA family, forward compatibility), the CUDA Toolkit release notes
("CUDA Toolkit and Corresponding Driver Versions"), and the arch-matching semantics of
``torch/cuda/__init__.py`` (a SASS ``sm_XY`` cubin runs on the same major with minor >= Y; PTX
``compute_XY`` is JIT-compiled for any CC >= X.Y; arch-specific ``sm_XYa`` only on X.Y itself).
Measured values (cuDriverGetVersion, NVML, the torch arch flags) always win over these tables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DriverVersion = tuple[int, ...]


def driver_tuple(version: str | None) -> DriverVersion | None:
    """``"580.65.06"`` -> (580, 65, 6); None when it is not a dotted number."""
    if not version:
        return None
    parts = re.findall(r"\d+", str(version))
    if not parts or not re.fullmatch(r"\s*\d+(\.\d+)*\s*", str(version)):
        return None
    return tuple(int(p) for p in parts)


def cuda_tuple(version: str | None) -> tuple[int, int] | None:
    """``"12.8"`` / ``"12.8.1"`` -> (12, 8)."""
    if not version:
        return None
    m = re.match(r"\s*(\d+)\.(\d+)", str(version))
    return (int(m.group(1)), int(m.group(2))) if m else None


def cuda_from_int(value: int) -> str:
    """cuDriverGetVersion's 1000*major + 10*minor (12080) -> "12.8"."""
    return f"{value // 1000}.{(value % 1000) // 10}"


# Minor-version compatibility: the oldest driver that runs any toolkit of a CUDA family.
FAMILY_FLOOR: dict[int, str] = {11: "450.80.02", 12: "525.60.13", 13: "580.65.06"}

# The driver each toolkit GA release shipped with (Linux x86_64). Below it, a same-major toolkit
# runs only under minor-version compatibility (no PTX JIT of its PTX, some APIs missing).
TOOLKIT_GA_DRIVER: dict[str, str] = {
    "9.0": "384.81",
    "9.1": "387.26",
    "9.2": "396.26",
    "10.0": "410.48",
    "10.1": "418.39",
    "10.2": "440.33",
    "11.0": "450.36.06",
    "11.1": "455.23",
    "11.2": "460.27.03",
    "11.3": "465.19.01",
    "11.4": "470.42.01",
    "11.5": "495.29.05",
    "11.6": "510.39.01",
    "11.7": "515.43.04",
    "11.8": "520.61.05",
    "12.0": "525.60.13",
    "12.1": "530.30.02",
    "12.2": "535.54.03",
    "12.3": "545.23.06",
    "12.4": "550.54.14",
    "12.5": "555.42.02",
    "12.6": "560.28.03",
    "12.8": "570.26",
    "12.9": "575.51.03",
    "13.0": "580.65.06",
    "13.1": "590.44.01",
}

# Driver branch -> the highest CUDA it reports; used only when cuDriverGetVersion/NVML cannot say.
BRANCH_CUDA: dict[int, str] = {
    # before R450: CUDA Toolkit release notes, table 3 (the minimum driver of each CUDA release)
    384: "9.0",
    390: "9.1",
    396: "9.2",
    410: "10.0",
    418: "10.1",
    440: "10.2",
    450: "11.0",
    455: "11.1",
    460: "11.2",
    465: "11.3",
    470: "11.4",
    495: "11.5",
    510: "11.6",
    515: "11.7",
    520: "11.8",
    525: "12.0",
    530: "12.1",
    535: "12.2",
    545: "12.3",
    550: "12.4",
    555: "12.5",
    560: "12.6",
    565: "12.7",
    570: "12.8",
    575: "12.9",
    580: "13.0",
    590: "13.1",
}


def cuda_for_branch(driver_version: str) -> str | None:
    """The CUDA version a driver branch supports, from the table (the nearest lower branch)."""
    t = driver_tuple(driver_version)
    if not t:
        return None
    known = [b for b in BRANCH_CUDA if b <= t[0]]
    return BRANCH_CUDA[max(known)] if known else None


def ga_driver(cuda: str) -> str | None:
    ct = cuda_tuple(cuda)
    return TOOLKIT_GA_DRIVER.get(f"{ct[0]}.{ct[1]}") if ct else None


def wheel_tag(cuda: str) -> str:
    """ "12.8" -> "cu128" (the download.pytorch.org index name)."""
    ct = cuda_tuple(cuda)
    return f"cu{ct[0]}{ct[1]}" if ct else "cpu"


# torch wheel indexes that exist, newest first, with the driver CUDA they need.
TORCH_INDEXES: tuple[str, ...] = ("13.0", "12.9", "12.8", "12.6", "12.4", "12.1", "11.8")


def best_index_for_driver(driver_cuda: str | None) -> str | None:
    """The newest torch CUDA variant a driver supports without minor-version compatibility."""
    d = cuda_tuple(driver_cuda)
    if not d:
        return None
    for c in TORCH_INDEXES:
        if (ct := cuda_tuple(c)) is not None and ct <= d:
            return wheel_tag(c)
    return None


@dataclass(frozen=True)
class DriverVerdict:
    """Whether a driver runs a CUDA build: the level, the words, the driver needed."""

    level: str  # "ok" | "minor_compat" | "too_old" | "below_floor"
    message: str
    needed_driver: str | None = None


def judge_driver(torch_cuda: str, driver_cuda: str, driver_version: str | None) -> DriverVerdict:
    """§2.3 decision rule: major must be covered, the family floor met; an older minor runs
    under minor-version compatibility."""
    t, d = cuda_tuple(torch_cuda), cuda_tuple(driver_cuda)
    if not t or not d:
        return DriverVerdict("ok", "versions could not be compared")
    ga = ga_driver(torch_cuda)
    if d[0] < t[0]:
        return DriverVerdict(
            "too_old", f"the driver supports CUDA up to {driver_cuda}, torch needs CUDA {t[0]}.x", ga or FAMILY_FLOOR.get(t[0])
        )
    if d[0] == t[0]:
        floor = FAMILY_FLOOR.get(t[0])
        dv = driver_tuple(driver_version)
        if floor and dv and (fv := driver_tuple(floor)) is not None and dv < fv:
            return DriverVerdict("below_floor", f"driver {driver_version} is below {floor}, the minimum for any CUDA {t[0]}.x", ga or floor)
        if d < t and t[0] < 11:  # minor-version compatibility exists from CUDA 11 on
            return DriverVerdict(
                "too_old",
                f"the driver supports CUDA up to {driver_cuda}, torch needs CUDA {torch_cuda} (before CUDA 11 every minor needs its driver)",
                ga,
            )
        if d < t:
            return DriverVerdict(
                "minor_compat",
                f"the driver supports CUDA {driver_cuda}, older than torch's CUDA {torch_cuda}: it runs under minor-version compatibility",
                ga,
            )
    return DriverVerdict("ok", f"the driver supports CUDA {driver_cuda} (torch needs {torch_cuda})")


# ---- arch list semantics ---------------------------------------------------------------------

# Integrated GPUs: their SASS is not interchangeable with the discrete parts of the same major
# (torch's DEVICE_REQUIREMENT excludes 5.3, 6.2, 7.2 and 8.7 from the family rule).
IGPU_CC = {(5, 3), (6, 2), (7, 2), (8, 7)}
# CUDA 13 renumbered Thor from sm_101 to sm_110: the same silicon under either number.
RENAMED = {(10, 1): (11, 0), (11, 0): (10, 1)}


@dataclass(frozen=True)
class ArchFlag:
    """One -gencode target of a build: SASS or PTX, its compute capability and suffix."""

    kind: str  # "sm" (SASS) or "compute" (PTX)
    cc: tuple[int, int]
    suffix: str  # "" | "a" (arch-specific, this CC only) | "f" (family)

    @property
    def text(self) -> str:
        return f"{self.kind}_{self.cc[0]}{self.cc[1]}{self.suffix}"


def parse_arch_flag(flag: str) -> ArchFlag | None:
    m = re.fullmatch(r"(sm|compute)_(\d+)(\d)([af]?)", flag.strip())
    if not m:
        return None
    return ArchFlag(m.group(1), (int(m.group(2)), int(m.group(3))), m.group(4))


def cc_tuple(cc: str | None) -> tuple[int, int] | None:
    if not cc:
        return None
    m = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", str(cc))
    return (int(m.group(1)), int(m.group(2))) if m else None


def fabric_possible(gpus, nvswitches=None) -> bool:
    """Whether these GPUs may sit on an NVSwitch fabric whose state nvidia-smi reports (NVSwitch
    bridges on the PCI bus, or four or more GPUs of compute capability 9.0 or newer: HGX/DGX)."""
    hopper_plus = [g for g in gpus or () if isinstance(g, dict) and (cc_tuple(g.get("cc")) or (0, 0)) >= (9, 0)]
    return bool(nvswitches) or len(hopper_plus) >= 4


def sass_runs_on(flag: ArchFlag, cc: tuple[int, int]) -> bool:
    code = flag.cc
    if code == cc or RENAMED.get(code) == cc:
        return True
    if flag.suffix == "a" or cc in IGPU_CC or code in IGPU_CC:
        return False
    return code[0] == cc[0] and cc[1] >= code[1]


def ptx_runs_on(flag: ArchFlag, cc: tuple[int, int]) -> bool:
    if flag.suffix == "a":
        return flag.cc == cc
    if flag.suffix == "f":
        return flag.cc[0] == cc[0] and cc >= flag.cc
    return cc >= flag.cc


@dataclass(frozen=True)
class ArchMatch:
    """How a GPU runs a build: its own SASS, through PTX, or not at all."""

    how: str  # "sass" | "ptx" | "none"
    flag: str | None = None


def arch_match(cc: str, arch_flags: list[str]) -> ArchMatch:
    """How a GPU of compute capability ``cc`` runs a build with ``arch_flags`` (torch's
    ``_cuda_getArchFlags()``): natively (SASS), only through PTX JIT, or not at all."""
    c = cc_tuple(cc)
    if c is None:
        return ArchMatch("none")
    flags = [f for f in (parse_arch_flag(x) for x in arch_flags) if f]
    for f in flags:
        if f.kind == "sm" and sass_runs_on(f, c):
            return ArchMatch("sass", f.text)
    for f in sorted((f for f in flags if f.kind == "compute"), key=lambda f: f.cc, reverse=True):
        if ptx_runs_on(f, c):
            return ArchMatch("ptx", f.text)
    return ArchMatch("none")


def lowest_arch(arch_flags: list[str]) -> tuple[str, tuple[int, int]] | None:
    """The oldest architecture a build carries (SASS or PTX): ("sm_37", (3, 7)); None for none."""
    flags = [f for f in (parse_arch_flag(x) for x in arch_flags) if f]
    if not flags:
        return None
    low = min(flags, key=lambda f: f.cc)
    return f"sm_{low.cc[0]}{low.cc[1]}", low.cc


def highest_arch(arch_flags: list[str]) -> tuple[str, tuple[int, int]]:
    """The newest architecture a build carries, as ``lowest_arch``; ("", (0, 0)) for none."""
    flags = [f for f in (parse_arch_flag(x) for x in arch_flags) if f]
    high = max(flags, key=lambda f: f.cc) if flags else None
    return (f"sm_{high.cc[0]}{high.cc[1]}", high.cc) if high else ("", (0, 0))


def recommend_variant(cc: str) -> str:
    """Which torch wheel variant covers a GPU (failure-catalog §2.4), as advice text."""
    c = cc_tuple(cc) or (0, 0)
    if c < (7, 0):
        return "the cu126 build (the last variant with Maxwell/Pascal kernels): pip install torch --index-url https://download.pytorch.org/whl/cu126"
    if c < (7, 5):
        return "the cu126 build (Volta is not in the cu128/cu130 builds of torch >= 2.11): pip install torch --index-url https://download.pytorch.org/whl/cu126"
    if c >= (10, 0):
        return "torch >= 2.7 built for CUDA 12.8 or newer: pip install --upgrade torch --index-url https://download.pytorch.org/whl/cu130"
    return "a current CUDA build of torch: pip install --upgrade torch --index-url https://download.pytorch.org/whl/cu130"


# ---- GPU classes -----------------------------------------------------------------------------

# NVML brand names for GeForce/consumer parts; forward compatibility (cuda-compat) is not
# supported on them (error 804) and NCCL peer-to-peer is unreliable on them.


def is_consumer(gpu: dict) -> bool:
    brand = str(gpu.get("brand") or "")
    name = str(gpu.get("name") or "")
    if brand:
        return brand in {"GeForce", "Titan", "TITAN"}
    return bool(re.search(r"GeForce|TITAN", name, re.I))


def is_datacenter(gpu: dict) -> bool:
    brand = str(gpu.get("brand") or "")
    name = str(gpu.get("name") or "")
    if brand in {"Tesla", "NVIDIA", "Nvidia"} and not re.search(r"GeForce|TITAN|RTX", name, re.I):
        return True
    return bool(
        re.search(r"\b(A100|A30|A10|A40|A16|A2|H100|H200|H20|H800|GH200|B200|B300|GB200|GB300|L4|L40S?|T4|V100|P100|P40|K80)\b", name)
    )
