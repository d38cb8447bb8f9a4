"""Performance sanity (opt-in: tag ``perf``, ``--profile full``): is each GPU as fast as it should be?

A machine can pass every functional check and still be slow: a GPU stuck at a low power limit,
locked or application clocks left from a benchmark, a failing fan (``HW Thermal Slowdown``), an
external power brake, or a cut-down part sold under a familiar name. These checks measure dense
matmul TFLOP/s (bf16, fp16, TF32) and device-to-device copy bandwidth on every visible GPU and
compare them with the datasheet figures in ``_perf_table.py``; below 75 % of the expected figure
(DCGM's margin) they warn and say what NVML reported while the GPU was under load: clocks,
temperature, power and clock-event ("throttle") reasons.
"""

from __future__ import annotations

from envdoctor import Item, Status, Unavailable, check, fact, ok, warn, worst
from envdoctor_checks._perf_table import METRIC_UNITS, WARN_BELOW, lookup

MATMUL_DTYPES = ("bf16", "fp16", "tf32")

# NVML clock-event reasons in a user's words (nvml.h: nvmlClocksEventReason*).
REASON_TEXT = {
    "gpu_idle": "idle",
    "applications_clocks_setting": "applications clocks set below the maximum",
    "sw_power_cap": "software power cap",
    "hw_slowdown": "hardware slowdown (temperature or power brake)",
    "sync_boost": "sync boost (clocks held to the slowest GPU of a group)",
    "sw_thermal_slowdown": "software thermal slowdown",
    "hw_thermal_slowdown": "hardware thermal slowdown",
    "hw_power_brake_slowdown": "external power brake",
    "display_clock_setting": "display clock setting",
}


def _gpu_probe(torch_build: dict, probe, body: str, kwargs: dict, timeout: float, what: str) -> dict:
    kind = torch_build.get("kind")
    if kind == "cpu":
        raise Unavailable(f"torch {torch_build.get('version')} is a CPU-only build: no CUDA GPU to measure")
    if kind != "cuda":
        raise Unavailable(f"the perf checks measure NVIDIA GPUs through CUDA; this torch is a {kind} build")
    result = probe.call(f"envdoctor_checks.bodies.perf:{body}", kwargs, timeout=timeout, what=what)
    if not result.get("cuda_available"):
        raise Unavailable(result.get("reason") or "no CUDA device is available to torch")
    return result


@fact("matmul_perf")
def matmul_perf(torch_build, probe) -> dict:
    """Dense matmul TFLOP/s per visible CUDA device and dtype, with NVML state under load."""
    return _gpu_probe(torch_build, probe, "measure_matmul", {"dtypes": list(MATMUL_DTYPES)}, 240, "the matmul throughput probe")


@fact("bandwidth_perf")
def bandwidth_perf(torch_build, probe) -> dict:
    """Device-to-device copy bandwidth (GB/s) per visible CUDA device, with NVML state under load."""
    return _gpu_probe(torch_build, probe, "measure_bandwidth", {}, 180, "the memory bandwidth probe")


def _fmt(value: float, metric: str) -> str:
    if METRIC_UNITS[metric] == "GB/s":
        return f"{value:,.0f} GB/s"
    return f"{value:,.1f} TFLOP/s" if value < 100 else f"{value:,.0f} TFLOP/s"


