"""envdoctor's own reports pasted back: the JSON report's ``facts`` object is the live facts
themselves; the markdown report carries them as JSON blocks under ``<summary>fact</summary>``
and the stack as a ``| component | version |`` table."""

from __future__ import annotations

import json
import re
from typing import Any

from envdoctor.core.patterns import lazy
from envdoctor.sources._acc import RANK_REPORT, Acc
from envdoctor.sources.listings import FREEZE

SUMMARY = lazy(r"<summary>\s*([A-Za-z_][A-Za-z0-9_]{0,60}|GPUs \(\d+\))\s*</summary>")
TABLE_ROW = lazy(r"^\|\s*([^|]{1,60}?)\s*\|\s*`*\s*([^|`]{0,200}?)\s*`*\s*\|\s*$")
GPUS_CELL = lazy(r"(\d+)\s*×\s*([^,]{1,120})")
MAX_JSON = 8 * 1024 * 1024


def _unavailable(value: Any) -> str | None:
    if isinstance(value, dict) and value and set(value) <= {"unavailable", "error"}:
        return str(value.get("unavailable") or value.get("error"))
    return None


# The fields of the facts checks read, and the JSON types a live run gives each (None: not
# known). A pasted report's fact is taken whole only in this shape: the checks index into it as
# they do into live facts, so a hand-edited "driver": {"version": 3} must stop here.
_S, _N, _B = (str, type(None)), (int, float, str, type(None)), (bool, type(None))
_STRS, _DICTS, _LIST = "strings", "objects", "list"
_REQUIRED, _PRESENT = "required string", "present"  # a string; a string or null, but there
_NUM = (int, float, type(None))
_GPU: dict[str, Any] = {
    "index": _N,
    "name": _S,
    "uuid": _S,
    "serial": _S,
    "cc": _S,
    "memory_total": _NUM,
    "memory_used": _NUM,
    "mig_mode": _B,
}
_GPU |= {"persistence_mode": _B, "compute_mode": _S, "brand": _S, "pci_bus_id": _S, "mig_devices": _DICTS, "processes": _DICTS}
FIELDS: dict[str, dict[str, Any]] = {
    "torch_build": {"version": _REQUIRED, "kind": _REQUIRED, "cuda": _PRESENT, "local": _S, "hip": _S, "git_version": _S, "location": _S},
    "torch_runtime": {"version": _S, "cuda": _S, "cudnn": _N, "nccl": _S, "arch_list": _STRS, "cuda_available": _B},
    "python_info": {"version": _S, "version_info": _LIST, "executable": _S, "include_dir": _S, "python_h": _B, "free_threading": _B},
    "driver": {"version": _REQUIRED, "cuda_version": _S, "source": _S, "kernel_module": _S, "nvml_error": _S},
    "os_release": {"id": _S, "name": _S, "version": _S, "kernel": _S, "machine": _S, "libc": _LIST},
    "torch_xla": {"version": _REQUIRED},
    "gpus": _GPU,
    "visible_gpus": _GPU,
}
FIELDS["torch_runtime"] |= {"device_count": _N, "devices": _DICTS, "loaded_libs": _LIST, "warnings": _STRS, "import_error": _S}
_DIST = {"version": _REQUIRED, "name": _S, "requires": _STRS, "compiled": _B, "location": _S, "installer": _S}


def _field_problem(fields: dict[str, Any], entry: Any) -> str:
    if not isinstance(entry, dict):
        return f"a {type(entry).__name__} where an object belongs"
    for key, want in fields.items():
        v = entry.get(key)
        if want == _REQUIRED:
            ok = isinstance(v, str)
        elif want == _PRESENT:
            ok = key in entry and isinstance(v, _S)
        elif isinstance(want, str):
            items = v if isinstance(v, list) else None
            ok = v is None or (items is not None and (want == _LIST or all(isinstance(x, str if want == _STRS else dict) for x in items)))
        else:
            ok = isinstance(v, want)
        if not ok:
            return f"'{key}' is a {type(v).__name__}"
    return ""


def shape_problem(name: str, value: Any) -> str:
    """Why a pasted report's fact does not have the shape checks read ("" when it does)."""
    if value is None:
        return "it is null"
    if name == "dists":
        if not isinstance(value, dict):
            return f"a {type(value).__name__}, not an object"
        return next((f"{str(k)[:40]}: {p}" for k, v in value.items() for p in [_field_problem(_DIST, v)] if p), "")
    if name in ("env_vars", "fabric_state"):
        ok = isinstance(value, dict) and all(isinstance(v, str if name == "env_vars" else dict) for v in value.values())
        return "" if ok else "not an object of the values a live run records"
    fields = FIELDS.get(name)
    if fields is None:
        return ""
    if name in ("gpus", "visible_gpus"):
        if not isinstance(value, list):
            return f"a {type(value).__name__}, not a list"
        return next((f"GPU {n}: {p}" for n, g in enumerate(value) for p in [_field_problem(fields, g)] if p), "")
    return _field_problem(fields, value)


