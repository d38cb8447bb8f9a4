"""envdoctor's own reports pasted back: the JSON report's ``facts`` object is the live facts
themselves; the markdown report carries them as JSON blocks under ``<summary>fact</summary>``
and the stack as a ``| component | version |`` table."""

from __future__ import annotations

import json
import re
from typing import Any

from envdoctor.sources._acc import RANK_REPORT, Acc
from envdoctor.sources.listings import FREEZE

SUMMARY = re.compile(r"<summary>\s*([A-Za-z_][A-Za-z0-9_]{0,60}|GPUs \(\d+\))\s*</summary>")
TABLE_ROW = re.compile(r"^\|\s*([^|]{1,60}?)\s*\|\s*`*\s*([^|`]{0,200}?)\s*`*\s*\|\s*$")
GPUS_CELL = re.compile(r"(\d+)\s*×\s*([^,]{1,120})")
MAX_JSON = 8 * 1024 * 1024


def _unavailable(value: Any) -> str | None:
    if isinstance(value, dict) and value and set(value) <= {"unavailable", "error"}:
        return str(value.get("unavailable") or value.get("error"))
    return None


def take_facts(facts: dict, acc: Acc, line: str) -> None:
    for name, value in facts.items():
        why = _unavailable(value)
        if why is not None:
            acc.unavailable.setdefault(str(name), why)
        elif str(name) not in acc.whole:
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
