"""What changed between two reports: the model of ``envdoctor diff`` and the comparison.

For migrations ("we moved to the new image and compile is slower / triton broke"): the versions
of the stack, every installed distribution (compiled ones flagged), the GPUs, measured numbers,
and the checks whose verdict moved. Regressions (exit 1) are checks that fail in B and did not
in A (by ``envdoctor check``'s own rule: fail and error, warn too under --strict) or no longer
run, components lost (a GPU, the driver, CUDA in torch, torch, Triton, torch_xla) and numbers
worse than the noise of a run explains; each names the changes on a path to it
(``envdoctor.core.regressions``). The reports are read through the typed stack accessor,
leniently, so a report from another schema version is compared on the fields both have.
Rendering is ``envdoctor.reporters.diff``; the command, ``envdoctor.commands.diff``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from envdoctor.core.regressions import (
    GPU_FACTS,
    ROW_FACTS,
    Changed,
    Dependencies,
    Metric,
    Regression,
    causes_for,
    compare_numbers,
    installed_dependencies,
    lost_components,
    lost_gpus,
)
from envdoctor.core.report import SCHEMA_VERSION, failing
from envdoctor.core.stack import ABSENT, UNKNOWN, Distribution, Stack, from_facts, missing_reason

DIFF_SCHEMA_VERSION = "1.2"  # 1.2: metrics say what was judged (source, cpu, judged)


# ------------------------------------------------------------------ the diff


@dataclass(frozen=True)
class Change:
    name: str
    a: Any
    b: Any


@dataclass(frozen=True)
class DistChange:
    name: str
    a: str  # version in A ("" if not installed there)
    b: str
    compiled: bool  # ships compiled extensions (an ABI break shows as "undefined symbol" at import)
    compiled_from: str  # "record" (the report's dists fact says so) or "name" (a well-known compiled package)


@dataclass(frozen=True)
class CheckMove:
    id: str
    title: str
    a: str  # status in A ("" if absent)
    b: str
    message: str  # B's message (A's for a check only in A)
    hint: str = ""


@dataclass
class Diff:
    a_name: str
    b_name: str
    a_meta: dict[str, Any]
    b_meta: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    versions: list[Change] = field(default_factory=list)
    gpus_added: list[dict[str, Any]] = field(default_factory=list)
    gpus_removed: list[dict[str, Any]] = field(default_factory=list)
    gpus_changed: list[Change] = field(default_factory=list)
    env_changed: list[Change] = field(default_factory=list)
    regressed: list[CheckMove] = field(default_factory=list)
    recovered: list[CheckMove] = field(default_factory=list)
    changed: list[CheckMove] = field(default_factory=list)  # same severity, other status (pass <-> skip)
    only_a: list[CheckMove] = field(default_factory=list)
    only_b: list[CheckMove] = field(default_factory=list)
    not_compared: list[str] = field(default_factory=list)
    dists_added: list[DistChange] = field(default_factory=list)
    dists_removed: list[DistChange] = field(default_factory=list)
    dists_changed: list[DistChange] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    regressions: list[Regression] = field(default_factory=list)  # every regression: checks, lost components, numbers

    @property
    def identical(self) -> bool:
        return not any(
            (
                self.versions,
                self.dists_added,
                self.dists_removed,
                self.dists_changed,
                self.regressions,
                self.gpus_added,
                self.gpus_removed,
                self.gpus_changed,
                self.env_changed,
                self.regressed,
                self.recovered,
                self.changed,
                self.only_a,
                self.only_b,
            )
        )

    def to_dict(self) -> dict[str, Any]:
        def moves(xs: list[CheckMove]) -> list[dict[str, Any]]:
            return [asdict(x) for x in xs]

        def changes(xs: Sequence[Change | DistChange]) -> list[dict[str, Any]]:
            return [asdict(x) for x in xs]

        return {
            "kind": "envdoctor-diff",
            "schema_version": DIFF_SCHEMA_VERSION,
            "a": {"file": self.a_name, **self.a_meta},
            "b": {"file": self.b_name, **self.b_meta},
            "identical": self.identical,
            "regressions": len(self.regressions),
            "regression_list": [asdict(r) for r in self.regressions],
            "notes": list(self.notes),
            "versions": changes(self.versions),
            "distributions": {
                "added": changes(self.dists_added),
                "removed": changes(self.dists_removed),
                "changed": changes(self.dists_changed),
            },
            "metrics": [asdict(m) for m in self.metrics],
            "gpus": {"added": self.gpus_added, "removed": self.gpus_removed, "changed": changes(self.gpus_changed)},
            "environment": changes(self.env_changed),
            "checks": {
                "regressed": moves(self.regressed),
                "recovered": moves(self.recovered),
                "changed": moves(self.changed),
                "only_in_a": moves(self.only_a),
                "only_in_b": moves(self.only_b),
            },
            "not_compared": list(self.not_compared),
        }


def _meta(d: Mapping[str, Any]) -> dict[str, Any]:
    tool = v if isinstance(v := d.get("tool"), dict) else {}
    plat = v if isinstance(v := d.get("platform"), dict) else {}
    return {
        "schema_version": str(d.get("schema_version")),
        "tool_version": str(tool.get("version", "")),
        "started_at": str(d.get("started_at", "")),
        "host": str(plat.get("hostname", "")),
    }


GPU_FIELDS = ("name", "cc", "memory_total", "mig_mode", "persistence_mode", "compute_mode")


def _gpus(s: Stack) -> Any:
    return s.gpus if s.gpus is not None else [] if "gpus" in s.missing else UNKNOWN


def _compare_gpus(diff: Diff, sa: Stack, sb: Stack) -> None:
    ga, gb = _gpus(sa), _gpus(sb)
    if ga is UNKNOWN or gb is UNKNOWN:
        if ga is not gb:
            diff.not_compared.append("GPUs (gathered in one report only)")
        return
    # By index: on a new machine every UUID differs, yet "GPU 3 went from A100 to H200" is the news.
    ia, ib = {g.index: g for g in ga}, {g.index: g for g in gb}
    for i in sorted(set(ia) - set(ib), key=str):
        diff.gpus_removed.append({"index": i, "name": ia[i].name, "label": ia[i].label})
    for i in sorted(set(ib) - set(ia), key=str):
        diff.gpus_added.append({"index": i, "name": ib[i].name, "label": ib[i].label})
    uuid_changes = 0
    for i in sorted(set(ia) & set(ib), key=str):
        for f in GPU_FIELDS:
            x, y = getattr(ia[i], f), getattr(ib[i], f)
            if x not in (None, "") and y not in (None, "") and x != y:
                diff.gpus_changed.append(Change(f"GPU {i} {f}", x, y))
        if ia[i].uuid and ib[i].uuid and ia[i].uuid != ib[i].uuid:
            uuid_changes += 1
    if uuid_changes:
        diff.notes.append(f"{uuid_changes} GPU(s) have a different UUID: different physical devices")


def _compiled(d: Distribution) -> tuple[bool, str]:
    return d.has_extensions, "record" if d.compiled is not None else "name"


def _compare_dists(diff: Diff, sa: Stack, sb: Stack) -> None:
    """Every installed distribution, not only the stack's core: flash-attn, xformers, vllm,
    transformers changing under a migration is what breaks a user's model."""
    if sa.dists is None or sb.dists is None:
        if (sa.dists is None) != (sb.dists is None):
            diff.not_compared.append("installed distributions (recorded in one report only)")
        return
    for key in sorted(set(sa.dists) | set(sb.dists)):
        x, y = sa.dists.get(key), sb.dists.get(key)
        if x and y and x.version == y.version:
            continue
        either = y or x
        if either is None:  # (the key comes from one of the two)
            continue
        compiled, source = _compiled(either)
        change = DistChange(either.name, x.version if x else "", y.version if y else "", compiled, source)
        (diff.dists_changed if x and y else diff.dists_added if y else diff.dists_removed).append(change)


