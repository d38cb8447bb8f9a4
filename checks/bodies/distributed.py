"""Probe body for the distributed checks: rendezvous, report exchange and collectives.

Runs in a probe child on every rank (the orchestrating process never imports torch). The ranks
talk through a ``TCPStore`` on MASTER_ADDR:MASTER_PORT (torchrun's agent store when torchrun
hosts one, else one hosted by rank 0), never through a collective until every rank is known to
be alive, so a rank that died or hangs is *named* after ``rank_timeout`` seconds instead of
hanging everyone at ``init_process_group``:

1. join: post ``alive/<rank>`` at once, then a heartbeat counter every second;
2. report: wait for this rank's local report (a file the parent writes), post ``report/<rank>``;
3. plan: rank 0 waits for each rank's report (a rank whose heartbeat stops for ``rank_timeout``
   or that never joined is given up on) and posts the members and the backend;
4. collectives among the members, in a thread with a deadline: all-reduce on known values,
   all-reduce bus bandwidth, and a send/recv ring that measures every neighbour link;
5. results: each member posts ``result/<rank>``; rank 0 gathers them and returns everything.

``ENVDOCTOR_TEST_FAULT=<what>@<rank>`` (tests only) injects a fault on one rank: ``exit`` (the
probe dies before joining), ``hang`` (it never joins), ``hang-collective`` (joins and reports,
then stalls instead of entering the collectives) or ``wrong-sum`` (adds 1 to its all-reduce input).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from datetime import timedelta

POLL = 0.2
BEAT = 1.0


def _fault(rank: int) -> str:
    spec = os.environ.get("ENVDOCTOR_TEST_FAULT", "")
    what, _, where = spec.partition("@")
    return what if where.strip() == str(rank) else ""


def _connect(addr: str, port: int, master: bool, timeout: float, prefix: str):
    from torch.distributed import PrefixStore, TCPStore

    t = timedelta(seconds=timeout)
    if master:
        store = TCPStore(addr, port, None, True, t, wait_for_workers=False, multi_tenant=True)
    else:
        store = TCPStore(addr, port, None, False, t)
    return PrefixStore(prefix, store)


def _has(store, key: str) -> bool:
    return bool(store.check([key]))


def _get_json(store, key: str):
    return json.loads(store.get(key).decode("utf-8"))


def _capabilities() -> dict:
    import torch
    import torch.distributed as dist

    cuda = bool(torch.cuda.is_available())
    return {
        "torch": torch.__version__,
        "cuda": cuda,
        "device_count": torch.cuda.device_count() if cuda else 0,
        "nccl": bool(dist.is_nccl_available()) and cuda,
        "gloo": bool(dist.is_gloo_available()),
    }


class _Heart:
    """Beats ``beat/<rank>`` on its own store connection; exits the child if the parent died
    (this child leads its own session, so nobody else would stop it)."""

    def __init__(self, connect, rank: int) -> None:
        self.store = connect()
        self.rank = rank
        self.parent = os.getppid()
        self.stop = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self.stop.is_set():
            if os.getppid() != self.parent:
                os._exit(0)
            try:
                self.store.add(f"beat/{self.rank}", 1)
            except Exception:  # noqa: BLE001 - the store went away; the main thread finds out
                return
            self.stop.wait(BEAT)


class _Watch:
    """Tracks other ranks' heartbeats; a rank is lost when its counter stops moving."""

    def __init__(self, store, timeout: float) -> None:
        self.store = store
        self.timeout = timeout
        self.seen: dict[int, tuple[int, float]] = {}

    def silent_for(self, rank: int) -> float:
        now = time.monotonic()
        value = int(self.store.add(f"beat/{rank}", 0))
        last = self.seen.get(rank)
        if last is None or last[0] != value:
            self.seen[rank] = (value, now)
            return 0.0
        return now - last[1]


