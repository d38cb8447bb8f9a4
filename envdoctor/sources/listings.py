"""Package listings: ``pip list``, ``pip freeze``, ``conda list`` and collect_env's ``[pip3]`` /
``[conda]`` lines, into ``dists`` entries (name, version) and what a conda build string says
about the torch build."""

from __future__ import annotations

import re
from urllib.parse import unquote as url_unquote

from envdoctor.core.patterns import lazy
from envdoctor.sources._acc import RANK_CONDA, RANK_ERROR, RANK_PIP, RANK_PIP3, Acc, build_of_conda, build_of_local

NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,120}"
VERSION = r"[0-9][A-Za-z0-9.+!_-]{0,120}"
CONDA_NAME = "_?" + NAME  # conda's own metapackages start with one: _libgcc_mutex, _openmp_mutex, _pytorch_select
FREEZE = lazy(rf"^\s*({NAME})\s*===?\s*({VERSION})\s*$")
FREEZE_URL = lazy(rf"^\s*({NAME})(?:\[[^\]]{{0,200}}\])?\s+@\s+(\S{{1,2000}})\s*$")
EDITABLE = lazy(r"^\s*-e\s+(\S{1,2000})\s*$")
WHEEL = lazy(r"([A-Za-z0-9_.]{1,120})-([0-9][A-Za-z0-9_.+!]{0,120})-[^/\s]{0,200}\.whl")
PIP3 = re.compile(r"^\s*\[(pip3?|conda)\]\s+(.{1,600})$")
PIP_LIST_HEADER = lazy(r"^\s*Package\s+Version(?:\s+(?:Editable project location|Location|Installer|Build)\b.*)?\s*$")
PIP_LIST_ROW = lazy(rf"^\s*({NAME})\s+({VERSION})(?:\s+(.*))?$")
# A ``pip list`` row without its header (``pip list | grep torch``): name and version alone on the
# line, two or more spaces apart as pip pads its columns ("Python 3.10.12" is not a row).
PIP_LIST_HEADERLESS = lazy(rf"^\s*({NAME}) {{2,}}({VERSION})\s*$")
# A ``conda list`` row without its header (``conda list | grep torch``): name, version, a build
# string of conda's shape (``py3.8_cpu_0``, ``hf484d3e_0``, ``cpu``, ``0``) and the channel,
# padded with two or more spaces as conda pads its columns.
CONDA_HEADERLESS = lazy(rf"^\s*({CONDA_NAME}) {{2,}}({VERSION}) {{2,}}([A-Za-z0-9_.]{{1,120}})(?: {{2,}}([A-Za-z0-9_.-]{{1,80}}))?\s*$")
CONDA_BUILD = lazy(r"^(?:\d{1,3}|cpu|py\d[\d.]{0,6}|[A-Za-z0-9.]{1,40}_[A-Za-z0-9_.]{1,80})$")
DASHES = lazy(r"^\s*-{3,}[\s-]*$")
CONDA_HEADER = lazy(r"^\s*#\s*(?:packages in environment at|Name\s+Version\s+Build)")
CONDA_ROW = lazy(rf"^\s*({CONDA_NAME})\s+({VERSION})\s+(\S{{1,200}})(?:\s+(\S{{1,200}}))?\s*$")

# conda names of distributions whose pip name differs
CONDA_TO_PIP = {"pytorch": "torch", "pytorch-gpu": "torch", "pytorch-cpu": "torch"}


def add_torch_from_version(acc: Acc, version: str, line: str, rank: int) -> None:
    """A torch version with a local part (``2.5.1+cu124``) says which build it is."""
    acc.put("torch", "version", version, line, rank)
    for k, v in build_of_local(version.partition("+")[2]).items():
        acc.put("torch", k, v, line, rank)


def pip_requirement(acc: Acc, name: str, version: str, line: str, rank: int, installer: str = "pip") -> None:
    acc.put_dist(name, version, line, rank, installer)
    if name.lower() == "torch":
        add_torch_from_version(acc, version, line, rank)


