"""Compiled torch extensions: every installed package whose shared objects link libtorch/libc10.

After a torch, CUDA or image change, the most frequent breakage is an extension built for the
previous torch: metadata looks fine, ``import`` fails with
``flash_attn_2_cuda...so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocation...``, or
torchvision imports but ``nms`` raises "operator torchvision::nms does not exist".

``torch_extensions`` finds them from each distribution's RECORD and the ELF ``DT_NEEDED`` of the
``.so`` files it lists (headers only, no import, no fixed list of names). ``extension_loads``
then imports each distribution's modules after torch in the probe worker, one call per
distribution so one crash or hang does not hide the others, and runs a tiny op for the known
ones. ``torch.extension_abi`` judges both, with package metadata as the fallback.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from envdoctor import Item, ProbeError, ProbeRaised, Status, Unavailable, check, fact, fail, lazy_pattern, ok, skip, warn
from envdoctor import run_command as run
from envdoctor_checks._lazy import lazy
from envdoctor_checks.bodies.extensions import OPS
from envdoctor_checks.packages import canonical, examined, marker_applies, requirements, version_or_none

_elf = lazy("envdoctor_checks._elf")  # the ELF reader is for the live checks: triage need not load it

if TYPE_CHECKING:
    import importlib.metadata as md
else:
    md = lazy("importlib.metadata")  # read by the live checks only: triage need not load it

BODY = "envdoctor_checks.bodies.extensions:load"
# Per distribution: importing a large package (vllm) and a first CUDA op take tens of seconds.
LOAD_TIMEOUT = 120.0

# Distributions with compiled code bound to one torch release (C++ ABI of libtorch/c10), judged
# from metadata when their objects cannot be loaded (no probe, torch itself broken).
EXTENSIONS = (
    "torchvision",
    "torchaudio",
    "xformers",
    "flash-attn",
    "torch-scatter",
    "torch-sparse",
    "mamba-ssm",
    "causal-conv1d",
    "apex",
    "torchao",
    "vllm",
    "deepspeed",
)

# ---- finding them (orchestrator, no import) -------------------------------------------------


def _module_for(rel: str) -> str | None:
    """The module to import so that the object at ``rel`` (relative to site-packages) loads:
    its top-level package (whose __init__ loads it, as users import it) or, for an object at
    the top level, the object's own module name."""
    parts = rel.replace("\\", "/").split("/")
    if parts[0] in ("..", "") or parts[0].endswith((".libs", ".data", ".dist-info")):
        return None
    name = parts[0] if len(parts) > 1 else parts[0].split(".")[0]
    return name if name.isidentifier() else None


def _objects(dist: md.Distribution) -> list[dict]:
    out = []
    for f in dist.files or []:
        if not str(f).endswith(".so"):
            continue
        path = str(dist.locate_file(f))
        needed = _elf.needed(path) or []
        links = _elf.links_torch(needed)
        if links:
            entry = {"path": os.path.abspath(path), "rel": str(f), "links": links, "module": _module_for(str(f))}
            cuda = [n for n in needed if CUDA_RUNTIME_SO.match(n)]
            if cuda:
                entry["cuda"] = cuda
            out.append(entry)
    return out


# The CUDA libraries whose soname carries the CUDA major (libcudart.so.12 is CUDA 12; cuFFT,
# cuSPARSE and cuRAND number their own releases): an object linked with one was built for it.
CUDA_RUNTIME_SO = lazy_pattern(r"^lib(?:cudart|cublas|cublasLt|nvrtc|nvJitLink)\.so\.(1\d)(?:\.\d{1,3})?$")


def cuda_major_problem(ext: dict | None, torch_version: str, torch_cuda: str | None) -> str:
    """An extension object linked with another CUDA major's runtime than torch's
    (``libcudart.so.12`` under a CUDA 13 torch): it was built for the other CUDA; '' if none."""
    have = (torch_cuda or "").split(".")[0] or _local_cuda_major(torch_version)
    if not ext or not have:
        return ""
    for obj in ext.get("objects") or []:
        for lib in obj.get("cuda") or []:
            m = CUDA_RUNTIME_SO.match(lib)
            if m and m.group(1) != have:
                return (
                    f"{_short(obj.get('rel') or obj.get('path') or '?')} needs {lib} (CUDA {m.group(1)}), torch {torch_version} is a CUDA "
                    f"{have} build: it was built for another CUDA"
                )
    return ""


_CUDA_FAILS = ": it fails to load where that CUDA's runtime is absent ('cannot open shared object file')"


def _local_cuda_major(torch_version: str) -> str:
    m = re.fullmatch(r"cu(\d{2,3})", torch_version.partition("+")[2])
    return m.group(1)[:-1] if m else ""


