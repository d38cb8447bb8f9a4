"""torch_xla: paired with the same torch release, with libtpu, PJRT_DEVICE and device nodes
on TPU hosts. torch_xla wheels declare no requirement on torch, so pip never stops torch from
being upgraded under it; the pairing has to be checked here.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from envdoctor import Unavailable, check, fact, fail, ok, skip, warn
from envdoctor_checks.packages import canonical, requirements
from envdoctor_checks.triton import major_minor, satisfies

if TYPE_CHECKING:
    from packaging.requirements import Requirement

# Newest torch_xla release seen on PyPI (catalog D5). A torch newer than this has no torch_xla
# to pair with; the advice is then to pin torch down, not torch_xla up.
NEWEST_TORCH_XLA = (2, 9)

# Google's PCI vendor id and the TPU device ids torch_xla/_internal/tpu.py knows.
TPU_VENDOR = "0x1ae0"
TPU_DEVICE_IDS = {"0x0027": "v2/v3", "0x005e": "v4", "0x0063": "v5e", "0x0062": "v5p", "0x006f": "v6e"}

PJRT_DEVICES = {"TPU", "CPU", "CUDA", "GPU", "NEURON", "XPU"}


@fact("torch_xla")
def torch_xla(dists) -> dict:
    """The installed torch_xla distribution; every xla check skips without it."""
    d = dists.get("torch-xla")
    if d is None:
        raise Unavailable("torch_xla is not installed")
    return d


def scan_tpu_chips(sys_root: str = "/sys") -> list[dict]:
    chips = []
    for dev in sorted(glob.glob(os.path.join(sys_root, "bus", "pci", "devices", "*"))):
        try:
            with open(os.path.join(dev, "vendor")) as f:
                vendor = f.read().strip().lower()
            with open(os.path.join(dev, "device")) as f:
                device = f.read().strip().lower()
        except OSError:
            continue
        if vendor == TPU_VENDOR and device in TPU_DEVICE_IDS:
            chips.append({"pci": os.path.basename(dev), "device": device, "generation": TPU_DEVICE_IDS[device]})
    return chips


def scan_tpu_nodes(dev_root: str = "/dev") -> list[dict]:
    paths = sorted(glob.glob(os.path.join(dev_root, "accel*")))
    # /dev/vfio/vfio is the VFIO control node, present on any host with VFIO; the numbered
    # groups are the TPU chips on v5e and newer.
    paths += sorted(p for p in glob.glob(os.path.join(dev_root, "vfio", "*")) if os.path.basename(p) != "vfio")
    return [{"path": p, "access": os.access(p, os.R_OK | os.W_OK)} for p in paths]


@fact("tpu")
def tpu() -> dict:
    """TPU chips on the PCI bus (vendor 0x1ae0) and their device nodes."""
    return {"chips": scan_tpu_chips(), "nodes": scan_tpu_nodes(), "lockfile": os.path.exists("/tmp/libtpu_lockfile")}


def xla_pair_hint(torch_v: tuple[int, int], xla_v: tuple[int, int]) -> str:
    if torch_v > NEWEST_TORCH_XLA and xla_v <= NEWEST_TORCH_XLA:
        x = f"{xla_v[0]}.{xla_v[1]}"
        return f'pip install "torch~={x}.0" "torch_xla[tpu]~={x}.0"   # pin torch down to the torch_xla you have'
    t = f"{torch_v[0]}.{torch_v[1]}"
    return f'pip install "torch~={t}.0" "torch_xla[tpu]~={t}.0"'


@check("xla.torch_match", tags=("build",), sources=("live", "pasted"))
def torch_match(torch_xla, dists):
    """torch_xla is built for this torch release"""
    torch = dists.get("torch")
    if torch is None:
        return fail("torch_xla is installed but torch is not", f'pip install "torch~={torch_xla["version"].rsplit(".", 1)[0]}.0"')
    tv, xv = major_minor(torch["version"]), major_minor(torch_xla["version"])
    if tv is None or xv is None:
        return skip(f"cannot compare torch {torch['version']} with torch_xla {torch_xla['version']}")
    details = {"torch": torch["version"], "torch_xla": torch_xla["version"]}
    if tv != xv:
        newest = ""
        if tv > NEWEST_TORCH_XLA:
            newest = f"; no torch_xla release exists for torch {tv[0]}.{tv[1]} (newest known: {NEWEST_TORCH_XLA[0]}.{NEWEST_TORCH_XLA[1]})"
        return fail(
            f"torch_xla {torch_xla['version']} is built for torch {xv[0]}.{xv[1]}, but torch {torch['version']} is installed: "
            f"'import torch_xla' fails with 'undefined symbol' in _XLAC{newest}",
            xla_pair_hint(tv, xv),
            details=details,
        )
    # Nightlies pair by date: torch_xla 2.9.0.dev20250101 with torch 2.9.0.dev20250101.
    try:
        tdev, xdev = Version(torch["version"]).dev, Version(torch_xla["version"]).dev
    except InvalidVersion:
        tdev = xdev = None
    if tdev is not None and xdev is not None and tdev != xdev:
        return fail(
            f"nightly torch_xla {torch_xla['version']} and torch {torch['version']} are from different days",
            "pip install --pre torch torch_xla   # nightlies of the same date, from the same index\n",
            details=details,
        )
    return ok(f"torch_xla {torch_xla['version']} matches torch {torch['version']}", details=details)


def libtpu_requirement(torch_xla: Mapping) -> Requirement | None:
    """The libtpu pin of torch_xla's [tpu] extra."""
    for req in requirements(torch_xla):
        if canonical(req.name) in ("libtpu", "libtpu-nightly") and req.marker is not None and req.marker.evaluate({"extra": "tpu"}):
            return req
    return None


