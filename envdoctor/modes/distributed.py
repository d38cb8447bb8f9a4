"""Distributed mode: ``envdoctor check --distributed``, run once per rank under an existing launcher.

We never launch anything ourselves: ``torchrun``, Slurm's ``srun`` or a Kubernetes indexed Job
starts one envdoctor per rank, and :func:`detect_launch` reads what that launcher put in the
environment. Each rank then runs two sessions side by side:

* the *local* checks (whatever ``--select``/profile chose, minus the ``distributed`` ones), and
* the ``distributed.*`` checks, whose probe child imports torch, joins the rendezvous at once
  (so rank 0 can tell a slow rank from a dead one by its heartbeat), waits for this rank's local
  report (handed over in a file, because the orchestrating process never imports torch), posts
  it to rank 0 through the launcher's TCPStore, and then runs the collectives.

Rank 0 merges everything into one report: each local check once, with the ranks where it did
not pass as items (``rank 1 @ node-b``), the ranks that never answered, and the ``distributed``
rows (rendezvous, all-reduce correctness, bandwidth). The other ranks print a one-line summary
and exit 0 once their report is delivered: under torchrun, one worker's non-zero exit makes the
agent stop every other worker, which would kill rank 0 before it writes the combined report.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from envdoctor.core.api import ACTIONS, Item, Status
from envdoctor.core.launch import NOT_LAUNCHED, Launch, detect_launch, launcher_name
from envdoctor.core.limits import DEFAULT_RANK_TIMEOUT, distributed_budget
from envdoctor.core.plan import DISTRIBUTED_TAG, RunPlan
from envdoctor.core.report import CheckOutcome, Report, rank_summaries
from envdoctor.core.runner import Progress
from envdoctor.core.session import execute

TAG = DISTRIBUTED_TAG
FACT_LAUNCH = "dist_launch"
FACT_COLLECTIVE = "dist_collective"
__all__ = ["DEFAULT_RANK_TIMEOUT", "Launch", "detect_launch", "execute_distributed"]

# -- what each rank sends to rank 0 ------------------------------------------------------------


def rank_summary(report: Report, launch: Launch) -> dict[str, Any]:
    """The compact form of one rank's local report that travels to rank 0: every verdict, and the
    facts a fleet must agree on (not the whole fact dump, which would be N copies of a big dict)."""
    from envdoctor.core.report import to_dict
    from envdoctor.core.stack import extract_facts

    full = to_dict(report)
    keep = ("id", "title", "status", "message", "hint", "tags", "source", "action")
    return {
        "rank": launch.rank,
        "local_rank": launch.local_rank,
        "host": str(report.platform.get("hostname", "?")),
        "counts": report.counts(),
        "interrupted": report.interrupted,
        "timed_out": report.timed_out,
        "duration_s": round(report.duration, 2),
        "results": [{k: r[k] for k in keep if k in r} for r in full["results"]],
        "fleet": extract_facts(full["facts"], full.get("platform")),
    }


# -- merging the ranks' verdicts ----------------------------------------------------------------


def _label(rank: int, host: str) -> str:
    return f"rank {rank} @ {host}"


def _action_of(row: Mapping[str, Any]) -> str:
    """The action a rank's row recommended ("" from an older rank: derived again here)."""
    action = row.get("action")
    return action if action in ACTIONS else ""