def url_line(acc: Acc, name: str, url: str, line: str, rank: int) -> None:
    """``torch @ https://…/torch-2.1.0%2Bcu121-cp310-….whl``: the version is in the wheel's name;
    ``pkg @ file:///…`` without a wheel name has none to read."""
    m = WHEEL.search(url_unquote(url))
    if m and m.group(1).replace("_", "-").lower() == name.replace("_", "-").lower():
        pip_requirement(acc, name, m.group(2), line, rank)
    else:
        acc.note(f"{name} is installed from {url[:120]} (version not shown)")


def conda_row(acc: Acc, name: str, version: str, build: str, channel: str, line: str) -> None:
    pip_name = CONDA_TO_PIP.get(name.lower(), name) if channel != "pypi" else name
    acc.put_dist(pip_name, version, line, RANK_CONDA, "pip" if channel == "pypi" else "conda")
    low = name.lower()
    if pip_name == "torch" and channel != "pypi":
        acc.put("torch", "version", version, line, RANK_CONDA)
        for k, v in build_of_conda(build).items():
            acc.put("torch", k, v, line, RANK_CONDA)
    elif pip_name == "torch":
        add_torch_from_version(acc, version, line, RANK_CONDA)
    elif (
        low == "cpuonly"
        or (low == "pytorch-mutex" and build.lower() == "cpu")
        or (low == "_pytorch_select" and build.lower().startswith("cpu"))
    ):
        # the CPU selectors (the pytorch channel's cpuonly and pytorch-mutex's cpu build, Anaconda
        # defaults' _pytorch_select cpu_0): weaker than the pytorch row's own build string
        acc.put("torch", "kind", "cpu", line, RANK_ERROR)
    elif low == "pytorch-cuda":
        # the pytorch channel's CUDA selector: pytorch-cuda 12.1 goes with a CUDA 12.1 pytorch
        acc.put("torch", "cuda_hint", ".".join(version.split(".")[:2]), line, RANK_CONDA)


def bracket_line(acc: Acc, tool: str, rest: str, line: str) -> bool:
    """collect_env's ``[pip3] numpy==1.26.4`` and ``[conda] pytorch 2.1.0 py3.10_cuda12.1… pytorch``."""
    if tool.startswith("pip"):
        m = FREEZE.match(rest)
        if m:
            pip_requirement(acc, m.group(1), m.group(2), line, RANK_PIP3)
            return True
        m = FREEZE_URL.match(rest)
        if m:
            url_line(acc, m.group(1), m.group(2), line, RANK_PIP3)
            return True
        return False
    parts = rest.split()
    if len(parts) >= 2 and parts[1][:1].isdigit():
        build = parts[2] if len(parts) > 2 else ""
        channel = parts[3] if len(parts) > 3 else ""
        conda_row(acc, parts[0], parts[1], build, channel, line)
        return True
    return False


def read_brackets(lines: list[str], acc: Acc) -> None:
    """The ``[pip3]`` / ``[conda]`` lines: collect_env's library list, even when the paste holds
    only that part of it."""
    before = len(acc.consumed)
    for i, line in enumerate(lines):
        if "[" not in line[:12]:
            continue
        m = PIP3.match(line)
        if m and bracket_line(acc, m.group(1), m.group(2).strip(), line):
            acc.consumed.add(i)
    if len(acc.consumed) > before and not any(k.startswith(("collect_env", "vllm")) for k in acc.kinds):
        acc.kind("vllm_collect_env" if any(ln.startswith("=====") for ln in lines) else "collect_env")


def pip_list_rows(lines: list[str], start: int, acc: Acc) -> int:
    """Rows after a ``Package  Version`` header, up to the first line that is not a row."""
    i = start
    if i < len(lines) and DASHES.match(lines[i]):
        acc.consumed.add(i)
        i += 1
    n = 0
    while i < len(lines):
        m = PIP_LIST_ROW.match(lines[i])
        if not m:
            break
        pip_requirement(acc, m.group(1), m.group(2), lines[i], RANK_PIP)
        acc.consumed.add(i)
        n, i = n + 1, i + 1
    if n:
        acc.kind("pip_list")
    return i


