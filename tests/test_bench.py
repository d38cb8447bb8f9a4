"""envdoctor bench: the table, the speed-ups and the slower-than-eager warning with injected
rows; the command for real on this CPU-only machine (small CPU variant, refusal of
--device cuda, a broken torch, --plot without matplotlib)."""

from __future__ import annotations

import json

import click
import pytest

from envdoctor.commands.bench import Config, Row, parse_modes, plot, render_table, slower_than_eager, to_json

GPU = Config(device="cuda", batch=32, size=224, warmup=10, runs=5, steps=20)
CPU = Config(device="cpu", batch=8, size=64, warmup=1, runs=3, steps=2)

# The published A100 figures for this model.
A100 = [
    Row("eager", step_ms=18.6),
    Row("default", step_ms=13.8, first_step_s=40.2, graph_breaks=0),
    Row("reduce-overhead", step_ms=12.9, first_step_s=45.0, graph_breaks=0),
    Row("max-autotune", step_ms=12.7, first_step_s=210.0, graph_breaks=0),
]


def test_modes_always_start_with_the_eager_baseline():
    assert parse_modes("default,reduce-overhead", max_autotune=False) == ["eager", "default", "reduce-overhead"]
    assert parse_modes("eager,default", max_autotune=True) == ["eager", "default", "max-autotune"]
    with pytest.raises(click.BadParameter, match="unknown mode fast"):
        parse_modes("default,fast", max_autotune=False)


def test_table_shows_compile_time_step_time_and_change_per_mode():
    text = render_table(A100, GPU, "NVIDIA A100-SXM4-40GB", "2.11.0+cu130")
    lines = text.splitlines()
    assert "batch 32x3x224x224; median of 5 runs x 20 steps after 10 warm-up steps" in text
    assert "CPU variant" not in text
    row = {ln.split()[0]: ln.split() for ln in lines if ln.split() and ln.split()[0] in {r.mode for r in A100}}
    assert row["eager"][1:] == ["-", "18.60", "-", "1.00x", "-"]
    assert row["default"][1:] == ["40.2", "s", "13.80", "-26", "%", "1.35x", "0"]
    assert row["reduce-overhead"][4] == "-31"
    assert row["max-autotune"][4] == "-32"
    assert slower_than_eager(A100) == []


def test_one_minus_sign_in_table_and_warnings():
    """The table wrote U+2212 and the warnings ASCII '-': one sign, the one every stdout can show."""
    slow = [Row("eager", step_ms=10.0), Row("default", step_ms=12.5, first_step_s=30.0, graph_breaks=0), *A100[1:]]
    text = render_table(slow, GPU, "GPU", "2.11.0") + "\n".join(slower_than_eager(slow))
    assert "\N{MINUS SIGN}" not in text and "-26 %" in render_table(A100, GPU, "GPU", "2.11.0") and "+25%" in text


def test_compiled_mode_slower_than_eager_warns_with_its_graph_breaks():
    rows = [
        Row("eager", step_ms=10.0),
        Row("default", step_ms=12.5, first_step_s=30.0, graph_breaks=3, break_reasons=["call to print()", "data-dependent branch"]),
        Row("reduce-overhead", step_ms=8.0, first_step_s=31.0, graph_breaks=0),
    ]
    (w,) = slower_than_eager(rows)
    assert w.startswith("default is slower than eager (12.50 vs 10.00 ms per step, +25%) with 3 graph break(s)")
    assert "call to print()" in w and "TORCH_LOGS=graph_breaks" in w
    clean = slower_than_eager([Row("eager", step_ms=10.0), Row("default", step_ms=11.0, first_step_s=1.0, graph_breaks=0)])
    assert "with 0 graph breaks" in clean[0] and "--max-autotune" in clean[0]
    on_cpu = slower_than_eager([Row("eager", step_ms=10.0), Row("default", step_ms=11.0, first_step_s=1.0, graph_breaks=0)], cpu=True)
    assert "small CPU run" in on_cpu[0]


