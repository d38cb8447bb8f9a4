#!/usr/bin/env python3
"""Regenerate checks/data/torch_releases.json from published metadata (needs network; never run by envdoctor).

What it reads, per torch release on PyPI (2.0.0 and newer):

* ``https://pypi.org/pypi/<project>/json``: the releases and their wheel files (Python tags of the
  Linux x86_64 wheels).
* From one Linux x86_64 wheel of each release, by HTTP range requests (the zip's central directory
  and single members, never the whole wheel): ``*.dist-info/METADATA`` (``Requires-Dist``: the
  Triton pin and the nvidia-*/cuda-* pins of PyPI's default CUDA build), ``torch/version.py`` (that
  build's CUDA) and ``torch/__init__.py`` + ``torch/_dynamo/eval_frame.py`` (the newest Python
  ``torch.compile`` accepts: ``if sys.version_info >= (3, N): raise RuntimeError("... not supported ...")``).
* torchvision and torchaudio wheels' METADATA (``Requires-Dist: torch==X``) -> which torch each pairs with.

With ``--github`` (needs raw.githubusercontent.com) it also re-reads each line's CUDA arch lists
(``pytorch/builder:manywheel/build_cuda.sh@release/X.Y`` up to 2.5,
``pytorch/pytorch:.ci/manywheel/build_cuda.sh@release/X.Y`` from 2.6). With ``--index`` (needs
download.pytorch.org) it reads the METADATA of each ``+cuXYZ`` wheel for that build's nvidia-* pins.

Fields this script does not produce (hand-curated ones: release-matrix status, cuDNN/NCCL from
RELEASE.md, arch lists it could not read) are kept from the existing file. Usage::

    python tools/regen_release_data.py [--github] [--index] [--only 2.5.1 ...] [--dry-run]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import re
import struct
import sys
import urllib.parse
import urllib.request
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "checks" / "data" / "torch_releases.json"
PYPI_JSON = "https://pypi.org/pypi/{project}/json"
RAW = "https://raw.githubusercontent.com/{repo}/{ref}/{path}"
INDEX = "https://download.pytorch.org/whl/{cuda}/torch/"
UA = {"User-Agent": "envdoctor-regen-release-data/1"}
MIN_LINE = (2, 0)

# ---- HTTP and lazily read wheels --------------------------------------------------------------


def http_get(url: str, start: int | None = None, end: int | None = None, timeout: float = 60) -> bytes:
    headers = dict(UA)
    if start is not None:
        headers["Range"] = f"bytes={start}-{end}"
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as r:
        return r.read()


def http_size(url: str) -> int:
    req = urllib.request.Request(url, headers=UA, method="HEAD")
    with urllib.request.urlopen(req, timeout=60) as r:
        return int(r.headers["Content-Length"])


def _zip64_fields(extra: bytes, csize: int, usize: int, off: int) -> tuple[int, int, int]:
    q = 0
    while q + 4 <= len(extra):
        hid, hl = struct.unpack("<HH", extra[q : q + 4])
        if hid == 1:
            vals, k = extra[q + 4 : q + 4 + hl], 0
            if usize == 0xFFFFFFFF:
                usize, k = struct.unpack("<Q", vals[k : k + 8])[0], k + 8
            if csize == 0xFFFFFFFF:
                csize, k = struct.unpack("<Q", vals[k : k + 8])[0], k + 8
            if off == 0xFFFFFFFF:
                off = struct.unpack("<Q", vals[k : k + 8])[0]
        q += 4 + hl
    return csize, usize, off


class LazyWheel:
    """A remote zip read by range requests: the central directory once, then single members."""

    def __init__(self, url: str):
        self.url = url
        self.entries = self._central_directory()

    def _central_directory(self) -> dict[str, tuple[int, int, int]]:
        n = http_size(self.url)
        tail = http_get(self.url, max(0, n - 65536), n - 1)
        i = tail.rfind(b"PK\x05\x06")
        cd_size, cd_off = struct.unpack("<II", tail[i + 12 : i + 20])
        if cd_off == 0xFFFFFFFF:
            j = tail.rfind(b"PK\x06\x06")
            cd_size, cd_off = struct.unpack("<QQ", tail[j + 40 : j + 56])
        cd, p, entries = http_get(self.url, cd_off, cd_off + cd_size - 1), 0, {}
        while cd[p : p + 4] == b"PK\x01\x02":
            meth = struct.unpack("<H", cd[p + 10 : p + 12])[0]
            csize, usize = struct.unpack("<II", cd[p + 20 : p + 28])
            nl, el, cl = struct.unpack("<HHH", cd[p + 28 : p + 34])
            off = struct.unpack("<I", cd[p + 42 : p + 46])[0]
            name = cd[p + 46 : p + 46 + nl].decode("utf-8", "replace")
            csize, _, off = _zip64_fields(cd[p + 46 + nl : p + 46 + nl + el], csize, usize, off)
            entries[name] = (meth, csize, off)
            p += 46 + nl + el + cl
        return entries

    def read(self, name: str) -> str | None:
        if name not in self.entries:
            return None
        meth, csize, off = self.entries[name]
        hdr = http_get(self.url, off, off + 29)
        nl, el = struct.unpack("<HH", hdr[26:30])
        data = http_get(self.url, off + 30 + nl + el, off + 30 + nl + el + csize - 1) if csize else b""
        return (zlib.decompress(data, -15) if meth == 8 else data).decode("utf-8", "replace")

    def metadata(self) -> str:
        name = next(n for n in self.entries if re.fullmatch(r"[^/]+\.dist-info/METADATA", n))
        return self.read(name) or ""


# ---- parsing ----------------------------------------------------------------------------------


def version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v.split("+")[0])[:3])


def requires_dist(metadata: str) -> list[str]:
    """``Requires-Dist`` lines, normalised to PEP 508 text (old wheels write ``name (==1.2)``)."""
    out = []
    for line in metadata.splitlines():
        if line.startswith("Requires-Dist:"):
            req = line.split(":", 1)[1].strip()
            req = re.sub(r"^([A-Za-z0-9_.\[\],-]+) \(([^)]*)\)", r"\1\2", req)
            out.append(re.sub(r"\s*;\s*", "; ", req, count=1))
    return out


def split_requirement(req: str) -> dict:
    m = re.match(r"^([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*([^;]*?)\s*(?:;\s*(.*))?$", req)
    if not m:
        return {"requirement": req}
    out = {"name": m.group(1).lower(), "specifier": m.group(3).replace(" ", "")}
    if m.group(2):
        out["extras"] = m.group(2)[1:-1]
    if m.group(4):
        out["marker"] = m.group(4)
    return out


def triton_requirement(reqs: list[str]) -> dict | None:
    for r in reqs:
        parts = split_requirement(r)
        if parts.get("name") in {"triton", "pytorch-triton"} and "extra ==" not in parts.get("marker", ""):
            return parts
    return None


CUDA_LIB = re.compile(r"^(nvidia-[a-z0-9-]+|cuda-toolkit|cuda-bindings)$")


def cuda_pins(reqs: list[str]) -> dict[str, str]:
    """nvidia-*/cuda-toolkit/cuda-bindings requirement -> its specifier (markers dropped)."""
    pins = {}
    for r in reqs:
        parts = split_requirement(r)
        name = parts.get("name", "")
        if CUDA_LIB.match(name):
            key = f"{name}[{parts['extras']}]" if parts.get("extras") else name
            pins[key] = parts.get("specifier", "")
    return pins


DYNAMO_GATE = re.compile(r"if sys\.version_info >= \(3, (\d+)\):\s*\n\s*raise RuntimeError\(\s*\n?\s*(\"[^\"]*\")")


def dynamo_gate(sources: dict[str, str | None]) -> dict | None:
    """The lowest Python minor that torch.compile refuses, from the gate in its own source."""
    best = None
    for path, text in sources.items():
        for m in DYNAMO_GATE.finditer(text or ""):
            msg = json.loads(m.group(2))
            if "support" in msg and (best is None or int(m.group(1)) < best[0]):
                best = (int(m.group(1)), path, msg)
    if best is None:
        return None
    return {"max_python": f"3.{best[0] - 1}", "evidence": f"{best[1]}: {best[2]}"}


def free_threading_note(sources: dict[str, str | None]) -> str | None:
    for text in sources.values():
        m = re.search(r"\"(torch\.compile is not supported on Python[^\"]*GIL disabled[^\"]*)\"", text or "")
        if m:
            return m.group(1).strip()
    return None


def python_tags(files: list[dict]) -> list[str]:
    """CPython versions with a Linux x86_64 wheel: ``cp313t`` -> ``3.13t``."""
    tags = set()
    for f in files:
        m = re.search(r"-(cp3\d+t?)-(cp3\d+t?|abi3|none)-(manylinux|linux)[^-]*x86_64\.whl$", f["filename"])
        if m:
            tag = m.group(2) if m.group(2).startswith("cp") else m.group(1)
            tags.add(f"3.{tag[3:]}")
    return sorted(tags, key=lambda t: (int(t.rstrip("t").split(".")[1]), t.endswith("t")))


def linux_x86_wheel(files: list[dict]) -> dict | None:
    wheels = [f for f in files if re.search(r"-cp3\d+-(manylinux|linux)[^-]*x86_64\.whl$", f["filename"])]
    for pref in ("cp312-cp312", "cp311-cp311", "cp310-cp310", "cp313-cp313"):
        for f in wheels:
            if pref in f["filename"]:
                return f
    return wheels[0] if wheels else None


# ---- collecting from PyPI ---------------------------------------------------------------------


def pypi_files(project: str) -> tuple[str, dict[str, list[dict]]]:
    url = PYPI_JSON.format(project=project)
    data = json.loads(http_get(url))
    return url, data["releases"]


def torch_facts(version: str, files: list[dict], base: str) -> dict:
    """Everything one PyPI release of torch says about itself (see the module docstring)."""
    wheel = linux_x86_wheel(files)
    out: dict = {"python_wheels": python_tags(files)}
    if wheel is None:
        return out
    url = urllib.parse.urljoin(base, wheel["url"])
    lw = LazyWheel(url)
    reqs = requires_dist(lw.metadata())
    src = {p: lw.read(p) for p in ("torch/__init__.py", "torch/_dynamo/eval_frame.py")}
    cuda = re.search(r"cuda(?:: Optional\[str\])? = '([\d.]+)'", lw.read("torch/version.py") or "")
    out["requires_python"] = wheel.get("requires_python")
    out["triton"] = triton_requirement(reqs)
    out["default_cuda"] = cuda.group(1) if cuda else None
    pins = cuda_pins(reqs)
    if pins and cuda:
        out["pins"] = {f"cu{cuda.group(1).replace('.', '')}": {**pins, "source": f"pypi:{wheel['filename']} METADATA"}}
    out["dynamo"] = dynamo_gate(src)
    out["free_threading"] = free_threading_note(src)
    out["source"] = [
        f"https://pypi.org/pypi/torch/json releases[{version!r}] (Linux x86_64 wheel tags)",
        f"pypi:{wheel['filename']} (METADATA, torch/version.py, torch/__init__.py, torch/_dynamo/eval_frame.py)",
    ]
    return {k: v for k, v in out.items() if v not in (None, {}, [])}


def companion_map(project: str, releases: dict[str, list[dict]], base: str) -> dict[str, tuple[str, str]]:
    """torch version -> (companion version, wheel file) from each companion wheel's ``torch==X`` pin."""

    def one(item: tuple[str, list[dict]]) -> tuple[str, str, str] | None:
        version, files = item
        wheel = linux_x86_wheel(files)
        if wheel is None:
            return None
        reqs = requires_dist(LazyWheel(urllib.parse.urljoin(base, wheel["url"])).metadata())
        for r in reqs:
            parts = split_requirement(r)
            if parts.get("name") == "torch" and parts.get("specifier", "").startswith("=="):
                return parts["specifier"][2:], version, wheel["filename"]
        return None

    todo = [(v, f) for v, f in releases.items() if f and not re.search(r"[a-z]", v)]
    with ThreadPoolExecutor(4) as pool:
        found = [r for r in pool.map(one, todo) if r]
    out: dict[str, tuple[str, str]] = {}
    for torch_v, comp_v, fname in sorted(found, key=lambda r: version_key(r[1])):
        out[torch_v] = (comp_v, fname)
    return out


