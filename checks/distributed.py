"""Multi-rank checks under an existing launcher (torchrun, Slurm srun, a Kubernetes indexed Job).

Opt-in (tag ``distributed``): ``envdoctor check --distributed`` runs them on every rank next to
the local checks and has rank 0 write one report for the job (see envdoctor/modes/distributed.py and
docs/fleet.md). They answer what a multi-node job hits first:

* a rank that never comes up or dies: everyone else hangs in ``init_process_group`` until
  ``torch.distributed.DistBackendError: ... Timed out`` (or NCCL's watchdog:
  ``Watchdog caught collective operation timeout``) with no word on *which* rank;
* an all-reduce that returns wrong numbers (a faulty NVLink/NIC or a broken NCCL install);
* one slow link or NIC that drags every collective down to its speed.
"""

from __future__ import annotations

from envdoctor import (
    DEFAULT_RANK_TIMEOUT,
    LAUNCHER_NAMES,
    NOT_LAUNCHED,
    Item,
    Result,
    Status,
    Unavailable,
    check,
    detect_launch,
    distributed_budget,
    fact,
    fail,
    ok,
    skip,
    warn,
)

TAGS = ("distributed",)
# A link or rank this far below the median is a finding; collectives run at the slowest link.
SLOW_FRACTION = 0.5


@fact("dist_launch")
def dist_launch(env) -> dict:
    launch = detect_launch(env)
    if launch is None:
        raise Unavailable(NOT_LAUNCHED)
    return launch.as_dict()


@fact("dist_collective")
def dist_collective(dist_launch, probe, options) -> dict:
    if dist_launch["problems"]:
        raise Unavailable("the launcher's variables are inconsistent (see distributed.launch)")
    cfg = options.get("distributed") or {}
    rank_timeout = float(cfg.get("rank_timeout") or DEFAULT_RANK_TIMEOUT)
    local_timeout = float(cfg.get("local_timeout") or 0.0)
    return probe.call(
        "envdoctor_checks.bodies.distributed:session",
        {
            "launch": dist_launch,
            "handoff": cfg.get("handoff"),
            "rank_timeout": rank_timeout,
            "local_timeout": local_timeout,
            "backend": cfg.get("backend", "auto"),
        },
        fresh=True,
        timeout=distributed_budget(local_timeout, rank_timeout),
        what="the distributed probe (rendezvous and collectives)",
    )


@check("distributed.launch", tags=TAGS)
def launch(dist_launch) -> Result:
    """The launcher gave this rank a consistent place in the job"""
    d = dist_launch
    if d["problems"]:
        return fail(
            f"{launcher_name_of(d)} variables are inconsistent: {'; '.join(d['problems'])}",
            hint="Start envdoctor through the launcher itself (torchrun --nproc-per-node=N -m envdoctor check --distributed, "
            "or srun ... envdoctor check --distributed); for a Kubernetes indexed Job set WORLD_SIZE and MASTER_ADDR (docs/fleet.md).",
            details=d,
        )
    return ok(
        f"rank {d['rank']} of {d['world_size']} (local rank {d['local_rank']}) via {launcher_name_of(d)}; "
        f"rendezvous at {d['master_addr']}:{d['master_port']}",
        details=d,
    )


def launcher_name_of(d: dict) -> str:
    return LAUNCHER_NAMES.get(d.get("launcher", ""), str(d.get("launcher")))


def _ranks(collective: dict) -> dict[int, dict]:
    return {int(k): v for k, v in (collective.get("ranks") or {}).items()}


def _who(rank: int, info: dict) -> str:
    return f"rank {rank} @ {info.get('host') or 'unknown host'}"


@check("distributed.rendezvous", tags=TAGS)
def rendezvous(dist_collective) -> Result:
    """Every rank joined the rendezvous and sent its report to rank 0"""
    c = dist_collective
    if not c.get("coordinator"):
        if c.get("error"):
            return fail(
                f"rank {c['rank']} lost rank 0: {c['error']}",
                hint=f"Check that rank 0 is running and that {c.get('store', 'MASTER_ADDR:MASTER_PORT')} is reachable from "
                f"{c.get('host')} (firewall, wrong MASTER_ADDR); rank 0's own output says why it stopped.",
            )
        return ok(f"rank {c['rank']} joined {c.get('store')}; rank 0 writes the combined report")
    ranks = _ranks(c)
    missing = {r: i for r, i in ranks.items() if i.get("state") != "reported"}
    hosts = sorted({str(i["host"]) for i in ranks.values() if i.get("host")})
    if not missing:
        return ok(f"all {len(ranks)} ranks on {len(hosts)} host(s) joined and reported", details={"store": c.get("store")})
    items = [Item(_who(r, i), Status.FAIL, i.get("note", i.get("state", ""))) for r, i in sorted(missing.items())]
    first = min(missing)
    return fail(
        f"{len(missing)} of {len(ranks)} ranks did not answer: rank {first} {missing[first].get('note', '')}".rstrip(),
        hint="Look at those ranks' own output (under torchrun: --redirects 3 --log-dir DIR; Slurm: srun --output=%t.log); "
        "a rank that never joined usually crashed at start or runs on a node that cannot reach MASTER_ADDR.",
        items=items,
        details={"missing": sorted(missing)},
    )


