"""Offline release data: what each torch release pins and ships, and which GPU has which compute
capability. Read from ``checks/data/*.json`` (package data) on first use; never imports torch and
never touches the network (``tools/regen_release_data.py`` refreshes the files from PyPI and the
pytorch repositories).

* ``torch_releases.json``: per release line (``"2.5"``) the Python range and C++ standard of the
  release matrix, and the CUDA builds (``cu124`` ...) with their ``TORCH_CUDA_ARCH_LIST``,
  cuDNN/NCCL; per release (``"2.5.1"``) the Triton requirement, PyPI's default CUDA build and its
  nvidia-* pins, the Python versions with Linux x86_64 wheels, the newest Python ``torch.compile``
  accepts (read from the release's own source), and the torchvision/torchaudio that pin it.
* ``gpu_cc.json``: GPU name patterns -> compute capability (NVIDIA's CUDA GPUs pages).

Every row names its source; rows whose values were derived rather than read say so
(``arch_derived``, ``derived``). Driver floors per CUDA version live in ``_cuda_compat``; the
arch lists here are meant for its ``arch_match`` (see :func:`arch_flags`). Measured facts (the
installed torch's METADATA, ``torch._C._cuda_getArchFlags()``, NVML's compute capability) always
win over these tables.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from types import MappingProxyType

from packaging.version import InvalidVersion, Version

DATA_DIR = "data"
TORCH_FILE = "torch_releases.json"
GPU_FILE = "gpu_cc.json"
PRODUCTS_FILE = "gpu_products.json"  # NVIDIA's product list, written by tools/regen_gpu_table.py


# ---- loading ---------------------------------------------------------------------------------


@cache
def load_json(name: str) -> Mapping:
    """One data file, parsed once. Raises OSError/ValueError if it is missing or broken."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), DATA_DIR, name)
    if os.path.isfile(path):  # installed or checked out as files: importlib.resources would cost ~3 ms to load
        with open(path, encoding="utf-8") as f:
            return json.loads(f.read())
    from importlib import resources  # a package inside a zip

    package = __package__ or "envdoctor_checks"
    text = resources.files(package).joinpath(DATA_DIR).joinpath(name).read_text(encoding="utf-8")
    return json.loads(text)


def _tuple(value) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def sources() -> Mapping[str, str]:
    """Source id -> what it is (URL or owner/repo:path@ref), from both data files."""
    merged = {**load_json(TORCH_FILE).get("sources", {}), **load_json(GPU_FILE).get("sources", {})}
    return MappingProxyType(merged)


# ---- version parsing -------------------------------------------------------------------------


@dataclass(frozen=True)
class TorchVersion:
    """A torch version string taken apart: release, line, local build tag, pre-release."""

    release: str  # "2.5.1"
    line: str  # "2.5"
    local: str | None  # "cu124", "cpu", "rocm6.2" ...
    prerelease: bool  # a0/rc/dev builds: their pins differ from the release's


def parse_torch_version(version: str | None) -> TorchVersion | None:
    """``"2.5.1+cu124"`` -> TorchVersion("2.5.1", "2.5", "cu124", False); None if not a version."""
    if not version:
        return None
    try:
        v = Version(str(version).strip())
    except InvalidVersion:
        return None
    parts = (list(v.release) + [0, 0])[:3]
    return TorchVersion(
        release=".".join(str(p) for p in parts),
        line=f"{parts[0]}.{parts[1]}",
        local=v.local,
        prerelease=v.is_prerelease or v.is_devrelease,
    )


def cuda_tag(cuda: str | None) -> str | None:
    """``"12.4"``/``"12.4.1"``/``"cu124"``/``"124"`` -> ``"cu124"``; None otherwise."""
    if not cuda:
        return None
    text = str(cuda).strip().lower()
    if m := re.fullmatch(r"(?:cu)?(\d{2})(\d)", text):
        return f"cu{m.group(1)}{m.group(2)}"
    if m := re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)*", text):
        return f"cu{m.group(1)}{m.group(2)}"
    return None


# ---- torch release lines and releases --------------------------------------------------------