# ---- optional: GitHub build scripts and the download.pytorch.org index ------------------------

CASE_ARM = re.compile(r"^\s*([0-9.\[\]*|]+)\)\s*(.*)$")
ASSIGN = re.compile(r'^\s*(?:export\s+)?TORCH_CUDA_ARCH_LIST="([^"]*)"')


def _case_arms(body: str) -> list[tuple[str, list[str]]]:
    arms: list[tuple[str, list[str]]] = []
    for raw in body.splitlines():
        line = re.sub(r"\s+#.*$|^\s*#.*$", "", raw).replace(";;", "").strip()
        head = CASE_ARM.match(line)
        if head:
            arms.append((head.group(1), [head.group(2)] if head.group(2) else []))
        elif arms and line:
            arms[-1][1].append(line)
    return arms


def _run_arm(statements: list[str], value: str) -> str:
    """Assignments outside ``if`` blocks and in ``else`` branches: every condition in these
    scripts selects aarch64 or libtorch builds, so for a Linux x86_64 wheel it is false."""
    stack: list[bool] = []
    for st in statements:
        if st.startswith("if "):
            stack.append(False)
        elif st == "else" and stack:
            stack[-1] = not stack[-1]
        elif st == "fi" and stack:
            stack.pop()
        elif all(stack) and (m := ASSIGN.match(st)) and "//" not in m.group(1):
            value = m.group(1).replace("${TORCH_CUDA_ARCH_LIST}", value)
    return value


