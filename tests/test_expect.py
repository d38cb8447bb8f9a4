"""Expectations: parsing what users write, and each expectation's verdict with injected facts."""

from __future__ import annotations

import pytest

from envdoctor import Unavailable
from envdoctor.core.api import Status
from envdoctor.core.expect import ExpectationError, Expectations, judge_must_pass, parse, plan, split_cli, to_spec
from envdoctor.core.facts import FactStore
from envdoctor.core.report import CheckOutcome, Report
from envdoctor.core.runner import evaluate

NO_DRIVER = Unavailable("no NVIDIA driver found (NVML: Driver Not Loaded; nvidia-smi: not found on PATH)")
H200 = {"index": 0, "name": "NVIDIA H200", "uuid": "GPU-1", "cc": "9.0", "memory_total": 150754820096}  # 140.4 GiB
TORCH = {"torch": {"name": "torch", "version": "2.11.0+cu130", "requires": []}}
CU130 = {"version": "2.11.0+cu130", "local": "cu130", "cuda": "13.0", "hip": None, "kind": "cuda"}


def expect(text: str, *, profile: str = "default", **facts):
    """Evaluate ``--expect TEXT`` as the runner does; facts not given are unavailable."""
    key, raw = split_cli(text)
    spec = to_spec(parse(key, raw))
    given = {p.name: Unavailable(f"fact {p.name!r} not given") for p in spec.params}
    given.update(options={"profile": profile}, **facts)
    return evaluate(spec, FactStore({}, given=given))


# -- what users write ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key", "raw"),
    [
        ("torch>=2.5", "torch", ">=2.5"),
        ("torch==1.0", "torch", "==1.0"),
        ("torch=2.5", "torch", "2.5"),
        ("gpus=8", "gpus", "8"),
        ("gpu_name=*H200*", "gpu_name", "*H200*"),
        ("  triton >= 3.5 ", "triton", ">= 3.5"),
        ("driver>=570,<600", "driver", ">=570,<600"),
    ],
)
def test_command_line_forms(text, key, raw):
    assert split_cli(text) == (key, raw)


def test_bare_version_means_equal_and_local_label_is_ignored():
    e = parse("torch", "2.11.0")
    assert e.value.contains("2.11.0+cu130")
    assert not e.value.contains("2.10.0")


@pytest.mark.parametrize(
    ("key", "raw", "words"),
    [
        ("tourch", ">=2", "unknown key 'tourch' (did you mean 'torch'?)"),
        ("torch", ">=2,5", "bad version specifier '>=2,5'"),
        ("torch", "", "bad version specifier"),
        ("python", 3.1, "must be a string version specifier"),  # TOML `python = 3.10`
        ("gpus", "eight", "bad GPU count 'eight'"),
        ("gpus", True, "must be a whole number"),
        ("gpus", -1, "must not be negative"),
        ("gpu_memory", 80, "must be a size with a unit"),
        ("gpu_memory", "80 parsecs", "bad size '80 parsecs'"),
        ("gpu_name", "", "non-empty name pattern"),
        ("must_pass", [1, 2], "must be a list of check ids"),
    ],
)
def test_bad_values_name_the_problem(key, raw, words):
    with pytest.raises(ExpectationError) as err:
        parse(key, raw)
    assert words in err.value.message


def test_missing_value_on_the_command_line():
    with pytest.raises(ExpectationError, match="gives no value"):
        split_cli("gpus=")


def test_sizes():
    assert parse("gpu_memory", "80GB").value == 80 * 10**9
    assert parse("gpu_memory", ">=140GiB").value == 140 << 30
    assert parse("gpu_memory", "512M").value == 512 << 20


# -- verdicts ----------------------------------------------------------------------------------


def test_torch_version_met_and_unmet():
    good = expect("torch>=2.5", dists=TORCH)
    assert good.status is Status.PASS and good.id == "expect.torch"
    assert "2.11.0+cu130 satisfies >=2.5" in good.message
    bad = expect("torch==1.0", dists=TORCH)
    assert bad.status is Status.FAIL
    assert bad.message == "torch 2.11.0+cu130 does not satisfy ==1.0"
    assert bad.hint == 'pip install "torch==1.0"'


