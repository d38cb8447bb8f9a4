"""The accumulated findings as fact values in exactly the shapes the live providers in
``checks/`` return, each marked ``"source": "pasted"``. Fields a paste cannot show get the
value the provider uses for "unknown" (None, "" or an empty list), so a check reading them
finds the key and judges it as unknown rather than failing on it."""

from __future__ import annotations

import re
from typing import Any

from envdoctor.core.names import TRITON_DISTS, canonical
from envdoctor.sources._acc import Acc

SOURCE = "pasted"
GPU_DEFAULTS: dict[str, Any] = {
    "uuid": "",
    "serial": "",
    "memory_total": None,
    "memory_used": None,
    "mig_mode": None,
    "mig_devices": [],
    "persistence_mode": None,
    "compute_mode": None,
    "brand": "",
    "pci_bus_id": "",
    "processes": None,
}


def torch_build(acc: Acc) -> dict | None:
    version = acc.get("torch", "version")
    if not version or acc.get("torch", "not_importable"):
        return None
    cuda, hip, kind = acc.get("torch", "cuda"), acc.get("torch", "hip"), acc.get("torch", "kind")
    if kind == "cuda" and not cuda:
        cuda = acc.get("torch", "cuda_hint")
    if cuda and kind in (None, "cuda"):
        kind = "cuda"
    elif hip:
        kind = "rocm"
    elif kind is None and acc.get("torch", "no_cuda") and acc.has("torch", "no_cuda"):
        kind = "cpu"  # collect_env: "CUDA used to build PyTorch: None / Could not collect"
    if kind is None:
        cuda = _cuda_from_runtime_wheel(acc)
        kind = "cuda" if cuda else None
    if kind is None:
        acc.want("torch_build")  # which build this is (CUDA, CPU or ROCm)
        return None
    found = {
        "version": version,
        "local": version.partition("+")[2],
        "cuda": cuda if kind == "cuda" else None,
        "hip": hip if kind == "rocm" else None,
        "git_version": None,
        "kind": kind,
        "location": "",
        "source": SOURCE,
    }
    if asked := acc.get("torch", "cuda_asked"):
        found["cuda_asked"] = asked  # only a paste has it: the line that asked CUDA of this torch
    return found


def _cuda_from_runtime_wheel(acc: Acc) -> str | None:
    """A pip torch without a local tag on Linux pins an exact nvidia-cuda-runtime wheel; that
    wheel's release is the CUDA torch was built with."""
    for key in ("nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu11", "nvidia-cuda-runtime", "nvidia-cuda-runtime-cu13"):
        d = acc.dists.get(key)
        if d and re.match(r"\d+\.\d+", d["version"]):
            acc.note(f"torch's CUDA version read from {d['name']} {d['version']} (torch pins that wheel)")
            return ".".join(d["version"].split(".")[:2])
    return None


def driver(acc: Acc) -> dict | None:
    version = acc.get("driver", "version")
    if not version:
        return None
    return {
        "version": version,
        "cuda_version": acc.get("driver", "cuda_version"),
        "cuda_version_source": acc.get("driver", "cuda_version_source"),
        "source": SOURCE,
        "kernel_module": None,
        "libcuda": None,
        "libcuda_error": "",
        "libnvidia_ml": None,
        "nvml_error": "",
    }


def gpus(acc: Acc) -> list[dict] | None:
    if not acc.gpu_sets:
        return None
    best = min(acc.gpu_sets, key=lambda s: s[0])[1]
    names = {g["index"]: g.get("name") for rank, s in sorted(acc.gpu_sets, key=lambda s: s[0]) for g in s if not g.get("name_truncated")}
    out = []
    for g in best:
        full = {**GPU_DEFAULTS, **{k: v for k, v in g.items() if k != "name_truncated"}, "source": SOURCE}
        if g.get("name_truncated") and names.get(g["index"]):
            full["name"] = names[g["index"]]  # nvidia-smi's "GeForce GTX 105..." completed from another listing
        if full["mig_mode"] and not full["mig_devices"]:
            full["errors"] = {"mig_count": "the paste does not list MIG instances"}
        out.append(full)
    return out


