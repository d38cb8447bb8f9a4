"""Prometheus text exposition (format 0.0.4) of a report, for node_exporter's textfile collector
(``envdoctor check --textfile DIR``) or any scraper (``--format prometheus``).

Every series is a gauge (a textfile holds no counters: each run replaces the file). The scheme,
documented in docs/fleet.md:

- ``envdoctor_last_run_timestamp_seconds``, ``envdoctor_last_run_duration_seconds``,
  ``envdoctor_healthy`` (the verdict: 1 healthy, 0 not), ``envdoctor_checks{status}`` (counts);
- ``envdoctor_check_status{check, area, status}``: one sample per check and per status, 1 for
  the row's status and 0 for the four others (as kube-state-metrics' phases), so an alert is
  ``envdoctor_check_status{status="fail"} == 1`` and "could not judge" is ``status="error"``,
  never confused with a failure;
- ``envdoctor_check_action{check, action}`` 1 for each warn/fail row's recommended action;
- per GPU, labelled as dcgm-exporter labels its series (``gpu``, ``UUID``, ``device``,
  ``Hostname``, ``pci_bus_id``; the model is on ``envdoctor_gpu_info``) so ``on(UUID)`` joins them with DCGM_FI_*: ECC
  counts, remapped rows, Xid count since boot and the last Xid, PCIe link generation and width
  (current and maximum), the clock-event (throttle) reason bits, NVML's recovery action;
- ``envdoctor_info{version, schema_version, python, torch, triton, driver, cuda}`` 1 (a gauge
  named ``_info``: node_exporter rejects ``# TYPE x info``).

Label values are scrubbed with the report boundary's scrubber (again: a reporter may be given a
report from anywhere) and escaped as the format says (backslash, double quote, newline).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from envdoctor.core.api import Status
from envdoctor.core.names import TRITON_DISTS
from envdoctor.core.report import Report, verdict

PREFIX = "envdoctor_"
STATUSES = tuple(s.value for s in Status)
_PCI = re.compile(r"^(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})(?:\.[0-7])?$")


def escape(value: str) -> str:
    """A label value as the exposition format writes it."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class _Out:
    """Families in first-use order, each with its HELP and TYPE once and all its samples together
    (the format requires it); label values scrubbed and escaped."""

    def __init__(self) -> None:
        from envdoctor.core.scrub import scrubber

        self._scrub = scrubber().text
        self._families: dict[str, tuple[str, list[str]]] = {}

    def family(self, name: str, help_text: str) -> None:
        self._families.setdefault(name, (help_text, []))

    def sample(self, name: str, value: float, labels: Mapping[str, Any] | None = None) -> None:
        text = ",".join(f'{k}="{escape(self._scrub(str(v)))}"' for k, v in (labels or {}).items() if v is not None)
        self._families[name][1].append(f"{PREFIX}{name}{{{text}}} {_number(value)}" if text else f"{PREFIX}{name} {_number(value)}")

    def text(self) -> str:
        lines = []
        for name, (help_text, samples) in self._families.items():
            lines += [f"# HELP {PREFIX}{name} {help_text}", f"# TYPE {PREFIX}{name} gauge", *samples]
        return "\n".join(lines) + "\n"


def _number(value: float) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def _timestamp(started_at: str) -> float | None:
    try:
        return datetime.fromisoformat(started_at).timestamp()
    except (TypeError, ValueError):
        return None


def _run(out: _Out, report: Report, strict: bool) -> None:
    ts = _timestamp(report.started_at)
    if ts is not None:
        out.family("last_run_timestamp_seconds", "Unix time the last envdoctor run started.")
        out.sample("last_run_timestamp_seconds", round(ts, 3))
    out.family("last_run_duration_seconds", "Wall time of the last envdoctor run.")
    out.sample("last_run_duration_seconds", round(report.duration, 3))
    out.family("healthy", "1 when the last run's verdict is healthy (no fail and no error; warnings allowed unless --strict).")
    out.sample("healthy", verdict(report, strict).healthy)
    out.family("run_interrupted", "1 when the last run was interrupted or stopped at --timeout (its report is partial).")
    out.sample("run_interrupted", report.interrupted or report.timed_out)
    out.family("checks", "Number of checks per status in the last run (error: envdoctor could not judge).")
    for status, n in report.counts().items():
        out.sample("checks", n, {"status": status})