@dataclass(frozen=True)
class CudaBuild:
    """One CUDA build of a torch line: its wheel tag, status, arch list and cuDNN."""

    tag: str  # "cu124"
    status: str | None  # "stable" | "experimental" (RELEASE.md's columns)
    arch_list: tuple[str, ...]  # TORCH_CUDA_ARCH_LIST entries, "+PTX" kept: ("5.0", ..., "9.0+PTX")
    arch_derived: bool
    arch_note: str | None
    cudnn: str | None
    nccl: str | None
    sources: tuple[str, ...]

    @property
    def cuda(self) -> str:
        return f"{self.tag[2:-1]}.{self.tag[-1]}"

    @property
    def arch_flags(self) -> tuple[str, ...]:
        """In ``torch._C._cuda_getArchFlags()`` form: ("sm_50", ..., "sm_90", "compute_90")."""
        return _flags(self.arch_list)


@dataclass(frozen=True)
class TorchLine:
    """A torch release line (2.5): its Python range, C++ standard and CUDA builds."""

    line: str  # "2.5"
    python_min: str | None
    python_max: str | None
    python_experimental: tuple[str, ...]
    cpp: str | None
    cuda_builds: tuple[CudaBuild, ...]
    sources: tuple[str, ...]
    note: str | None = None

    def build(self, cuda: str | None) -> CudaBuild | None:
        tag = cuda_tag(cuda)
        return next((b for b in self.cuda_builds if b.tag == tag), None)


@dataclass(frozen=True)
class TritonPin:
    """The Triton a torch release requires: package, specifier and marker."""

    package: str  # "triton" (releases) or "pytorch-triton"
    specifier: str  # "==3.1.0", "~=3.8.0"
    marker: str | None

    @property
    def exact(self) -> str | None:
        return self.specifier[2:] if self.specifier.startswith("==") and "," not in self.specifier else None

    def allows(self, version: str) -> bool | None:
        """Whether an installed Triton version satisfies the pin; None if either cannot be parsed."""
        from packaging.specifiers import InvalidSpecifier, SpecifierSet  # on use: most triages need none

        try:
            return SpecifierSet(self.specifier).contains(Version(version), prereleases=True)
        except (InvalidSpecifier, InvalidVersion):
            return None


@dataclass(frozen=True)
class TorchRelease:
    """One torch release: its line, Triton pin, default CUDA, pins and Python wheels."""

    version: str  # "2.5.1"
    line: TorchLine
    triton: TritonPin | None
    default_cuda: str | None  # the CUDA of the wheel PyPI serves ("12.4")
    pins: Mapping[str, Mapping[str, str]]  # build tag -> {"nvidia-cudnn-cu12": "==9.1.0.70", ...}
    python_wheels: tuple[str, ...]  # CPython versions with a Linux x86_64 wheel on PyPI ("3.13t" = free-threaded)
    requires_python: str | None
    dynamo_max_python: str | None
    dynamo_evidence: str | None
    free_threading: str | None
    torchvision: str | None
    torchaudio: str | None
    sources: tuple[str, ...]

    @property
    def default_build(self) -> str | None:
        return cuda_tag(self.default_cuda)


def _cuda_build(tag: str, row: Mapping) -> CudaBuild:
    srcs = _tuple(row.get("arch_source")) + _tuple(row.get("status_source")) + _tuple(row.get("cudnn_nccl_source"))
    return CudaBuild(
        tag=tag,
        status=row.get("status"),
        arch_list=tuple(row.get("arch_list", ())),
        arch_derived=bool(row.get("arch_derived", False)),
        arch_note=row.get("arch_note"),
        cudnn=row.get("cudnn"),
        nccl=row.get("nccl"),
        sources=tuple(dict.fromkeys(srcs)),
    )


@cache
def torch_lines() -> Mapping[str, TorchLine]:
    out = {}
    for line, row in load_json(TORCH_FILE)["lines"].items():
        py = row.get("python", {})
        out[line] = TorchLine(
            line=line,
            python_min=py.get("min"),
            python_max=py.get("max"),
            python_experimental=tuple(py.get("experimental", ())),
            cpp=row.get("cpp"),
            cuda_builds=tuple(_cuda_build(tag, b) for tag, b in row.get("cuda_builds", {}).items()),
            sources=_tuple(row.get("source")),
            note=row.get("note"),
        )
    return MappingProxyType(out)


