"""Smoke checks: the judgement with injected facts and canned probe answers, and the CPU paths
for real (Inductor's C++ compile vs eager, explain's graph-break count, Triton's interpreter)."""

from __future__ import annotations

import importlib.util

import pytest

from envdoctor import Missing, ProbeError, ProbeRaised, Status
from envdoctor.core.probe import ProbeClient
from envdoctor.testing import run_check
from envdoctor_checks import smoke

CUDA_TORCH = {"version": "2.11.0+cu130", "local": "cu130", "cuda": "13.0", "kind": "cuda"}
CPU_TORCH = {"version": "2.13.0+cpu", "local": "cpu", "cuda": None, "kind": "cpu"}
H200 = {"index": 0, "name": "NVIDIA H200", "uuid": "GPU-0", "cc": "9.0"}
SERIAL = {"ENVDOCTOR_SMOKE_PARALLEL": "0"}


class CannedProbe:
    """Answers probe calls from a dict keyed by body function name; records the calls."""

    def __init__(self, **answers):
        self.answers = answers
        self.calls: list[tuple[str, dict, dict]] = []

    def call(self, target, kwargs=None, **kw):
        name = target.rsplit(":", 1)[1]
        self.calls.append((name, dict(kwargs or {}), kw))
        answer = self.answers[name]
        if isinstance(answer, Exception):
            raise answer
        return answer(kwargs or {}) if callable(answer) else answer


def gpu(index, err=1e-6, name="NVIDIA H200", error=None):
    res = {
        k: {"error": err, "tolerance": smoke_tol, "finite": err is not None}
        for k, smoke_tol in (("fp32", 1e-4), ("tf32", 5e-3), ("bf16", 1.5e-2))
    }
    return {"index": index, "name": name, "results": {} if error else res, "error": error}


# --- gating ---------------------------------------------------------------------------------


def test_gpu_smokes_skip_on_a_cpu_build_of_torch_without_calling_a_probe():
    probe = CannedProbe()
    for check in (smoke.matmul, smoke.cudagraphs, smoke.amp_compile):
        row = run_check(check, probe=probe, torch_build=CPU_TORCH, env={}, gpus=Missing("gpus", "no NVIDIA driver"))
        assert row.status is Status.SKIP
        assert "cpu build" in row.message
    assert probe.calls == []


def test_gpu_smokes_skip_with_the_reason_when_there_is_no_gpu():
    row = run_check(smoke.matmul, probe=CannedProbe(), torch_build=CUDA_TORCH, env={}, gpus=Missing("gpus", "no NVIDIA driver found"))
    assert row.status is Status.SKIP
    assert row.message == "no NVIDIA driver found"


def test_an_empty_cuda_visible_devices_fails_the_matmul_and_skips_the_others():
    facts = {"probe": CannedProbe(), "torch_build": CUDA_TORCH, "env": {"CUDA_VISIBLE_DEVICES": ""}, "gpus": [H200], "visible_gpus": []}
    row = run_check(smoke.matmul, **facts)
    assert row.status is Status.FAIL
    assert "CUDA_VISIBLE_DEVICES='' hides all 1 GPU(s)" in row.message
    assert row.hint.startswith("Unset CUDA_VISIBLE_DEVICES")
    for check in (smoke.cudagraphs, smoke.amp_compile):
        other = run_check(check, **facts)
        assert other.status is Status.SKIP
        assert "CUDA_VISIBLE_DEVICES=''" in other.message


# --- matmul ---------------------------------------------------------------------------------


def test_one_bad_gpu_of_eight_fails_as_that_gpu():
    gpus = [gpu(i) for i in range(8)]
    gpus[3] = gpu(3, err=0.4)
    probe = CannedProbe(matmul={"size": 256, "gpus": gpus})
    visible = [dict(H200, index=i) for i in range(8)]
    row = run_check(smoke.matmul, probe=probe, torch_build=CUDA_TORCH, env={}, gpus=visible, visible_gpus=visible)
    assert row.status is Status.FAIL
    assert row.message.startswith("matmul fails or is wrong on 1 of 8 GPUs: GPU 3 (NVIDIA H200)")
    assert "4.0e-01" in row.message
    assert [i.status for i in row.items].count(Status.PASS) == 7
    assert row.items[3].status is Status.FAIL
    assert "nvidia-smi" in row.hint


