"""Probe bodies for the perf checks: matmul throughput and memory bandwidth per CUDA device.

Runs in a probe child (imports torch). Every figure comes from CUDA events around a batch of
launches after a warm-up, repeated a few times; the best repetition is kept, as GPU
benchmarks (cuBLAS's, DCGM's) do, so one hiccup of the host does not read as a slow GPU.

While the timed launches are still queued, the body reads the GPU's clocks, temperature, power
and clock-event ("throttle") reasons from NVML, so a slow figure comes with what the GPU was
doing *under load*, not at idle afterwards.
"""

from __future__ import annotations

import os
import time

# NVML clock-event reason bits (nvml.h, nvmlClocksEventReason*): what a user can act on.
_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}


def _unavailable(torch) -> dict | None:
    if torch.version.cuda is None:
        return {"cuda_available": False, "reason": f"torch {torch.__version__} is not a CUDA build", "devices": []}
    try:
        available = torch.cuda.is_available()
        count = torch.cuda.device_count()
    except Exception as e:  # noqa: BLE001 - reported as the reason
        return {"cuda_available": False, "reason": f"CUDA could not be initialised: {type(e).__name__}: {e}", "devices": []}
    if not available or count == 0:
        return {
            "cuda_available": False,
            "reason": f"torch {torch.__version__} sees no CUDA device (torch.cuda.is_available() is False)",
            "devices": [],
        }
    return None


def _nvml_handle(pynvml, props):
    uuid = getattr(props, "uuid", None)
    if uuid is not None:
        text = str(uuid)
        for candidate in (text, f"GPU-{text}", f"MIG-{text}"):
            try:
                return pynvml.nvmlDeviceGetHandleByUUID(candidate)
            except Exception:  # noqa: BLE001 - try the next spelling
                continue
    bus = getattr(props, "pci_bus_id", None)
    if bus is not None:
        domain = getattr(props, "pci_domain_id", 0)
        dev = getattr(props, "pci_device_id", 0)
        try:
            return pynvml.nvmlDeviceGetHandleByPciBusId(f"{domain:08x}:{bus:02x}:{dev:02x}.0")
        except Exception:  # noqa: BLE001
            return None
    return None


