"""Expected throughput per GPU model, for the perf checks.

Every figure is the vendor's **dense** peak (datasheets print the 2:4-sparsity figure next to
it, twice as large, usually marked with an asterisk: the sparse figure is never reachable by a
dense matmul and is not used here). 16-bit figures are with FP32 accumulation, which is what
cuBLAS uses for torch's bf16/fp16 matmuls (GeForce sheets also print a 2x "FP16 accumulate"
figure). Memory bandwidth is the datasheet's DRAM/HBM figure.

No real kernel reaches a datasheet peak: the peak assumes the boost clock, and a sustained
matmul pulls the GPU to its power limit. The *expected* figure is therefore peak x an
achievable fraction (what a healthy GPU of that class measures with torch.mm / a device copy;
power-capped parts such as the 72 W L4 get a lower one), and the checks warn below 75 % of the
expected figure, the margin NVIDIA's DCGM diagnostics use (``nvvs/diag-skus.yaml.in``: "H200
memory bandwidth: dcgmproftester shows 3110. Multiply by .75").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

WARN_BELOW = 0.75

# Share of the dense datasheet peak that a healthy GPU reaches in these measurements:
# an 8192^3 torch.mm (16-bit: cuBLAS reaches 70-80 % on Hopper/Ampere; TF32 less) and a
# 1 GiB device-to-device copy counted as read + write bytes.
ACHIEVABLE = {"bf16": 0.70, "fp16": 0.70, "tf32": 0.60, "copy": 0.75}

METRIC_UNITS = {"bf16": "TFLOP/s", "fp16": "TFLOP/s", "tf32": "TFLOP/s", "copy": "GB/s"}


@dataclass(frozen=True)
class GpuSpec:
    model: str
    pattern: str  # regular expression searched (case-insensitively) in the CUDA/NVML device name
    sm_count: int  # full part; fewer SMs means a MIG slice or a cut-down variant: no verdict
    peaks: dict[str, float]  # dense datasheet peaks: bf16/fp16/tf32 in TFLOP/s, copy in GB/s
    source: str
    achievable: dict[str, float] = field(default_factory=dict)  # overrides ACHIEVABLE
    note: str = ""

    def peak(self, metric: str) -> float | None:
        return self.peaks.get(metric)

    def expected(self, metric: str) -> float | None:
        peak = self.peaks.get(metric)
        if peak is None:
            return None
        return peak * self.achievable.get(metric, ACHIEVABLE[metric])


def _p(bf16: float | None, tf32: float | None, copy: float, fp16: float | None = None) -> dict[str, float]:
    out = {"copy": copy}
    if bf16 is not None:
        out["bf16"] = bf16
        out["fp16"] = bf16 if fp16 is None else fp16
    elif fp16 is not None:
        out["fp16"] = fp16
    if tf32 is not None:
        out["tf32"] = tf32
    return out


_H200 = "NVIDIA H200 Tensor Core GPU datasheet"
_H100 = "NVIDIA H100 Tensor Core GPU datasheet"
_A100 = "NVIDIA A100 Tensor Core GPU datasheet"

# Ordered: the first matching pattern wins, so variants come before the bare model name.
TABLE: tuple[GpuSpec, ...] = (
    GpuSpec("H200 NVL", r"\bH200 NVL\b", 132, _p(835.5, 417.5, 4800), _H200 + " (H200 NVL column)"),
    GpuSpec("H200 SXM", r"\bH200\b", 132, _p(989.5, 494.5, 4800), _H200 + " (H200 SXM column)"),
    GpuSpec("H100 NVL", r"\bH100 NVL\b", 132, _p(835.5, 417.5, 3900), _H100 + " (H100 NVL column)"),
    GpuSpec("H100 PCIe", r"\bH100 PCIe\b", 114, _p(756.5, 378, 2000), _H100 + " (H100 PCIe column)"),
    GpuSpec("H100 SXM", r"\bH100\b", 132, _p(989.5, 494.5, 3350), _H100 + " (H100 SXM column; NVML name 'NVIDIA H100 80GB HBM3')"),
    GpuSpec("A100 80GB PCIe", r"\bA100[- ](80GB[- ]PCIe|PCIE-80GB)", 108, _p(312, 156, 1935), _A100 + " (A100 80GB PCIe column)"),
    GpuSpec("A100 80GB SXM", r"\bA100[- ](SXM4?-)?80GB", 108, _p(312, 156, 2039), _A100 + " (A100 80GB SXM column)"),
    GpuSpec("A100 40GB PCIe", r"\bA100[- ](PCIE-40GB|40GB[- ]PCIe|PCIe)", 108, _p(312, 156, 1555), _A100 + " (A100 40GB PCIe column)"),
    GpuSpec("A100 40GB SXM", r"\bA100\b", 108, _p(312, 156, 1555), _A100 + " (A100 40GB SXM column)"),
    GpuSpec(
        "B200",
        r"\bB200\b",
        148,
        _p(2250, 1100, 8000),
        "NVIDIA HGX B200 specifications (per GPU: board figures / 8, with-sparsity figures / 2)",
        note="early figures; B200 boards ship at different power limits",
    ),
    GpuSpec("L40S", r"\bL40S\b", 142, _p(362.05, 183, 864), "NVIDIA L40S datasheet"),
    GpuSpec("L40", r"\bL40\b", 142, _p(181.05, 90.5, 864), "NVIDIA L40 datasheet"),
    GpuSpec(
        "L4",
        r"\bL4\b",
        58,
        _p(121, 60, 300),
        "NVIDIA L4 Tensor Core GPU datasheet",
        achievable={"bf16": 0.5, "fp16": 0.5, "tf32": 0.45},
        note="a 72 W part: a sustained matmul runs far below the boost clock",
    ),
    GpuSpec(
        "A10",
        r"\bA10\b",
        72,
        _p(125, 62.5, 600),
        "NVIDIA A10 Tensor Core GPU datasheet",
        achievable={"bf16": 0.55, "fp16": 0.55, "tf32": 0.5},
        note="a 150 W part",
    ),
    GpuSpec(
        "T4",
        r"\bT4\b",
        40,
        _p(None, None, 320, fp16=65),
        "NVIDIA T4 Tensor Core GPU datasheet (mixed precision FP16/FP32)",
        achievable={"fp16": 0.35},
        note="a 70 W part: sustained FP16 matmuls run far below the boost clock",
    ),
    GpuSpec("V100S PCIe", r"\bV100S\b", 80, _p(None, None, 1134, fp16=130), "NVIDIA V100 Tensor Core GPU datasheet (V100S PCIe column)"),
    GpuSpec(
        "V100 PCIe", r"\bV100[- ]PCIE\b", 80, _p(None, None, 900, fp16=112), "NVIDIA V100 Tensor Core GPU datasheet (V100 PCIe column)"
    ),
    GpuSpec("V100 SXM2", r"\bV100\b", 80, _p(None, None, 900, fp16=125), "NVIDIA V100 Tensor Core GPU datasheet (V100 SXM2 column)"),
    GpuSpec(
        "GeForce RTX 5090",
        r"\bRTX 5090\b",
        170,
        _p(209.5, 104.8, 1792),
        "NVIDIA RTX Blackwell GPU architecture whitepaper (FP32-accumulate column)",
    ),
    GpuSpec(
        "GeForce RTX 4090", r"\bRTX 4090\b", 128, _p(165.2, 82.6, 1008), "NVIDIA Ada GPU architecture whitepaper (FP32-accumulate column)"
    ),
    GpuSpec(
        "GeForce RTX 3090",
        r"\bRTX 3090\b(?! Ti)",
        82,
        _p(71, 35.6, 936),
        "NVIDIA Ampere GA102 GPU architecture whitepaper (FP32-accumulate column)",
    ),
)


def lookup(name: str) -> GpuSpec | None:
    """The table row for a device name as CUDA or NVML spells it ('NVIDIA H100 80GB HBM3')."""
    for spec in TABLE:
        if re.search(spec.pattern, name, re.IGNORECASE):
            return spec
    return None