def _release(version: str, row: Mapping, line: TorchLine) -> TorchRelease:
    t = row.get("triton")
    dynamo = row.get("dynamo") or {}
    pins = {tag: MappingProxyType({k: v for k, v in p.items() if k != "source"}) for tag, p in row.get("pins", {}).items()}
    pin_sources = tuple(p["source"] for p in row.get("pins", {}).values() if "source" in p)
    return TorchRelease(
        version=version,
        line=line,
        triton=TritonPin(t["name"], t.get("specifier", ""), t.get("marker")) if t else None,
        default_cuda=row.get("default_cuda"),
        pins=MappingProxyType(pins),
        python_wheels=tuple(row.get("python_wheels", ())),
        requires_python=row.get("requires_python"),
        dynamo_max_python=dynamo.get("max_python"),
        dynamo_evidence=dynamo.get("evidence"),
        free_threading=row.get("free_threading"),
        torchvision=row.get("torchvision"),
        torchaudio=row.get("torchaudio"),
        sources=tuple(dict.fromkeys(_tuple(row.get("source")) + pin_sources)),
    )


@cache
def torch_releases() -> Mapping[str, TorchRelease]:
    lines = torch_lines()
    out = {}
    for version, row in load_json(TORCH_FILE)["releases"].items():
        line = parse_torch_version(version)
        if line and line.line in lines:
            out[version] = _release(version, row, lines[line.line])
    return MappingProxyType(out)


def torch_line(version: str | None) -> TorchLine | None:
    """The release line of any torch version string (nightlies and local builds included)."""
    v = parse_torch_version(version)
    return torch_lines().get(v.line) if v else None


def torch_release(version: str | None) -> TorchRelease | None:
    """``"2.5.1+cu124"`` -> the 2.5.1 release (with its line); None for unknown versions and for
    pre-release/dev/source builds (``2.6.0a0+git...``), whose pins are not the release's."""
    v = parse_torch_version(version)
    if v is None or v.prerelease:
        return None
    return torch_releases().get(v.release)


def triton_pin_for(torch_version: str | None) -> TritonPin | None:
    rel = torch_release(torch_version)
    return rel.triton if rel else None


def dynamo_max_python(torch_version: str | None) -> str | None:
    """Newest Python ``torch.compile`` accepts ("3.12"). For a build of a known line that is no
    release (a0/dev/rc), the line's value when all its releases agree."""
    rel = torch_release(torch_version)
    if rel:
        return rel.dynamo_max_python
    line = torch_line(torch_version)
    values = {r.dynamo_max_python for r in torch_releases().values() if line and r.line.line == line.line}
    return values.pop() if len(values) == 1 else None


def torchvision_for(torch_version: str | None) -> str | None:
    rel = torch_release(torch_version)
    return rel.torchvision if rel else None


def torchaudio_for(torch_version: str | None) -> str | None:
    rel = torch_release(torch_version)
    return rel.torchaudio if rel else None


def python_wheels(torch_version: str | None) -> tuple[str, ...]:
    rel = torch_release(torch_version)
    return rel.python_wheels if rel else ()


def cuda_build(torch_version: str | None, cuda: str | None = None) -> CudaBuild | None:
    """The CUDA build of a torch release line: ``cuda`` ("cu124", "12.4") or else the version's
    local tag (``2.5.1+cu124``). Pre-release/dev/source builds -> None (their lists differ)."""
    v = parse_torch_version(torch_version)
    if v is None or v.prerelease:
        return None
    line = torch_lines().get(v.line)
    return line.build(cuda or v.local) if line else None


def arch_list(torch_version: str | None, cuda: str | None = None) -> tuple[str, ...] | None:
    """TORCH_CUDA_ARCH_LIST of that build, e.g. ("5.0", ..., "9.0"); None if unknown."""
    build = cuda_build(torch_version, cuda)
    return build.arch_list if build and build.arch_list else None


