"""Environment variables that steer the stack, captured by allowlist.

Half of "it works on my machine" is an environment variable: a stale ``LD_LIBRARY_PATH`` that
shadows torch's bundled CUDA libraries, ``CUDA_VISIBLE_DEVICES=`` hiding every GPU, a leftover
``TORCH_COMPILE_DISABLE=1``, ``PJRT_DEVICE`` unset on a TPU VM. The report records them so a
maintainer (and ``envdoctor diff``) can see them. Only names on the allowlist below are kept;
the rest of the environment (HOME, shell state, cloud credentials) never enters the report, and
a value whose name looks secret is replaced here already (envdoctor.core.redact scrubs everything
again before any output).

Fact: ``env_vars`` -- {name: value} for the allowlisted variables that are set.
"""

from __future__ import annotations

from envdoctor import check, fact, ok

# Prefixes of the families that configure CUDA, NVIDIA containers, torch, Triton, XLA/TPU,
# NCCL, OpenMP and the math libraries.
PREFIXES = (
    "CUDA_",
    "CUDNN_",
    "CUBLAS_",
    "NVIDIA_",
    "NV_",
    "TORCH",  # TORCH_*, TORCHINDUCTOR_*, TORCHDYNAMO_*, TORCHELASTIC_*
    "PYTORCH_",
    "TRITON_",
    "PJRT_",
    "XLA_",
    "TPU_",
    "LIBTPU_",
    "NCCL_",
    "GLOO_",
    "OMP_",
    "KMP_",
    "MKL_",
    "HIP_",
    "ROCM_",
    "ROCR_",
    "HSA_",
)
# Single variables that change which libraries, interpreter, compiler or wheels are used.
NAMES = frozenset(
    {
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "PATH",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONNOUSERSITE",
        "PYTHONSAFEPATH",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "CONDA_DEFAULT_ENV",
        "CC",
        "CXX",
        "CFLAGS",
        "CXXFLAGS",
        "LDFLAGS",
        "TMPDIR",
        "XDG_CACHE_HOME",
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "PIP_FIND_LINKS",
        "UV_INDEX_URL",
        "UV_EXTRA_INDEX_URL",
        "MASTER_ADDR",
        "MASTER_PORT",
        "WORLD_SIZE",
        "RANK",
        "LOCAL_RANK",
        "LOCAL_WORLD_SIZE",
    }
)
MAX_VALUE = 4096  # a PATH can be long, a report should not be


def allowed(name: str) -> bool:
    return name in NAMES or name.startswith(PREFIXES)


def compact_env_vars(value: dict) -> dict:
    """The report drops the NV_* variables NVIDIA's CUDA images set to record their own package
    versions (NV_CUDNN_PACKAGE, NV_LIBNPP_VERSION, ...): no check reads them (--full-facts: all)."""
    if not isinstance(value, dict):
        return value
    return {k: v for k, v in value.items() if not k.startswith("NV_")}


@fact(
    "env_vars",
    compact=compact_env_vars,
    ask="the CUDA/torch/Triton environment variables set when it fails (`env | grep -E 'CUDA|TORCH|TRITON|NCCL'`)",
)
def env_vars(env) -> dict:
    """{name: value} of the allowlisted variables that are set; secret-looking names keep
    their name (it is useful to know HF_TOKEN is set) but never their value."""
    from envdoctor import REDACTED, is_secret_key  # the redaction module: a run's, not `list`'s

    out: dict[str, str] = {}
    for name in sorted(env):
        if not allowed(name):
            continue
        value = str(env[name])
        if is_secret_key(name) and value:
            value = REDACTED
        elif len(value) > MAX_VALUE:
            value = value[:MAX_VALUE] + "...(truncated)"
        out[name] = value
    return out


@check("system.environment", tags=("build",), sources=("live", "pasted"))
def environment(env_vars):
    """Environment variables that steer CUDA, torch, Triton, XLA and NCCL"""
    # PATH is always set and says nothing by its presence; the families are the news.
    from envdoctor import REDACTED

    notable = [n for n in env_vars if n != "PATH"]
    hidden = [n for n, v in env_vars.items() if v == REDACTED]
    if not notable:
        return ok("none of the CUDA/NVIDIA/torch/Triton/XLA/NCCL variables is set", details=env_vars)
    shown = ", ".join(notable[:12]) + (f" and {len(notable) - 12} more" if len(notable) > 12 else "")
    tail = f" (values of {len(hidden)} secret-looking variable{'s' if len(hidden) != 1 else ''} hidden)" if hidden else ""
    return ok(f"{len(notable)} set: {shown}{tail}", details=env_vars)