def scan(path: list[str] | None = None) -> list[dict]:
    """Every distribution (first copy on ``path``, as import sees it) shipping objects that link torch."""
    seen, found = set(), []
    for d in md.distributions(path=path) if path is not None else md.distributions():
        try:
            name = d.metadata["Name"]
        except Exception:  # noqa: BLE001 - a broken dist-info must not stop the scan
            continue
        key = canonical(name or "")
        if not name or key in seen:
            continue
        seen.add(key)
        if key == "torch":
            continue
        objects = _objects(d)
        if objects:
            modules = sorted({o["module"] for o in objects if o["module"]})
            found.append({"key": key, "name": name, "version": d.version, "objects": objects, "modules": modules})
    return sorted(found, key=lambda e: e["key"])


@fact("torch_extensions")
def torch_extensions(interpreter=None) -> list:
    """Installed distributions whose .so files link libtorch or libc10 (from RECORD and ELF headers)."""
    return scan(list(interpreter.sys_path) if examined(interpreter) is not None else None)


@fact("extension_loads")
def extension_loads(probe, torch_extensions, torch_runtime) -> dict:
    """{distribution key: what loading it after torch gave}, each in its own probe call."""
    if torch_runtime.get("import_error"):
        raise Unavailable("import torch fails (see torch.importable)")
    return {e["key"]: load_one(probe, e) for e in torch_extensions}


def load_one(probe, ext: dict, timeout: float = LOAD_TIMEOUT) -> dict:
    kwargs = {
        "dist": ext["name"],
        "modules": ext["modules"],
        "sos": [o["path"] for o in ext["objects"]],
        "op": ext["key"] if ext["key"] in OPS else None,
    }
    what = f"loading {ext['name']}'s compiled modules"
    try:
        return probe.call(BODY, kwargs, timeout=timeout, what=what)
    except ProbeRaised as e:
        return {"dist": ext["name"], "crashed": f"{e.exc_type}: {e.message}"[:500], "output": (e.output or "")[-2000:]}
    except ProbeError as e:
        # A segfault or a hang: this call's worker is gone; the next call gets a fresh one.
        return {"dist": ext["name"], "crashed": str(e)[:500], "output": (getattr(e, "output", "") or "")[-2000:]}


# ---- naming what broke ----------------------------------------------------------------------

_UNDEFINED = lazy_pattern(r"(?:(\S+?\.so[\w.]*): )?undefined symbol: (\S+)")


def demangle(symbols: list[str]) -> dict[str, str]:
    """{mangled: readable}: c++filt when on PATH, else the mangled names as they are."""
    out = {s: s for s in symbols}
    if not symbols:
        return out
    import shutil  # on use: most answers have no symbol to read

    tool = shutil.which("c++filt")
    if tool:
        done = run([tool], timeout=10.0, input="\n".join(symbols) + "\n")
        lines = done.stdout.splitlines() if done.ok else []
        if len(lines) == len(symbols):
            out.update({s: f"{line} ({s})" if line != s else s for s, line in zip(symbols, lines, strict=True)})
    return out


_BUILT_FOR = lazy_pattern(r"torch[-_]?(\d+)\.?(\d+)")


def built_for(ext_version: str, dist: dict | None) -> str:
    """The torch an extension says it was built for: a ``torch2.3`` in its local version
    (flash_attn-2.5.8+cu122torch2.3cxx11abiFALSE) or a ``Requires-Dist: torch==`` pin; '' if unknown."""
    m = _BUILT_FOR.search(ext_version.partition("+")[2])
    if m:
        return f"torch {m.group(1)}.{m.group(2)}"
    for r in requirements(dist or {}):
        if canonical(r.name) == "torch" and marker_applies(r) and any(s.operator in ("==", "===") for s in r.specifier):
            return f"torch{r.specifier}"
    return ""


def _short(path: str) -> str:
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-2:])


