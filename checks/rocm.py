"""ROCm: the AMD GPUs by gfx target, and whether torch's ROCm build carries code for them.

A ROCm wheel is built for a fixed list of gfx targets (``PYTORCH_ROCM_ARCH``); a GPU outside it
fails with ``HIP error: invalid device function`` / ``hipErrorNoBinaryForGpu``. Consumer RDNA2/3
cards of a family whose first member is in the list (gfx1031/1032 beside gfx1030, gfx1101/1102
beside gfx1100) run when HIP reports that member: ``HSA_OVERRIDE_GFX_VERSION``.
"""

from __future__ import annotations

import os
import re

from envdoctor import Item, Status, Unavailable, check, fact, fail, ok, skip
from envdoctor_checks._lazy import lazy

rd = lazy("envdoctor_checks._release_data")

KFD = "/sys/class/kfd/kfd/topology/nodes"
CAUSE = "rocm_gfx_unsupported"
# gfx family prefix -> (HSA_OVERRIDE_GFX_VERSION, the target it makes HIP report)
OVERRIDES = {"gfx103": ("10.3.0", "gfx1030"), "gfx110": ("11.0.0", "gfx1100")}


def gfx_of(target_version: int) -> str | None:
    """KFD's ``gfx_target_version`` (major*10000 + minor*100 + stepping) -> ``gfx1032``; 0 (a CPU) -> None."""
    if target_version <= 0:
        return None
    major, minor, step = target_version // 10000, (target_version // 100) % 100, target_version % 100
    return f"gfx{major}{minor}{step:x}"


@fact("amd_gpus", ask="the output of `rocminfo | grep -E 'Name|gfx'`")
def amd_gpus() -> list[dict]:
    """AMD GPUs from the KFD topology (what HIP enumerates), by gfx target."""
    out: list[dict] = []
    import glob  # on use: a paste's triage reads no topology

    for props in sorted(glob.glob(os.path.join(KFD, "*", "properties")))[:64]:
        try:
            with open(props, encoding="ascii", errors="replace") as f:
                text = f.read(64 * 1024)
        except OSError:
            continue
        m = re.search(r"^gfx_target_version\s+(\d{1,9})\s*$", text, re.M)
        gfx = gfx_of(int(m.group(1))) if m else None
        if gfx:
            out.append({"index": len(out), "name": "", "gfx": gfx, "source": "kfd"})
    if not out:
        raise Unavailable("no AMD GPU in the KFD topology (/sys/class/kfd)")
    return out


def _gfx_item(g: dict, targets: tuple[str, ...], override: str | None) -> Item:
    gfx = str(g.get("gfx") or "").split(":")[0]
    label = f"GPU {g.get('index')} ({g.get('name') or 'AMD'}, {gfx})"
    if gfx in targets:
        return Item(label, Status.PASS, f"{gfx} is among the build's targets")
    if override:
        return Item(label, Status.PASS, f"{gfx} runs as HSA_OVERRIDE_GFX_VERSION={override} selects")
    return Item(label, Status.FAIL, f"{gfx} is not among the build's targets")


def _hint(gfx: str, targets: tuple[str, ...]) -> str:
    ver, as_target = OVERRIDES.get(gfx[:6], (None, None))
    rebuild = f"install a torch ROCm build whose targets include {gfx} (newer ROCm releases add targets), or build torch with PYTORCH_ROCM_ARCH={gfx}"
    if ver and as_target in targets and gfx != as_target:
        return f"export HSA_OVERRIDE_GFX_VERSION={ver} (HIP then runs the {gfx} as {as_target}, the build's target of the same family); or {rebuild}"
    return rebuild[0].upper() + rebuild[1:]


@check("torch.rocm_gfx_support", tags=("gpu",), sources=("live", "pasted"))
def rocm_gfx_support(torch_build, amd_gpus, env_vars=None):
    """torch's ROCm build carries code for each AMD GPU's gfx target"""
    if torch_build.get("kind") != "rocm":
        return skip(f"torch {torch_build['version']} is not a ROCm build")
    targets = rd.rocm_gfx_targets(torch_build.get("version"), torch_build.get("hip"))
    if not targets:
        return skip(f"the table does not record the gfx targets of torch {torch_build['version']}")
    override = (env_vars or {}).get("HSA_OVERRIDE_GFX_VERSION") or None
    items = [_gfx_item(g, targets, override) for g in amd_gpus]
    details = {"targets": list(targets), "cause_id": CAUSE}
    bad = [(g, i) for g, i in zip(amd_gpus, items, strict=True) if i.status is Status.FAIL]
    if bad:
        g0, i0 = bad[0]
        gfx = str(g0.get("gfx")).split(":")[0]
        return fail(
            f"{i0.name}: torch {torch_build['version']} has no code objects for {gfx} (built for {' '.join(targets)}): "
            "'HIP error: invalid device function'",
            hint=_hint(gfx, targets),
            items=items,
            details=details,
        )
    return ok("; ".join(f"{i.name}: {i.message}" for i in items), items=items, details=details)