def other_machine(os_release) -> str:
    """The machine, when these tables do not describe its wheels ('' when they do or it is not
    known): they hold the x86_64 wheels' arch lists, and aarch64 builds carry others (Thor's
    sm_110 is in the aarch64 cu130 wheels only)."""
    machine = str((os_release or {}).get("machine") or "")
    return "" if machine in ("", "x86_64", "AMD64", "amd64") else f"an {machine} machine"


def arch_flags(torch_version: str | None, cuda: str | None = None) -> tuple[str, ...] | None:
    """The same list as ``torch._C._cuda_getArchFlags()`` would give, for ``_cuda_compat.arch_match``
    (torch 1.x from the legacy table, ``torch_legacy_arches.json``)."""
    build = cuda_build(torch_version, cuda)
    if build and build.arch_list:
        return build.arch_flags
    v = parse_torch_version(torch_version)
    if v is None or v.prerelease or v.line in torch_lines():
        return None
    tag = cuda_tag(cuda or v.local)
    arches = _legacy_lines().get(v.line, {}).get(tag) if tag else None
    return _flags(arches) if arches else None


def line_arch_flags(torch_version: str | None) -> dict[str, tuple[str, ...]]:
    """Every CUDA build of the version's release line: tag -> arch flags ({} when unknown)."""
    v = parse_torch_version(torch_version)
    if v is None or v.prerelease:
        return {}
    line = torch_lines().get(v.line)
    if line:
        return {b.tag: b.arch_flags for b in line.cuda_builds if b.arch_list}
    return {tag: _flags(arches) for tag, arches in _legacy_lines().get(v.line, {}).items()}


def all_arch_flags() -> dict[str, tuple[str, ...]]:
    """Every CUDA build the tables know, ``"<line> <tag>"`` -> arch flags (torch 1.2 onwards)."""
    out = {f"{line} {tag}": _flags(arches) for line, builds in _legacy_lines().items() for tag, arches in builds.items()}
    for line in torch_lines().values():
        out.update({f"{line.line} {b.tag}": b.arch_flags for b in line.cuda_builds if b.arch_list})
    return out


def cuda_first(cc: str | None) -> str | None:
    """The first CUDA release that compiles for this compute capability (``"8.6"`` -> ``"11.1"``);
    None for architectures older than the table (every CUDA since 9 knows them)."""
    return load_json(LEGACY_FILE)["cuda_first"].get(cc or "")


LEGACY_FILE = "torch_legacy_arches.json"


def _legacy_lines() -> Mapping[str, Mapping[str, list]]:
    return load_json(LEGACY_FILE)["lines"]


def _flags(arches) -> tuple[str, ...]:
    sass = [f"sm_{a.split('+')[0].replace('.', '')}" for a in arches]
    return tuple(sass + [f"compute_{a.split('+')[0].replace('.', '')}" for a in arches if a.endswith("+PTX")])


def nvidia_pins(torch_version: str | None, cuda: str | None = None) -> Mapping[str, str] | None:
    """nvidia-*/cuda-* requirements of a release's build (default: its local tag, else PyPI's build)."""
    rel = torch_release(torch_version)
    if rel is None:
        return None
    parsed = parse_torch_version(torch_version)
    tag = cuda_tag(cuda) or cuda_tag(parsed.local if parsed else None) or rel.default_build
    return rel.pins.get(tag) if tag else None


# ---- GPU name -> compute capability ----------------------------------------------------------


@dataclass(frozen=True)
class GpuInfo:
    """A GPU family or product with its compute capability and where that comes from."""

    name: str  # the table's name for the family of parts
    cc: tuple[int, int]
    family: str
    sources: tuple[str, ...]
    derived: str | None  # why the value is derived, when it was not read from a source


def normalize_gpu_name(name: str) -> str:
    """``"Tesla V100-SXM2-32GB"`` -> ``"TESLA V100 SXM2 32GB"``."""
    return re.sub(r"\s+", " ", re.sub(r"[-_/,()]", " ", str(name).upper())).strip()


@cache
def _gpu_table() -> tuple[tuple[tuple[str, ...], GpuInfo], ...]:
    """The family patterns (compiled by :func:`_family_pattern` when first tried) and each row's part."""
    rows = []
    for row in load_json(GPU_FILE)["gpus"]:
        major, minor = (int(x) for x in row["cc"].split("."))
        info = GpuInfo(row["name"], (major, minor), row["family"], _tuple(row["source"]), row.get("derived"))
        rows.append((tuple(row["match"]), info))
    return tuple(rows)