def _checks(out: _Out, report: Report) -> None:
    out.family("check_status", "1 for the check's status in the last run, 0 for the others; error means could not judge.")
    for r in report.results:
        for status in STATUSES:
            out.sample("check_status", r.status.value == status, {"check": r.id, "area": r.area, "status": status})
    out.family("check_action", "1 for the recommended action of each warn/fail check (docs/json-schema.md).")
    for r in report.results:
        if r.recommended != "none":
            out.sample("check_action", 1, {"check": r.id, "action": r.recommended, "severity": r.status.value})


def _pci_key(bus_id: Any) -> str | None:
    m = _PCI.match(str(bus_id or "").strip())
    if not m:
        return None
    return f"{int(m.group(1) or '0', 16):04x}:{int(m.group(2), 16):02x}:{int(m.group(3), 16):02x}"


def _gpu_labels(g: Mapping[str, Any], listed: Mapping[Any, Mapping[str, Any]], host: str) -> dict[str, Any]:
    """dcgm-exporter's label names, so ``on(UUID)`` or ``on(Hostname, gpu)`` joins with DCGM_FI_*.
    Its ``modelName`` is left out: promtool's lint refuses camelCase label names (exit 3); the
    model is ``model_name`` on envdoctor_gpu_info, or ``group_left(modelName)`` from DCGM."""
    other = listed.get(g.get("index")) or {}
    minor = g.get("minor_number", other.get("minor_number"))
    return {
        "gpu": g.get("index"),
        "UUID": g.get("uuid") or other.get("uuid"),
        "device": f"nvidia{minor}" if minor is not None else None,
        "Hostname": host,
        "pci_bus_id": g.get("pci_bus_id") or other.get("pci_bus_id"),
    }


_GPU_HELP = {
    "gpu_info": "One per GPU envdoctor examined, with its model (value always 1).",
    "gpu_ecc_errors": "Uncorrectable/corrected ECC error counts (counter: volatile since the driver loaded, aggregate lifetime).",
    "gpu_remapped_rows": "Rows remapped for correctable/uncorrectable errors.",
    "gpu_row_remap_pending": "1 when a row remap waits for a GPU reset.",
    "gpu_row_remap_failure": "1 when a row remap failed (the memory can no longer be repaired).",
    "gpu_recovery_action": "NVML's recovery action (NVML_GPU_RECOVERY_ACTION_*: 0 none, 1 GPU reset, 2 node reboot, 3/4 drain).",
    "gpu_pcie_link_gen": "PCIe link generation (current: a busy GPU below max is degraded; an idle one downshifts).",
    "gpu_pcie_link_width": "PCIe link width in lanes.",
    "gpu_clocks_event_reasons": "NVML clock-event (throttle) reason bits, as DCGM_FI_DEV_CLOCK_THROTTLE_REASONS.",
    "gpu_xid_errors": "Xid errors of this GPU in the kernel log since boot.",
    "gpu_last_xid": "The last Xid code of this GPU since boot (0: none), as DCGM_FI_DEV_XID_ERRORS.",
}


def _family(out: _Out, name: str) -> str:
    out.family(name, _GPU_HELP[name])
    return name