@check("xla.libtpu", tags=("build",), blame=("libtpu",))
def libtpu(torch_xla, dists, tpu, env):
    """libtpu is installed as torch_xla[tpu] pins it (TPU hosts)"""
    if env.get("TPU_LIBRARY_PATH") and not os.path.isfile(env["TPU_LIBRARY_PATH"]):
        return fail(
            f"TPU_LIBRARY_PATH={env['TPU_LIBRARY_PATH']} is not a file: torch_xla cannot load libtpu",
            "unset TPU_LIBRARY_PATH   # torch_xla then uses the pip-installed libtpu",
        )
    installed = dists.get("libtpu") or dists.get("libtpu-nightly")
    req = libtpu_requirement(torch_xla)
    if not tpu["chips"]:
        return skip("not a TPU host" + (f" (libtpu {installed['version']} installed)" if installed else ""))
    pin = f"{req.name}{req.specifier}" if req else "libtpu"
    fix = f'pip install "torch_xla[tpu]=={torch_xla["version"]}" -f https://storage.googleapis.com/libtpu-releases/index.html'
    if installed is None:
        return fail(
            f"TPU chips are present but libtpu is not installed ({pin} comes with torch_xla[tpu]): torch_xla falls back to CPU",
            fix,
        )
    if req and canonical(req.name) == canonical(installed["name"]) and not satisfies(str(req.specifier), installed["version"]):
        return fail(f"{installed['name']} {installed['version']} is installed but torch_xla {torch_xla['version']} pins {pin}", fix)
    return ok(f"{installed['name']} {installed['version']}" + (f" (pinned {pin})" if req else ""))


@check("xla.pjrt_device", tags=("build",), blame=("libtpu",))
def pjrt_device(torch_xla, tpu, env, dists):
    """PJRT_DEVICE selects the intended accelerator"""
    value = env.get("PJRT_DEVICE")
    chips = tpu["chips"]
    if value and value.upper() not in PJRT_DEVICES:
        return fail(
            f"PJRT_DEVICE={value} is not a device torch_xla knows ({', '.join(sorted(PJRT_DEVICES))})",
            "export PJRT_DEVICE=TPU   # or CPU, CUDA",
        )
    if value and value.upper() == "TPU" and not chips:
        return fail("PJRT_DEVICE=TPU but no TPU chip is on this machine's PCI bus", "export PJRT_DEVICE=CPU   # or run on a TPU VM")
    if chips and value and value.upper() != "TPU":
        return warn(f"{len(chips)} TPU chip(s) present but PJRT_DEVICE={value}: torch_xla will not use them", "export PJRT_DEVICE=TPU")
    if chips and not value:
        # torch_xla/runtime.py picks TPU by itself only when libtpu is found.
        if "libtpu" in dists or "libtpu-nightly" in dists:
            return ok(f"PJRT_DEVICE unset; torch_xla auto-selects TPU ({len(chips)} chip(s), libtpu installed)")
        return warn(
            f"{len(chips)} TPU chip(s) present, PJRT_DEVICE unset and no libtpu: torch_xla prints 'Defaulting to PJRT_DEVICE=CPU' and runs on CPU",
            "export PJRT_DEVICE=TPU   # and install torch_xla[tpu]",
        )
    return ok(f"PJRT_DEVICE={value}" if value else "no TPU; PJRT_DEVICE unset (torch_xla picks CUDA or CPU)")


@check("xla.tpu_devices", tags=("build",))
def tpu_devices(torch_xla, tpu):
    """TPU device nodes are present and accessible"""
    if not tpu["chips"]:
        return skip("not a TPU host (no PCI device of vendor 0x1ae0)")
    nodes = tpu["nodes"]
    if not nodes:
        return fail(
            f"{len(tpu['chips'])} TPU chip(s) on the PCI bus but no /dev/accel* or /dev/vfio/<n> nodes: 'TPU initialization failed' "
            "(a container started without the devices?)",
            "docker run --privileged ...   # or pass --device /dev/accel0 (v2-v4) / /dev/vfio (v5e+)",
        )
    denied = [n["path"] for n in nodes if not n["access"]]
    if denied:
        return fail(
            f'no read/write access to {", ".join(denied)}: "Couldn\'t open device (Operation not permitted)"',
            "run as a user in the device's group, or as root",
        )
    note = "; /tmp/libtpu_lockfile exists (if no process uses the TPU, it is stale: remove it)" if tpu["lockfile"] else ""
    return ok(f"{len(nodes)} TPU device node(s): {', '.join(n['path'] for n in nodes)}{note}")