def test_a_gpu_whose_matmul_raises_is_that_gpus_failure():
    probe = CannedProbe(
        matmul={"size": 256, "gpus": [gpu(0), gpu(1, error="RuntimeError: CUDA error: an illegal memory access was encountered")]}
    )
    visible = [dict(H200, index=i) for i in range(2)]
    row = run_check(smoke.matmul, probe=probe, torch_build=CUDA_TORCH, env={}, gpus=visible, visible_gpus=visible)
    assert row.status is Status.FAIL
    assert "GPU 1" in row.message and "illegal memory access" in row.message
    assert row.items[0].status is Status.PASS


def test_healthy_matmul_passes_with_one_item_per_gpu():
    probe = CannedProbe(matmul={"size": 256, "gpus": [gpu(0, err=2e-7)]})
    row = run_check(smoke.matmul, probe=probe, torch_build=CUDA_TORCH, env={}, gpus=[H200], visible_gpus=[H200])
    assert row.status is Status.PASS
    assert row.message == "fp32, TF32 and bf16 matmul correct on 1 GPU(s)"
    assert row.items[0].name == "GPU 0 (NVIDIA H200)"


def test_torch_seeing_no_gpu_that_nvml_lists_is_a_failure():
    probe = CannedProbe(matmul={"skipped": "torch sees no GPU (CUDA driver initialization failed)"})
    row = run_check(smoke.matmul, probe=probe, torch_build=CUDA_TORCH, env={}, gpus=[H200], visible_gpus=[H200])
    assert row.status is Status.FAIL
    assert "CUDA driver initialization failed" in row.message


def test_torch_seeing_fewer_gpus_than_visible_fails():
    probe = CannedProbe(matmul={"size": 256, "gpus": [gpu(0)]})
    visible = [dict(H200, index=i) for i in range(2)]
    row = run_check(smoke.matmul, probe=probe, torch_build=CUDA_TORCH, env={}, gpus=visible, visible_gpus=visible)
    assert row.status is Status.FAIL
    assert row.message == "torch sees 1 of the 2 visible GPUs"


def test_a_hung_matmul_probe_is_an_error_row_with_its_diagnosis():
    hang = ProbeError("the matmul smoke did not finish within 120s and was killed; while initialising CUDA on GPU 0 (a CUDA init hang ...)")
    row = run_check(smoke.matmul, probe=CannedProbe(matmul=hang), torch_build=CUDA_TORCH, env={}, gpus=[H200], visible_gpus=[H200])
    assert row.status is Status.ERROR
    assert "while initialising CUDA on GPU 0" in row.message


# --- Triton ---------------------------------------------------------------------------------

TRITON_DISTS = {"triton": {"version": "3.6.0"}, "numpy": {"version": "2.1"}}


def test_triton_smoke_skips_when_triton_is_missing():
    row = run_check(smoke.triton_kernel, probe=CannedProbe(), torch_build=CUDA_TORCH, dists={}, env={}, gpus=[H200])
    assert (row.status, row.message) == (Status.SKIP, "triton is not installed")


def test_triton_smoke_without_gpu_or_numpy_skips_with_the_reason():
    row = run_check(smoke.triton_kernel, probe=CannedProbe(), torch_build=CPU_TORCH, dists={"triton": {}}, env={})
    assert row.status is Status.SKIP
    assert "needs numpy" in row.message


def test_triton_without_gpu_runs_in_a_fresh_interpreter_worker():
    value = {"device": "cpu", "interpreted": True, "triton_version": "3.7.1", "max_error": 0.0, "ok": True}
    probe = CannedProbe(triton_add=value)
    row = run_check(smoke.triton_kernel, probe=probe, torch_build=CPU_TORCH, dists=TRITON_DISTS, env={}, gpus=Missing("gpus", "no driver"))
    assert row.status is Status.PASS
    assert "TRITON_INTERPRET=1" in row.message
    assert probe.calls[0][2]["env"] == {"TRITON_INTERPRET": "1"}


