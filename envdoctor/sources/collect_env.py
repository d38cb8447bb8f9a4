"""``python -m torch.utils.collect_env`` in every layout it has had, and vLLM's ``collect-env``.

1.x prints ``Is debug build: No``; 1.6+ and 2.x ``False``, a ``ROCM used to build PyTorch``
line, later a ``CPU:`` section (lscpu, or ``wmic`` on Windows), ``Is XPU available`` and
``Caching allocator config``. vLLM pads keys (``PyTorch version   : 2.7.0``) under
``=====`` banners and adds vLLM's version, build flags, the GPU topology and environment
variables. Values the tool could not read are "Could not collect", "N/A" or "None".
"""

from __future__ import annotations

import re
from collections.abc import Callable

from envdoctor.core.patterns import lazy
from envdoctor.core.scrub import REDACTED, is_secret_key  # not core.redact: triage writes no report
from envdoctor.sources._acc import COLLECT_ENV_FACTS, RANK_PIP3, Acc
from envdoctor.sources._acc import RANK_COLLECT_ENV as R
from envdoctor.sources._text import key_value, known
from envdoctor.sources.listings import add_torch_from_version

MARKERS = ("pytorch version", "is debug build", "cuda used to build pytorch", "is cuda available", "vllm version")
GPU_LINE = lazy(r"^\s*GPU\s*(\d{1,3})\s*:\s*(.{1,200}?)\s*(?:\(UUID:\s*(GPU-[0-9A-Fa-f-]{8,60})\))?\s*$")
ENV_LINE = lazy(r"^\s*([A-Za-z_][A-Za-z0-9_]{0,100})=(.{0,4000})$")
PYTORCH_NO_COLON = lazy(r"^\s*PyTorch version\s+(\d\S{0,80})\s*$")
BANNER = lazy(r"^\s*={10,}\s*$")
ARCHES = ("x86_64", "aarch64", "arm64", "ppc64le", "s390x", "i686", "AMD64")
LIBS_KEYS = ("versions of relevant libraries", "version of relevant libraries")
# Multi-line sections: the key whose following lines belong to it.
SECTIONS = {"gpu models and configuration": "gpus", "cudnn version": "paths", "cpu": "cpu", "gpu topology": "block"}
SECTIONS.update({"vllm build flags": "block", "environment variables": "env"})
TRUE = {"true": True, "yes": True, "false": False, "no": False}


def _version(value: str) -> str | None:
    m = re.match(r"\s*(\d+\.\d+(?:\.\d+)?)", value)
    return m.group(1) if m else None


def _torch(acc: Acc, value: str, line: str) -> None:
    v = known(value)
    if v and v[:1].isdigit():
        add_torch_from_version(acc, v.split()[0], line, R)
    elif value.strip().upper() == "N/A":
        acc.note("collect_env could not import torch (PyTorch version: N/A)")
        acc.put("torch", "not_importable", True, line, R)


def _built_with(acc: Acc, what: str, value: str, line: str) -> None:
    v = known(value)
    if v:
        acc.put("torch", what, _version(v) or v, line, R)
    elif value.strip():
        acc.put("torch", f"no_{what}", True, line, R)  # None / Could not collect: built without it


def _os(acc: Acc, value: str, line: str) -> None:
    v = known(value)
    if not v:
        return
    m = re.search(r"\((x86_64|aarch64|arm64|ppc64le|s390x|i686|AMD64)\)\s*$", v)
    if m:
        acc.put("os", "machine", m.group(1), line, R)
        v = v[: m.start()].strip()
    acc.put("os", "name", v, line, R)


def _platform(acc: Acc, value: str, line: str) -> None:
    v = value.strip()
    if v.startswith("Linux-"):
        for arch in ARCHES:
            i = v.find("-" + arch)
            if i > 6:
                acc.put("os", "kernel", v[6:i], line, R)
                acc.put("os", "machine", arch, line, R)
                break
    elif v.startswith("Windows-"):
        parts = v.split("-")
        acc.put("os", "kernel", parts[2] if len(parts) > 2 else None, line, R)
        acc.note("Windows paste")
    elif v.startswith("macOS-"):
        acc.note("macOS paste")


