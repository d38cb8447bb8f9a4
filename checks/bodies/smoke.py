"""Smoke-test bodies: real work on the real stack, run inside the probe worker only.

Each function imports torch (and triton / torch_xla) itself and returns plain JSON. A body
never hides an exception of the stack it tests: the check turns it into a diagnosis. Before
each step that can hang or crash (CUDA init, a compile, a kernel launch) a body prints a
``envdoctor-stage:`` line, so a probe killed at its deadline or by a signal says where it was.

Inputs are tiny on purpose: a smoke proves that a path works, it is not a benchmark, and the
whole run must cost little more than one first ``torch.compile``.
"""

from __future__ import annotations

import os
import re
import sys
import time
from typing import Any

from envdoctor_checks.bodies.reference_model import reference_model


def stage(text: str) -> None:
    print(f"envdoctor-stage: {text}", flush=True)


def _no_cuda_reason(torch) -> str:
    """Why torch sees no GPU, in the user's terms ('' when it sees one)."""
    if torch.version.cuda is None:
        return f"torch {torch.__version__} is not a CUDA build"
    if torch.cuda.is_available():
        return ""
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None and not cvd.strip():
        return "torch sees no GPU: CUDA_VISIBLE_DEVICES is set but empty"
    return "torch sees no GPU (torch.cuda.is_available() is False)"


# --- matmul ---------------------------------------------------------------------------------

# Error of one matmul, normalised by |A|@|B| (the size of the terms summed), so one tolerance
# fits any input scale. fp32: K roundings of 2^-24; TF32 rounds inputs to 10 mantissa bits
# (~2^-11 each); bf16 keeps 8 bits but the reference uses the same rounded inputs, leaving the
# output rounding (2^-9) and accumulation order.
MATMUL_TOLERANCE = {"fp32": 1e-4, "tf32": 5e-3, "bf16": 1.5e-2}