def test_triton_on_gpu_uses_the_shared_worker():
    value = {"device": "cuda", "interpreted": False, "triton_version": "3.6.0", "max_error": 0.0, "ok": True}
    probe = CannedProbe(triton_add=value)
    row = run_check(smoke.triton_kernel, probe=probe, torch_build=CUDA_TORCH, dists=TRITON_DISTS, env={}, gpus=[H200], visible_gpus=[H200])
    assert row.status is Status.PASS and row.message == "triton 3.6.0: vector-add compiled and exact on GPU"
    assert "env" not in probe.calls[0][2] and not probe.calls[0][2].get("fresh")


@pytest.mark.parametrize(
    ("output", "cause", "hint"),
    [
        (
            "/tmp/tmpab/main.c:5:10: fatal error: Python.h: No such file or directory\ncompilation terminated.",
            "Python.h is missing",
            "python3-dev",
        ),
        ("RuntimeError: Failed to find C compiler. Please specify via CC environment variable.", "no C compiler found", "export CC="),
    ],
)
def test_a_triton_compile_failure_names_the_toolchain_cause(output, cause, hint):
    raised = ProbeRaised("CalledProcessError", "Command '['/usr/bin/gcc', ...]' returned non-zero exit status 1.", "Traceback ...", output)
    probe = CannedProbe(triton_add=raised)
    row = run_check(smoke.triton_kernel, probe=probe, torch_build=CUDA_TORCH, dists=TRITON_DISTS, env={}, gpus=[H200], visible_gpus=[H200])
    assert row.status is Status.FAIL
    assert row.message.startswith("the Triton vector-add kernel failed: ") and cause in row.message
    assert hint in row.hint


def test_a_smoke_diagnosis_searches_no_check_hint():
    # "numpy" means a NumPy mismatch only inside torch's import error (torch.importable's hint)
    raised = ProbeRaised("ValueError", "numpy array of the wrong shape", "Traceback ...", "")
    cause, hint = smoke.diagnose(raised, "smoke.matmul")
    assert cause == "ValueError: numpy array of the wrong shape" and "NumPy" not in hint


def test_torch_that_cannot_import_skips_the_smoke_pointing_at_the_torch_check():
    tb = 'File "/venv/lib/python3.12/site-packages/torch/__init__.py", line 5, in <module>\nImportError: libcudnn.so.9: cannot open ...'
    raised = ProbeRaised("ImportError", "libcudnn.so.9: cannot open shared object file: No such file or directory", tb)
    row = run_check(smoke.compile_smoke, probe=CannedProbe(compile_smoke=raised), torch_build=CUDA_TORCH, env=SERIAL)
    assert row.status is Status.SKIP
    assert "torch.importable" in row.message


# --- compile (judgement) ----------------------------------------------------------------------


def part(ok=True, kernels=("triton_poi_fused_0",), breaks=0, reasons=(), err=0.0):
    return {
        "ok": ok,
        "max_error": err,
        "kernels": {"triton": list(kernels), "cpp": []},
        "graphs": breaks + 1,
        "graph_breaks": breaks,
        "break_reasons": list(reasons),
        "seconds": 1.0,
    }


def compiled(**parts):
    return {"device": "cuda", "parts": parts}


def test_compile_passes_with_kernels_and_no_breaks():
    row = run_check(
        smoke.compile_smoke, probe=CannedProbe(compile_smoke=compiled(function=part(), module=part())), torch_build=CUDA_TORCH, env=SERIAL
    )
    assert row.status is Status.PASS
    assert row.message == "function and conv net match eager on cuda; Inductor built 2 Triton kernel(s); no graph breaks"


def test_compile_fails_when_inductor_made_no_triton_kernel_on_cuda():
    value = compiled(function=part(kernels=()), module=part())
    row = run_check(smoke.compile_smoke, probe=CannedProbe(compile_smoke=value), torch_build=CUDA_TORCH, env=SERIAL)
    assert row.status is Status.FAIL
    assert row.message == "Inductor generated no Triton kernel for the function on cuda"


