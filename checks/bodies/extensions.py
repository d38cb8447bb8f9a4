"""Probe body: load one distribution's compiled torch extensions after torch, as a user would.

Runs in the probe worker, one call per distribution, so a segfault or a hang in one extension
kills only that call (the client starts a fresh worker for the next). Import errors are data,
not exceptions, so the check can quote them.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from envdoctor_checks._lazy import lazy

# Read when a body runs: the check module imports this one for OPS, and triage need not load them.
_elf = lazy("envdoctor_checks._elf")
ctypes = lazy("ctypes")
traceback = lazy("traceback")

# The libraries an extension's torch symbols resolve from (libtorch_python pulls in the rest).
TORCH_LIBS = ("libtorch_python.so", "libtorch.so", "libtorch_cpu.so", "libtorch_cuda.so", "libc10.so", "libc10_cuda.so")
# Mangled-name prefixes of the namespaces torch exports: c10::, at::, torch::, caffe2::.
TORCH_NAMESPACES = ("3c10", "2at", "5torch", "6caffe2")


def _stage(text: str) -> None:
    print(f"envdoctor-stage: {text}", flush=True)


def _error(e: BaseException) -> dict:
    return {"exc_type": type(e).__name__, "error": str(e)[:2000], "traceback": traceback.format_exc(limit=6)[-3000:]}


def mapped_paths(maps_path: str = "/proc/self/maps") -> set[str]:
    out: set[str] = set()
    try:
        with open(maps_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].startswith("/"):
                    out.add(os.path.realpath(parts[5].strip()))
    except OSError:
        pass
    return out


def is_torch_symbol(name: str) -> bool:
    for prefix in ("_ZN", "_ZNK", "_ZTV", "_ZTI", "_ZTS"):
        if name.startswith(prefix) and name[len(prefix) :].startswith(TORCH_NAMESPACES):
            return True
    return False


def _loaded_handles(names) -> list:
    handles = []
    for name in names:
        try:
            # RTLD_NOLOAD: a handle only to what is already loaded; nothing new runs.
            handles.append(ctypes.CDLL(name, mode=os.RTLD_NOLOAD))
        except OSError:
            continue
    return handles


def missing_torch_symbols(path: str, limit: int = 20) -> dict:
    """The torch symbols an unloaded extension needs that the loaded torch does not export,
    found without loading it (its static initialisers never run)."""
    wanted = [s for s in _elf.undefined_symbols(path) if is_torch_symbol(s)]
    needed = _elf.needed(path) or []
    import torch

    # A CUDA build of an extension beside a CPU torch needs libtorch_cuda.so, which is not there.
    torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    absent = [n for n in _elf.links_torch(needed) if not os.path.exists(os.path.join(torch_lib, n)) and not _loaded_handles([n])]
    if absent:
        return {"missing": [], "checked": 0, "absent": absent}
    handles = _loaded_handles([*TORCH_LIBS, *needed])
    if not handles:
        return {"missing": [], "checked": 0}
    missing = []
    for sym in wanted:
        if not any(hasattr(h, sym) for h in handles):
            missing.append(sym)
            if len(missing) >= limit:
                break
    return {"missing": missing, "checked": len(wanted)}


def load(dist: str, modules: list[str], sos: list[str], op: str | None = None) -> dict:
    """Import ``modules`` after torch, then check each of ``sos`` (absolute paths of the
    distribution's objects that link torch): loaded by the import, or its torch symbols resolved
    against the loaded torch. ``op`` names a tiny op to run (see OPS)."""
    _stage("importing torch")
    import torch  # noqa: F401 - extensions need torch loaded first, as in user code

    imports = []
    for name in modules:
        _stage(f"importing {name} (from {dist})")
        try:
            importlib.import_module(name)
            imports.append({"module": name, "ok": True})
        except BaseException as e:  # noqa: BLE001 - SystemExit or a C++ exception must become data
            imports.append({"module": name, "ok": False, **_error(e)})
    mapped = mapped_paths()
    objects = []
    for path in sos:
        if os.path.realpath(path) in mapped:
            objects.append({"path": path, "loaded": True})
            continue
        _stage(f"reading the symbols {os.path.basename(path)} needs")
        objects.append({"path": path, "loaded": False, **missing_torch_symbols(path)})
    result: dict[str, Any] = {"dist": dist, "imports": imports, "objects": objects, "op": None}
    if op in OPS and all(i["ok"] for i in imports):
        _stage(f"running {op}")
        try:
            result["op"] = {"name": op, "ok": True, "detail": OPS[op]()}
        except BaseException as e:  # noqa: BLE001
            result["op"] = {"name": op, "ok": False, **_error(e)}
    return result


# ---- tiny ops: each exercises the compiled code, not only the import ---------------------------


def _nms():
    # torchvision's import swallows a _C that fails to load; nms then raises
    # "operator torchvision::nms does not exist".
    import torch
    import torchvision

    boxes = torch.tensor([[0.0, 0.0, 10.0, 10.0], [1.0, 1.0, 10.0, 10.0], [20.0, 20.0, 30.0, 30.0]])
    keep = torchvision.ops.nms(boxes, torch.tensor([0.9, 0.8, 0.7]), 0.5).tolist()
    if keep != [0, 2]:
        raise AssertionError(f"torchvision.ops.nms kept {keep}, expected [0, 2]")
    return "torchvision.ops.nms on CPU tensors"


def _lfilter():
    import torch
    import torchaudio

    x = torch.tensor([[1.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    y = torchaudio.functional.lfilter(
        x, torch.tensor([1.0, -0.5], dtype=torch.float64), torch.tensor([1.0, 0.0], dtype=torch.float64), clamp=False
    )
    expected = [1.0, 0.5, 0.25, 0.125]
    if any(abs(a - b) > 1e-9 for a, b in zip(y[0].tolist(), expected, strict=True)):
        raise AssertionError(f"torchaudio lfilter gave {y[0].tolist()}, expected {expected}")
    return "torchaudio.functional.lfilter on CPU tensors"


def _attention_inputs():
    import torch

    if not torch.cuda.is_available():
        return None
    g = torch.Generator(device="cuda").manual_seed(0)
    return [torch.randn(1, 64, 2, 64, device="cuda", dtype=torch.float16, generator=g) for _ in range(3)]


def _reference(q, k, v):
    import torch

    out = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2).float(), k.transpose(1, 2).float(), v.transpose(1, 2).float())
    return out.transpose(1, 2)


def _attention(fn, what: str):
    qkv = _attention_inputs()
    if qkv is None:
        return f"{what}: no GPU visible, import only"
    _stage(f"running {what} on GPU 0")
    err = (fn(*qkv).float() - _reference(*qkv)).abs().max().item()
    if not err < 2e-2:
        raise AssertionError(f"{what} differs from scaled_dot_product_attention by {err:.3g}")
    return f"{what} on GPU matches scaled_dot_product_attention (max error {err:.1e})"


def _flash_attn():
    import flash_attn

    return _attention(flash_attn.flash_attn_func, "flash_attn_func")


def _xformers():
    import xformers.ops

    return _attention(xformers.ops.memory_efficient_attention, "xformers memory_efficient_attention")


OPS = {"torchvision": _nms, "torchaudio": _lfilter, "flash-attn": _flash_attn, "xformers": _xformers}