def load_problems(result: dict) -> tuple[list[str], list[str]]:
    """(problems, mangled symbols named in them) from one distribution's load result."""
    if result.get("crashed"):
        return [f"loading it killed the probe: {result['crashed']}"], []
    problems, symbols, named = [], [], set()
    for imp in result.get("imports") or []:
        if imp.get("ok"):
            continue
        m = _UNDEFINED.search(imp.get("error") or "")
        if m:
            symbols.append(m.group(2))
            named.add(os.path.basename(m.group(1) or ""))
            where = _short(m.group(1)) if m.group(1) else imp["module"]
            problems.append(f"import {imp['module']} fails: {where}: undefined symbol {{{m.group(2)}}}")
        else:
            first = (imp.get("error") or "").strip().splitlines()
            problems.append(f"import {imp['module']} fails: {imp.get('exc_type')}: {first[0][:300] if first else ''}")
    for obj in result.get("objects") or []:
        # An object whose import already failed on a symbol is named once, by that error.
        if obj.get("missing") and os.path.basename(obj["path"]) not in named:
            symbols.append(obj["missing"][0])
            more = f" and {len(obj['missing']) - 1} more" if len(obj["missing"]) > 1 else ""
            problems.append(f"{_short(obj['path'])} needs {{{obj['missing'][0]}}}{more}, which this torch does not export")
        if obj.get("absent"):
            problems.append(
                f"{_short(obj['path'])} needs {', '.join(obj['absent'])}, which this torch does not have (built for another torch build, e.g. CUDA vs CPU)"
            )
    op = result.get("op")
    if op and not op.get("ok"):
        first = (op.get("error") or "").strip().splitlines()
        problems.append(f"its {op['name']} op fails: {op.get('exc_type')}: {first[0][:300] if first else ''}")
    return problems, symbols


def _fix(key: str, name: str, torch_version: str) -> str:
    local = torch_version.partition("+")[2]
    if key in ("torchvision", "torchaudio"):
        index = f" --index-url https://download.pytorch.org/whl/{local}" if local else ""
        # Pinning torch lets pip pick the release paired with it (and keeps this torch).
        return f"pip install --force-reinstall {name} 'torch=={torch_version}'{index}"
    return (
        f"install the {name} wheel built for torch {torch_version}, or rebuild it against this torch: "
        f"pip install --no-build-isolation --no-cache-dir --force-reinstall {name}"
    )


# The release-wheel tag of flash-attn and the packages built the same way (mamba-ssm,
# causal-conv1d): +cu122torch2.3cxx11abiFALSE. The CUDA major, torch's release and its C++ ABI.
_WHEEL_TAG = lazy_pattern(r"^cu(1\d{1,2})torch(\d{1,2}\.\d{1,3})cxx11abi(TRUE|FALSE)$", re.I)


def torch_cxx11_abi(torch_version: str) -> bool | None:
    """The C++ ABI of a pytorch.org / PyPI build of this torch release: the old ABI up to 2.6, the
    C++11 ABI from 2.7 (manylinux_2_28); None for a build from elsewhere (a source or NGC build,
    ``2.2.0a0+81ea7a4``: its own choice)."""
    release, _, local = torch_version.partition("+")
    v = version_or_none(release)
    if v is None or v.is_prerelease or v.is_devrelease or (local and not re.fullmatch(r"cu\d+|cpu|rocm[\d.]+", local)):
        return None
    return v.release[:2] >= (2, 7)


def wheel_tag_problem(d: dict, torch_version: str) -> str:
    """What an extension's release-wheel tag (``+cu118torch2.2cxx11abiTRUE``) says is wrong with
    this torch: another torch release, another CUDA major, another C++ ABI."""
    m = _WHEEL_TAG.match(d["version"].partition("+")[2])
    if not m:
        return ""
    cuda, release, abi = m.group(1), m.group(2), m.group(3).upper() == "TRUE"
    head = f"{d['name']} {d['version']} is built for torch {release}"
    if not re.match(re.escape(release) + r"(?:\.|$|\+|a|rc)", torch_version):
        return f"{head}, torch {torch_version} is installed"
    tlocal = torch_version.partition("+")[2]
    major = cuda[:2]  # cu12 (flash-attn >= 2.6) or cu122: a CUDA major's wheels serve all its minors
    if re.fullmatch(r"cu\d{3}", tlocal) and tlocal[2:4] != major:
        return f"{head} with CUDA {major}, torch {torch_version} is a {tlocal} build"
    have = torch_cxx11_abi(torch_version)
    if have is not None and have != abi:
        tag = "cxx11abiTRUE" if have else "cxx11abiFALSE"
        return (
            f"{head} and the {'C++11' if abi else 'old (pre-C++11)'} ABI; pytorch.org's torch {torch_version} uses the "
            f"{'C++11' if have else 'old'} ABI (its wheels are the {tag} ones)"
        )
    return ""


def metadata_problem(d: dict, torch_version: str) -> str:
    """What package metadata alone says is wrong: a torch pin, a release-wheel tag or a CUDA tag that differs."""
    tlocal = torch_version.partition("+")[2]
    pins = [r for r in requirements(d) if canonical(r.name) == "torch" and marker_applies(r)]
    exact = [r for r in pins if any(s.operator in ("==", "===") for s in r.specifier)]
    elocal = d["version"].partition("+")[2]
    if exact and not all(r.specifier.contains(torch_version, prereleases=True) for r in exact):
        return f"{d['name']} {d['version']} requires torch{exact[0].specifier}, torch {torch_version} is installed"
    if _WHEEL_TAG.match(elocal):
        return wheel_tag_problem(d, torch_version)
    if elocal.startswith("cu") and tlocal.startswith(("cu", "cpu")) and elocal != tlocal:
        return f"{d['name']} {d['version']} is a {elocal} build, torch {torch_version} is {tlocal}"
    return ""


