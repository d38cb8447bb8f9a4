"""``read_paste``: whatever a user pasted (a whole issue body, or any part of it) into facts
shaped like the live ones, so ``envdoctor triage`` runs the same checks on them.

Never raises and never imports torch: a paste is untrusted text of any size.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from envdoctor.core.untrusted import LIMITS
from envdoctor.sources import _assemble as build
from envdoctor.sources._acc import COLLECT_ENV_FACTS, Acc, Want
from envdoctor.sources._text import raw_lines, split_lines
from envdoctor.sources.collect_env import read_collect_env
from envdoctor.sources.errors import read_errors
from envdoctor.sources.listings import read_listings
from envdoctor.sources.readers import run_readers
from envdoctor.sources.report import read_json_report, read_markdown_report
from envdoctor.sources.smi import read_smi_q, read_smi_table

MAX_INPUT = LIMITS["paste"]  # beyond this only the head is read (and the cut is said)
MAX_LINES = 40_000


@dataclass(frozen=True)
class Paste:
    """A paste as read: its facts, the dumps recognised, their lines, and what it lacks."""

    facts: dict[str, Any] = field(default_factory=dict)
    kinds: tuple[str, ...] = ()
    evidence: dict[str, str] = field(default_factory=dict)
    missing: tuple[Want, ...] = ()  # what the paste lacks: facts, by name, or the readers' own words
    notes: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    unavailable: dict[str, str] = field(default_factory=dict)  # from a pasted envdoctor report


def _bounded(text: str, acc: Acc) -> str:
    """At most MAX_LINES lines for the line readers: the head (where tool output usually is)
    and the tail (where a log's error is). Real pastes are far shorter; a 10 MB log is cut."""
    parts = text.split("\n")
    if len(parts) <= MAX_LINES:
        return text
    acc.note(f"the paste has {len(parts)} lines; only the first and last {MAX_LINES // 2} were read")
    return "\n".join(parts[: MAX_LINES // 2] + [""] + parts[-(MAX_LINES // 2) :])


def _read_all(text: str, acc: Acc) -> None:
    read_json_report(text, acc)
    text = _bounded(text, acc)
    read_markdown_report(raw_lines(text) if "<summary>" in text or "| component |" in text else [], acc)
    lines = split_lines(text)
    read_smi_q(lines, acc)
    read_smi_table(lines, acc)
    read_collect_env(lines, acc)
    read_listings(lines, acc)
    read_errors(lines, acc)
    run_readers(lines, acc)  # other tools' dumps and prose (envdoctor.sources.tool_dumps), then plugins'
    if "\r\n" in text or ":\\" in text:
        if ":\\" in text and any(s in text for s in ("C:\\", "site-packages\\", "\\AppData\\")):
            acc.note("Windows paste")


def _facts(acc: Acc) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    dist_map = build.dists(acc)
    tb = build.torch_build(acc)
    gpu_list = build.gpus(acc)
    values = {
        "dists": dist_map,
        "torch_build": tb,
        "driver": build.driver(acc),
        "gpus": gpu_list,
        "amd_gpus": build.amd_gpus(acc),
        "python_info": build.python_info(acc),
        "os_release": build.os_release(acc),
        "torch_runtime": build.torch_runtime(acc, tb, gpu_list),
        "cuda_toolkit": build.cuda_toolkit(acc),
        "triton_pkg": build.triton_pkg(acc, dist_map),
        "torch_extensions": build.extensions_needing_cuda(acc),
        "env_vars": dict(acc.env_vars) or None,
        "fabric_state": dict(acc.fabric) or None,
    }
    if gpu_list is not None and "CUDA_VISIBLE_DEVICES" not in acc.env_vars:
        values["visible_gpus"] = [dict(g) for g in gpu_list]  # unset: CUDA sees every GPU
    if dist_map and "torch-xla" in dist_map:
        values["torch_xla"] = dict(dist_map["torch-xla"])
    for name, value in values.items():
        if value is not None:
            facts[name] = value
    for name, value in acc.whole.items():  # envdoctor's own report: its facts win whole
        facts[name] = _mark(name, copy.deepcopy(value))
    return facts


# Facts that map names to entries (packages, variables, bus ids): a "source" key there would
# read as one more package or variable, so they stay untagged (dists entries carry it instead).
KEYED_FACTS = {"dists", "env_vars", "fabric_state", "ldconfig"}


def _mark(name: str, value: Any) -> Any:
    """Tag a fact from a pasted report as pasted, where the shape has room for a tag."""
    if name == "dists" and isinstance(value, dict):
        for entry in value.values():
            if isinstance(entry, dict):
                entry["source"] = "pasted"
    elif isinstance(value, dict) and name not in KEYED_FACTS:
        value["source"] = "pasted"
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                item["source"] = "pasted"
    return value


def _missing(acc: Acc, facts: dict[str, Any]) -> None:
    if "driver" not in facts:
        acc.want("driver", "gpus")
    elif "gpus" not in facts:
        acc.want("gpus")
    if "torch_build" not in facts and "dists" not in facts:
        acc.want(*COLLECT_ENV_FACTS)
    if not acc.errors and not acc.kinds:
        acc.want(*COLLECT_ENV_FACTS, text="the error message or traceback, and python -m torch.utils.collect_env output")


# the accumulator's short names -> the fact names checks know
FACT_NAMES = {"torch": "torch_build", "os": "os_release", "python": "python_info", "runtime": "torch_runtime", "env": "env_vars"}


def _fact_key(key: str) -> str:
    head, dot, rest = key.partition(".")
    return FACT_NAMES.get(head, head) + dot + rest


def read_paste(text: str) -> Paste:
    """Every reader over ``text``; never raises."""
    acc = Acc()
    try:
        if not isinstance(text, str):
            text = bytes(text).decode("utf-8", "replace") if isinstance(text, (bytes, bytearray)) else str(text)
        if len(text) > MAX_INPUT:
            acc.note(f"the paste is {len(text) // (1 << 20)} MiB; only the first {MAX_INPUT >> 20} MiB were read")
            text = text[:MAX_INPUT]
        _read_all(text, acc)
        facts = _facts(acc)
        _missing(acc, facts)
    except Exception as e:  # noqa: BLE001 - a paste is arbitrary text; a reader bug must not stop triage
        acc.note(f"the paste could not be read completely ({type(e).__name__}: {str(e)[:200]})")
        facts = {}
    evidence = {_fact_key(k): v for k, v in acc.evidence.items() if "@" not in k}
    return Paste(facts, tuple(acc.kinds), evidence, tuple(acc.missing), tuple(acc.notes), tuple(acc.errors), dict(acc.unavailable))