def test_nightly_satisfies_a_lower_bound():
    row = expect("torch>=2.5", dists={"torch": {"name": "torch", "version": "2.13.0.dev20260101+cu130"}})
    assert row.status is Status.PASS


def test_package_not_installed_fails():
    row = expect("torch_xla>=2.5", dists=TORCH)
    assert row.status is Status.FAIL
    assert "torch_xla is not installed" in row.message
    assert row.hint == 'pip install "torch_xla>=2.5"'


def test_triton_found_under_its_nightly_name():
    row = expect("triton>=3.5", dists={"pytorch-triton": {"name": "pytorch-triton", "version": "3.6.0+git1234"}})
    assert row.status is Status.PASS and "pytorch-triton 3.6.0+git1234" in row.message


def test_torch_cuda_on_a_cpu_build():
    row = expect("torch_cuda==13.0", torch_build={"version": "2.13.0+cpu", "cuda": None, "kind": "cpu"})
    assert row.status is Status.FAIL
    assert "CPU-only build without CUDA" in row.message
    assert row.hint == "pip install torch --index-url https://download.pytorch.org/whl/cu130"
    assert expect("torch_cuda=13.0", torch_build=CU130).status is Status.PASS
    assert expect("torch_cuda>=12.8", torch_build=CU130).status is Status.PASS


def test_python_and_driver():
    assert expect("python>=3.10", python_info={"version": "3.11.7"}).status is Status.PASS
    row = expect("python>=3.12", python_info={"version": "3.11.7"})
    assert row.status is Status.FAIL and row.message == "Python 3.11.7 does not satisfy >=3.12"
    assert expect("driver>=570", driver={"version": "580.65.06"}).status is Status.PASS
    assert expect("driver>=590", driver={"version": "580.65.06"}).status is Status.FAIL


def test_unavailable_fact_fails_with_its_reason():
    # An expectation that cannot be verified is not met.
    row = expect("gpus=8", gpus=NO_DRIVER, visible_gpus=NO_DRIVER)
    assert row.status is Status.FAIL
    assert row.message.startswith("expected 8 GPUs, but no NVIDIA driver found")
    assert "--gpus all" in row.hint
    drv = expect("driver>=570", driver=NO_DRIVER)
    assert drv.status is Status.FAIL and "no NVIDIA driver found" in drv.message
    assert expect("torch>=2.5", dists=Unavailable("metadata unreadable")).status is Status.FAIL


def test_gpu_count_on_one_h200():
    row = expect("gpus=8", gpus=[H200], visible_gpus=[H200])
    assert row.status is Status.FAIL
    assert row.message == "expected 8 GPUs, found 1 GPU (NVIDIA H200)"
    assert expect("gpus=1", gpus=[H200], visible_gpus=[H200]).status is Status.PASS
    assert expect("gpus>=1", gpus=[H200], visible_gpus=[H200]).status is Status.PASS


def test_gpu_count_names_cuda_visible_devices():
    other = dict(H200, index=1, uuid="GPU-2")
    row = expect("gpus=2", gpus=[H200, other], visible_gpus=[H200])
    assert row.status is Status.FAIL
    assert "CUDA_VISIBLE_DEVICES hides 1 of the 2 GPUs" in row.message


def test_zero_gpus_expected_without_driver_passes():
    assert expect("gpus=0", gpus=NO_DRIVER, visible_gpus=NO_DRIVER).status is Status.PASS