def matmul(size: int = 256) -> dict[str, Any]:
    """fp32, TF32 and bf16 matmul on every visible GPU against a CPU float64 reference."""
    import torch

    reason = _no_cuda_reason(torch)
    if reason:
        return {"skipped": reason}
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(size, size, generator=gen)
    b = torch.randn(size, size, generator=gen)
    refs = {}
    for kind in MATMUL_TOLERANCE:
        if kind == "bf16":
            a_in, b_in = a.bfloat16(), b.bfloat16()
        else:
            a_in, b_in = a, b
        a64, b64 = a_in.double(), b_in.double()
        refs[kind] = (a_in, b_in, a64 @ b64, a64.abs() @ b64.abs())

    gpus = []
    tf32_before = torch.backends.cuda.matmul.allow_tf32
    for index in range(torch.cuda.device_count()):
        item: dict[str, Any] = {"index": index, "name": "", "results": {}, "error": None}
        gpus.append(item)
        try:
            stage(f"initialising CUDA on GPU {index}")
            item["name"] = torch.cuda.get_device_name(index)
            dev = torch.device("cuda", index)
            for kind, (a_in, b_in, ref, scale) in refs.items():
                stage(f"{kind} matmul on GPU {index}")
                torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
                out = (a_in.to(dev) @ b_in.to(dev)).double().cpu()
                err = ((out - ref).abs() / scale.clamp_min(1e-30)).max().item()
                finite = bool(torch.isfinite(out).all().item())
                item["results"][kind] = {"error": err if finite else None, "tolerance": MATMUL_TOLERANCE[kind], "finite": finite}
        except Exception as e:  # noqa: BLE001 - one bad GPU is that GPU's result, not the run's
            item["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:500]
        finally:
            torch.backends.cuda.matmul.allow_tf32 = tf32_before
    return {"size": size, "gpus": gpus}


# --- Triton ---------------------------------------------------------------------------------


def triton_add(n: int = 4099) -> dict[str, Any]:
    """Compile, launch and check the vector-add kernel of ``triton_add.py``.

    Under ``TRITON_INTERPRET=1`` (set by the check on machines without a GPU) the kernel runs in
    Triton's interpreter on CPU tensors: that proves the kernel source and the Triton install,
    not a GPU toolchain.
    """
    import torch

    interpreted = os.environ.get("TRITON_INTERPRET") == "1"
    if not interpreted:
        reason = _no_cuda_reason(torch)
        if reason:
            return {"skipped": reason}
    stage("importing triton")
    import triton

    from envdoctor_checks.bodies import triton_add as kernel_file

    device = "cpu" if interpreted else "cuda"
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(n, generator=gen).to(device)
    y = torch.randn(n, generator=gen).to(device)
    stage("compiling and launching the Triton vector-add kernel" + (" (interpreter)" if interpreted else ""))
    start = time.perf_counter()
    out = kernel_file.add(x, y)
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    err = (out.cpu() - (x + y).cpu()).abs().max().item()
    return {
        "device": device,
        "interpreted": interpreted,
        "triton_version": getattr(triton, "__version__", "?"),
        "n": n,
        "max_error": err,
        "ok": err == 0.0,
        "seconds": round(seconds, 3),
    }


# --- torch.compile --------------------------------------------------------------------------


def _small_function(deliberate_break: bool):
    import torch

    def f(x, y):
        z = torch.sin(x) * torch.cos(y) + x
        if deliberate_break:
            # A graph break users meet every day: Dynamo cannot trace print().
            print("envdoctor: deliberate graph break")
        return torch.relu(z) * 2.0

    return f


class _CodeCapture:
    """Collects the wrapper code Inductor generates (its Triton or C++ kernels)."""

    def __enter__(self):
        from torch._inductor.graph import GraphLowering

        self.codes: list[str] = []
        self._cls = GraphLowering
        self._saved = GraphLowering.__dict__.get("save_output_code")
        GraphLowering.save_output_code = staticmethod(self.codes.append)
        return self

    def __exit__(self, *exc):
        self._cls.save_output_code = self._saved
        return False

    def kernels(self) -> dict[str, list[str]]:
        text = "\n".join(self.codes)
        triton_names = sorted(set(re.findall(r"async_compile\.triton\(\s*'(\w+)'", text)))
        cpp_names = sorted(set(re.findall(r"\b(cpp_fused_\w+)\s*=\s*async_compile\.cpp", text)))
        return {"triton": triton_names, "cpp": cpp_names}


def _reason_text(reason: Any) -> str:
    """'Failed to trace builtin operator: Dynamo does not know how to trace ... `print` ...'."""
    lines = [ln.strip() for ln in str(getattr(reason, "reason", reason)).strip().splitlines() if ln.strip()]
    if not lines:
        return "?"
    text = lines[0]
    explanation = next((ln for ln in lines[1:] if ln.startswith("Explanation:")), "")
    if explanation:
        text += ": " + explanation.removeprefix("Explanation:").strip()
    return text[:300]


def _explain(torch, fn, args) -> dict[str, Any]:
    """Graph breaks as torch._dynamo.explain reports them (Dynamo only: no Inductor compile)."""
    stage("counting graph breaks with torch._dynamo.explain")
    out = torch._dynamo.explain(fn)(*args)
    reasons = [_reason_text(r) for r in out.break_reasons]
    return {"graphs": out.graph_count, "graph_breaks": out.graph_break_count, "break_reasons": reasons, "breaks_from": "explain"}


def _compile_part(torch, name: str, fn, args, device: str, tol: float, use_explain: bool) -> dict[str, Any]:
    from torch._dynamo.utils import counters

    start, cpu = time.perf_counter(), _cpu_seconds()
    counters.clear()
    with torch.no_grad():
        eager = fn(*args)
        stage(f"torch.compile of the {name} (default mode, Inductor) on {device}")
        with _CodeCapture() as cap:
            got = torch.compile(fn)(*args)
        if device == "cuda":
            torch.cuda.synchronize()
    err = (got.float() - eager.float()).abs().max().item()
    part: dict[str, Any] = {
        "ok": bool(torch.allclose(got.float(), eager.float(), rtol=tol, atol=tol)),
        "max_error": err,
        "kernels": cap.kernels(),
    }
    if use_explain:
        part.update(_explain(torch, fn, args))
    else:
        # The same numbers explain() gives, read from the compile that just ran: a second
        # Dynamo trace of the module would cost ~0.5 s on the critical path for nothing new.
        graphs = int(counters["stats"].get("unique_graphs", 0))
        reasons = [_reason_text(r) for r in counters["graph_break"]]
        part.update({"graphs": graphs, "graph_breaks": max(graphs - 1, 0), "break_reasons": reasons, "breaks_from": "compile"})
    part["seconds"] = round(time.perf_counter() - start, 3)
    # CPU time, this process's and its finished children's (the C++ compiler): what the compile
    # cost, which a busy machine does not inflate as it does the wall-clock seconds (envdoctor diff).
    part["cpu_seconds"] = round(_cpu_seconds() - cpu, 3)
    return part


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def compile_smoke(
    parts: list[str] | tuple[str, ...] = ("function", "module"), deliberate_break: bool = False, gpu_build: bool | None = None
) -> dict[str, Any]:
    """torch.compile (default mode) of a small function and the reference module vs eager.

    Runs on CUDA when torch sees a GPU, else on CPU (Inductor's C++ path). Both parts share one
    process when asked together, so Inductor's one-time warm-up is paid once.

    A GPU build of torch that sees no GPU (GPUs hidden by CUDA_VISIBLE_DEVICES, a driver torch
    cannot use) compiles only the function, as scalar C++ (``cpp.vec_isa_ok=False``): the conv
    net's kernels and Inductor's probing of the CPU's vector ISAs (a g++ run per ISA) took a GPU
    build over a minute there, in a run whose GPU checks already fail, and the function proves
    the same thing (Dynamo traces, Inductor builds a C++ kernel that matches eager). A CPU build
    compiles both parts, vectorised, as its users' code will be. ``gpu_build`` overrides what
    torch says (tests exercise that path with a CPU build).
    """
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    if gpu_build is None:
        gpu_build = bool(torch.version.cuda or getattr(torch.version, "hip", None))
    small = device == "cpu" and gpu_build
    left_out = {
        p: "torch is a GPU build but sees no GPU: only the function is compiled on the CPU" for p in parts if small and p == "module"
    }
    parts = [p for p in parts if p not in left_out]
    out: dict[str, Any] = {"device": device, "torch": torch.__version__, "parts": {}, "left_out": left_out, "vectorized": not small}
    if device == "cuda":
        stage("initialising CUDA")
        torch.zeros(1, device=device)
    with _scalar_cpp(small):
        _compile_parts(torch, parts, deliberate_break, device, out)
    return out


def _scalar_cpp(on: bool):
    """Inductor's C++ without vectorisation (no g++ probe of each vector ISA) when ``on``."""
    import contextlib

    if not on:
        return contextlib.nullcontext()
    import torch._inductor.config as inductor_config

    return inductor_config.patch({"cpp.vec_isa_ok": False})


def _compile_parts(torch, parts, deliberate_break: bool, device: str, out: dict[str, Any]) -> None:
    # TF32 convolutions (cuDNN's default) differ from eager only by ordering; keep room for it.
    tol = 2e-3 if device == "cuda" else 1e-4
    gen = torch.Generator().manual_seed(0)
    args: tuple[Any, ...]
    for name in parts:
        if name == "function":
            fn = _small_function(deliberate_break)
            args = (torch.randn(64, generator=gen).to(device), torch.randn(64, generator=gen).to(device))
        elif name == "module":
            fn = reference_model(torch).to(device).eval()
            args = (torch.randn(2, 3, 8, 8, generator=gen).to(device),)
        else:
            raise ValueError(f"unknown part {name!r}")
        out["parts"][name] = _compile_part(torch, name, fn, args, device, tol, use_explain=name == "function")


def cudagraphs() -> dict[str, Any]:
    """torch.compile(mode="reduce-overhead"): Inductor plus CUDA graph capture and replay."""
    import torch

    reason = _no_cuda_reason(torch)
    if reason:
        return {"skipped": reason}
    from torch._dynamo.utils import counters

    fn = _small_function(False)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(64, generator=gen).cuda()
    y = torch.randn(64, generator=gen).cuda()
    eager = fn(x, y)
    stage('torch.compile(mode="reduce-overhead") and CUDA graph capture')
    compiled = torch.compile(fn, mode="reduce-overhead")
    errors = []
    # cudagraph trees: call 1 warms up, call 2 records, call 3 replays the graph.
    for _ in range(3):
        torch.compiler.cudagraph_mark_step_begin()
        got = compiled(x, y).clone()  # outputs are overwritten by the next replay (C8)
        errors.append((got - eager).abs().max().item())
    torch.cuda.synchronize()
    skips = int(sum(counters["inductor"].get(k, 0) for k in ("cudagraph_skips",)))
    return {"max_error": max(errors), "ok": max(errors) <= 1e-5, "cudagraph_skips": skips}


def amp_compile() -> dict[str, Any]:
    """bf16 autocast around a compiled linear-relu-linear vs the same under eager autocast."""
    import torch

    reason = _no_cuda_reason(torch)
    if reason:
        return {"skipped": reason}
    gen = torch.Generator().manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 16)).cuda().eval()
    x = torch.randn(8, 64, generator=gen).cuda()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        eager = model(x)
        stage("torch.compile under bf16 autocast")
        got = torch.compile(model)(x)
    torch.cuda.synchronize()
    err = (got.float() - eager.float()).abs().max().item()
    return {
        "dtype": str(got.dtype).replace("torch.", ""),
        "max_error": err,
        "ok": got.dtype == torch.bfloat16 and bool(torch.allclose(got.float(), eager.float(), rtol=2e-2, atol=2e-2)),
    }


def xla_op() -> dict[str, Any]:
    """A small tensor op on the XLA device compared with the same op on CPU."""
    stage("importing torch_xla")
    import torch
    import torch_xla

    stage(f"initialising the XLA device (PJRT_DEVICE={os.environ.get('PJRT_DEVICE', '<unset>')})")
    try:
        device = torch_xla.device()
    except AttributeError:  # torch_xla < 2.5
        import torch_xla.core.xla_model as xm

        device = xm.xla_device()
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(16, 16, generator=gen)
    ref = a @ a + 1.0
    stage(f"running a matmul on {device}")
    got = ((a.to(device) @ a.to(device)) + 1.0).cpu()
    err = (got - ref).abs().max().item()
    try:
        import torch_xla.runtime as xr

        kind = xr.device_type()
    except Exception:  # noqa: BLE001 - only for the report
        kind = None
    return {
        "device": str(device),
        "device_type": kind,
        "pjrt_device": os.environ.get("PJRT_DEVICE"),
        "torch_xla": getattr(torch_xla, "__version__", "?"),
        "max_error": err,
        "ok": bool(torch.allclose(got, ref, rtol=1e-2, atol=1e-2)),
        "python": sys.version.split()[0],
    }