def _compare_env(diff: Diff, a: Mapping[str, Any], b: Mapping[str, Any]) -> None:
    ea, eb = (a.get("facts") or {}).get("env_vars"), (b.get("facts") or {}).get("env_vars")
    if not isinstance(ea, dict) or not isinstance(eb, dict) or missing_reason(ea) or missing_reason(eb):
        return
    for name in sorted(set(ea) | set(eb)):
        va, vb = ea.get(name, ABSENT), eb.get(name, ABSENT)
        if va != vb:
            diff.env_changed.append(Change(name, va, vb))


def _status(r: Mapping[str, Any]) -> str:
    return str(r.get("status", ""))


def _major(version: Any) -> int | None:
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        return None


def _schema_notes(diff: Diff, a: Mapping[str, Any], b: Mapping[str, Any]) -> None:
    va, vb = str(a.get("schema_version")), str(b.get("schema_version"))
    if va != vb:
        diff.notes.append(f"the reports use schema versions {va} and {vb}; compared what both record")
    ours = _major(SCHEMA_VERSION)
    for label, v in ((diff.a_name, va), (diff.b_name, vb)):
        if (_major(v) or 0) > (ours or 0):
            diff.notes.append(
                f"{label} uses schema {v}, newer than this envdoctor reads ({SCHEMA_VERSION}); upgrade envdoctor for a full comparison"
            )