def parse_build_cuda(text: str, cuda: str) -> list[str] | None:
    """TORCH_CUDA_ARCH_LIST that a build_cuda.sh sets for one CUDA version, Linux x86_64 wheel."""
    text = re.sub(r"\$\([^)]*\)", "", text)  # $([[ "$ARCH" == "aarch64" ]] && echo "11.0;" ...) -> ""
    pre, sep, rest = text.partition("case ${CUDA_VERSION} in")
    if not sep:
        return None
    bases = [m.group(1) for m in map(ASSIGN.match, pre.splitlines()) if m]
    for pattern, statements in _case_arms(rest.split("\nesac", 1)[0]):
        globs = [p.replace(".", r"\.").replace("*", ".*") for p in pattern.split("|")]
        if pattern != "*" and any(re.fullmatch(g, cuda) for g in globs):
            value = _run_arm(statements, bases[-1] if bases else "")
            return [x for x in value.split(";") if x]
    return None


def github_arch_lists(line: str, cudas: list[str]) -> dict[str, dict]:
    if version_key(line) <= (2, 5):
        repo, path = "pytorch/builder", "manywheel/build_cuda.sh"
    else:
        repo, path = "pytorch/pytorch", ".ci/manywheel/build_cuda.sh"
    text = http_get(RAW.format(repo=repo, ref=f"release/{line}", path=path)).decode()
    out = {}
    for tag in cudas:
        cuda = f"{tag[2:-1]}.{tag[-1]}"
        archs = parse_build_cuda(text, cuda)
        if archs:
            out[tag] = {"arch_list": archs, "arch_source": f"{repo}:{path}@release/{line}"}
    return out