def test_compile_fails_when_compiled_differs_from_eager():
    value = compiled(function=part(), module=part(ok=False, err=0.25))
    row = run_check(smoke.compile_smoke, probe=CannedProbe(compile_smoke=value), torch_build=CUDA_TORCH, env=SERIAL)
    assert row.status is Status.FAIL
    assert "compiled module differs from eager on cuda (max error 0.25)" in row.message
    assert "aot_eager" in row.hint


def test_graph_breaks_in_the_reference_code_warn_with_the_reason():
    value = compiled(function=part(breaks=1, reasons=["Failed to trace builtin operator: ... `print` ..."]), module=part())
    row = run_check(smoke.compile_smoke, probe=CannedProbe(compile_smoke=value), torch_build=CUDA_TORCH, env=SERIAL)
    assert row.status is Status.WARN
    assert row.message == "Dynamo broke the function into 2 graphs: Failed to trace builtin operator: ... `print` ..."
    assert "TORCH_LOGS=graph_breaks" in row.hint


def test_a_missing_cxx_compiler_fails_compile_with_the_fix():
    raised = ProbeRaised(
        "InductorError", "InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, 'g++')", "", ""
    )
    row = run_check(smoke.compile_smoke, probe=CannedProbe(compile_smoke=raised), torch_build=CPU_TORCH, env=SERIAL)
    assert row.status is Status.FAIL
    assert "no working C++ compiler" in row.message
    assert "apt-get install g++" in row.hint


def test_parallel_lanes_split_the_compile_into_two_fresh_workers():
    def answer(kwargs):
        return {"device": "cuda", "parts": {kwargs["parts"][0]: part()}}

    probe = CannedProbe(compile_smoke=answer)
    row = run_check(smoke.compile_smoke, probe=probe, torch_build=CUDA_TORCH, env={"ENVDOCTOR_SMOKE_PARALLEL": "1"})
    assert row.status is Status.PASS
    assert sorted(c[1]["parts"][0] for c in probe.calls) == ["function", "module"]
    assert all(c[2].get("fresh") for c in probe.calls)


def test_serial_lanes_compile_both_in_one_call():
    probe = CannedProbe(compile_smoke=compiled(function=part(), module=part()))
    run_check(smoke.compile_smoke, probe=probe, torch_build=CUDA_TORCH, env=SERIAL)
    assert [c[1]["parts"] for c in probe.calls] == [["function", "module"]]
    assert not probe.calls[0][2].get("fresh")


def test_cudagraph_and_amp_judgement():
    facts = {"torch_build": CUDA_TORCH, "env": SERIAL, "gpus": [H200], "visible_gpus": [H200]}
    good = run_check(smoke.cudagraphs, probe=CannedProbe(cudagraphs={"max_error": 0.0, "ok": True, "cudagraph_skips": 0}), **facts)
    assert good.status is Status.PASS
    skipped = run_check(smoke.cudagraphs, probe=CannedProbe(cudagraphs={"max_error": 0.0, "ok": True, "cudagraph_skips": 1}), **facts)
    assert skipped.status is Status.WARN and "perf_hints" in skipped.hint
    bad = run_check(smoke.amp_compile, probe=CannedProbe(amp_compile={"dtype": "float32", "max_error": 0.5, "ok": False}), **facts)
    assert bad.status is Status.FAIL and "dtype float32" in bad.message


def test_a_torch_xla_dist_without_its_module_fails_the_xla_smoke():
    raised = ProbeRaised("ModuleNotFoundError", "No module named 'torch_xla'", 'File "smoke.py", line 3\n    import torch_xla')
    row = run_check(smoke.xla, probe=CannedProbe(xla_op=raised), dists={"torch-xla": {"version": "2.9.0"}}, env={})
    assert row.status is Status.FAIL
    assert row.message == "the torch_xla op failed: ModuleNotFoundError: No module named 'torch_xla'"


