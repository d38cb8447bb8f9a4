"""system.environment and the env_vars fact: allowlisted variables, secret values hidden."""

from __future__ import annotations

from envdoctor.core.api import Status
from envdoctor.core.redact import REDACTED
from envdoctor.testing import gather, run_check
from envdoctor_checks.environment import env_vars, environment


def test_fact_keeps_only_the_allowlist():
    env = {
        "CUDA_VISIBLE_DEVICES": "0,1",
        "TORCHINDUCTOR_CACHE_DIR": "/scratch/ind",
        "NCCL_DEBUG": "INFO",
        "PJRT_DEVICE": "TPU",
        "LD_LIBRARY_PATH": "/usr/local/cuda/lib64",
        "PATH": "/usr/bin",
        "HOME": "/home/alice",
        "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
        "SHELL": "/bin/bash",
    }
    got = gather(env_vars, env=env)
    assert set(got) == {"CUDA_VISIBLE_DEVICES", "TORCHINDUCTOR_CACHE_DIR", "NCCL_DEBUG", "PJRT_DEVICE", "LD_LIBRARY_PATH", "PATH"}


def test_fact_hides_secret_values_but_says_they_are_set():
    got = gather(env_vars, env={"TORCH_HUB_TOKEN": "ghp_x", "NCCL_IB_PKEY": "", "TRITON_PASSWORD": "hunter2"})
    assert got == {"TORCH_HUB_TOKEN": REDACTED, "NCCL_IB_PKEY": "", "TRITON_PASSWORD": REDACTED}


def test_long_values_are_bounded():
    got = gather(env_vars, env={"LD_LIBRARY_PATH": "/x" * 5000})
    assert len(got["LD_LIBRARY_PATH"]) < 4200 and got["LD_LIBRARY_PATH"].endswith("(truncated)")


def test_check_lists_what_is_set():
    row = run_check(environment, env_vars={"PATH": "/usr/bin", "CUDA_HOME": "/usr/local/cuda", "TORCH_HUB_TOKEN": REDACTED})
    assert row.status is Status.PASS
    assert row.message == "2 set: CUDA_HOME, TORCH_HUB_TOKEN (values of 1 secret-looking variable hidden)"
    assert row.details["CUDA_HOME"] == "/usr/local/cuda"


def test_check_passes_when_nothing_is_set():
    row = run_check(environment, env_vars={"PATH": "/usr/bin"})
    assert row.status is Status.PASS and "none of the" in row.message