def _nvml_state(props) -> dict:
    """Clocks, power, temperature and clock-event reasons of the GPU now (best effort)."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception as e:  # noqa: BLE001 - NVML is optional here
        return {"error": f"NVML unavailable: {type(e).__name__}: {e}"}
    handle = _nvml_handle(pynvml, props)
    if handle is None:
        return {"error": "could not match the CUDA device to an NVML device"}
    out: dict = {}

    def read(key, fn, *args, scale=None):
        try:
            value = fn(handle, *args)
            out[key] = value * scale if scale is not None else value
        except Exception:  # noqa: BLE001 - not supported on this GPU (MIG, consumer boards)
            pass

    read("index", pynvml.nvmlDeviceGetIndex)
    read("sm_clock_mhz", pynvml.nvmlDeviceGetClockInfo, pynvml.NVML_CLOCK_SM)
    read("max_sm_clock_mhz", pynvml.nvmlDeviceGetMaxClockInfo, pynvml.NVML_CLOCK_SM)
    read("mem_clock_mhz", pynvml.nvmlDeviceGetClockInfo, pynvml.NVML_CLOCK_MEM)
    read("max_mem_clock_mhz", pynvml.nvmlDeviceGetMaxClockInfo, pynvml.NVML_CLOCK_MEM)
    read("temperature_c", pynvml.nvmlDeviceGetTemperature, pynvml.NVML_TEMPERATURE_GPU)
    read("power_w", pynvml.nvmlDeviceGetPowerUsage, scale=0.001)
    read("power_limit_w", pynvml.nvmlDeviceGetEnforcedPowerLimit, scale=0.001)
    read("default_power_limit_w", pynvml.nvmlDeviceGetPowerManagementDefaultLimit, scale=0.001)
    getter = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
        pynvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None
    )
    if getter is not None:
        try:
            mask = int(getter(handle))
            out["reasons_mask"] = mask
            out["reasons"] = [name for bit, name in _REASONS.items() if mask & bit]
        except Exception:  # noqa: BLE001
            pass
    return out


def _timed(torch, fn, *, target_s: float, reps: int, sample=None, warmup_s: float = 0.3) -> tuple[float, int, dict]:
    """Best seconds per call of ``fn`` over ``reps`` repetitions of a batch sized to take about
    ``target_s``; ``sample()`` is called while the last batch is still running on the GPU."""
    # Warm-up long enough for the GPU to leave its idle clocks and for cuBLAS to pick kernels.
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < warmup_s:
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(3):
        fn()
    end.record()
    end.synchronize()
    per_call = max(start.elapsed_time(end) / 3 / 1000, 1e-6)
    n = max(5, min(2000, int(target_s / per_call)))
    best = float("inf")
    state: dict = {}
    for rep in range(reps):
        start.record()
        for _ in range(n):
            fn()
        end.record()
        if sample is not None and rep == reps - 1:
            time.sleep(min(0.05, target_s / 4))
            state = sample()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1000 / n)
    return best, n, state


def _props_info(torch, i: int) -> dict:
    props = torch.cuda.get_device_properties(i)
    uuid = getattr(props, "uuid", None)
    return {
        "index": i,
        "name": props.name,
        "cc": f"{props.major}.{props.minor}",
        "sm_count": props.multi_processor_count,
        "memory_total": props.total_memory,
        "uuid": str(uuid) if uuid is not None else None,
    }


_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "tf32": "float32"}


def measure_matmul(dtypes: list[str], n: int = 8192, target_s: float = 0.25, reps: int = 3) -> dict:
    """Dense n×n×n matmul TFLOP/s per visible CUDA device and dtype."""
    import torch

    missing = _unavailable(torch)
    if missing:
        return missing
    # "tf32" means fp32 inputs on TF32 tensor cores. The worker is shared with other probes
    # (the smoke tests compare fp32 results with tight tolerances), so restore the setting.
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")
    try:
        devices = [_matmul_device(torch, i, dtypes, n, target_s, reps) for i in range(torch.cuda.device_count())]
    finally:
        torch.set_float32_matmul_precision(previous)
    return {"cuda_available": True, "torch": torch.__version__, "pid": os.getpid(), "devices": devices}


def _matmul_device(torch, i: int, dtypes: list[str], n: int, target_s: float, reps: int) -> dict:
    info = _props_info(torch, i)
    props = torch.cuda.get_device_properties(i)
    info["matmul"] = {}
    with torch.cuda.device(i):
        for key in dtypes:
            dtype = getattr(torch, _DTYPES[key])
            if key in ("bf16", "tf32") and props.major < 8:
                info["matmul"][key] = {"error": f"{key} needs compute capability 8.0 or newer (this GPU is {info['cc']})"}
                continue
            size = n
            free, _ = torch.cuda.mem_get_info(i)
            while size > 1024 and 3 * size * size * dtype.itemsize > free * 0.5:
                size //= 2  # a small or shared GPU: fewer bytes, still compute-bound
            a = b = c = None
            try:
                a = torch.randn(size, size, device=i, dtype=dtype)
                b = torch.randn(size, size, device=i, dtype=dtype)
                c = torch.empty(size, size, device=i, dtype=dtype)
                sec, iters, state = _timed(
                    torch,
                    lambda a=a, b=b, c=c: torch.mm(a, b, out=c),
                    target_s=target_s,
                    reps=reps,
                    sample=lambda p=props: _nvml_state(p),
                )
            except torch.cuda.OutOfMemoryError as e:
                info["matmul"][key] = {"error": f"out of GPU memory for {size}x{size} matrices: {e}"}
                continue
            finally:
                a = b = c = None
                torch.cuda.empty_cache()
            info["matmul"][key] = {"tflops": 2 * size**3 / sec / 1e12, "ms": sec * 1000, "n": size, "iters": iters, "nvml": state}
    return info


def measure_bandwidth(mib: int = 1024, target_s: float = 0.25, reps: int = 3) -> dict:
    """Device-to-device copy bandwidth per visible CUDA device, in GB/s (read + write bytes)."""
    import torch

    missing = _unavailable(torch)
    if missing:
        return missing
    devices = []
    for i in range(torch.cuda.device_count()):
        info = _props_info(torch, i)
        props = torch.cuda.get_device_properties(i)
        with torch.cuda.device(i):
            free, _ = torch.cuda.mem_get_info(i)
            # Far larger than any L2 cache (50-126 MB), so the copy streams through DRAM/HBM.
            nbytes = mib << 20
            while nbytes > (64 << 20) and 2 * nbytes > free * 0.5:
                nbytes //= 2
            try:
                src = torch.empty(nbytes, dtype=torch.uint8, device=i).fill_(1)
                dst = torch.empty_like(src)
                sec, iters, state = _timed(
                    torch, lambda s=src, d=dst: d.copy_(s), target_s=target_s, reps=reps, sample=lambda p=props: _nvml_state(p)
                )
            except torch.cuda.OutOfMemoryError as e:
                info["bandwidth"] = {"error": f"out of GPU memory for two {nbytes >> 20} MiB buffers: {e}"}
                devices.append(info)
                continue
            finally:
                src = dst = None
                torch.cuda.empty_cache()
        info["bandwidth"] = {"gbps": 2 * nbytes / sec / 1e9, "ms": sec * 1000, "bytes": nbytes, "iters": iters, "nvml": state}
        devices.append(info)
    return {"cuda_available": True, "torch": torch.__version__, "pid": os.getpid(), "devices": devices}