def take_facts(facts: dict, acc: Acc, line: str) -> None:
    for name, value in facts.items():
        why = _unavailable(value)
        if why is not None:
            acc.unavailable.setdefault(str(name), why)
        elif str(name) not in acc.whole:
            problem = shape_problem(str(name), value)
            if problem:
                acc.note(f"the pasted report's {str(name)[:60]} fact was not used: its shape is not envdoctor's ({problem[:120]})")
                continue
            acc.whole[str(name)] = value
            acc.evidence.setdefault(str(name), line)


def read_json_report(text: str, acc: Acc) -> None:
    if '"facts"' not in text or '"envdoctor"' not in text or len(text) > MAX_JSON:
        return
    decoder = json.JSONDecoder()
    for m in re.finditer(r"(?m)^\s{0,8}\{", text):
        try:
            obj, _ = decoder.raw_decode(text, m.end() - 1)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("facts"), dict) and (obj.get("tool") or {}).get("name") == "envdoctor":
            acc.kind("envdoctor_json")
            take_facts(obj["facts"], acc, f"envdoctor {obj['tool'].get('version', '?')} JSON report")
            return


def _json_block(lines: list[str], start: int) -> tuple[Any, int]:
    """The JSON of the first fenced ``json`` block of this ``<details>`` section (the GPU section
    puts a table before it)."""
    i = start
    while i < len(lines) and i < start + 300 and "</details>" not in lines[i] and not lines[i].lstrip().startswith("```json"):
        i += 1
    if i >= len(lines) or not lines[i].lstrip().startswith("```json"):
        return None, start
    j = i + 1
    while j < len(lines) and not lines[j].lstrip().startswith("```"):
        j += 1
    try:
        return json.loads("\n".join(lines[i + 1 : j])), j
    except ValueError:
        return None, j


def _stack_row(label: str, value: str, line: str, acc: Acc) -> None:
    label = label.lower()
    simple = {
        "nvidia driver": ("driver", "version"),
        "driver cuda (max supported)": ("driver", "cuda_version"),
        "python": ("python", "version"),
    }
    simple.update({"torch cuda": ("torch", "cuda"), "os": ("os", "name"), "kernel": ("os", "kernel")})
    if label in simple and value and value not in ("none", "not installed"):
        acc.put(*simple[label], value, line, RANK_REPORT)
    elif label == "torch" and value and value != "not installed":
        acc.put_dist("torch", value, line, RANK_REPORT, "")
        acc.put("torch", "version", value, line, RANK_REPORT)
    elif label in ("triton", "pytorch-triton", "torch_xla", "libtpu", "numpy") and value and value != "none":
        acc.put_dist("torch-xla" if label == "torch_xla" else label, value, line, RANK_REPORT, "")
    elif label == "gpus":
        gpus = [{"index": 0, "name": n.strip()} for c, n in GPUS_CELL.findall(value) for _ in range(min(int(c), 64))]
        for k, g in enumerate(gpus):
            g["index"] = k
        acc.add_gpus(gpus, RANK_REPORT + 1, line)
    if label == "torch cuda" and value == "none":
        acc.put("torch", "no_cuda", True, line, RANK_REPORT)


def read_markdown_report(lines: list[str], acc: Acc) -> None:
    if not any(ln.startswith("### envdoctor:") or ln.strip() == "| component | version |" for ln in lines):
        return
    acc.kind("envdoctor_markdown")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = SUMMARY.search(line)
        if m and m.group(1) not in ("dists", "env_vars"):
            value, end = _json_block(lines, i + 1)
            if value is not None:
                take_facts({"gpus" if m.group(1).startswith("GPUs") else m.group(1): value}, acc, line.strip())
            acc.consumed.update(range(i, end + 1))
            i = end + 1
            continue
        row = TABLE_ROW.match(line)
        if row and row.group(1) not in ("component", "---"):
            _stack_row(row.group(1), row.group(2).strip(), line, acc)
            acc.consumed.add(i)
        elif "<summary>Environment variables" in line:
            _env_block(lines, i + 1, acc)
        i += 1


def _env_block(lines: list[str], start: int, acc: Acc) -> None:
    i = start
    while i < len(lines) and i < start + 4 and not lines[i].lstrip().startswith("```"):
        i += 1
    for j in range(i + 1, min(len(lines), i + 400)):
        s = lines[j].strip()
        if s.startswith("```") or "</details>" in s:
            return
        name, sep, value = s.partition("=")
        if sep and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name) and not FREEZE.match(s):
            acc.env_vars[name] = value
            acc.consumed.add(j)