def test_an_xla_extension_built_for_another_torch_fails_naming_the_pair():
    """As seen for real (torch_xla 2.9.0 under torch 2.13.0 on the CPU machine, 2026-12-01)."""
    raised = ProbeRaised(
        "ImportError",
        "/venv/lib/python3.11/site-packages/_XLAC.cpython-311-x86_64-linux-gnu.so: undefined symbol: _ZN5torch8autograd10deleteNodeEPNS0_4NodeE",
        'File "torch_xla/__init__.py", line 10, in <module>\n    import _XLAC',
    )
    dists = {"torch": {"version": "2.13.0+cpu"}, "torch-xla": {"version": "2.9.0"}}
    row = run_check(smoke.xla, probe=CannedProbe(xla_op=raised), dists=dists, env={})
    assert row.status is Status.FAIL and "torch_xla 2.9.0 is installed with torch 2.13.0+cpu" in row.message
    assert row.hint.startswith('pip install "torch~=2.9.0" "torch_xla[tpu]~=2.9.0"')


def test_xla_skips_when_not_installed():
    row = run_check(smoke.xla, probe=CannedProbe(), dists={}, env={})
    assert (row.status, row.message) == (Status.SKIP, "torch_xla is not installed")


# --- the CPU paths, for real ------------------------------------------------------------------

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


@pytest.fixture(scope="module")
def real_probe():
    client = ProbeClient()
    yield client
    client.close()


@needs_torch
@pytest.mark.slow
def test_explain_counts_a_deliberate_graph_break(real_probe):
    value = real_probe.call(f"{smoke.BODY}:compile_smoke", {"parts": ["function"], "deliberate_break": True}, timeout=600)
    fn = value["parts"]["function"]
    assert (fn["graphs"], fn["graph_breaks"], fn["breaks_from"]) == (2, 1, "explain")
    assert "print" in fn["break_reasons"][0]
    assert fn["ok"]  # the compiled function still matches eager across the break
    assert smoke.judge_compile(value).status is Status.WARN


@needs_torch
@pytest.mark.slow
def test_inductor_cpp_compile_matches_eager_on_cpu(real_probe):
    row = run_check(smoke.compile_smoke, probe=real_probe, torch_build=CPU_TORCH, env=SERIAL)
    if row.details.get("device") == "cuda":
        pytest.skip("this machine has a GPU: the CPU path is not what runs")
    assert row.status is Status.PASS, row.message
    assert row.message.startswith("function and conv net match eager on cpu; Inductor built")
    assert [i.name for i in row.items] == ["function", "module"]
    assert all(row.details["parts"][p]["kernels"]["cpp"] for p in ("function", "module"))


@pytest.mark.skipif(
    importlib.util.find_spec("triton") is None or importlib.util.find_spec("numpy") is None,
    reason="triton (and numpy, which its interpreter needs) must be installed: pip install triton numpy",
)
@needs_torch
@pytest.mark.slow
def test_triton_vector_add_runs_under_the_interpreter_without_gpu(real_probe):
    row = run_check(
        smoke.triton_kernel, probe=real_probe, torch_build=CPU_TORCH, dists=TRITON_DISTS, env={}, gpus=Missing("gpus", "no driver")
    )
    assert row.status is Status.PASS, row.message
    assert "under TRITON_INTERPRET=1 on CPU" in row.message
    assert row.details["max_error"] == 0.0


@pytest.mark.slow
def test_compile_smoke_says_the_environment_switched_compile_off():
    """With TORCH_COMPILE_DISABLE=1 Inductor generates nothing: that is the environment, not a bug to report."""
    import json

    from tests.conftest import run_cli

    done = run_cli("check", "-s", "smoke.compile", "--format", "json", env={"TORCH_COMPILE_DISABLE": "1"})
    row = json.loads(done.stdout)["results"][0]
    assert row["status"] == "skip" and "TORCH_COMPILE_DISABLE=1 switches torch.compile off" in row["message"]
    assert "Report" not in row["message"] + row["hint"]


# --- a GPU build of torch that sees no GPU: the small compile ---------------------------------