def _ranks_text(ranks: Sequence[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def merge_results(summaries: Mapping[int, Mapping[str, Any]]) -> list[CheckOutcome]:
    """Each local check once. Where the ranks agree the row reads as on one machine; where they
    do not, the row takes the worst status and lists each rank that differs from the majority."""
    by_id: dict[str, dict[int, Mapping[str, Any]]] = {}
    order: list[str] = []
    for rank in sorted(summaries):
        for row in summaries[rank].get("results", ()):
            if row["id"] not in by_id:
                by_id[row["id"]] = {}
                order.append(row["id"])
            by_id[row["id"]][rank] = row
    merged: list[CheckOutcome] = []
    for cid in order:
        rows = by_id[cid]
        first = rows[min(rows)]
        statuses = {r: Status(row["status"]) for r, row in rows.items()}
        worst = max(statuses.values(), key=lambda s: s.severity)
        common, _ = Counter((row["status"], row["message"]) for row in rows.values()).most_common(1)[0]
        odd = [r for r, row in sorted(rows.items()) if (row["status"], row["message"]) != common or statuses[r].severity > 0]
        base = CheckOutcome(
            id=cid,
            title=str(first.get("title", cid)),
            status=worst,
            message=str(first.get("message", "")),
            hint=str(first.get("hint", "")),
            tags=tuple(first.get("tags", ())),
            source=str(first.get("source", "")),
            action=_action_of(first),
        )
        if not odd:
            merged.append(base)
            continue
        bad = [r for r in sorted(rows) if statuses[r] is worst]
        lead = rows[bad[0]]
        hosts = sorted({str(summaries[r].get("host", "?")) for r in bad})
        what = {Status.FAIL: "failed", Status.ERROR: "errored", Status.WARN: "warned", Status.SKIP: "skipped", Status.PASS: "passed"}[worst]
        message = f"{what} on {_ranks_text(bad)} of {len(rows)} ({', '.join(hosts)}): {lead.get('message', '')}"
        items = tuple(Item(_label(r, str(summaries[r].get("host", "?"))), statuses[r], str(rows[r].get("message", ""))) for r in odd)
        merged.append(replace(base, message=message, hint=str(lead.get("hint", "")) or base.hint, items=items, action=_action_of(lead)))
    return merged


def _rank_table(collective: Mapping[str, Any], summaries: Mapping[int, Mapping[str, Any]]) -> list[dict[str, Any]]:
    table = []
    for key, info in sorted((collective.get("ranks") or {}).items(), key=lambda kv: int(kv[0])):
        rank = int(key)
        s = summaries.get(rank) or {}
        failing = [
            {"id": r["id"], "status": r["status"], "message": r["message"]}
            for r in s.get("results", ())
            if r["status"] in ("fail", "error") or r["status"] == "warn"
        ]
        table.append(
            {
                "rank": rank,
                "host": info.get("host") or s.get("host"),
                "local_rank": info.get("local_rank", s.get("local_rank")),
                "state": info.get("state"),
                "note": info.get("note", ""),
                "counts": s.get("counts"),
                "failing": failing,
                "collective": info.get("collective"),
                "fleet": s.get("fleet"),
            }
        )
    return table


def combine(local: Report, dist: Report, launch: Launch) -> Report:
    """Rank 0's report for the whole job."""
    collective = dist.facts.get(FACT_COLLECTIVE)
    collective = collective if isinstance(collective, dict) and "ranks" in collective else {}
    summaries, unreadable = rank_summaries(collective.get("reports"))  # other machines' data: checked first
    if not summaries:
        summaries = {launch.rank: rank_summary(local, launch)}
    results = merge_results(summaries) + unreadable + list(dist.results)
    hosts = sorted({str(s.get("host", "?")) for s in summaries.values()})
    table = _rank_table(collective, summaries)
    slim = {k: v for k, v in collective.items() if k not in ("reports", "ranks")}
    facts = dict(local.facts)
    facts["distributed"] = {"launch": launch.as_dict(), **slim, "ranks": table}
    platform = dict(local.platform)
    platform["summary"] = (
        f"{launch.world_size} ranks on {len(hosts)} host{'s' if len(hosts) != 1 else ''} ({launcher_name(launch)}); "
        f"rank 0: {local.platform.get('summary', '')}"
    )
    return Report(
        tool_version=local.tool_version,
        started_at=local.started_at,
        duration=max(local.duration, dist.duration),
        platform=platform,
        results=tuple(results),
        facts=facts,
        options={**dict(local.options), "distributed": True},
        interrupted=local.interrupted or dist.interrupted,
        timed_out=local.timed_out or dist.timed_out,
    )


def own_report(local: Report, dist: Report) -> Report:
    """A non-coordinator's view: its local checks and its side of the collectives."""
    facts = {**dict(local.facts), **{k: v for k, v in dist.facts.items() if k != FACT_COLLECTIVE}}
    facts[FACT_COLLECTIVE] = dist.facts.get(FACT_COLLECTIVE)
    return replace(
        local,
        results=tuple(local.results) + tuple(dist.results),
        facts=facts,
        options={**dict(local.options), "distributed": True},
        interrupted=local.interrupted or dist.interrupted,
        timed_out=local.timed_out or dist.timed_out,
    )


# -- running ------------------------------------------------------------------------------------


def one_line(report: Report) -> str:
    """The line a rank other than 0 prints (its verdict is in rank 0's report); made from the
    protected report, so ``--redact`` hides the host here too."""
    worker = report.worker or {}
    delivered = bool(worker.get("delivered"))
    c = report.counts()
    collective = report.facts.get(FACT_COLLECTIVE)
    if not delivered:
        state = "LOST rank 0, so no combined report covers this rank"
    elif isinstance(collective, dict) and "ranks" in collective:
        state = "rank 0 writes the combined report"
    else:
        why = collective.get("error") or collective.get("unavailable") if isinstance(collective, dict) else None
        state = f"its distributed probe failed ({why or 'no result'}); rank 0 reports this rank as not answering"
    return (
        f"envdoctor rank {worker.get('rank')}/{worker.get('world_size')} on {report.platform.get('hostname', '?')}: "
        f"{c['pass']} passed, {c['warn']} warned, {c['fail']} failed, {c['error']} errors; {state}"
    )


def execute_distributed(plan: RunPlan, *, progress: Progress | None = None, env: Mapping[str, str] | None = None) -> Report:
    """The distributed executor: this rank's part of the job, as one Report (core.session.run
    calls it for a plan with a launch, as it calls session.execute for one without). Rank 0's
    report covers the whole job; another rank's carries ``worker`` (delivered or not, its one line)."""
    from envdoctor.core.redact import scrub_report

    launch = plan.launch
    if launch is None:
        raise ValueError("execute_distributed needs a plan with a launch")
    env = dict(os.environ if env is None else env)
    handoff_dir = tempfile.mkdtemp(prefix="envdoctor-dist-")
    handoff = os.path.join(handoff_dir, "report.json")
    cfg = {"handoff": handoff, "rank_timeout": plan.rank_timeout, "local_timeout": plan.timeout}
    budget = distributed_budget(plan.timeout, plan.rank_timeout)
    dist_plan = replace(plan, specs=plan.dist_specs, select=(), deselect=(), timeout=budget, extra={**dict(plan.extra), "distributed": cfg})
    box: dict[str, Report] = {}

    def run_dist() -> None:
        box["dist"] = execute(dist_plan, env=env)

    # Daemon: if this process is interrupted, the probe child notices its parent is gone and exits.
    worker = threading.Thread(target=run_dist, name="envdoctor-distributed", daemon=True)
    worker.start()
    try:
        local = execute(plan, progress=progress, env=env)
        # The summary leaves this process for rank 0: scrubbed here, against this rank's secrets.
        _write_handoff(handoff, rank_summary(scrub_report(local, env), launch))
        while worker.is_alive():
            worker.join(0.2)
    finally:
        _remove(handoff, handoff_dir)
    dist = box.get("dist") or replace(local, results=(), facts={})
    if launch.coordinator:
        return combine(local, dist, launch)
    collective = dist.facts.get(FACT_COLLECTIVE)
    delivered = not (isinstance(collective, dict) and collective.get("coordinator_lost"))
    worker_info = {"rank": launch.rank, "world_size": launch.world_size, "delivered": delivered}
    return replace(own_report(local, dist), worker=worker_info)


def _remove(path: str, directory: str) -> None:
    for fn, p in ((os.unlink, path), (os.rmdir, directory)):
        try:
            fn(p)
        except OSError:
            pass


def _write_handoff(path: str, summary: Mapping[str, Any]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(summary, f, default=str)
    os.replace(tmp, path)


# -- the CLI's view ----------------------------------------------------------------------------


def launch_for_cli(env: Mapping[str, str], paths: Sequence[str | None]) -> tuple[Launch, list[str | None]]:
    """This rank's launch and its report paths (see :meth:`Launch.format_path`); ValueError when
    envdoctor was not started by a launcher, so ``--distributed`` cannot work."""
    import socket

    launch = detect_launch(env)
    if launch is None:
        raise ValueError(f"--distributed: {NOT_LAUNCHED}; see docs/fleet.md")
    if launch.problems:
        raise ValueError(f"--distributed: {launcher_name(launch)} variables are inconsistent: {'; '.join(launch.problems)}")
    host = socket.gethostname()
    return launch, [launch.format_path(p, host) for p in paths]