def conda_rows(lines: list[str], start: int, acc: Acc) -> int:
    i, n = start, 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("#"):
            i += 1
            continue
        m = CONDA_ROW.match(line)
        if not m:
            break
        conda_row(acc, m.group(1), m.group(2), m.group(3), m.group(4) or "", line)
        acc.consumed.add(i)
        n, i = n + 1, i + 1
    if n:
        acc.kind("conda_list")
    return i


def freeze_line(acc: Acc, line: str, commit: bool) -> bool:
    if "==" not in line and " @ " not in line and "-e " not in line:
        return False
    m = FREEZE.match(line)
    if m:
        if commit:
            pip_requirement(acc, m.group(1), m.group(2), line, RANK_PIP)
        return True
    m = FREEZE_URL.match(line)
    if m:
        if commit:
            url_line(acc, m.group(1), m.group(2), line, RANK_PIP)
        return True
    m = EDITABLE.match(line)
    if m:
        if commit:
            egg = m.group(1).rpartition("#egg=")[2] if "#egg=" in m.group(1) else m.group(1)
            acc.note(f"editable install {egg[:120]} (version not shown)")
        return True
    return False


def read_freeze(lines: list[str], acc: Acc) -> None:
    """``pip freeze`` blocks: two or more requirement lines in a row (one such line in prose is
    more likely a command the user typed than a listing)."""
    i = 0
    while i < len(lines):
        if i in acc.consumed or not freeze_line(acc, lines[i], False):
            i += 1
            continue
        j = i
        while j < len(lines) and j not in acc.consumed and freeze_line(acc, lines[j], False):
            j += 1
        if j - i >= 2:
            for k in range(i, j):
                freeze_line(acc, lines[k], True)
                acc.consumed.add(k)
            acc.kind("pip_freeze")
        i = j


def read_listings(lines: list[str], acc: Acc) -> None:
    read_brackets(lines, acc)
    i = 0
    while i < len(lines):
        line = lines[i]
        if "Package" not in line and "#" not in line:
            i += 1
        elif i not in acc.consumed and PIP_LIST_HEADER.match(line):
            acc.consumed.add(i)
            i = pip_list_rows(lines, i + 1, acc)
        elif i not in acc.consumed and CONDA_HEADER.match(line):
            acc.consumed.add(i)
            i = conda_rows(lines, i + 1, acc)
        else:
            i += 1
    read_conda_headerless(lines, acc)
    read_headerless(lines, acc)
    read_freeze(lines, acc)
    read_wheel_names(lines, acc)


def read_wheel_names(lines: list[str], acc: Acc) -> None:
    """A wheel's file name anywhere in a line (``pip install flash_attn-2.5.5+cu118torch2.2cxx11abiTRUE-cp38-…whl``,
    a download log) states its distribution and version exactly, local tag included."""
    for i, line in enumerate(lines):
        if i in acc.consumed or ".whl" not in line:
            continue
        for m in WHEEL.finditer(url_unquote(line)):
            pip_requirement(acc, m.group(1).replace("_", "-"), m.group(2), line, RANK_PIP)


def read_conda_headerless(lines: list[str], acc: Acc) -> None:
    """``conda list`` rows whose header the paste left out; the build column must have conda's
    shape, so a ``pip list`` row with a location column is not taken for one."""
    n = 0
    for i, line in enumerate(lines):
        m = None if i in acc.consumed or "  " not in line else CONDA_HEADERLESS.match(line)
        if m and CONDA_BUILD.match(m.group(3)) and (m.group(4) or "_" in m.group(3)):
            conda_row(acc, m.group(1), m.group(2), m.group(3), m.group(4) or "", line)
            acc.consumed.add(i)
            n += 1
    if n:
        acc.kind("conda_list")


def read_headerless(lines: list[str], acc: Acc) -> None:
    """``pip list`` rows whose header the paste left out (a ``grep`` of the listing)."""
    n = 0
    for i, line in enumerate(lines):
        m = None if i in acc.consumed or "  " not in line else PIP_LIST_HEADERLESS.match(line)
        if m:
            pip_requirement(acc, m.group(1), m.group(2), line, RANK_PIP)
            acc.consumed.add(i)
            n += 1
    if n:
        acc.kind("pip_list")
