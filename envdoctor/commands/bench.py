"""``envdoctor bench``: training-step time of a small reference model, eager vs torch.compile.

The reference model (two conv-bn-relu blocks, a global pool and a linear head; batch
32x3x224x224; SGD; cross-entropy) is the one used in public torch.compile write-ups, so the
figures can be compared with theirs (one measured on an A100: eager 18.6 ms per step, default
13.8 ms, reduce-overhead 12.9 ms, max-autotune 12.7 ms).

Each mode runs in its own probe child (``envdoctor_checks.bodies.bench``): this process never
imports torch, every compiled mode starts from a cold compiler cache so its compile time is
the real one, and a mode that crashes or hangs becomes a row with the diagnosis. On a machine
without a CUDA GPU a small CPU variant runs instead (and says so); ``--device cuda`` refuses.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import click

from envdoctor.console import writable_target, write
from envdoctor.core import builtins
from envdoctor.core.api import ProbeError, ProbeRaised
from envdoctor.core.exitcode import ExitCode

BODY = builtins.declared("BENCH_BODY")  # declared by the built-ins (checks/__init__.py)
MODES = ("eager", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
DEFAULT_MODES = ("eager", "default", "reduce-overhead")


@dataclass(frozen=True)
class Config:
    device: str
    batch: int
    size: int
    warmup: int
    runs: int
    steps: int

    @property
    def cpu_variant(self) -> bool:
        return self.device == "cpu"


# The model as published (GPU), and a variant small enough for a CPU (about 0.1 s a
# step on two cores instead of minutes).
GPU_DEFAULTS = {"batch": 32, "size": 224, "warmup": 10, "runs": 5, "steps": 20}
CPU_DEFAULTS = {"batch": 8, "size": 64, "warmup": 1, "runs": 3, "steps": 2}


@dataclass
class Row:
    mode: str
    step_ms: float | None = None
    first_step_s: float | None = None
    graph_breaks: int | None = None
    break_reasons: list[str] = field(default_factory=list)
    runs_ms: list[float] = field(default_factory=list)
    error: str = ""

    @classmethod
    def from_probe(cls, value: dict) -> Row:
        return cls(
            mode=value["mode"],
            step_ms=value.get("step_ms"),
            first_step_s=value.get("first_step_s"),
            graph_breaks=value.get("graph_breaks"),
            break_reasons=list(value.get("break_reasons") or []),
            runs_ms=list(value.get("runs_ms") or []),
        )


def parse_modes(text: str, max_autotune: bool) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise click.BadParameter(f"unknown mode {', '.join(bad)}; choose from {', '.join(MODES)}", param_hint="--modes")
    if max_autotune and "max-autotune" not in modes:
        modes.append("max-autotune")
    # Eager is the baseline every speed-up is measured against.
    return ["eager", *[m for m in dict.fromkeys(modes) if m != "eager"]]


def speedup(row: Row, eager: Row | None) -> tuple[float, float] | None:
    """(change of step time vs eager as a fraction, speed-up factor), or None."""
    if eager is None or not eager.step_ms or not row.step_ms:
        return None
    return row.step_ms / eager.step_ms - 1, eager.step_ms / row.step_ms


def slower_than_eager(rows: Sequence[Row], cpu: bool = False) -> list[str]:
    """One warning per compiled mode that is slower than eager, with its graph-break count."""
    eager = next((r for r in rows if r.mode == "eager" and r.step_ms), None)
    out = []
    for r in rows:
        s = speedup(r, eager)
        if r.mode == "eager" or s is None or s[0] <= 0 or eager is None:  # (s is None without eager)
            continue
        n = r.graph_breaks or 0
        text = f"{r.mode} is slower than eager ({r.step_ms:.2f} vs {eager.step_ms:.2f} ms per step, {s[0]:+.0%})"
        if n:
            reasons = "; ".join(r.break_reasons[:3])
            text += f" with {n} graph break(s) splitting the model: {reasons}" if reasons else f" with {n} graph break(s)"
            text += "\n  hint: see where and why with TORCH_LOGS=graph_breaks, or torch._dynamo.explain(model)(x)"
        else:
            text += " with 0 graph breaks: the whole model compiled, so the compiled kernels themselves are slower here"
            if cpu:
                text += "\n  hint: common on a small CPU run (timings of a few steps on a busy CPU are noisy); it shows compile works, not GPU speed-ups"
            else:
                text += "\n  hint: check that nothing else uses the GPU (nvidia-smi), then try mode='max-autotune' (envdoctor bench --max-autotune)"
        out.append(text)
    return out


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def render_table(rows: Sequence[Row], cfg: Config, device_name: str, torch_version: str) -> str:
    eager = next((r for r in rows if r.mode == "eager" and r.step_ms), None)
    lines = [
        "envdoctor bench: training step of the reference model (2x conv-bn-relu, pool, linear; SGD, cross-entropy)",
        f"device: {device_name} ({cfg.device}), torch {torch_version}",
        f"input: batch {cfg.batch}x3x{cfg.size}x{cfg.size}; median of {_n(cfg.runs, 'run')} x {_n(cfg.steps, 'step')} after {_n(cfg.warmup, 'warm-up step')}",
    ]
    if cfg.cpu_variant:
        lines.append(
            "NOTE: no CUDA GPU in use: this is the small CPU variant (smaller batch and images); "
            "its figures are not comparable with GPU figures or the published A100 ones."
        )
    lines.append("")
    header = f"{'mode':<27}{'compile (1st step)':>19}{'ms/step':>10}{'vs eager':>10}{'speed-up':>10}{'graph breaks':>14}"
    lines += [header, "-" * len(header)]
    for r in rows:
        if r.error:
            lines.append(f"{r.mode:<27}  FAILED: {r.error}")
            continue
        comp = "-" if r.mode == "eager" else f"{r.first_step_s:.1f} s"
        s = speedup(r, eager)
        vs = "-" if r.mode == "eager" or s is None else f"{s[0] * 100:+.0f} %"  # ASCII signs, as in the warnings
        fac = "-" if s is None else f"{s[1]:.2f}x"
        gb = "-" if r.mode == "eager" or r.graph_breaks is None else str(r.graph_breaks)
        lines.append(f"{r.mode:<27}{comp:>19}{r.step_ms:>10.2f}{vs:>10}{fac:>10}{gb:>14}")
    if cfg.cpu_variant and any(r.mode.startswith("reduce-overhead") or r.mode == "max-autotune" for r in rows):
        lines.append("")
        lines.append("(reduce-overhead and max-autotune add CUDA graphs, which do not exist on CPU: there they compile like default)")
    return "\n".join(lines) + "\n"


def to_json(rows: Sequence[Row], cfg: Config, info: dict, warnings: list[str]) -> dict[str, Any]:
    eager = next((r for r in rows if r.mode == "eager" and r.step_ms), None)
    out = []
    for r in rows:
        s = speedup(r, eager)
        out.append(
            {
                "mode": r.mode,
                "step_ms": r.step_ms,
                "runs_ms": r.runs_ms,
                "first_step_s": r.first_step_s,
                "change_vs_eager": None if s is None or r.mode == "eager" else s[0],
                "speedup": None if s is None else s[1],
                "graph_breaks": r.graph_breaks,
                "break_reasons": r.break_reasons,
                "error": r.error or None,
            }
        )
    return {
        "device": cfg.device,
        "device_name": info.get("device_name") or "CPU",
        "torch": info.get("torch"),
        "cpu_variant": cfg.cpu_variant,
        "config": {"batch": cfg.batch, "size": cfg.size, "warmup": cfg.warmup, "runs": cfg.runs, "steps": cfg.steps},
        "results": out,
        "warnings": warnings,
    }


def plot(rows: Sequence[Row], cfg: Config, device_name: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    good = [r for r in rows if r.step_ms]
    eager = next((r for r in good if r.mode == "eager"), None)
    fig, ax = plt.subplots(figsize=(7, 3.5), dpi=120)
    bars = ax.bar(
        [r.mode for r in good], [r.step_ms or 0.0 for r in good], color=["#888888" if r.mode == "eager" else "#4c72b0" for r in good]
    )
    for bar, r in zip(bars, good, strict=True):
        s = speedup(r, eager)
        label = f"{r.step_ms:.1f} ms" + ("" if r.mode == "eager" or s is None else f"\n{s[1]:.2f}x")
        ax.annotate(label, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=8)
    variant = " (small CPU variant)" if cfg.cpu_variant else ""
    ax.set_title(f"Training step, batch {cfg.batch}x3x{cfg.size}x{cfg.size}, {device_name}{variant}", fontsize=9)
    ax.set_ylabel("ms per step (median)")
    ax.margins(y=0.25)
    fig.tight_layout()
    image = io.BytesIO()  # drawn here, written as every report is (envdoctor.core.outputs)
    fig.savefig(image, format=os.path.splitext(path)[1].lstrip(".").lower() or "png")
    plt.close(fig)
    write(path, image.getvalue())


def _need_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        raise click.UsageError(
            f"--plot needs matplotlib, which cannot be imported here ({e}): pip install 'envdoctor[plot]' (or pip install matplotlib)"
        ) from None


def _say(text: str) -> None:
    click.echo(text, err=True)


@click.command("bench")
@click.option(
    "--modes",
    default=",".join(DEFAULT_MODES),
    show_default=True,
    help=f"Comma-separated torch.compile modes to measure (eager is always the baseline): {', '.join(MODES)}.",
)
@click.option("--max-autotune", is_flag=True, help="Also measure mode='max-autotune' (its compile takes minutes).")
@click.option(
    "--device",
    type=click.Choice(["auto", "cuda", "cpu"]),
    default="auto",
    show_default=True,
    help="auto: the first CUDA GPU, else the small CPU variant; cuda: refuse without a GPU.",
)
@click.option("--batch", type=click.IntRange(min=1), help="Batch size [GPU 32, CPU 8].")
@click.option("--size", type=click.IntRange(min=8), help="Image height and width [GPU 224, CPU 64].")
@click.option("--warmup", type=click.IntRange(min=1), help="Warm-up steps after the first (compiling) step [GPU 10, CPU 1].")
@click.option("--runs", type=click.IntRange(min=1), help="Timed runs; the median is reported [GPU 5, CPU 3].")
@click.option("--steps", type=click.IntRange(min=1), help="Steps per timed run [GPU 20, CPU 2].")
@click.option("--timeout", type=click.FloatRange(min=10), default=900.0, show_default=True, help="Seconds each mode may take.")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), metavar="FILE.png", help="Also draw the table (needs matplotlib).")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def bench_cmd(modes, max_autotune, device, batch, size, warmup, runs, steps, timeout, plot_file, fmt) -> None:
    """Time a training step of a small reference model: eager vs torch.compile modes."""
    mode_list = parse_modes(modes, max_autotune)
    if plot_file:
        _need_matplotlib()
        writable_target(plot_file)
    info = _device_info(timeout)
    cfg = _config(device, info, {"batch": batch, "size": size, "warmup": warmup, "runs": runs, "steps": steps})
    device_name = str(info.get("device_name")) if cfg.device == "cuda" else f"CPU, {info.get('cpu_threads')} threads"
    if cfg.cpu_variant:
        _say(f"envdoctor bench: no CUDA GPU in use: running the small CPU variant (batch {cfg.batch}, {cfg.size}x{cfg.size} images)")
    rows = _measure(mode_list, cfg, timeout)
    warnings = slower_than_eager(rows, cpu=cfg.cpu_variant)
    if fmt == "json":
        click.echo(json.dumps(to_json(rows, cfg, info, warnings), indent=2))
    else:
        click.echo(render_table(rows, cfg, device_name, info.get("torch", "?")), nl=False)
        for w in warnings:
            click.echo(f"\nWARNING: {w}")
    if plot_file:
        plot(rows, cfg, device_name, plot_file)
        _say(f"envdoctor bench: plot written to {plot_file}")
    raise SystemExit(ExitCode.FAILED if any(r.error for r in rows) else ExitCode.OK)


def _device_info(timeout: float) -> dict:
    """Which device torch would use here, asked of a probe child; exits when torch cannot be imported."""
    from envdoctor.core.probe import ProbeClient

    probe = ProbeClient()
    try:
        return probe.call(f"{BODY}:device_info", timeout=min(timeout, 180), what="importing torch")
    except ProbeRaised as e:
        _say(f"envdoctor bench: torch cannot be imported in {sys.executable}: {e.exc_type}: {e.message}")
        _say("  hint: run `envdoctor check` to see why, or install torch: https://pytorch.org/get-started/locally/")
        raise SystemExit(ExitCode.FAILED) from None
    except ProbeError as e:
        _say(f"envdoctor bench: {e.diagnosis}")
        raise SystemExit(ExitCode.FAILED) from None
    finally:
        probe.close()


def _config(device: str, info: dict, given: dict) -> Config:
    """The device and sizes to run with: the options given, the device's defaults for the rest."""
    use = device
    if device == "auto":
        use = "cuda" if info.get("cuda_available") else "cpu"
    if use == "cuda" and not info.get("cuda_available"):
        why = info.get("cuda_error") or (
            f"torch {info.get('torch')} is a CPU-only build" if not info.get("cuda_build") else "torch.cuda.is_available() is False"
        )
        _say(f"envdoctor bench: refusing --device cuda: no CUDA GPU is usable ({why})")
        _say("  hint: run `envdoctor check` for the cause, or leave out --device to run the small CPU variant")
        raise SystemExit(ExitCode.FAILED)
    base = GPU_DEFAULTS if use == "cuda" else CPU_DEFAULTS
    return Config(device=use, **{k: (v if v is not None else base[k]) for k, v in given.items()})


def _measure(mode_list: Sequence[str], cfg: Config, timeout: float) -> list[Row]:
    rows: list[Row] = []
    for i, mode in enumerate(mode_list, 1):
        _say(f"[{i}/{len(mode_list)}] {mode} ...")
        kwargs = {"mode": mode, "device": cfg.device, "batch": cfg.batch, "size": cfg.size}
        kwargs.update(warmup=cfg.warmup, runs=cfg.runs, steps=cfg.steps)
        try:
            value = probe_fresh(kwargs, timeout)
            rows.append(Row.from_probe(value))
        except ProbeRaised as e:
            rows.append(Row(mode, error=f"{e.exc_type}: {e.message.splitlines()[0] if e.message else ''}"[:300]))
        except ProbeError as e:
            rows.append(Row(mode, error=e.diagnosis[:300]))
    return rows


def probe_fresh(kwargs: dict, timeout: float) -> dict:
    """One mode in a child of its own: a cold compiler cache, and a crash stays contained."""
    from envdoctor.core.probe import ProbeClient

    client = ProbeClient()
    try:
        return client.call(f"{BODY}:run_mode", kwargs, timeout=timeout, fresh=True, what=f"the {kwargs['mode']} benchmark")
    finally:
        client.close()
