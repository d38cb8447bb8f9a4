"""Probe body: import torch once and report what only the imported module can tell.

Runs in the probe worker, never in the doctor. Returns plain JSON. An import failure is data
({"import_error": "..."}), not an exception, so a check can quote it to the user.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import warnings

# Libraries whose origin decides whether torch works: the CUDA stack torch links (B6-B8), the
# driver's libcuda (B16) and the OpenMP runtimes (two of them in one process misbehave).
_INTERESTING = re.compile(
    r"^lib(cudnn\w*|cublas(Lt)?|nccl|cudart|nvJitLink|cusparse(Lt)?|cufft|curand|cusolver|nvrtc|cuda|gomp|iomp5|omp)([-.]\S*)?\.so(\.[\d.]+)?$"
)


def loaded_libraries(maps_path: str = "/proc/self/maps") -> list[dict]:
    seen: dict[str, dict] = {}
    try:
        with open(maps_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) < 6:
                    continue
                path = parts[5].strip()
                if not path.startswith("/") or path in seen:
                    continue
                base = os.path.basename(path)
                if _INTERESTING.match(base):
                    seen[path] = {"name": base, "path": path, "realpath": os.path.realpath(path)}
    except OSError:
        pass
    return list(seen.values())


def _try(fn, default=None):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - each fact separately; one failure must not lose the rest
        return {"error": f"{type(e).__name__}: {e}"[:500]} if default is None else default


# Warnings ``import torch`` gave when preload() imported it (collect() then finds it imported).
_PRELOAD_WARNINGS: list[str] = []


def preload() -> bool:
    """Import torch ahead of the first check (ProbeClient.prestart), keeping the warnings the
    import gave for collect(). Raises what the import raised: the client then discards this
    worker, so the check that needs torch meets the failure in a fresh one, first-hand."""
    print("envdoctor-stage: importing torch", flush=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import torch  # noqa: F401
    _PRELOAD_WARNINGS[:] = [str(w.message)[:1000] for w in caught]
    return True


def collect() -> dict:
    # The interpreter that really imported torch (envdoctor's own, or the one given with --python).
    out: dict = {"import_error": None, "warnings": [], "loaded_libs": [], "executable": sys.executable}
    try:
        spec = importlib.util.find_spec("torch")
        out["origin"] = spec.origin if spec else None
    except (ImportError, ValueError) as e:
        out["origin"] = None
        out["import_error"] = f"{type(e).__name__}: {e}"
        return out
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            import torch
        except BaseException as e:  # noqa: BLE001 - ImportError, OSError from dlopen, even SystemExit
            out["import_error"] = f"{type(e).__name__}: {e}"[:2000]
            out["warnings"] = [str(w.message)[:1000] for w in caught]
            out["loaded_libs"] = loaded_libraries()
            return out
        out["file"] = getattr(torch, "__file__", None)
        # A directory named torch that shadows the real one, a partial install or an unbuilt
        # source checkout imports fine and then fails everywhere with AttributeError.
        missing = [name for name in ("__version__", "_C", "version") if not hasattr(torch, name)]
        if missing:
            out["import_error"] = (
                f"incomplete torch at {out['file'] or out.get('origin')}: it has no {', no '.join('torch.' + m for m in missing)}"
            )
            out["incomplete"] = missing
            out["warnings"] = [str(w.message)[:1000] for w in caught]
            out["loaded_libs"] = loaded_libraries()
            return out
        out["version"] = str(torch.__version__)
        out["cuda"] = getattr(torch.version, "cuda", None)
        out["hip"] = getattr(torch.version, "hip", None)
        out["git_version"] = getattr(torch.version, "git_version", None)
        out["cxx11_abi"] = _try(lambda: bool(torch._C._GLIBCXX_USE_CXX11_ABI), default=False)
        # _cuda_getArchFlags works without a usable GPU (get_arch_list() is [] then).
        flags = getattr(torch._C, "_cuda_getArchFlags", None)
        arch = _try(flags) if flags else None
        out["arch_list"] = arch.split() if isinstance(arch, str) else []
        out["cudnn"] = _try(lambda: torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None)
        out["cudnn_compile"] = _try(lambda: list(torch._C._cudnn.getCompileVersion()) if hasattr(torch._C, "_cudnn") else None)
        out["nccl"] = _try(lambda: ".".join(map(str, torch.cuda.nccl.version())) if out["cuda"] else None)
        out["cuda_available"] = _try(torch.cuda.is_available, default=False)
        count = _try(torch.cuda.device_count, default=0)
        out["device_count"] = count if isinstance(count, int) else 0
        devices = []
        for i in range(out["device_count"]):
            cap = _try(lambda i=i: torch.cuda.get_device_capability(i))
            devices.append(
                {
                    "name": _try(lambda i=i: torch.cuda.get_device_name(i)),
                    "cc": f"{cap[0]}.{cap[1]}" if isinstance(cap, tuple) else None,
                }
            )
        out["devices"] = devices
        out["warnings"] = _PRELOAD_WARNINGS + [str(w.message)[:1000] for w in caught]
    out["loaded_libs"] = loaded_libraries()
    return out
