"""NVML's view of the driver and GPUs, gathered in a short-lived child process.

Run as a script (``python nvml_child.py``) by ``envdoctor_checks.nvidia.nvml_query``; its NVML
calls never run in the doctor (which imports only its two shared-library helpers, to report
libcuda as this reports libnvidia-ml): a wedged driver makes NVML calls block forever, and an NVML call has
crashed the interpreter (SIGSEGV) on a real H200 machine, so NVML must never run inside the
doctor. The parent gives it a deadline and kills its process group. It imports pynvml and the
standard library only (no envdoctor, no torch), and prints one JSON line on stdout:
``{"ok": true, "value": {...}}`` or ``{"ok": false, "error": "...", "library": {...} | null}``.

``python nvml_child.py --health`` reads the GPU health values instead (ECC, row remapping,
recovery action, PCIe, NVLink, clock reasons: ``nvml_health.gather_health``, imported from this
file's directory). It is a second child with its own deadline, so a health query that hangs or
crashes costs only the health checks, never the driver facts.
"""

import json
import os
import re
import sys

COMPUTE_MODES = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}


def loaded_library(fragment, maps_path="/proc/self/maps"):
    try:
        with open(maps_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and fragment in os.path.basename(parts[5].strip()):
                    return parts[5].strip()
    except OSError:
        return None
    return None


def lib_info(path):
    if not path:
        return None
    m = re.search(r"\.so\.(\d+(?:\.\d+)*)$", os.path.realpath(path))
    return {"path": path, "realpath": os.path.realpath(path), "version": m.group(1) if m else None}


def _text(v):
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


class _Attr:
    """Collects per-attribute NVML failures instead of losing the whole GPU to one of them."""

    def __init__(self):
        self.errors = {}

    def get(self, key, fn, *args, default=None):
        try:
            return fn(*args)
        except Exception as e:  # noqa: BLE001 - NVMLError_NotSupported and friends, per attribute
            self.errors[key] = str(e) or type(e).__name__
            return default


def _mig_devices(pynvml, g, h):
    out = []
    for j in range(g.get("mig_count", pynvml.nvmlDeviceGetMaxMigDeviceCount, h, default=0) or 0):
        mh = g.get(f"mig{j}", pynvml.nvmlDeviceGetMigDeviceHandleByIndex, h, j)
        if mh is not None:
            out.append({"uuid": _text(g.get(f"mig{j}_uuid", pynvml.nvmlDeviceGetUUID, mh, default=""))})
    # An empty MIG slot raises NotFound: not an error worth reporting.
    g.errors = {k: v for k, v in g.errors.items() if not k.startswith("mig") or k == "mig_mode"}
    return out


def gpu(pynvml, i, brands):
    """One GPU's attributes; the handle is returned too (the P2P query needs two)."""
    g = _Attr()
    h = g.get("handle", pynvml.nvmlDeviceGetHandleByIndex, i)
    if h is None:
        return None, {"index": i, "name": "unknown", "errors": g.errors}
    cc = g.get("cc", pynvml.nvmlDeviceGetCudaComputeCapability, h)
    mem = g.get("memory", pynvml.nvmlDeviceGetMemoryInfo, h)
    mig = g.get("mig_mode", pynvml.nvmlDeviceGetMigMode, h)
    pers = g.get("persistence_mode", pynvml.nvmlDeviceGetPersistenceMode, h)
    cmode = g.get("compute_mode", pynvml.nvmlDeviceGetComputeMode, h)
    brand = g.get("brand", pynvml.nvmlDeviceGetBrand, h)
    pci = g.get("pci", pynvml.nvmlDeviceGetPciInfo, h)
    procs = g.get("processes", pynvml.nvmlDeviceGetComputeRunningProcesses, h, default=None)
    mig_on = bool(mig and mig[0])
    return h, {
        "index": i,
        "name": _text(g.get("name", pynvml.nvmlDeviceGetName, h, default="unknown")),
        "uuid": _text(g.get("uuid", pynvml.nvmlDeviceGetUUID, h, default="")),
        "serial": _text(g.get("serial", pynvml.nvmlDeviceGetSerial, h, default="")),
        "cc": f"{cc[0]}.{cc[1]}" if cc else None,
        "memory_total": int(mem.total) if mem else None,
        "memory_used": int(mem.used) if mem else None,
        "mig_mode": mig_on,
        "mig_devices": _mig_devices(pynvml, g, h) if mig_on else [],
        "persistence_mode": bool(pers) if pers is not None else None,
        "compute_mode": COMPUTE_MODES.get(cmode, str(cmode)) if cmode is not None else None,
        "brand": brands.get(brand, str(brand)) if brand is not None else "",
        "pci_bus_id": _text(pci.busId) if pci is not None else "",
        "processes": [{"pid": int(p.pid), "used_memory": p.usedGpuMemory} for p in procs] if procs is not None else None,
        "errors": g.errors,
    }


def gather(pynvml):
    """Everything NVML says; the caller has initialised it."""
    a = _Attr()
    out = {"driver_version": _text(a.get("driver_version", pynvml.nvmlSystemGetDriverVersion, default=""))}
    cv = a.get("cuda_version", pynvml.nvmlSystemGetCudaDriverVersion_v2)
    out["cuda_version"] = f"{cv // 1000}.{(cv % 1000) // 10}" if isinstance(cv, int) and cv > 0 else None
    brands = {getattr(pynvml, n): n[len("NVML_BRAND_") :].replace("_", " ").title() for n in dir(pynvml) if n.startswith("NVML_BRAND_")}
    brands.update({5: "GeForce", 6: "Titan", 2: "Tesla", 14: "NVIDIA", 1: "Quadro", 13: "NVIDIA RTX", 12: "Quadro RTX"})
    handles, gpus = [], []
    for i in range(pynvml.nvmlDeviceGetCount()):
        h, info = gpu(pynvml, i, brands)
        handles.append(h)
        gpus.append(info)
    p2p = None
    if len(handles) >= 2 and handles[0] is not None and handles[1] is not None:
        st = a.get("p2p", pynvml.nvmlDeviceGetP2PStatus, handles[0], handles[1], pynvml.NVML_P2P_CAPS_INDEX_READ)
        p2p = None if st is None else ("ok" if st == pynvml.NVML_P2P_STATUS_OK else f"status {st}")
    out.update(gpus=gpus, p2p_read=p2p, errors=a.errors, library=lib_info(loaded_library("libnvidia-ml.so")))
    return out


def query():
    try:
        import pynvml  # nvidia-ml-py
    except ImportError as e:
        return {"ok": False, "error": f"nvidia-ml-py is not installed ({e})", "library": None}
    try:
        pynvml.nvmlInit()
    except Exception as e:  # noqa: BLE001 - NVMLError_LibraryNotFound, DriverNotLoaded, LibRmVersionMismatch...
        # Even a failed init has loaded libnvidia-ml: its version tells a library/module mismatch.
        return {"ok": False, "error": str(e) or type(e).__name__, "library": lib_info(loaded_library("libnvidia-ml.so"))}
    try:
        return {"ok": True, "value": gather(pynvml)}
    except Exception as e:  # noqa: BLE001 - nvmlDeviceGetCount failing after a good init
        return {"ok": False, "error": str(e) or type(e).__name__, "library": lib_info(loaded_library("libnvidia-ml.so"))}
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass


def health_query():
    try:
        import pynvml  # nvidia-ml-py
    except ImportError as e:
        return {"ok": False, "error": f"nvidia-ml-py is not installed ({e})", "library": None}
    from nvml_health import gather_health  # type: ignore[import-not-found]  # this file's directory is sys.path[0]

    try:
        return {"ok": True, "value": gather_health(nvml=pynvml)}
    except Exception as e:  # noqa: BLE001 - an NVML binding that raises something other than NVMLError
        return {"ok": False, "error": f"{type(e).__name__}: {e}", "library": lib_info(loaded_library("libnvidia-ml.so"))}


def main():
    result = health_query() if "--health" in sys.argv[1:] else query()
    # The answer is the last stdout line: whatever a library printed before cannot corrupt it.
    sys.stdout.write("\n" + json.dumps(result, default=repr) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