def test_failed_mode_is_a_row_and_json_carries_everything():
    rows = [Row("eager", step_ms=10.0), Row("reduce-overhead", error="the reduce-overhead benchmark died of SIGSEGV")]
    text = render_table(rows, GPU, "NVIDIA H200", "2.11.0")
    assert "reduce-overhead" in text and "FAILED: the reduce-overhead benchmark died of SIGSEGV" in text
    data = to_json(A100, GPU, {"device_name": "NVIDIA A100-SXM4-40GB", "torch": "2.11.0"}, [])
    assert data["cpu_variant"] is False and data["config"]["batch"] == 32
    default = next(r for r in data["results"] if r["mode"] == "default")
    assert default["change_vs_eager"] == pytest.approx(13.8 / 18.6 - 1)
    assert default["speedup"] == pytest.approx(18.6 / 13.8)


def test_cpu_table_says_it_is_the_small_variant():
    text = render_table(
        [Row("eager", step_ms=120.0), Row("reduce-overhead", step_ms=118.0, first_step_s=20.0, graph_breaks=0)], CPU, "CPU", "2.13"
    )
    assert "NOTE: no CUDA GPU in use: this is the small CPU variant" in text
    assert "CUDA graphs, which do not exist on CPU" in text


@pytest.mark.slow
def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "bench.png"
    plot(A100, GPU, "NVIDIA A100", str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- the command, for real -------------------------------------------------------------------


@pytest.mark.slow
def test_bench_runs_the_small_cpu_variant_here(cli):
    # One compiled mode, tiny sizes: the compile (Inductor's C++ path) is the cost here.
    r = cli("bench", "--modes", "default", "--batch", "2", "--size", "16", "--runs", "1", "--steps", "1", timeout=400)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "running the small CPU variant" in r.stderr
    assert "NOTE: no CUDA GPU in use: this is the small CPU variant" in r.stdout
    assert "input: batch 2x3x16x16" in r.stdout
    rows = {ln.split()[0]: ln.split() for ln in r.stdout.splitlines() if ln.split()[:1] in (["eager"], ["default"])}
    assert set(rows) == {"eager", "default"}
    assert rows["default"][-1] == "0"  # graph breaks: the reference model compiles whole
    assert float(rows["default"][1]) > 0  # compile time, seconds


@pytest.mark.slow
def test_bench_refuses_device_cuda_without_a_gpu(cli):
    r = cli("bench", "--device", "cuda", timeout=120)
    assert r.returncode == 1
    assert "refusing --device cuda: no CUDA GPU is usable (torch 2.13.0+cpu is a CPU-only build)" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.slow
def test_bench_with_a_broken_torch_says_so(cli, tmp_path):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('libtorch_cuda.so: cannot open shared object file')\n")
    r = cli("bench", env={"PYTHONPATH": str(tmp_path)}, timeout=120)
    assert r.returncode == 1
    assert "torch cannot be imported" in r.stderr and "libtorch_cuda.so" in r.stderr
    assert "Traceback" not in r.stderr


def test_plot_without_matplotlib_is_a_usage_error_before_running(cli, tmp_path):
    (tmp_path / "matplotlib").mkdir()
    (tmp_path / "matplotlib" / "__init__.py").write_text("raise ImportError('No module named matplotlib')\n")
    r = cli("bench", "--plot", str(tmp_path / "out.png"), env={"PYTHONPATH": str(tmp_path)}, timeout=60)
    assert r.returncode == 2
    assert "--plot needs matplotlib" in r.stderr and "pip install 'envdoctor[plot]'" in r.stderr
    assert "[1/" not in r.stderr  # refused before any benchmark ran


@pytest.mark.slow
def test_json_format_is_parseable(cli):
    r = cli("bench", "--modes", "eager", "--batch", "2", "--size", "16", "--runs", "1", "--steps", "1", "-f", "json", timeout=200)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["cpu_variant"] is True and data["device"] == "cpu"
    assert [x["mode"] for x in data["results"]] == ["eager"] and data["results"][0]["step_ms"] > 0
