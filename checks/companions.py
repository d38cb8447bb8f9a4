"""What a torch release comes with, judged from the offline release table (``_release_data``):
the torchvision and torchaudio built for it, and the newest Python its torch.compile accepts.

These judge versions only, so they also judge a pasted environment (``envdoctor triage``):
"operator torchvision::nms does not exist" and "Python 3.13 is not supported by torch.compile"
are read off a ``pip list`` or a collect_env before anyone touches the machine.
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from envdoctor import Item, Status, check, fail, ok, pip_fix, skip, worst
from envdoctor_checks._lazy import lazy

release_data = lazy("envdoctor_checks._release_data")

PYTORCH_INDEX = "https://download.pytorch.org/whl/"
COMPANIONS = (("torchvision", "torchvision_for"), ("torchaudio", "torchaudio_for"))  # each with its function in _release_data


def _release(version: str) -> str:
    try:
        return Version(version).base_version
    except InvalidVersion:
        return version.split("+")[0]


@check("torch.companions", tags=("build",), sources=("live", "pasted"))
def companions(dists, python_info=None):
    """torchvision and torchaudio are the releases built for the installed torch"""
    torch = dists.get("torch")
    if not torch:
        return skip("torch is not installed")
    items = []
    for name, expected_for in COMPANIONS:
        have = dists.get(name)
        if not have:
            continue
        want = getattr(release_data, expected_for)(torch["version"])
        if want is None:
            items.append(Item(name, Status.SKIP, f"{have['version']}: the release table does not pair it with torch {torch['version']}"))
        elif _release(have["version"]) != _release(want):
            items.append(Item(name, Status.FAIL, f"{have['version']} is installed; torch {torch['version']} pairs with {name} {want}"))
        else:
            items.append(Item(name, Status.PASS, f"{have['version']} pairs with torch {torch['version']}"))
    if not items:
        return skip("neither torchvision nor torchaudio is installed")
    bad = [i for i in items if i.status is Status.FAIL]
    if bad:
        wants = " ".join(f"{i.name}=={i.message.rsplit(' ', 1)[-1]}" for i in bad)
        return fail(
            "; ".join(f"{i.name} {i.message}" for i in bad) + ": its compiled operators do not match torch "
            '("operator torchvision::nms does not exist", undefined symbols at import)',
            f"pip install {wants}   # the releases built for torch {torch['version']} (same CUDA index as torch)",
            items=items,
            fixes=[pip_fix(python_info, "install", "--no-deps", *_index(torch["version"]), *wants.split())],
        )
    if worst(items) is Status.PASS:
        return ok("; ".join(f"{i.name} {i.message}" for i in items), items=items)
    return skip("; ".join(f"{i.name} {i.message}" for i in items), details={"items": [i.name for i in items]})


def _index(torch_version: str) -> tuple[str, ...]:
    """The index of torch's own build: a local tag (+cu124, +cpu, +rocm6.2) names PyTorch's
    index for it; a plain version came from PyPI, the default."""
    local = str(torch_version).partition("+")[2]
    return ("--index-url", PYTORCH_INDEX + local) if local.replace(".", "").isalnum() and local else ()


def _py(version: str | None) -> tuple[int, ...] | None:
    try:
        return tuple(int(x) for x in str(version).split(".")[:2])
    except ValueError:
        return None


@check("compile.python_ceiling", tags=("build",), sources=("live", "pasted"))
def python_ceiling(python_info, torch_build=None, dists=None):
    """This Python is not newer than the torch release's torch.compile accepts (release table)"""
    if torch_build and torch_build.get("location"):
        return skip("judged from torch's own source by compile.python_version")
    # the release alone decides: a paste that names torch's version but not its build still shows it
    version = (torch_build or {}).get("version") or ((dists or {}).get("torch") or {}).get("version")
    if not version:
        return skip("torch's version is not known")
    limit = release_data.dynamo_max_python(version)
    have, ceiling = _py(python_info.get("version")), _py(limit)
    if limit is None or have is None or ceiling is None:
        return skip(f"the release table does not know torch {version}'s torch.compile Python limit")
    if have > ceiling:
        return fail(
            f"Python {python_info.get('version')} is newer than torch {version}'s torch.compile accepts "
            f"(up to {limit}): torch.compile raises 'Python {have[0]}.{have[1]}+ is not supported' (Dynamo)",
            f"use Python {limit} for torch.compile with this torch, or upgrade torch",
            details={"cause_id": "python_too_new_for_dynamo", "python": python_info.get("version"), "limit": limit},
        )
    return ok(f"Python {python_info.get('version')} is within torch {version}'s torch.compile limit ({limit})")
