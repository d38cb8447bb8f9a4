"""Peer-to-peer copies between GPUs (B20): a driver can report peer access on consumer GPUs
behind an IOMMU/ACS that breaks it; NCCL then hangs and plain ``x.to("cuda:1")`` can return
wrong bytes. A real copy, compared byte for byte, is the only proof. Generic: any two CUDA GPUs
(the caller decides which machines it runs on). Runs only in a probe worker.
"""

from __future__ import annotations

import time

MB = 1 << 20


def _stage(text: str) -> None:
    print(f"envdoctor-stage: {text}", flush=True)


def peer_pairs() -> dict:
    """The GPU pairs (i < j) for which CUDA reports peer access both ways, and those it refuses."""
    import torch

    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    pairs: list[list[int]] = []
    refused: list[list[int]] = []
    for i in range(n):
        for j in range(i + 1, n):
            _stage(f"asking CUDA whether GPU {i} and GPU {j} can access each other")
            both = torch.cuda.can_device_access_peer(i, j) and torch.cuda.can_device_access_peer(j, i)
            (pairs if both else refused).append([i, j])
    return {"devices": n, "pairs": pairs, "refused": refused}


def _copy(x, device: str, torch):
    start = time.perf_counter()
    y = x.to(device, non_blocking=False)
    torch.cuda.synchronize(x.device)
    torch.cuda.synchronize(y.device)
    return y, time.perf_counter() - start


def peer_copy(src: int, dst: int, mb: int = 8) -> dict:
    """Copy ``mb`` MiB of a known pattern GPU src -> GPU dst -> GPU src and compare every byte;
    the time of the second src -> dst copy (the first sets up peer access) gives the bandwidth."""
    import torch

    nbytes = mb * MB
    gen = torch.Generator().manual_seed(1234 + 31 * src + dst)
    ref = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, generator=gen)
    _stage(f"initialising CUDA on GPU {src} and GPU {dst}")
    a = ref.to(f"cuda:{src}")
    torch.cuda.synchronize(src)
    _stage(f"peer copy GPU {src} -> GPU {dst} ({mb} MiB)")
    b, _ = _copy(a, f"cuda:{dst}", torch)
    b, seconds = _copy(a, f"cuda:{dst}", torch)
    _stage(f"peer copy GPU {dst} -> GPU {src} ({mb} MiB)")
    back, _ = _copy(b, f"cuda:{src}", torch)
    _stage(f"comparing the bytes copied between GPU {src} and GPU {dst}")
    there = int((b.cpu() != ref).sum())
    returned = int((back.cpu() != ref).sum())
    return {
        "src": src,
        "dst": dst,
        "bytes": nbytes,
        "wrong_there": there,
        "wrong_back": returned,
        "ok": there == 0 and returned == 0,
        "seconds": seconds,
        "gbps": nbytes / seconds / 1e9 if seconds > 0 else None,
    }