def _gpu_nvml(out: _Out, g: Mapping[str, Any], labels: dict[str, Any]) -> None:
    ecc = g.get("ecc") or {}
    for counter in ("volatile", "aggregate"):
        for kind, n in sorted((ecc.get(counter) or {}).items()):
            if isinstance(n, int):
                out.sample(_family(out, "gpu_ecc_errors"), n, {**labels, "error_type": kind, "counter": counter})
    rows = g.get("remapped_rows") or {}
    for kind in ("correctable", "uncorrectable"):
        if isinstance(rows.get(kind), int):
            out.sample(_family(out, "gpu_remapped_rows"), rows[kind], {**labels, "error_type": kind})
    for key, name in (("pending", "gpu_row_remap_pending"), ("failure", "gpu_row_remap_failure")):
        if key in rows:
            out.sample(_family(out, name), bool(rows[key]), labels)
    if isinstance(g.get("recovery_action"), int):
        out.sample(_family(out, "gpu_recovery_action"), g["recovery_action"], labels)
    pcie = g.get("pcie") or {}
    for key, name, which in (("gen", "gpu_pcie_link_gen", "current"), ("max_gen", "gpu_pcie_link_gen", "max")):
        if isinstance(pcie.get(key), int):
            out.sample(_family(out, name), pcie[key], {**labels, "link": which})
    for key, which in (("width", "current"), ("max_width", "max")):
        if isinstance(pcie.get(key), int):
            out.sample(_family(out, "gpu_pcie_link_width"), pcie[key], {**labels, "link": which})
    if isinstance(g.get("clocks_event_reasons"), int):
        out.sample(_family(out, "gpu_clocks_event_reasons"), g["clocks_event_reasons"], labels)


def _xids(log: Mapping[str, Any]) -> dict[str | None, tuple[int, int]]:
    """{PCI key: (events since boot, last code)}; a compacted run counts its ``repeated`` ones."""
    out: dict[str | None, tuple[int, int]] = {}
    for e in log.get("events") or ():
        if not isinstance(e, Mapping) or not isinstance(e.get("code"), int):
            continue
        key = _pci_key(e.get("pci"))
        n, _ = out.get(key, (0, 0))
        out[key] = (n + 1 + int(e.get("repeated") or 0), e["code"])
    return out


def _gpus(out: _Out, report: Report) -> None:
    health = report.facts.get("gpu_health")
    if not isinstance(health, Mapping) or not isinstance(health.get("nvml"), Mapping):
        return
    listed = {g.get("index"): g for g in report.facts.get("gpus") or () if isinstance(g, Mapping)}
    host = str(report.platform.get("hostname", ""))
    log = v if isinstance(v := health.get("kernel_log"), Mapping) else {}
    readable = bool(log) and not log.get("reason")
    xids = _xids(log) if readable else {}
    for g in health["nvml"].get("gpus") or ():
        if not isinstance(g, Mapping):
            continue
        labels = _gpu_labels(g, listed, host)
        out.sample(_family(out, "gpu_info"), 1, {**labels, "model_name": g.get("name") or (listed.get(g.get("index")) or {}).get("name")})
        _gpu_nvml(out, g, labels)
        if readable:  # an unreadable log (not root) is no count at all, not a zero
            n, last = xids.get(_pci_key(g.get("pci_bus_id")), (0, 0))
            out.sample(_family(out, "gpu_xid_errors"), n, labels)
            out.sample(_family(out, "gpu_last_xid"), last, labels)


def _versions(report: Report) -> dict[str, Any]:
    facts = report.facts
    dists = v if isinstance(v := facts.get("dists"), Mapping) else {}
    driver = v if isinstance(v := facts.get("driver"), Mapping) else {}
    build = v if isinstance(v := facts.get("torch_build"), Mapping) else {}

    def version(*names: str) -> str | None:
        return next((str(d["version"]) for n in names if isinstance(d := dists.get(n), Mapping) and d.get("version")), None)

    return {
        "version": report.tool_version,
        "schema_version": report.schema_version,
        "python": report.platform.get("python"),
        "torch": build.get("version") or version("torch"),
        "torch_cuda": build.get("cuda"),
        "triton": version(*TRITON_DISTS),
        "driver": driver.get("version"),
        "driver_cuda": driver.get("cuda_version"),
        "Hostname": report.platform.get("hostname"),
    }


def render_prometheus(report: Report, *, verbose: bool = False, color: bool = False, strict: bool = False) -> str:
    out = _Out()
    _run(out, report, strict)
    _checks(out, report)
    _gpus(out, report)
    out.family("info", "Versions of envdoctor and of the stack it examined (value always 1).")
    out.sample("info", 1, _versions(report))
    return out.text()