def _read_handoff(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        return {"unreadable": f"{type(e).__name__}: {e}"}


def _wait_handoff(path: str | None, deadline: float) -> dict | None:
    """This rank's local report, written by the parent when its local checks are done."""
    while path:
        local = _read_handoff(path)
        if local is not None or time.monotonic() > deadline:
            return local
        time.sleep(POLL)
    return None


def _allreduce_correct(torch, dist, device, idx: int, world: int, n: int, fault: str, sync) -> dict:
    """All-reduce a known pattern; every element of the sum must be exact."""
    pattern = torch.arange(n, dtype=torch.float32, device=device) % 13
    x = pattern + idx
    if fault == "wrong-sum":
        x += 1
    dist.all_reduce(x)
    sync()
    # Small integers are exact in float32, so the sum must match bit for bit.
    expected = pattern * world + world * (world - 1) / 2
    bad = (x != expected).nonzero()
    out: dict = {"allreduce_ok": bad.numel() == 0}
    if bad.numel():
        i = int(bad[0, 0])
        out["allreduce_error"] = f"{bad.shape[0]} of {n} elements wrong; element {i} is {float(x[i]):g}, expected {float(expected[i]):g}"
    return out


def _allreduce_bandwidth(torch, dist, device, world: int, n: int, sync) -> dict:
    y = torch.ones(n, dtype=torch.float32, device=device)
    for _ in range(2):
        dist.all_reduce(y)
    sync()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        dist.all_reduce(y)
        sync()
        best = min(best, time.perf_counter() - t0)
    nbytes = n * 4
    return {
        "bytes": nbytes,
        "algbw_gbs": round(nbytes / best / 1e9, 3),
        # nccl-tests' convention: an all-reduce moves 2(n-1)/n of the data over each rank's link.
        "busbw_gbs": round(nbytes / best / 1e9 * 2 * (world - 1) / world, 3) if world > 1 else None,
    }


def _ring_bandwidth(torch, dist, device, idx: int, world: int, n: int, sync) -> dict:
    """Send to the next rank while receiving from the previous one: the link from ``prv`` to this rank."""
    send = torch.ones(n, dtype=torch.float32, device=device)
    recv = torch.empty(n, dtype=torch.float32, device=device)
    nxt, prv = (idx + 1) % world, (idx - 1) % world
    tick = torch.zeros(1, device=device)
    best = float("inf")
    for i in range(7):  # best of 6 timed transfers: robust to a busy host
        dist.all_reduce(tick)  # line the ranks up so each time is one transfer
        sync()
        t0 = time.perf_counter()
        ops = [dist.P2POp(dist.isend, send, nxt), dist.P2POp(dist.irecv, recv, prv)]
        for req in dist.batch_isend_irecv(ops):
            req.wait()
        sync()
        if i:
            best = min(best, time.perf_counter() - t0)
    return {"link_from": prv, "link_gbs": round(n * 4 / best / 1e9, 3)}


def _collective(
    backend: str, idx: int, world: int, local_rank: int, store, timeout: float, size_bytes: int, fault: str, phase: dict
) -> dict:
    import torch
    import torch.distributed as dist

    out: dict = {}
    if backend == "nccl":
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    out["device"] = str(device)

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    phase["now"] = "init_process_group"
    dist.init_process_group(backend, store=store, rank=idx, world_size=world, timeout=timedelta(seconds=timeout))
    try:
        n = max(1, size_bytes // 4)
        phase["now"] = "all_reduce (correctness)"
        out.update(_allreduce_correct(torch, dist, device, idx, world, n, fault, sync))
        phase["now"] = "all_reduce (bandwidth)"
        out.update(_allreduce_bandwidth(torch, dist, device, world, n, sync))
        if world > 1:
            phase["now"] = "send/recv ring"
            out.update(_ring_bandwidth(torch, dist, device, idx, world, n, sync))
        phase["now"] = "done"
    finally:
        if phase.get("now") == "done":
            dist.destroy_process_group()
    return out


def _run_collective(backend, idx, world, local_rank, store, timeout, size_bytes, fault) -> dict:
    if fault == "hang-collective":
        time.sleep(10 * timeout + 60)
    box: dict = {}
    phase = {"now": "starting"}

    def target() -> None:
        try:
            box["out"] = _collective(backend, idx, world, local_rank, store, timeout, size_bytes, fault, phase)
        except Exception as e:  # noqa: BLE001 - reported to rank 0 as this rank's result
            text = str(e).strip().splitlines()[0] if str(e).strip() else ""
            why = " (timed out waiting for the other ranks)" if "timeout" in text.lower() or "timed out" in text.lower() else ""
            box["error"] = f"{phase['now']} failed{why}: {type(e).__name__}: {text}"[:600]

    th = threading.Thread(target=target, daemon=True)
    th.start()
    # The backend's own timeout fires first; this bounds an op that ignores it (a stuck kernel).
    th.join(2 * timeout + 10)
    if th.is_alive():
        return {"error": f"stuck in {phase['now']} for more than {2 * timeout + 10:.0f}s"}
    if "error" in box:
        return {"error": box["error"]}
    return box["out"]


def session(
    launch: dict,
    handoff: str | None = None,
    rank_timeout: float = 120.0,
    local_timeout: float = 300.0,
    backend: str = "auto",
    size_mb: float | None = None,
) -> dict:
    rank, world = int(launch["rank"]), int(launch["world_size"])
    addr, port = str(launch["master_addr"]), int(launch["master_port"])
    host = socket.gethostname()
    fault = _fault(rank)
    if fault == "exit":
        os._exit(3)
    if fault == "hang":
        time.sleep(10 * rank_timeout + local_timeout)
    started = time.monotonic()
    caps = _capabilities()
    coordinator = rank == 0
    master = coordinator and not launch.get("agent_store")
    prefix = f"envdoctor/{launch.get('run_id', '')}/"
    where = f"{addr}:{port} ({'torchrun agent store' if launch.get('agent_store') else 'hosted by rank 0'})"
    me = {"host": host, "local_rank": int(launch.get("local_rank", 0)), "pid": os.getpid(), "caps": caps}
    result: dict = {"rank": rank, "world_size": world, "coordinator": coordinator, "store": where, "host": host, "error": None}

    def connect(as_master: bool = False):
        return _connect(addr, port, as_master, rank_timeout, prefix)

    try:
        store = connect(master)
        store.set(f"alive/{rank}", json.dumps(me))
        heart = _Heart(connect, rank)
    except Exception as e:  # noqa: BLE001
        result["error"] = f"could not reach the rendezvous store at {where} within {rank_timeout:.0f}s: {type(e).__name__}: {e}"
        result["coordinator_lost"] = not coordinator
        result["ranks"] = {str(rank): {**me, "state": "no-store"}}
        return result

    try:
        if coordinator:
            return _coordinate(store, result, me, world, handoff, rank_timeout, local_timeout, started, backend, size_mb, fault)
        return _member(store, result, me, rank, handoff, rank_timeout, local_timeout, started, size_mb, fault)
    finally:
        heart.stop.set()


def _choose_backend(requested: str, reports: dict[int, dict]) -> tuple[str, dict[int, str]]:
    """NCCL when rank 0 has a GPU (ranks without CUDA are left out and named), else gloo."""
    lead = reports[0]["caps"]
    if requested == "gloo" or (requested == "auto" and not lead["nccl"]):
        return "gloo", {r: "gloo is not available in this torch build" for r, m in reports.items() if not m["caps"]["gloo"]}
    out = {}
    for r, m in reports.items():
        if not m["caps"]["cuda"]:
            out[r] = "rank 0 uses NCCL, but torch.cuda.is_available() is False on this rank"
        elif not m["caps"]["nccl"]:
            out[r] = "rank 0 uses NCCL, but this rank's torch has no NCCL"
    return "nccl", out


def _gather_reports(store, ranks: dict[int, dict], me, world, handoff, rank_timeout, local_timeout, started) -> tuple[dict, dict]:
    """Post rank 0's own report, then wait for every rank's report or for the rank to be given up
    on; returns each reporting rank's ``me`` and local report."""
    reports: dict[int, dict] = {}
    blobs: dict[int, dict] = {}
    watch = _Watch(store, rank_timeout)
    posted = False
    # A live rank is waited for as long as its own local checks may take.
    report_deadline = time.monotonic() + local_timeout + rank_timeout
    pending = set(range(world))
    while pending:
        now = time.monotonic()
        if not posted:
            local = _read_handoff(handoff) if handoff else None
            if local is not None or not handoff or now > report_deadline:
                store.set("report/0", json.dumps({"me": me, "report": local}))
                posted = True
        for r in sorted(pending):
            info = ranks[r]
            if _has(store, f"report/{r}"):
                blob = _get_json(store, f"report/{r}")
                info.update(blob["me"], state="reported")
                reports[r] = blob["me"]
                if blob.get("report") is not None:
                    blobs[r] = blob["report"]
                pending.discard(r)
            elif info["state"] == "waiting" and _has(store, f"alive/{r}"):
                info.update(_get_json(store, f"alive/{r}"), state="joined")
                watch.silent_for(r)
            elif info["state"] == "waiting" and now - started > rank_timeout:
                info.update(state="no-join", note=f"did not join the rendezvous within {rank_timeout:.0f}s (dead, hung, or never started)")
                pending.discard(r)
            elif info["state"] == "joined" and r and watch.silent_for(r) > rank_timeout:
                info.update(state="lost", note=f"joined, then stopped answering for {rank_timeout:.0f}s before sending its report")
                pending.discard(r)
            elif now > report_deadline:
                info.update(state="no-report", note=f"joined but sent no report within {local_timeout + rank_timeout:.0f}s")
                pending.discard(r)
        if pending:
            time.sleep(POLL if world <= 64 else 1.0)
    return reports, blobs


def _gather_results(store, ranks: dict[int, dict], waiting: set[int], rank_timeout) -> None:
    # The members' collectives time out like rank 0's did, so they answer within about one timeout.
    deadline = time.monotonic() + rank_timeout + 5
    while waiting and time.monotonic() < deadline:
        for r in sorted(waiting):
            if _has(store, f"result/{r}"):
                ranks[r]["collective"] = {"member": True, **_get_json(store, f"result/{r}")}
                waiting.discard(r)
        if waiting:
            time.sleep(POLL)
    for r in waiting:
        ranks[r]["collective"] = {
            "member": True,
            "error": f"sent no result within {rank_timeout + 5:.0f}s of rank 0 finishing (stuck or dead)",
        }


def _coordinate(store, result, me, world, handoff, rank_timeout, local_timeout, started, backend, size_mb, fault) -> dict:
    ranks: dict[int, dict] = {r: {"state": "waiting"} for r in range(world)}
    ranks[0].update(me)
    reports, blobs = _gather_reports(store, ranks, me, world, handoff, rank_timeout, local_timeout, started)

    chosen, excluded = _choose_backend(backend, reports)
    members = [r for r in sorted(reports) if r not in excluded]
    for r, why in excluded.items():
        ranks[r]["collective"] = {"member": False, "error": why}
    size = int((size_mb or (64 if chosen == "nccl" else 4)) * (1 << 20))
    store.set("plan", json.dumps({"members": members, "backend": chosen, "size": size}))
    result.update(backend=chosen, members=members)

    own = _run_collective(chosen, members.index(0), len(members), me["local_rank"], _pg_store(store), rank_timeout, size, fault)
    ranks[0]["collective"] = {"member": True, **own}
    _gather_results(store, ranks, set(members) - {0}, rank_timeout)
    result["ranks"] = {str(r): v for r, v in ranks.items()}
    result["reports"] = {str(r): v for r, v in blobs.items()}
    return result


def _pg_store(store):
    from torch.distributed import PrefixStore

    return PrefixStore("pg/", store)


def _member(store, result, me, rank, handoff, rank_timeout, local_timeout, started, size_mb, fault) -> dict:
    watch = _Watch(store, rank_timeout)
    lost = None
    local = _wait_handoff(handoff, time.monotonic() + local_timeout + rank_timeout) if handoff else None
    store.set(f"report/{rank}", json.dumps({"me": me, "report": local}))
    plan = None
    while plan is None:
        if _has(store, "plan"):
            plan = _get_json(store, "plan")
            break
        if watch.silent_for(0) > rank_timeout:
            lost = f"rank 0 (the coordinator) stopped answering for {rank_timeout:.0f}s"
            break
        time.sleep(POLL)
    info = dict(me, state="reported")
    result["ranks"] = {str(rank): info}
    if plan is None:
        result.update(error=lost, coordinator_lost=True)
        return result
    result.update(backend=plan["backend"], members=plan["members"])
    if rank not in plan["members"]:
        info["collective"] = {"member": False, "error": "left out of the collectives by rank 0"}
        return result
    own = _run_collective(
        plan["backend"],
        plan["members"].index(rank),
        len(plan["members"]),
        me["local_rank"],
        _pg_store(store),
        rank_timeout,
        plan["size"],
        fault,
    )
    info["collective"] = {"member": True, **own}
    try:
        store.set(f"result/{rank}", json.dumps(own))
    except Exception as e:  # noqa: BLE001
        result.update(error=f"could not send the collective result to rank 0: {type(e).__name__}: {e}", coordinator_lost=True)
    return result