def amd_gpus(acc: Acc) -> list[dict] | None:
    """AMD GPUs by gfx target, in the shape of the live ``amd_gpus`` fact."""
    if not acc.amd_gpus:
        return None
    return [{"index": i, "name": g.get("name") or "", "gfx": g["gfx"], "source": SOURCE} for i, g in enumerate(acc.amd_gpus)]


def python_info(acc: Acc) -> dict | None:
    version = acc.get("python", "version")
    if not version:
        return None
    parts = [int(x) for x in re.findall(r"\d+", version)[:3]]
    return {
        "version": version,
        "version_info": parts,
        "implementation": acc.get("python", "implementation", "CPython"),
        "executable": None,
        "include_dir": None,
        "python_h": None,
        "free_threading": bool(acc.get("python", "free_threading", False)),
        "purelib": None,
        "platlib": None,
        "user_site_enabled": None,
        "source": SOURCE,
    }


def os_release(acc: Acc) -> dict | None:
    name = acc.get("os", "name")
    if not name and not acc.get("os", "kernel"):
        return None
    m = re.search(r"\d+(?:\.\d+)*", name or "")
    first = (name or "").split()[0].lower() if name else ""
    return {
        "id": {"microsoft": "windows"}.get(first, first),
        "name": name or "",
        "version": m.group(0) if m else "",
        "kernel": acc.get("os", "kernel", ""),
        "machine": acc.get("os", "machine", ""),
        "libc": list(acc.get("os", "libc", [])),
        "source": SOURCE,
    }


def dists(acc: Acc) -> dict | None:
    if not acc.dists:
        return None
    out = {}
    for key, d in acc.dists.items():
        entry = {"name": d["name"], "version": d["version"], "location": "", "requires": [], "installer": d["installer"], "source": SOURCE}
        if d.get("_others"):
            entry["others"] = d["_others"]
        out[key] = entry
    return out


def torch_runtime(acc: Acc, build: dict | None, gpu_list: list[dict] | None) -> dict | None:
    """What collect_env says an imported torch reported. Only with "Is CUDA available": a
    runtime fact without it would read as "not available" to torch.cuda_available."""
    available = acc.get("runtime", "cuda_available")
    if build is None or available is None:
        return None
    names = [g.get("name") for g in gpu_list or []]
    # collect_env lists GPUs with nvidia-smi -L, not through torch: when torch says CUDA is
    # available it sees them (CUDA_VISIBLE_DEVICES aside), so that is the device count.
    count = len(names) if available else 0
    return {
        "import_error": None,
        "version": build["version"],
        "file": None,
        "cuda": build["cuda"],
        "hip": build["hip"],
        "git_version": None,
        "arch_list": [],
        "cudnn": None,
        "nccl": None,
        "cuda_available": available,
        "device_count": count,
        "devices": [{"name": n, "cc": None} for n in names] if available else [],
        "warnings": list(dict.fromkeys(acc.warnings)),
        "loaded_libs": [],
        "source": SOURCE,
    }


def cuda_toolkit(acc: Acc) -> dict | None:
    version = acc.get("cuda_toolkit", "version")
    if not version:
        return None
    return {"home": "", "source": SOURCE, "nvcc": "", "version": version, "problem": ""}


def triton_pkg(acc: Acc, dist_map: dict | None) -> dict | None:
    present = [dist_map[n] for n in TRITON_DISTS if dist_map and n in dist_map]
    if not present:
        return None
    return {"location": "", "version": present[0]["version"], "nvidia_backend": None, "bundled": {}, "source": SOURCE}


def extensions_needing_cuda(acc: Acc) -> list | None:
    """The compiled packages an error says need a CUDA runtime library (``libcudart.so.13``), in
    the shape of the live ``torch_extensions`` fact, so ``torch.extension_abi`` judges their CUDA
    major against torch's; ``None`` when no error names one."""
    if not acc.cuda_needs:
        return None
    by_owner: dict[str, dict] = {}
    for owner, lib in acc.cuda_needs:
        key = canonical(owner) if owner else "(pasted)"
        entry = by_owner.setdefault(
            key, {"key": key, "name": owner or "a compiled package", "version": "?", "objects": [], "modules": [], "source": "pasted"}
        )
        if not any(lib in o["cuda"] for o in entry["objects"]):
            entry["objects"].append({"rel": owner or "a compiled package", "path": "", "links": [], "cuda": [lib], "module": None})
    return list(by_owner.values())