def _compare_versions(diff: Diff, sa: Stack, sb: Stack) -> None:
    for (label, x), (_, y) in zip(sa.version_rows(), sb.version_rows(), strict=True):
        if x is UNKNOWN or y is UNKNOWN:
            known = y if x is UNKNOWN else x
            if known is not UNKNOWN and known != ABSENT:
                diff.not_compared.append(f"{label} (recorded in one report only)")
            continue
        if x != y:
            diff.versions.append(Change(label, x, y))


def _same_selection(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether both runs asked for the same checks (then a check missing from B was lost, not left out)."""
    oa, ob = a.get("options"), b.get("options")
    if not isinstance(oa, dict) or not isinstance(ob, dict):
        return False
    return all(oa.get(k) == ob.get(k) for k in ("profile", "select", "deselect"))


def _compare_checks(diff: Diff, a: Mapping[str, Any], b: Mapping[str, Any], strict: bool = False) -> None:
    """A check regressed when it fails in B and did not in A, by the rule ``envdoctor check``
    exits by (report.failing): pass -> skip or pass -> warn is a change, not a regression."""
    ra = {r["id"]: r for r in a.get("results", [])}
    rb = {r["id"]: r for r in b.get("results", [])}
    for cid, r in ra.items():
        if cid not in rb:
            diff.only_a.append(CheckMove(cid, str(r.get("title", cid)), _status(r), "", str(r.get("message", ""))))
    for cid, r in rb.items():
        move = CheckMove(
            cid, str(r.get("title", cid)), _status(ra.get(cid, {})), _status(r), str(r.get("message", "")), str(r.get("hint", ""))
        )
        if cid not in ra:
            diff.only_b.append(move)
            continue
        fa, fb = failing(move.a, strict), failing(move.b, strict)
        if fb and not fa:
            diff.regressed.append(move)
        elif fa and not fb:
            diff.recovered.append(move)
        elif move.a != move.b:
            diff.changed.append(move)


def _changes(diff: Diff) -> list[Changed]:
    """Every change that may cause a regression, in the order a migration note lists them."""
    out = []
    for c in diff.versions:
        facts, package = ROW_FACTS.get(c.name, ((), ""))
        out.append(Changed(f"{c.name} {_v(c.a)} → {_v(c.b)}", facts, package))
    shown = {ROW_FACTS.get(c.name, ((), ""))[1] or c.name for c in diff.versions}  # torch, triton, numpy: in the rows
    for dc in diff.dists_changed + diff.dists_added + diff.dists_removed:
        if _canon(dc.name) not in shown:
            text = f"{'compiled ' if dc.compiled else ''}{dc.name} {dc.a or '(none)'} → {dc.b or '(none)'}"
            out.append(Changed(text, package=_canon(dc.name), compiled=dc.compiled))
    gpus = len(diff.gpus_added) + len(diff.gpus_removed) + len(diff.gpus_changed)
    if gpus:
        out.append(Changed(f"GPUs changed ({gpus} change{'s' if gpus != 1 else ''})", GPU_FACTS))
    out += [Changed(f"{c.name} {_short(c.a, 40)} → {_short(c.b, 40)}", ("env_vars",), direct_only=True) for c in diff.env_changed]
    return out


def _collect_regressions(diff: Diff, a: Mapping[str, Any], b: Mapping[str, Any], sa: Stack, sb: Stack, deps: Dependencies) -> None:
    changed = _changes(diff)
    found = [*lost_gpus(diff.gpus_removed), *lost_components(sa, sb)]
    for m in diff.regressed:
        found.append(Regression("check", m.id, f"{m.id}: {m.a} → {m.b}: {m.message}", causes_for(m.id, changed, deps)))
    if _same_selection(a, b):
        for m in diff.only_a:
            if m.a == "pass":
                message = f"{m.id} passed in {diff.a_name} and did not run in {diff.b_name}"
                found.append(Regression("check", m.id, message, causes_for(m.id, changed, deps)))
    elif any(m.a == "pass" for m in diff.only_a):
        diff.notes.append(
            "the runs selected different checks (profile/--select/--deselect): checks missing from one report are not regressions"
        )
    for metric in diff.metrics:
        if metric.regressed:
            found.append(Regression("perf", metric.name, metric_line(metric), causes_for(metric.source, changed, deps)))
    diff.regressions = found


def compare(
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    a_name: str = "A",
    b_name: str = "B",
    *,
    strict: bool = False,
    deps: Dependencies | None = None,
) -> Diff:
    """``deps``: what the checks are derived from (default: the installed checks')."""
    diff = Diff(a_name, b_name, _meta(a), _meta(b))
    _schema_notes(diff, a, b)
    sa, sb = from_facts(a.get("facts"), a.get("platform")), from_facts(b.get("facts"), b.get("platform"))
    _compare_versions(diff, sa, sb)
    _compare_gpus(diff, sa, sb)
    _compare_dists(diff, sa, sb)
    _compare_env(diff, a, b)
    _compare_checks(diff, a, b, strict)
    diff.metrics = compare_numbers(a, b)
    _collect_regressions(diff, a, b, sa, sb, deps if deps is not None else installed_dependencies())
    return diff


# ------------------------------------------------------------------ how values read


def _num(x: float) -> str:
    return f"{x:,.1f}" if x < 100 else f"{x:,.0f}"


def metric_line(m: Metric) -> str:
    """``smoke.compile module time: 8.6 → 34.3 s (+299%; CPU 7.9 → 8.1 s, +3%)``."""
    cpu = f"; CPU {_num(m.cpu[0])} → {_num(m.cpu[1])} s, {m.judged:+.0%}" if m.cpu is not None else ""
    return f"{m.name}: {_num(m.a)} → {_num(m.b)} {m.unit} ({m.change:+.0%}{cpu})"


def _v(x: Any) -> str:
    return "(none)" if x in (None, ABSENT, "") else str(x)


def _short(x: Any, limit: int = 120) -> str:
    s = _v(x)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _canon(name: str) -> str:
    return {"torch-xla": "torch_xla"}.get(name.lower().replace("_", "-"), name.lower().replace("_", "-"))