def describe_state(nvml: dict | None) -> str:
    """What NVML saw while the measurement ran: clocks, temperature, power, reasons."""
    if not nvml or "error" in nvml:
        return (nvml or {}).get("error", "no NVML readings")
    parts = []
    if "sm_clock_mhz" in nvml:
        top = f"/{nvml['max_sm_clock_mhz']}" if "max_sm_clock_mhz" in nvml else ""
        parts.append(f"SM clock {nvml['sm_clock_mhz']}{top} MHz")
    if "mem_clock_mhz" in nvml:
        top = f"/{nvml['max_mem_clock_mhz']}" if "max_mem_clock_mhz" in nvml else ""
        parts.append(f"memory clock {nvml['mem_clock_mhz']}{top} MHz")
    if "temperature_c" in nvml:
        parts.append(f"{nvml['temperature_c']} °C")
    if "power_w" in nvml:
        limit = f" of a {nvml['power_limit_w']:.0f} W limit" if "power_limit_w" in nvml else ""
        parts.append(f"{nvml['power_w']:.0f} W{limit}")
    reasons = [REASON_TEXT.get(r, r) for r in nvml.get("reasons", []) if r != "gpu_idle"]
    parts.append("clocks limited by: " + ", ".join(reasons) if reasons else "no clock-event (throttle) reason reported")
    return "; ".join(parts)


def hint_for(nvml: dict | None, gpu: str) -> str:
    """The most likely fix for a slow GPU, from its NVML state under load."""
    nvml = nvml or {}
    reasons = set(nvml.get("reasons", []))
    sel = f"-i {nvml['index']}" if "index" in nvml else f"-i {gpu}"
    limit, default = nvml.get("power_limit_w"), nvml.get("default_power_limit_w")
    if limit and default and limit < default * 0.95:
        return f"its power limit is {limit:.0f} W, below the default {default:.0f} W: sudo nvidia-smi {sel} -pl {default:.0f}"
    if reasons & {"hw_thermal_slowdown", "sw_thermal_slowdown"}:
        return f"it is slowing down for heat: check its cooling and airflow, then: nvidia-smi {sel} -q -d PERFORMANCE,TEMPERATURE"
    if "hw_power_brake_slowdown" in reasons:
        return f"the board's power-brake signal is asserted (power supply or chassis): nvidia-smi {sel} -q -d PERFORMANCE, then have the hardware checked"
    if "hw_slowdown" in reasons:
        return f"hardware slowdown (overheating or power): nvidia-smi {sel} -q -d PERFORMANCE,TEMPERATURE,POWER, then have the hardware checked"
    if "applications_clocks_setting" in reasons:
        return f"application clocks are set below the maximum: sudo nvidia-smi {sel} -rac"
    sm, top = nvml.get("sm_clock_mhz"), nvml.get("max_sm_clock_mhz")
    if sm and top and sm < 0.8 * top and "sw_power_cap" not in reasons:
        return f"the SM clock stayed at {sm} of {top} MHz: if clocks were locked (nvidia-smi -lgc), unlock them: sudo nvidia-smi {sel} -rgc"
    return f"check for other work on the GPU (nvidia-smi {sel}) and run NVIDIA's diagnostics: dcgmi diag -r 3"


def judge_device(dev: dict, metric: str, measured: float) -> tuple[Status, str, dict]:
    """Status and one-line text for one measured figure of one device."""
    name = dev.get("name", "?")
    spec = lookup(name)
    label = f"GPU {dev.get('index', '?')} ({name}) {metric if metric != 'copy' else 'copy bandwidth'}"
    info: dict = {"measured": measured, "unit": METRIC_UNITS[metric]}
    if spec is None:
        return Status.PASS, f"{label}: {_fmt(measured, metric)} (no reference figures for this model: no verdict)", info
    peak_value, expected = spec.peak(metric), spec.expected(metric)
    info.update(model=spec.model, source=spec.source, peak=peak_value, expected=expected)
    if expected is None or peak_value is None:  # (one is None only with the other)
        return Status.PASS, f"{label}: {_fmt(measured, metric)} (the {spec.model} datasheet gives no {metric} figure: no verdict)", info
    sms = dev.get("sm_count")
    if sms and sms != spec.sm_count:
        return (
            Status.PASS,
            f"{label}: {_fmt(measured, metric)} (it has {sms} SMs, the full {spec.model} {spec.sm_count}: "
            "a MIG slice or a cut-down variant, so no verdict)",
            info,
        )
    ratio = measured / expected
    info["ratio"] = ratio
    peak = f"dense peak {_fmt(peak_value, metric)}" if metric != "copy" else f"datasheet {_fmt(peak_value, metric)}"
    text = f"{label}: {_fmt(measured, metric)}, {ratio:.0%} of the {_fmt(expected, metric)} expected ({peak})"
    if ratio < WARN_BELOW:
        return Status.WARN, text, info
    return Status.PASS, text, info