def _python(acc: Acc, value: str, line: str) -> None:
    v = _version(value)
    acc.put("python", "version", v, line, R)
    if v and "free-threading" in value:
        acc.put("python", "free_threading", True, line, R)
    if v and "PyPy" in value:
        acc.put("python", "implementation", "PyPy", line, R)


def _libc(acc: Acc, value: str, line: str) -> None:
    m = re.match(r"\s*(glibc|musl)[- ](\d+\.\d+(?:\.\d+)?)", value)
    if m:
        acc.put("os", "libc", [m.group(1), m.group(2)], line, R)


def _flag(fact: str, name: str) -> Callable[[Acc, str, str], None]:
    def put(acc: Acc, value: str, line: str) -> None:
        acc.put(fact, name, TRUE.get(value.strip().lower()), line, R)

    return put


def _toolkit(acc: Acc, value: str, line: str) -> None:
    v = known(value)
    acc.put("cuda_toolkit", "version", ".".join(v.split(".")[:2]) if v and _version(v) else None, line, R)


def _driver(acc: Acc, value: str, line: str) -> None:
    v = known(value)
    if v and re.match(r"\d+\.\d+", v):
        acc.put("driver", "version", v.split()[0], line, R)


def _vllm(acc: Acc, value: str, line: str) -> None:
    v = known(value)
    if v and v[:1].isdigit():
        acc.put_dist("vllm", v.split()[0], line, RANK_PIP3, "")


KEYS: dict[str, Callable[[Acc, str, str], None]] = {
    "pytorch version": _torch,
    "cuda used to build pytorch": lambda a, v, ln: _built_with(a, "cuda", v, ln),
    "rocm used to build pytorch": lambda a, v, ln: _built_with(a, "hip", v, ln),
    "os": _os,
    "python platform": _platform,
    "python version": _python,
    "libc version": _libc,
    "is cuda available": _flag("runtime", "cuda_available"),
    "is debug build": _flag("torch", "debug"),
    "cuda runtime version": _toolkit,
    "nvidia driver version": _driver,
    "vllm version": _vllm,
    "cuda_module_loading set to": lambda a, v, ln: a.put("env", "CUDA_MODULE_LOADING", known(v), ln, R),
}


def _gpu_from_line(line: str, acc: Acc, gpus: list[dict]) -> bool:
    m = GPU_LINE.match(line)
    if not m:
        return False
    gpu: dict = {"index": int(m.group(1)), "name": m.group(2).strip()}
    if m.group(3):
        gpu["uuid"] = m.group(3)
    gpus.append(gpu)
    return True


def _env_line(line: str, acc: Acc) -> bool:
    m = ENV_LINE.match(line)
    if not m:
        return False
    name, value = m.group(1), m.group(2).strip()
    acc.env_vars[name] = REDACTED if value and is_secret_key(name) else value
    acc.evidence.setdefault(f"env_vars.{name}", line.strip()[:300] if not is_secret_key(name) else f"{name}={REDACTED}")
    return True


def _section_line(section: str, line: str, acc: Acc, gpus: list[dict]) -> bool:
    """Whether ``line`` continues the multi-line ``section``."""
    s = line.strip()
    if section == "gpus":
        return _gpu_from_line(line, acc, gpus)
    if section == "paths":
        return s.startswith("/") or bool(re.match(r"^[A-Za-z]:\\", s))
    if section == "env":
        return _env_line(line, acc)
    if section == "cpu":
        if s.lower().startswith("architecture:"):
            arch = s.partition(":")[2].strip()
            acc.put("os", "machine", arch if arch in ARCHES else None, line, R + 1)
        return bool(s) and s.lower().rstrip(":") not in LIBS_KEYS
    return bool(s) and not BANNER.match(s)  # "block": everything up to a blank line


def _inline(key: str, value: str, line: str, acc: Acc, gpus: list[dict]) -> None:
    """A section key with its first item on the same line: ``GPU models and configuration: GPU 0: …``."""
    if key == "gpu models and configuration" and value:
        if not _gpu_from_line(value, acc, gpus) and known(value) and not value.lower().startswith(("could not", "no ")):
            gpus.append({"index": 0, "name": value})
        acc.evidence.setdefault("gpus.collect_env", line.strip()[:300])