def _members(c: dict) -> dict[int, dict]:
    return {r: i for r, i in _ranks(c).items() if (i.get("collective") or {}).get("member")}


@check("distributed.allreduce", tags=TAGS)
def allreduce(dist_collective) -> Result:
    """all-reduce returns the right sums on every rank"""
    c = dist_collective
    if c.get("coordinator_lost") or "members" not in c:
        return skip(f"not run: {c.get('error') or 'the collectives did not run'}")
    ranks = _ranks(c)
    backend = c.get("backend", "?")
    bad, items = [], []
    for r, info in sorted(ranks.items()):
        col = info.get("collective") or {}
        if not col:
            continue
        if col.get("error"):
            bad.append(r)
            items.append(Item(_who(r, info), Status.FAIL, col["error"]))
        elif col.get("allreduce_ok") is False:
            bad.append(r)
            items.append(Item(_who(r, info), Status.FAIL, f"wrong sums: {col.get('allreduce_error', '')}"))
    members = sorted(_members(c))
    if bad:
        first = next(i for i in items if i.name.startswith(f"rank {bad[0]} "))
        return fail(
            f"{backend} all-reduce failed on {len(bad)} of {len(ranks) if c.get('coordinator') else 1} rank(s): {first.name}: {first.message}",
            hint="Wrong sums point at a faulty GPU link or NCCL install; a timeout at a stuck or dead rank. "
            "Rerun with NCCL_DEBUG=INFO (and on GPUs `nvidia-smi topo -m`, `dcgmi diag -r 2`) on the named hosts.",
            items=items,
        )
    if not members:
        return skip("no rank took part in the collectives")
    where = f"{len(members)} ranks" if c.get("coordinator") else f"rank {c['rank']}"
    return ok(f"{backend} all-reduce of known values is exact on {where}")


def _fmt(gbs: float | None) -> str:
    return "?" if gbs is None else f"{gbs:.2f} GB/s"


@check("distributed.bandwidth", tags=TAGS)
def bandwidth(dist_collective) -> Result:
    """Bus bandwidth is even across ranks and links (no rank or link far below the others)"""
    c = dist_collective
    if not c.get("coordinator"):
        return skip("rank 0 compares the bandwidth of all ranks")
    members = {r: i["collective"] for r, i in _members(c).items() if not i["collective"].get("error")}
    if len(members) < 2:
        algbw = (members.get(0) or {}).get("algbw_gbs")
        extra = f" (all-reduce algorithm bandwidth {_fmt(algbw)})" if algbw is not None else ""
        return skip(f"bus bandwidth needs at least 2 ranks in the collectives, had {len(members)}{extra}")
    ranks = _ranks(c)
    backend = c.get("backend", "?")
    busbw = min(m["busbw_gbs"] for m in members.values() if m.get("busbw_gbs") is not None)
    links = {r: m["link_gbs"] for r, m in members.items() if m.get("link_gbs") is not None}
    import statistics  # here: `envdoctor list` loads this module and needs none of it

    median = statistics.median(links.values()) if links else None
    details = {"busbw_gbs": busbw, "links_gbs": {f"{m['link_from']}->{r}": m["link_gbs"] for r, m in members.items() if "link_gbs" in m}}
    # With two ranks both ring links join the same two hosts: there is no "other" to compare with.
    slow = {r: g for r, g in links.items() if median and len(links) >= 3 and g < SLOW_FRACTION * median}
    if slow:
        items = []
        for r, g in sorted(slow.items()):
            src = members[r]["link_from"]
            items.append(
                Item(
                    f"link {_who(src, ranks[src])} → {_who(r, ranks[r])}",
                    Status.WARN,
                    f"{_fmt(g)}, {g / median:.0%} of the median {_fmt(median)}",
                )
            )
        # A rank on every slow link is the likely culprit (a slow link shows on its two ends).
        ends = [{r, members[r]["link_from"]} for r in slow]
        common = set.intersection(*ends) if ends else set()
        culprit = f"; rank {min(common)} is on every slow link" if len(common) == 1 and len(slow) > 1 else ""
        return warn(
            f"{len(slow)} of {len(links)} {backend} links run far below the others: {items[0].name} at {items[0].message}{culprit}",
            hint="Collectives run at the slowest link. On the named hosts check the NIC/NVLink: `nvidia-smi topo -m`, "
            "`ibstat`, `nvidia-smi nvlink -s`; rerun with NCCL_DEBUG=INFO to see the transport NCCL chose.",
            items=items,
            details=details,
        )
    return ok(
        f"{backend} all-reduce bus bandwidth {_fmt(busbw)} over {len(members)} ranks; ring links {_fmt(min(links.values()))}–{_fmt(max(links.values()))}",
        details=details,
    )