def test_gpu_name_pattern():
    row = expect("gpu_name=*H200*", gpus=[H200], visible_gpus=[H200])
    assert row.status is Status.PASS and "NVIDIA H200" in row.message
    assert expect("gpu_name=h200", gpus=[H200], visible_gpus=[H200]).status is Status.PASS  # plain word: anywhere, any case
    bad = expect("gpu_name=*A100*", gpus=[H200], visible_gpus=[H200])
    assert bad.status is Status.FAIL
    assert "1 of 1 GPUs do not match *A100*: GPU 0 is NVIDIA H200" in bad.message
    assert [i.status for i in bad.items] == [Status.FAIL]


def test_gpu_memory_minimum():
    assert expect("gpu_memory=140GB", gpus=[H200], visible_gpus=[H200]).status is Status.PASS
    row = expect("gpu_memory=141GiB", gpus=[H200], visible_gpus=[H200])
    assert row.status is Status.FAIL
    assert "GPU 0 has 140.4 GiB" in row.message


def test_gpu_expectations_are_not_judged_in_docker_build():
    # One config serves `docker build` (no GPU) and the running container.
    for text in ("gpus=8", "gpu_name=*H200*", "gpu_memory=80GB", "driver>=570"):
        row = expect(text, profile="build", gpus=NO_DRIVER, visible_gpus=NO_DRIVER, driver=NO_DRIVER)
        assert row.status is Status.SKIP, text
        assert "not checked under --profile build" in row.message
    assert expect("torch==1.0", profile="build", dists=TORCH).status is Status.FAIL


# -- must_pass ---------------------------------------------------------------------------------


def _spec(id_: str, tags=("build",)):
    from envdoctor.core.api import CheckSpec

    return CheckSpec(id_, lambda: None, id_, tuple(tags), ())


def _report(*rows: CheckOutcome) -> Report:
    return Report(tool_version="0", started_at="", duration=0.0, platform={}, results=rows)


def test_must_pass_fails_for_a_skipped_or_failed_check():
    specs = [_spec("triton.torch_pin"), _spec("system.python"), _spec("smoke.cuda", ("gpu",))]
    exp = Expectations((parse("must_pass", ["triton.torch_pin", "system", "smoke.cuda", "nope.nothing"], "envdoctor.toml"),))
    report = _report(
        CheckOutcome("triton.torch_pin", "pin", Status.SKIP, "torch is a CPU build"),
        CheckOutcome("system.python", "py", Status.PASS),
    )
    row = judge_must_pass(report, exp, specs, "default").results[-1]
    assert row.id == "expect.must_pass" and row.status is Status.FAIL
    by_name = {i.name: i for i in row.items}
    assert by_name["triton.torch_pin"].message == "skip: torch is a CPU build"
    assert by_name["system.python"].status is Status.PASS
    assert "did not run" in by_name["smoke.cuda"].message
    assert "no check matches" in by_name["nope.nothing"].message
    assert row.source == "expectation (envdoctor.toml)"


def test_must_pass_gpu_checks_are_not_judged_in_build_and_are_added_otherwise():
    specs = [_spec("system.python"), _spec("smoke.cuda", ("gpu", "smoke")), _spec("perf.matmul", ("perf",))]
    exp = Expectations((parse("must_pass", ["smoke.cuda", "perf.matmul"]),))
    build = plan(exp, specs, [specs[0]], "build")
    assert [s.id for s in build] == ["system.python", "perf.matmul"]
    assert [s.id for s in plan(exp, specs, [specs[0]], "default")] == ["system.python", "smoke.cuda", "perf.matmul"]
    report = _report(CheckOutcome("system.python", "py", Status.PASS), CheckOutcome("perf.matmul", "mm", Status.PASS))
    row = judge_must_pass(report, exp, specs, "build").results[-1]
    assert row.status is Status.PASS
    assert row.message == "all 1 must-pass checks passed (1 not judged here)"


def test_command_line_overrides_config_and_extends_lists():
    base = Expectations((parse("torch", ">=2.5", "f.toml"), parse("skip", ["system.disk"], "f.toml")))
    merged = base.merged([parse("torch", "==1.0"), parse("skip", "xla")])
    assert merged.get("torch").text == "==1.0"
    assert merged.skip == ("system.disk", "xla")