QUICK = lazy(r"(?im)^[ \t]*(?:pytorch version|is debug build|cuda used to build pytorch|is cuda available|vllm version|cpu:$)")


def is_collect_env(lines: list[str]) -> bool:
    if not QUICK.search("\n".join(lines)):
        return False
    for i, line in enumerate(lines):
        kv = key_value(line)
        if (kv and kv[0] in MARKERS) or PYTORCH_NO_COLON.match(line):
            return True
        # only the "CPU:" (lscpu) section of a 2.x collect_env was pasted
        if line.strip() == "CPU:" and i + 1 < len(lines) and lines[i + 1].startswith("Architecture"):
            return True
    return False


def _flavour(lines: list[str], acc: Acc) -> None:
    debug = acc.get("torch", "debug")
    text_1x = any(
        (kv := key_value(line)) and kv[0] in ("is debug build", "is cuda available") and kv[1].lower() in ("yes", "no") for line in lines
    )
    if acc.dists.get("vllm") or any(BANNER.match(line) for line in lines):
        acc.kind("vllm_collect_env")
    elif text_1x:
        acc.kind("collect_env_1x")
    else:
        acc.kind("collect_env")
    if debug:
        acc.note("torch is a debug build (Is debug build: True)")


def read_collect_env(lines: list[str], acc: Acc) -> None:
    if not is_collect_env(lines):
        return
    gpus: list[dict] = []
    section, seen = None, set()
    for i, line in enumerate(lines):
        if BANNER.match(line):  # vLLM's "=====" lines frame a section title; the section goes on
            continue
        if section and _section_line(section, line, acc, gpus):
            acc.consumed.add(i)
            continue
        section = None
        s = line.strip()
        title = s.lower().rstrip(":")
        if title in LIBS_KEYS or title in ("environment variables", "gpu topology", "cpu"):
            seen.add(title)
            section = SECTIONS.get(title)
            acc.consumed.add(i)
            continue
        m = PYTORCH_NO_COLON.match(line)
        kv = ("pytorch version", m.group(1)) if m else key_value(line)
        if not kv or kv[0] not in KEYS and kv[0] not in SECTIONS:
            continue
        key, value = kv
        seen.add(key)
        acc.consumed.add(i)
        if key in KEYS:
            KEYS[key](acc, value, line)
        if key in SECTIONS:
            section = SECTIONS[key]
            _inline(key, value, line, acc, gpus)
    if gpus:
        acc.add_gpus(gpus, R, next((ln for ln in lines if "GPU models" in ln), ""))
    _flavour(lines, acc)
    _completeness(seen, lines, acc)


def _completeness(seen: set[str], lines: list[str], acc: Acc) -> None:
    """What a truncated collect_env lacks: the part a triager would ask for again."""
    libs = next((k for k in LIBS_KEYS if k in seen), None)
    has_list = any(ln.lstrip().startswith(("[pip", "[conda]")) for ln in lines)
    if libs and not has_list:
        acc.want(*COLLECT_ENV_FACTS, text="the full collect_env output (it looks truncated after 'Versions of relevant libraries')")
        acc.note("truncated")
    elif "pytorch version" in seen and not libs and not has_list:
        last = max((k for k in seen if k in KEYS), key=lambda k: list(KEYS).index(k))
        acc.want(
            *COLLECT_ENV_FACTS, text=f"the full collect_env output (it stops around '{last}', before 'Versions of relevant libraries')"
        )
        acc.note("truncated")
    rocm = acc.get("torch", "hip") is not None  # a ROCm build: no NVIDIA driver to report
    for key, what in (("is cuda available", "'Is CUDA available'"), ("nvidia driver version", "'Nvidia driver version'")):
        if key not in seen and "pytorch version" in seen and not (rocm and key == "nvidia driver version"):
            acc.want(*COLLECT_ENV_FACTS, text=f"the collect_env line {what} (not in the paste)")