@cache
def _family_pattern(pattern: str) -> re.Pattern[str]:
    """A row's pattern compiled when a name reaches it: the first rows match most names."""
    return re.compile(pattern)


# Words that name the vendor or the line, not the part; and what follows a part's name in
# nvidia-smi, NVML and hand-written names (memory size, form factor, laptop variants).
_VENDOR_WORDS = frozenset({"NVIDIA", "GEFORCE", "TESLA", "QUADRO"})
_SUFFIX_WORDS = frozenset({"LAPTOP", "GPU", "MAX", "Q", "WITH", "DESIGN", "MOBILE", "NOTEBOOK", "PCIE", "OEM", "DEDICATED"})
_SUFFIX_TOKEN = re.compile(r"^(?:\d{1,3}GB?|SXM\d?|HBM\d?E?|NVL|\d{1,3}G)$")


def product_key(name: str) -> str:
    """The part's name as the product table keys it: ``"NVIDIA GeForce RTX 3080 Ti Laptop GPU"``
    -> ``"RTX 3080 TI"``, ``"Tesla V100-SXM2-32GB"`` -> ``"V100"``, ``"Quadro RTX 5000 16GB"`` ->
    ``"RTX 5000"``."""
    words = [w for w in normalize_gpu_name(name).split(" ") if w and w not in _VENDOR_WORDS]
    while words and (words[-1] in _SUFFIX_WORDS or _SUFFIX_TOKEN.match(words[-1])):
        words.pop()
    return " ".join(words)


@cache
def _products() -> Mapping[str, Mapping]:
    """NVIDIA's product list by lookup key (tools/regen_gpu_table.py writes it from the CUDA GPUs
    pages), the first row of a key kept; a row becomes a GpuInfo only when a name finds it."""
    out: dict[str, Mapping] = {}
    for row in load_json(PRODUCTS_FILE)["products"]:
        out.setdefault(row.get("key") or product_key(row["name"]), row)
    return out


def _product_info(row: Mapping) -> GpuInfo:
    major, minor = (int(x) for x in row["cc"].split("."))
    return GpuInfo(row["name"], (major, minor), row.get("section", ""), (row["source"],), None)


@lru_cache(maxsize=256)
def gpu_info(gpu_name: str | None) -> GpuInfo | None:
    """The product listed under exactly this name (laptop, workstation and data-centre parts by
    their product names); else the first family pattern matching the normalised name."""
    if not gpu_name or not str(gpu_name).strip():
        return None
    listed = _products().get(product_key(gpu_name))
    if listed:
        return _product_info(listed)
    key = normalize_gpu_name(gpu_name)
    for patterns, info in _gpu_table():
        if any(_family_pattern(p).search(key) for p in patterns):
            return info
    return None


def compute_capability(gpu_name: str | None) -> tuple[int, int] | None:
    """``"NVIDIA H100 80GB HBM3"`` -> (9, 0); None when the name is not in the table."""
    info = gpu_info(gpu_name)
    return info.cc if info else None


# ---- ROCm builds: the gfx targets a torch+rocm wheel carries -------------------------------

ROCM_FILE = "rocm_arches.json"


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def rocm_gfx_targets(torch_version: str | None, rocm: str | None = None) -> tuple[str, ...] | None:
    """PYTORCH_ROCM_ARCH of the official ``torch==X+rocmY`` wheel, e.g. ("gfx900", ..., "gfx942");
    None for a release the table does not record. ``rocm`` defaults to the local tag's."""
    if not torch_version:
        return None
    base, _, local = str(torch_version).partition("+")
    mm = ".".join(base.split(".")[:2])
    rocm = rocm or (local[4:] if local.startswith("rocm") else "")
    for row in load_json(ROCM_FILE)["releases"]:
        if mm in row["torch"]:
            gfx = list(row["gfx"])
            for since, more in row["from_rocm"].items():
                if rocm and _version_tuple(rocm) >= _version_tuple(since):
                    gfx += more
            return tuple(gfx)
    return None