def test_the_small_compile_is_judged_with_what_was_left_out():
    value = {
        "device": "cpu",
        "parts": {"function": {**part(kernels=()), "kernels": {"triton": [], "cpp": ["cpp_fused_add_0"]}}},
        "left_out": {"module": "torch is a GPU build but sees no GPU: only the function is compiled on the CPU"},
        "vectorized": False,
    }
    row = run_check(smoke.compile_smoke, probe=CannedProbe(compile_smoke=value), torch_build=CUDA_TORCH, env=SERIAL)
    assert row.status is Status.PASS
    assert row.message == (
        "function matches eager on cpu; Inductor built 1 C++ kernel(s); no graph breaks "
        "(conv net left out: torch is a GPU build but sees no GPU: only the function is compiled on the CPU)"
    )
    assert [i.name for i in row.items] == ["function"]


def test_parallel_lanes_keep_what_a_lane_left_out():
    def answer(kwargs):
        name = kwargs["parts"][0]
        if name == "module":
            return {"device": "cpu", "parts": {}, "left_out": {"module": "no GPU"}}
        return {"device": "cpu", "parts": {"function": {**part(), "kernels": {"triton": [], "cpp": ["k"]}}}, "left_out": {}}

    row = run_check(
        smoke.compile_smoke, probe=CannedProbe(compile_smoke=answer), torch_build=CUDA_TORCH, env={"ENVDOCTOR_SMOKE_PARALLEL": "1"}
    )
    assert row.status is Status.PASS
    assert row.details["left_out"] == {"module": "no GPU"}
    assert row.message.endswith("(conv net left out: no GPU)")


@needs_torch
@pytest.mark.slow
def test_a_gpu_build_without_a_gpu_compiles_only_the_function_as_scalar_cpp(real_probe):
    """The GPUs-hidden fault case, on this CPU build: `gpu_build` stands in for a CUDA build."""
    value = real_probe.call(f"{smoke.BODY}:compile_smoke", {"parts": ["function", "module"], "gpu_build": True}, timeout=600)
    if value["device"] == "cuda":
        pytest.skip("this machine has a GPU: the CPU path is not what runs")
    assert list(value["parts"]) == ["function"] and list(value["left_out"]) == ["module"]
    assert value["vectorized"] is False
    assert value["parts"]["function"]["kernels"]["cpp"], value
    assert smoke.judge_compile(value).status is Status.PASS


def test_the_triton_smoke_gets_its_own_worker_only_when_asked():
    answer = {"interpreted": False, "ok": True, "max_error": 0.0, "triton_version": "3.6.0"}
    facts = {"torch_build": CUDA_TORCH, "dists": TRITON_DISTS, "gpus": [H200], "visible_gpus": [H200]}
    # (ENVDOCTOR_SMOKE_PARALLEL=triton is gone: the compile smokes have their own lane by default.)
    for setting, fresh in (("", False), ("0", False), ("1", True)):
        probe = CannedProbe(triton_add=answer)
        row = run_check(smoke.triton_kernel, probe=probe, env={"ENVDOCTOR_SMOKE_PARALLEL": setting}, **facts)
        assert row.status is Status.PASS, row.message
        assert bool(probe.calls[0][2].get("fresh")) is fresh, setting


def test_a_wedged_driver_keeps_the_compile_smoke_off_the_gpu():
    # NVML hung: the driver is wedged, and a compile on the GPU (torch sees it) would hang until
    # its 300 s deadline; the other GPU smokes skip through their gate, this one by name.
    hung = {"hung": {"nvml": "NVML did not answer within 10s: the driver or a GPU is likely wedged"}, "errors": {}}
    probe = CannedProbe(compile_smoke=compiled(function=part(), module=part()))
    row = run_check(smoke.compile_smoke, probe=probe, torch_build=CUDA_TORCH, env=SERIAL, nvidia_query=hung)
    assert row.status is Status.SKIP
    assert "stopped answering" in row.message and "likely wedged" in row.message
    assert probe.calls == []
    # A CPU build compiles on the CPU, where the driver plays no part; an answering driver changes nothing.
    for build, query in ((CPU_TORCH, hung), (CUDA_TORCH, {"hung": {}, "errors": {}})):
        probe = CannedProbe(compile_smoke=compiled(function=part(), module=part()))
        row = run_check(smoke.compile_smoke, probe=probe, torch_build=build, env=SERIAL, nvidia_query=query)
        assert row.status is not Status.SKIP, row.message
        assert len(probe.calls) == 1
