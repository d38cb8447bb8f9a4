"""Pasted facts, adapted before the checks judge them (``envdoctor triage``).

A paste shows less than a live run: collect_env prints no driver CUDA version, nvidia-smi no
compute capability, and few pastes show torch's arch list. A live run fills the first from the
driver branch table too; the other two come from the offline release tables here, and each
filled value says where it came from (``*_source``), so a verdict built on it can be read with
that in mind. Everything else passes through as the readers produced it.
"""

from __future__ import annotations

import copy

from envdoctor import Unavailable, fact
from envdoctor_checks._lazy import lazy

compat = lazy("envdoctor_checks._cuda_compat")
rd = lazy("envdoctor_checks._release_data")

TABLE = "release table"


def _get(pasted: dict, name: str):
    value = pasted.get(name)
    if value is None:
        raise Unavailable("not in the paste")  # triage adds what to ask for: the live fact's ask=
    return copy.deepcopy(value)


def _amd(pasted: dict) -> bool:
    """An AMD paste: AMD GPUs, or a ROCm torch beside no GPU the NVIDIA table knows (a ROCm build
    on an NVIDIA machine is a wrong build, and its driver is worth asking for)."""
    if pasted.get("amd_gpus"):
        return True
    gpus = pasted.get("gpus")
    nvidia = isinstance(gpus, list) and any(isinstance(g, dict) and rd.compute_capability(g.get("name")) for g in gpus)
    return (pasted.get("torch_build") or {}).get("kind") == "rocm" and not nvidia


def _nvidia(pasted: dict, name: str):
    """An NVIDIA fact (the driver, the GPUs nvidia-smi lists) as pasted; an AMD paste that lacks
    it has none, so the answer does not ask for `nvidia-smi`."""
    if pasted.get(name) is None and _amd(pasted):
        raise Unavailable("an AMD paste (a ROCm torch or AMD GPUs) shows no NVIDIA driver or GPU")
    return _get(pasted, name)


@fact("driver", source="pasted")
def pasted_driver(pasted) -> dict:
    """The driver's CUDA version from the branch table when the paste does not state it (as a live run does)."""
    d = _nvidia(pasted, "driver")
    tegra = "tegra" in str((pasted.get("os_release") or {}).get("kernel") or "")  # Jetson's driver numbers are L4T's own
    if not d.get("cuda_version") and d.get("version") and not tegra:
        cuda = compat.cuda_for_branch(str(d["version"]))
        if cuda:
            d["cuda_version"], d["cuda_version_source"] = cuda, "driver branch table"
    return d


def _with_cc(gpus: list) -> list:
    for g in gpus:
        if isinstance(g, dict) and not g.get("cc"):
            cc = rd.compute_capability(g.get("name"))
            if cc:
                g["cc"], g["cc_source"] = f"{cc[0]}.{cc[1]}", TABLE
    return gpus


@fact("gpus", source="pasted")
def pasted_gpus(pasted) -> list:
    """Each GPU's compute capability from its name when the paste does not state it."""
    return _with_cc(_nvidia(pasted, "gpus"))


@fact("visible_gpus", source="pasted")
def pasted_visible_gpus(pasted) -> list:
    return _with_cc(_get(pasted, "visible_gpus"))


@fact("fabric_state", source="pasted")
def pasted_fabric_state(pasted) -> dict:
    """The Fabric sections of a pasted ``nvidia-smi -q``; none to ask for when the pasted GPUs
    cannot be on an NVSwitch fabric (the gate of the live fact), so an answer about a GTX 1050
    or an AMD machine does not ask for it."""
    if pasted.get("fabric_state") is not None:
        return copy.deepcopy(pasted["fabric_state"])
    if _amd(pasted):
        return {}
    gpus = pasted.get("gpus")
    if isinstance(gpus, list) and not compat.fabric_possible(_with_cc(copy.deepcopy(gpus))):
        return {}
    raise Unavailable("not in the paste")


@fact("amd_gpus", source="pasted")
def pasted_amd_gpus(pasted) -> list:
    """The AMD GPUs a paste names; none to ask for when its torch is a CUDA build or its GPUs are
    NVIDIA's, so an answer about an NVIDIA machine does not ask for `rocminfo`."""
    if pasted.get("amd_gpus") is not None:
        return copy.deepcopy(pasted["amd_gpus"])
    if (pasted.get("torch_build") or {}).get("kind") == "cuda" or pasted.get("gpus"):
        return []
    raise Unavailable("not in the paste")


@fact("torch_runtime", source="pasted")
def pasted_torch_runtime(pasted) -> dict:
    """torch's arch list from the release table when the paste does not show it (the table's are
    the x86_64 wheels': not for a paste from another machine). The device
    count of a paste is the GPU list's length when CUDA is available (the readers assume it)."""
    rt = _get(pasted, "torch_runtime")
    tb = pasted.get("torch_build") or {}
    if not rt.get("arch_list") and tb.get("kind") == "cuda" and not rd.other_machine(pasted.get("os_release")):
        flags = rd.arch_flags(tb.get("version"), tb.get("cuda"))
        if flags:
            rt["arch_list"], rt["arch_list_source"] = list(flags), TABLE
    return rt