def _judge(key: str, d: dict, ext: dict | None, load: dict | None, tv: str, tcuda: str | None = None) -> tuple[Status, str, list[str]]:
    """(status, message with {symbol} placeholders, symbols) for one distribution."""
    name, version = d.get("name") or key, d.get("version") or "?"
    meta = metadata_problem(d, tv) if d else ""
    cuda = "" if meta else cuda_major_problem(ext, tv, tcuda)
    if load is None:
        if meta or cuda:
            return Status.FAIL, meta + ": its compiled ops will fail to load ('undefined symbol')" if meta else cuda + _CUDA_FAILS, []
        pins = [r for r in requirements(d) if canonical(r.name) == "torch" and marker_applies(r)]
        exact = [r for r in pins if any(s.operator in ("==", "===") for s in r.specifier)]
        return Status.PASS, version + (f" (torch{exact[0].specifier})" if exact else ""), []
    problems, symbols = load_problems(load)
    if problems:
        made = built_for(version, d)
        note = f" (built for {made})" if made and not tv.startswith(made.replace("torch ", "").replace("torch==", "")) else ""
        return Status.FAIL, f"{name} {version}{note}: " + "; ".join(problems + ([cuda] if cuda else [])), symbols
    if meta:
        return Status.WARN, f"{meta}; its compiled modules load and work with it, but pip sees a conflict", []
    if cuda:
        return Status.WARN, f"{cuda}; it loads here (both CUDA runtimes are installed), but one process then mixes two CUDAs", []
    modules = ", ".join(i["module"] for i in load.get("imports") or []) or "no module"
    op = load.get("op") or {}
    return (
        Status.PASS,
        f"{version}: import {modules} loads its {len((ext or {}).get('objects') or [])} torch-linked object(s)"
        + (f"; {op['detail']}" if op.get("detail") else ""),
        [],
    )


def _cause_of(names) -> str:
    """The catalog's category for the packages that fail: a companion's own, else any extension's."""
    names = set(names)
    for companion in ("torchvision", "torchaudio"):
        if names == {companion}:
            return f"{companion}_torch_mismatch"
    return "extension_abi_mismatch"


@check("torch.extension_abi", tags=("build",), sources=("live", "pasted"), blame=("compiled",))
def extension_abi(dists, torch_build=None, torch_extensions=None, extension_loads=None):
    """Compiled torch extensions load with the installed torch"""
    # B14: after a torch change: "flash_attn_2_cuda...so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocation...".
    torch = dists.get("torch")
    if not torch:
        return skip("torch is not installed")
    tv = torch["version"]
    found = {e["key"]: e for e in (torch_extensions or [])}
    keys = sorted(set(found) | {k for k in EXTENSIONS if k in dists})
    if not keys:
        return skip("no compiled torch extension (no installed package ships a .so linking libtorch or libc10)")
    loads = extension_loads or {}
    judged = {}
    for key in keys:
        d = dists.get(key) or {"name": found[key]["name"], "version": found[key]["version"]}
        judged[key] = (d, *_judge(key, d, found.get(key), loads.get(key) if key in found else None, tv, (torch_build or {}).get("cuda")))
    names = demangle(sorted({s for *_, syms in judged.values() for s in syms}))
    items, bad = [], []
    for key, (d, status, message, syms) in judged.items():
        for s in syms:
            message = message.replace("{" + s + "}", names.get(s, s))
        items.append(Item(d.get("name") or key, status, message))
        if status is not Status.PASS:
            bad.append((d, items[-1]))
    details: dict[str, object] = {"extensions": {k: [o["rel"] for o in e["objects"]] for k, e in found.items()}}
    if bad:
        details["cause_id"] = _cause_of(canonical(d.get("name") or "") for d, _ in bad)
        named = [d for d, _ in bad if d.get("version") != "?"]  # a paste's package known only by its error has no name to install
        fixes = "; ".join(dict.fromkeys(_fix(canonical(d.get("name") or ""), d.get("name") or "", tv) for d in named)) or (
            f"install the package's build for torch {tv}'s CUDA, or the torch of the package's CUDA"
        )
        worst_status = Status.FAIL if any(i.status is Status.FAIL for _, i in bad) else Status.WARN
        return (fail if worst_status is Status.FAIL else warn)(
            "; ".join(i.message for _, i in bad if i.status is worst_status), fixes, details=details, items=items
        )
    return ok(", ".join(f"{i.name} {i.message}" for i in items) + f"; torch {tv}", details=details, items=items)
