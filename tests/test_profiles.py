"""Profiles: which checks each one runs, and what `envdoctor check --profile ...` does on this
CPU-only machine with CPU torch (healthy), with no C compiler and with an unmet expectation."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from envdoctor.core.api import CheckSpec
from envdoctor.core.selection import choose
from tests.conftest import run_cli


def spec(id_: str, *tags: str) -> CheckSpec:
    return CheckSpec(id_, lambda: None, id_, tags, ())


SPECS = [
    spec("system.python", "build"),
    spec("nvidia.driver", "gpu"),
    spec("smoke.cpu_compile", "build", "smoke"),
    spec("smoke.cuda_matmul", "gpu", "smoke"),
    spec("perf.matmul", "perf", "gpu"),
    spec("dist.allreduce", "distributed"),
    spec("site.untagged"),  # a plugin check that says nothing about GPUs
]


def ids(profile: str, select=(), deselect=()) -> list[str]:
    return [s.id for s in choose(SPECS, select, deselect, profile)]


def test_build_runs_only_what_needs_no_gpu():
    # An untagged plugin check might need a GPU: a docker build must not fail for lack of one.
    assert ids("build") == ["system.python", "smoke.cpu_compile"]


def test_runtime_adds_driver_gpu_and_gpu_smoke():
    assert ids("runtime") == ["system.python", "nvidia.driver", "smoke.cpu_compile", "smoke.cuda_matmul", "site.untagged"]


def test_full_adds_perf_and_default_is_everything_quick():
    assert ids("full") == [*ids("runtime")[:4], "perf.matmul", "site.untagged"]
    assert ids("default") == ids("runtime")


def test_health_runs_only_the_checks_tagged_health():
    """A HEALTHCHECK every few minutes: the driver, the GPUs, hardware health and one kernel on
    every GPU; measured on the H200 the runtime-minus-compile-smokes set took 8-9 s (bar: 5 s)."""
    specs = [*SPECS, spec("smoke.kernel", "gpu", "smoke", "health"), spec("nvidia.nodes", "gpu", "health")]
    assert [s.id for s in choose(specs, (), (), "health")] == ["smoke.kernel", "nvidia.nodes"]
    assert [s.id for s in choose(specs, (), ("smoke",), "health")] == ["nvidia.nodes"]


def test_health_profile_runs_the_builtin_matmul_smoke_and_nothing_slow():
    from envdoctor.core.registry import discover

    chosen = {s.id for s in choose(discover(()).checks, (), (), "health")}
    runtime = {s.id for s in choose(discover(()).checks, (), (), "runtime")}
    assert {"smoke.matmul", "nvidia.driver", "nvidia.gpus", "torch.cuda_available", "health.ecc", "health.xid"} <= chosen <= runtime
    assert not {i for i in chosen if i.startswith("smoke.") and i != "smoke.matmul"}
    assert not chosen & {"torch.extension_abi", "torch.loaded_libraries", "triton.ptxas", "compile.cxx_compiler"}


def test_explicit_select_wins_over_the_profile():
    assert ids("build", select=["perf"]) == ["perf.matmul"]
    assert ids("build", deselect=["smoke"]) == ["system.python"]


# -- the real CLI on this CPU-only machine ---------------------------------------------------
# Only the first run pays for the CPU torch.compile smoke (about a minute on a small CI box);
# the others deselect it or select what they need.


def rows(res) -> dict[str, dict]:
    return {r["id"]: r for r in json.loads(res.stdout)["results"]}


@pytest.fixture(scope="module")
def build_run():
    return run_cli("check", "--profile", "build", "--format", "json")


@pytest.mark.slow
def test_build_profile_is_healthy_here(build_run):
    assert build_run.returncode == 0, build_run.stdout[-3000:] + build_run.stderr
    found = rows(build_run)
    assert not [r for r in found.values() if r["status"] in ("fail", "error")]
    assert all("build" in r["tags"] for r in found.values())
    assert not [i for i, r in found.items() if "gpu" in r["tags"]]


@pytest.mark.slow
def test_build_profile_fails_without_a_c_compiler(tmp_path):
    # PATH holding only the python dir: no gcc, g++, cc or clang, and CC/CXX unset.
    env = {k: v for k, v in os.environ.items() if k not in ("CC", "CXX")}
    env["PATH"] = os.path.dirname(sys.executable)
    res = subprocess.run(
        [sys.executable, "-m", "envdoctor", "check", "--profile", "build", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        cwd=str(tmp_path),
    )
    assert res.returncode == 1, res.stderr
    found = rows(res)
    bad = sorted(i for i, r in found.items() if r["status"] in ("fail", "error"))
    # Inductor's compiler check names the cause; the CPU compile smoke (when installed) shows the consequence.
    assert {"compile.cxx_compiler"} <= set(bad) <= {"compile.cxx_compiler", "smoke.compile"}
    assert "no g++ on PATH" in found["compile.cxx_compiler"]["message"]
    # With this CPU build of torch Triton compiles nothing: its missing C compiler is said, not failed.
    assert found["triton.c_compiler"]["status"] == "skip" and "no gcc or clang on PATH" in found["triton.c_compiler"]["message"]


@pytest.mark.slow
def test_build_profile_fails_on_an_unmet_expectation(cli, tmp_path):
    res = cli("check", "--profile", "build", "--expect", "torch==1.0", "--deselect", "smoke", "--format", "json", cwd=str(tmp_path))
    assert res.returncode == 1, res.stderr
    found = rows(res)
    bad = [i for i, r in found.items() if r["status"] in ("fail", "error")]
    assert bad == ["expect.torch"]
    assert found["expect.torch"]["message"].endswith("does not satisfy ==1.0")
    assert found["expect.torch"]["hint"] == 'pip install "torch==1.0"'


@pytest.mark.slow
def test_gpu_expectations_skip_in_build(cli, tmp_path):
    res = cli(
        "check",
        "--profile",
        "build",
        "-e",
        "gpus=8",
        "-e",
        "torch>=2.0",
        "--select",
        "system.python",
        "--format",
        "json",
        cwd=str(tmp_path),
    )
    assert res.returncode == 0, res.stdout[-2000:]
    found = rows(res)
    assert found["expect.gpus"]["status"] == "skip"
    assert found["expect.torch"]["status"] == "pass"


@pytest.mark.slow
def test_quiet_is_one_line_and_the_exit_code_carries_the_verdict(cli, tmp_path):
    res = cli("check", "--profile", "build", "--quiet", "--expect", "torch==1.0", "--select", "system", cwd=str(tmp_path))
    assert res.returncode == 1
    lines = res.stdout.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("envdoctor PROBLEMS FOUND: ")
    assert "expect.torch: torch " in lines[0] and "does not satisfy ==1.0" in lines[0]
    ok = cli("check", "--profile", "build", "-q", "--select", "system.python", cwd=str(tmp_path))
    assert ok.returncode == 0 and ok.stdout.startswith("envdoctor HEALTHY: ") and len(ok.stdout.splitlines()) == 1


@pytest.mark.slow
def test_runtime_profile_expects_a_gpu(cli, tmp_path):
    # A GPU container that lost its GPUs must fail its health check, not skip every GPU check.
    res = cli("check", "--profile", "runtime", "--select", "system.python", "--format", "json", cwd=str(tmp_path))
    assert res.returncode == 1
    row = rows(res)["expect.gpus"]
    assert row["status"] == "fail" and row["message"].startswith("expected >=1 GPUs, but no NVIDIA")
    assert row["source"] == "expectation (--profile runtime)"
    none = cli("check", "--profile", "runtime", "--select", "system.python", "--expect", "gpus=0", "-q", cwd=str(tmp_path))
    assert none.returncode == 0, none.stdout


@pytest.mark.slow
def test_health_profile_expects_a_gpu_and_fails_fast_without_one(cli, tmp_path):
    """The HEALTHCHECK profile: on this GPU-less machine it fails on the GPU expectation, and it
    compiles nothing (no smoke but smoke.matmul, which skips here)."""
    res = cli("check", "--profile", "health", "--format", "json", cwd=str(tmp_path))
    assert res.returncode == 1, res.stdout + res.stderr
    got = rows(res)
    assert got["expect.gpus"]["status"] == "fail" and got["expect.gpus"]["source"] == "expectation (--profile health)"
    assert [i for i in got if i.startswith("smoke.")] == ["smoke.matmul"]
    assert got["smoke.matmul"]["status"] == "skip"