def index_pins(version: str, tag: str) -> dict | None:
    """nvidia-* pins of ``torch==version+tag`` from the METADATA of its cp312 Linux x86_64 wheel."""
    page = http_get(INDEX.format(cuda=tag)).decode()
    pat = re.escape(f"torch-{version}+{tag}-cp312-cp312-") + r"(?:manylinux|linux)[^\"#<]*x86_64\.whl"
    m = re.search(r'href="([^"]*' + pat + r")", page)
    if not m:
        return None
    url = urllib.parse.urljoin(INDEX.format(cuda=tag), m.group(1).split("#")[0])
    pins = cuda_pins(requires_dist(LazyWheel(url).metadata()))
    return {**pins, "source": f"{INDEX.format(cuda=tag)} {url.rsplit('/', 1)[-1]} METADATA"} if pins else None


# ---- merging into the data file ---------------------------------------------------------------


def line_of(version: str) -> str:
    k = version_key(version)
    return f"{k[0]}.{k[1]}"


def arch_sort_key(arch: str) -> tuple[int, int]:
    major, minor = arch.split("+")[0].split(".")
    return int(major), int(minor)


def merge_release(data: dict, version: str, facts: dict, companions: dict[str, dict]) -> None:
    rel = data["releases"].setdefault(version, {})
    pins = {**rel.get("pins", {}), **facts.pop("pins", {})}
    rel.update(facts)
    if pins:
        rel["pins"] = pins
    for project, table in companions.items():
        if version in table:
            comp, fname = table[version]
            rel[project] = comp
            rel.setdefault("source", []).append(f"pypi:{fname} METADATA (Requires-Dist: torch=={version})")
    data["lines"].setdefault(line_of(version), {"source": ["pypi"]})