def _judge(result: dict, metrics: list[tuple[str, str]]) -> object:
    """``metrics``: (metric, key into the device dict) pairs; one Item per device and metric."""
    items: list[Item] = []
    details: dict = {"devices": []}
    slow: list[tuple[str, dict, str]] = []
    for dev in result.get("devices", []):
        drow = {"index": dev.get("index"), "name": dev.get("name"), "sm_count": dev.get("sm_count"), "figures": {}}
        for metric, key in metrics:
            m = dev.get("matmul", {}).get(metric) if key == "matmul" else dev.get("bandwidth")
            if not m:
                continue
            label = f"GPU {dev.get('index')} {metric}"
            if "error" in m:
                items.append(Item(label, Status.SKIP, m["error"]))
                drow["figures"][metric] = {"error": m["error"]}
                continue
            value = m["tflops"] if key == "matmul" else m["gbps"]
            status, text, info = judge_device(dev, metric, value)
            info["nvml"] = m.get("nvml", {})
            drow["figures"][metric] = info
            if status is Status.WARN:
                state = describe_state(m.get("nvml"))
                text = f"{text}; {state}"
                slow.append((text, m.get("nvml") or {}, str(dev.get("index"))))
            items.append(Item(label, status, text))
        details["devices"].append(drow)
    if not items:
        raise Unavailable("no measurement came back from the probe")
    status = worst(items)
    if status is Status.WARN:
        first_text, nvml, gpu = slow[0]
        more = f" (and {len(slow) - 1} more slow figure(s))" if len(slow) > 1 else ""
        return warn(first_text + more, hint_for(nvml, gpu), details=details, items=items)
    return ok(_summary(details, metrics), details=details, items=items)


def _summary(details: dict, metrics: list[tuple[str, str]]) -> str:
    """One line for a healthy result: figures per metric (a range over several GPUs)."""
    devices = details["devices"]
    names = sorted({d["name"] for d in devices})
    who = f"GPU {devices[0]['index']} ({names[0]})" if len(devices) == 1 else f"{len(devices)} GPUs ({', '.join(names)})"
    figures, ratios, unjudged = [], [], set()
    for metric, _ in metrics:
        values = [d["figures"][metric] for d in devices if "measured" in d["figures"].get(metric, {})]
        if not values:
            continue
        lo, hi = min(v["measured"] for v in values), max(v["measured"] for v in values)
        shown = _fmt(lo, metric) if len(values) == 1 or lo == hi else f"{_fmt(lo, metric).split()[0]}-{_fmt(hi, metric)}"
        figures.append(f"{metric if metric != 'copy' else 'copy'} {shown}")
        for v in values:
            if "ratio" in v:
                ratios.append(v["ratio"])
            else:
                unjudged.add(metric)
    text = f"{who}: " + ", ".join(figures)
    if ratios:
        text += f" (at least {min(ratios):.0%} of expected)"
    if unjudged:
        text += f"; no verdict for {', '.join(sorted(unjudged))}: no reference figures for this model (see details)"
    return text


@check("perf.matmul", tags=("perf", "gpu"), blame=("gpus", "driver"))
def matmul_throughput(matmul_perf):
    """Dense matmul throughput (bf16, fp16, TF32) of each GPU meets its datasheet figure"""
    return _judge(matmul_perf, [(m, "matmul") for m in MATMUL_DTYPES])


@check("perf.memory_bandwidth", tags=("perf", "gpu"), blame=("gpus", "driver"))
def memory_bandwidth(bandwidth_perf):
    """Device-to-device memory bandwidth of each GPU meets its datasheet figure"""
    return _judge(bandwidth_perf, [("copy", "bandwidth")])
