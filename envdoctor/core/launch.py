"""Where this process sits in a distributed job, as its launcher (torchrun, Slurm's srun, a
Kubernetes indexed Job) described it in the environment. Light on purpose: the built-in
``distributed`` checks import it when ``envdoctor list`` loads them, so it imports no engine."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

DEFAULT_PORT = 29500

NOT_LAUNCHED = (
    "not started by a launcher: set by torchrun (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), "
    "Slurm srun (SLURM_PROCID, SLURM_NTASKS) or a Kubernetes indexed Job (JOB_COMPLETION_INDEX with WORLD_SIZE and MASTER_ADDR)"
)


@dataclass(frozen=True)
class Launch:
    """Where this process sits in the job, as its launcher described it."""

    launcher: str  # "torchrun" | "slurm" | "kubernetes" | "env"
    rank: int
    world_size: int
    local_rank: int
    local_world_size: int | None
    master_addr: str
    master_port: int
    agent_store: bool  # torchrun's agent hosts the TCPStore; every rank is a client
    run_id: str
    problems: tuple[str, ...] = ()

    @property
    def coordinator(self) -> bool:
        return self.rank == 0

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["problems"] = list(self.problems)
        return d

    def format_path(self, path: str | None, host: str) -> str | None:
        """Report files: ``{rank}``/``{local_rank}``/``{host}`` make one file per rank (``{host}``
        alone: one per host, written by local rank 0); a plain path is rank 0's combined report."""
        if not path:
            return None
        keys = set(re.findall(r"\{(rank|local_rank|host)\}", path))
        if not keys:
            return path if self.coordinator else None
        if keys == {"host"} and self.local_rank != 0:
            return None
        return path.replace("{rank}", str(self.rank)).replace("{local_rank}", str(self.local_rank)).replace("{host}", host)


def _int(env: Mapping[str, str], name: str, problems: list[str], default: int | None = None) -> int | None:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw.strip())
    except ValueError:
        problems.append(f"{name}={raw!r} is not a number")
        return default


def first_slurm_host(nodelist: str) -> str:
    """The first host of a Slurm hostlist (``gpu[01-04,07],login1`` → ``gpu01``), as
    ``scontrol show hostnames`` would list it first; zero padding is kept."""
    depth, end = 0, len(nodelist)
    for i, ch in enumerate(nodelist):
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            end = i
            break
    first = nodelist[:end].strip()
    return re.sub(r"\[([^\]]*)\]", lambda m: m.group(1).split(",")[0].split("-")[0], first)


def _torchrun_vars(env: Mapping[str, str], problems: list[str]) -> tuple:
    launcher = "torchrun" if "TORCHELASTIC_RUN_ID" in env else "env"
    rank = _int(env, "RANK", problems)
    world = _int(env, "WORLD_SIZE", problems)
    local_rank = _int(env, "LOCAL_RANK", problems, 0)
    local_world = _int(env, "LOCAL_WORLD_SIZE", problems)
    addr = env.get("MASTER_ADDR", "")
    port = _int(env, "MASTER_PORT", problems)
    if port is None:
        problems.append("MASTER_PORT is not set")
    run_id = env.get("TORCHELASTIC_RUN_ID", "") + "." + env.get("TORCHELASTIC_RESTART_COUNT", "0")
    return launcher, rank, world, local_rank, local_world, addr, port, run_id


def _slurm_vars(env: Mapping[str, str], problems: list[str]) -> tuple:
    rank = _int(env, "SLURM_PROCID", problems)
    world = _int(env, "SLURM_NTASKS", problems)
    local_rank = _int(env, "SLURM_LOCALID", problems, 0)
    local_world = _int(env, "SLURM_NTASKS_PER_NODE", problems)
    nodelist = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST") or ""
    addr = env.get("MASTER_ADDR") or (first_slurm_host(nodelist) if nodelist else "")
    job = _int(env, "SLURM_JOB_ID", problems, 0) or 0
    step = _int(env, "SLURM_STEP_ID", problems, 0) or 0
    # Every task of the step must compute the same port without talking to the others.
    port = _int(env, "MASTER_PORT", problems, 20000 + (job + step) % 20000)
    return "slurm", rank, world, local_rank, local_world, addr, port, f"slurm.{job}.{step}"


def _indexed_job_vars(env: Mapping[str, str], problems: list[str]) -> tuple:
    rank = _int(env, "JOB_COMPLETION_INDEX", problems)
    world = _int(env, "WORLD_SIZE", problems)
    if world is None:
        problems.append("WORLD_SIZE is not set (set it to the Job's completions)")
    addr = env.get("MASTER_ADDR", "")
    port = _int(env, "MASTER_PORT", problems, DEFAULT_PORT)
    run_id = "k8s." + env.get("HOSTNAME", "").rsplit("-", 2)[0]
    return "kubernetes", rank, world, 0, 1, addr, port, run_id


def detect_launch(env: Mapping[str, str]) -> Launch | None:
    """torchrun's variables win (torchrun may itself run under srun); then Slurm's; then an indexed Job's."""
    problems: list[str] = []
    if "RANK" in env or ("WORLD_SIZE" in env and "JOB_COMPLETION_INDEX" not in env):
        found = _torchrun_vars(env, problems)
    elif "SLURM_PROCID" in env and "SLURM_NTASKS" in env:
        found = _slurm_vars(env, problems)
    elif "JOB_COMPLETION_INDEX" in env:
        found = _indexed_job_vars(env, problems)
    else:
        return None
    launcher, rank, world, local_rank, local_world, addr, port, run_id = found
    if rank is None:
        problems.append("the rank is not set")
    if world is None or world < 1:
        problems.append("the world size is not set" if world is None else f"world size {world} is not positive")
    if rank is not None and world is not None and not 0 <= rank < world:
        problems.append(f"rank {rank} is outside the world of {world} ranks")
    if not addr:
        problems.append("MASTER_ADDR is not set (the host of rank 0, where the rendezvous store listens)")
    if port is not None and not 0 < port < 65536:
        problems.append(f"MASTER_PORT {port} is not a valid port")
    return Launch(
        launcher=launcher,
        rank=rank if rank is not None else -1,
        world_size=world if world is not None else 0,
        local_rank=local_rank or 0,
        local_world_size=local_world,
        master_addr=addr,
        master_port=port or 0,
        agent_store=env.get("TORCHELASTIC_USE_AGENT_STORE") == "True",
        run_id=run_id,
        problems=tuple(problems),
    )


LAUNCHER_NAMES = {"torchrun": "torchrun", "slurm": "Slurm srun", "kubernetes": "Kubernetes indexed Job", "env": "env:// variables"}


def launcher_name(launch: Launch) -> str:
    return LAUNCHER_NAMES.get(launch.launcher, launch.launcher)