def refresh_github(data: dict) -> None:
    for line, entry in data["lines"].items():
        builds = entry.get("cuda_builds", {})
        try:
            found = github_arch_lists(line, sorted(builds))
        except OSError as exc:
            print(f"release/{line}: {exc}", file=sys.stderr)
            continue
        for tag, facts in found.items():
            builds.setdefault(tag, {}).update(
                arch_list=sorted(facts["arch_list"], key=arch_sort_key), arch_source=facts["arch_source"], arch_derived=False
            )


def refresh_index(data: dict) -> None:
    for version, rel in data["releases"].items():
        for tag in data["lines"].get(line_of(version), {}).get("cuda_builds", {}):
            try:
                pins = index_pins(version, tag)
            except OSError as exc:
                print(f"{version}+{tag}: {exc}", file=sys.stderr)
                continue
            if pins:
                rel.setdefault("pins", {})[tag] = pins


def collect_pypi(data: dict, only: list[str]) -> None:
    base, releases = pypi_files("torch")
    wanted = [v for v, f in releases.items() if f and not re.search(r"[a-z]", v) and version_key(v)[:2] >= MIN_LINE]
    wanted = [v for v in wanted if not only or v in only]
    with ThreadPoolExecutor(4) as pool:
        facts = dict(zip(wanted, pool.map(lambda v: torch_facts(v, releases[v], base), wanted), strict=True))
    companions = {}
    for project in ("torchvision", "torchaudio"):
        cbase, creleases = pypi_files(project)
        companions[project] = companion_map(project, creleases, cbase)
    for version in sorted(wanted, key=version_key):
        data["releases"].get(version, {}).pop("source", None)
        merge_release(data, version, facts[version], companions)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--github", action="store_true", help="re-read arch lists from release-branch build_cuda.sh")
    ap.add_argument("--index", action="store_true", help="read per-CUDA-build pins from download.pytorch.org")
    ap.add_argument("--no-pypi", action="store_true", help="skip the PyPI part")
    ap.add_argument("--only", nargs="*", default=[], help="torch versions to refresh (default: all)")
    ap.add_argument("--dry-run", action="store_true", help="print the result instead of writing it")
    args = ap.parse_args(argv)
    data = json.loads(DATA.read_text()) if DATA.exists() else {"sources": {}, "lines": {}, "releases": {}}
    if not args.no_pypi:
        data["sources"].setdefault("pypi", PYPI_JSON.format(project="torch") + " (+ torchvision, torchaudio) and the wheels it lists")
        collect_pypi(data, args.only)
    if args.github:
        refresh_github(data)
    if args.index:
        refresh_index(data)
    parts = ["PyPI" * (not args.no_pypi), "GitHub" * args.github, "download.pytorch.org" * args.index]
    data["generated"] = (
        f"{_dt.date.today().isoformat()} by tools/regen_release_data.py from {', '.join(p for p in parts if p) or 'nothing'}; "
        "fields it does not produce (RELEASE.md matrix, arch lists it did not re-read, cuDNN/NCCL) are hand-curated and kept; "
        "each row names its source"
    )
    data["lines"] = dict(sorted(data["lines"].items(), key=lambda kv: version_key(kv[0])))
    data["releases"] = dict(sorted(data["releases"].items(), key=lambda kv: version_key(kv[0])))
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if args.dry_run:
        print(text)
    else:
        DATA.parent.mkdir(parents=True, exist_ok=True)
        DATA.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
