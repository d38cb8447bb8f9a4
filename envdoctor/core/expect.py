"""Expectations: what an image or a node must have, judged as checks with their own ids.

``--expect torch>=2.5 --expect gpus=8`` (or the same keys in ``envdoctor.toml``) become rows
``expect.torch`` and ``expect.gpus`` in the report. They judge the shared facts (``dists``,
``torch_build``, ``python_info``, ``driver``, ``visible_gpus``); when a fact cannot be had the
expectation FAILS with that fact's reason ("expected 8 GPUs, but no NVIDIA driver found"),
because an expectation that cannot be verified is not met.

Two keys are lists of check patterns rather than expectations about facts: ``must_pass``
(judged after the run as the row ``expect.must_pass``) and ``skip`` (left out like
``--deselect``).

GPU expectations (driver, gpus, gpu_name, gpu_memory) are not judged under ``--profile build``:
a ``docker build`` has no GPU, and one config file serves the build and the running container.

``torch = "none"`` says torch is not expected in the interpreter examined (a base image, a CI
venv): without it a missing torch fails ``packages.versions``, since there is nothing to examine.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from envdoctor.core.api import CheckSpec, Item, Param, Result, Status, fail, ok, skip, worst
from envdoctor.core.report import CheckOutcome, Report
from envdoctor.core.selection import judged_here, matches, profile
from envdoctor.core.stack import TRITON_DISTS, Gpu, Stack, facts_for, from_facts

# key -> (the distribution it names, or None) for version expectations
VERSION_KEYS: dict[str, str] = {
    "python": "Python",
    "torch": "torch",
    "torch_cuda": "torch's CUDA",
    "triton": "triton",
    "torch_xla": "torch_xla",
    "driver": "NVIDIA driver",
}
GPU_KEYS = ("driver", "gpus", "gpu_name", "gpu_memory")
FACT_KEYS = (*VERSION_KEYS, "gpus", "gpu_name", "gpu_memory")
LIST_KEYS = ("must_pass", "skip")
KEYS = (*FACT_KEYS, *LIST_KEYS)
ALIASES = {"torch-xla": "torch_xla", "torch-cuda": "torch_cuda", "cuda": "torch_cuda", "gpu-name": "gpu_name", "gpu-memory": "gpu_memory"}

NONE = "none"  # torch = "none": torch is not expected here
BUILD_SKIP = "not checked under --profile build (a docker build has no GPU); judged under --profile runtime"


class ExpectationError(ValueError):
    """A key or value that cannot be an expectation. ``key`` names it for the message."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


@dataclass(frozen=True)
class Count:
    """A GPU count condition: ``8``, ``>=4``, ``>=2,<=8``."""

    clauses: tuple[tuple[str, int], ...]
    text: str

    def __contains__(self, n: int) -> bool:
        return all(_OPS[op](n, v) for op, v in self.clauses)

    def describe(self) -> str:
        if len(self.clauses) == 1 and self.clauses[0][0] == "==":
            return str(self.clauses[0][1])
        return self.text


_OPS: dict[str, Callable[[int, int], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
}


@dataclass(frozen=True)
class Expectation:
    key: str
    text: str  # as the user wrote it, for messages
    value: Any  # SpecifierSet | Count | str (glob) | int (bytes) | tuple[str, ...]
    origin: str  # "--expect" or the config file's path

    @property
    def shown(self) -> str:
        """For titles and "expected ..." phrases: ``13.0`` rather than ``==13.0``."""
        if isinstance(self.value, Count):
            return self.value.describe()
        if isinstance(self.value, SpecifierSet) and re.fullmatch(r"==\s*[^,=<>!~]+", self.text):
            return self.text[2:].strip()
        return self.text


# -- parsing ---------------------------------------------------------------------------------


def canonical_key(key: str) -> str:
    k = key.strip().lower()
    k = ALIASES.get(k, k)
    if k not in KEYS:
        close = difflib.get_close_matches(k, KEYS, n=1)
        maybe = f" (did you mean '{close[0]}'?)" if close else ""
        raise ExpectationError(key, f"unknown key '{key}'{maybe}; known keys: {', '.join(KEYS)}")
    return k


def split_cli(text: str) -> tuple[str, str]:
    """``torch>=2.5`` -> ("torch", ">=2.5"); ``gpus=8`` -> ("gpus", "8"); ``torch==1.0`` keeps ``==``."""
    m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_-]*)\s*(.*?)\s*$", text, re.S)
    if not m or not m.group(1):
        raise ExpectationError(text, f"'{text}' is not KEY=VALUE or KEY<specifier> (e.g. 'torch>=2.5', 'gpus=8')")
    key, rest = m.group(1), m.group(2)
    if rest.startswith("=") and not rest.startswith("=="):
        rest = rest[1:].strip()
    if not rest:
        raise ExpectationError(key, f"'{text}' gives no value (e.g. 'torch>=2.5', 'gpus=8', 'gpu_name=*H200*')")
    return key, rest


def parse(key: str, raw: Any, origin: str = "--expect") -> Expectation:
    """Validate one key and its value; raises ExpectationError naming what is wrong."""
    key = canonical_key(key)
    if key == "torch" and isinstance(raw, str) and raw.strip().lower() == NONE:
        return Expectation(key, NONE, None, origin)
    if key in VERSION_KEYS:
        return Expectation(key, *_version_spec(key, raw), origin)
    if key == "gpus":
        count = _count(key, raw)
        return Expectation(key, count.text, count, origin)
    if key == "gpu_name":
        if not isinstance(raw, str) or not raw.strip().lstrip("="):
            raise ExpectationError(key, f'must be a non-empty name pattern like "*H200*", got {_show(raw)}')
        pattern = raw.strip().lstrip("=").strip()
        return Expectation(key, pattern, pattern, origin)
    if key == "gpu_memory":
        size = _size(key, raw)
        return Expectation(key, str(raw).strip().lstrip(">=").strip(), size, origin)
    patterns = _patterns(key, raw)
    return Expectation(key, ",".join(patterns), patterns, origin)


def _show(raw: Any) -> str:
    return f"{type(raw).__name__} {raw!r}"


def _version_spec(key: str, raw: Any) -> tuple[str, SpecifierSet]:
    example = {"python": ">=3.10", "driver": ">=570", "torch_cuda": "==13.0"}.get(key, ">=2.5")
    if not isinstance(raw, str):
        # TOML `python = 3.10` is the float 3.1: refuse rather than guess.
        raise ExpectationError(key, f'must be a string version specifier like "{example}", got {_show(raw)}')
    text = raw.strip()
    spec_text = text if not text[:1].isdigit() else ("==" + text)
    try:  # no release has a number of 19 digits; a longer one cannot even be compared
        spec = SpecifierSet(spec_text) if len(text) <= 200 and not re.search(r"\d{19}", text) else None
    except InvalidSpecifier:
        spec = None
    if spec is None or not text or not len(spec):
        raise ExpectationError(key, f'bad version specifier \'{raw}\': write PEP 440 specifiers such as "{example}" or "==2.11.*"')
    return text, spec


def _count(key: str, raw: Any) -> Count:
    if isinstance(raw, bool) or not isinstance(raw, (int, str)):
        raise ExpectationError(key, f'must be a whole number or a condition like ">=4", got {_show(raw)}')
    if isinstance(raw, int):
        if raw < 0:
            raise ExpectationError(key, f"must not be negative, got {raw}")
        return Count((("==", raw),), str(raw))
    clauses = []
    for part in raw.split(","):
        m = re.fullmatch(r"\s*(==|!=|>=|<=|>|<|=)?\s*(\d{1,9})\s*", part)  # bounded: no count has 5,000 digits
        if not m:
            raise ExpectationError(key, f'bad GPU count \'{raw}\': write a number (8) or conditions such as ">=4" or ">=2,<=8"')
        op = m.group(1) or "=="
        clauses.append(("==" if op == "=" else op, int(m.group(2))))
    return Count(tuple(clauses), raw.strip())


_UNITS = {
    "": 1 << 30,  # a bare number in a string is GiB, as nvidia-smi-minded users expect
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "k": 1 << 10,
    "m": 1 << 20,
    "g": 1 << 30,
    "t": 1 << 40,
    "kib": 1 << 10,
    "mib": 1 << 20,
    "gib": 1 << 30,
    "tib": 1 << 40,
}


def _size(key: str, raw: Any) -> int:
    if not isinstance(raw, str):
        # A bare TOML number is ambiguous (GB? GiB? bytes?); ask for a unit.
        raise ExpectationError(key, f'must be a size with a unit like "80GB" or "140GiB", got {_show(raw)}')
    m = re.fullmatch(r"\s*(?:>=)?\s*(\d{1,15}(?:\.\d{1,9})?)\s*([A-Za-z]{0,3})\s*", raw)  # bounded: never infinite
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _UNITS:
        raise ExpectationError(key, f'bad size \'{raw}\': write a minimum such as "80GB" (10^9 bytes) or "140GiB" (2^30 bytes)')
    return int(float(m.group(1)) * _UNITS[unit])


def _patterns(key: str, raw: Any) -> tuple[str, ...]:
    if isinstance(raw, str):
        items = [p.strip() for p in raw.split(",")]
    elif isinstance(raw, list) and all(isinstance(p, str) for p in raw):
        items = [p.strip() for p in raw]
    else:
        raise ExpectationError(key, f'must be a list of check ids, prefixes or tags like ["triton.torch_pin"], got {_show(raw)}')
    items = [p for p in items if p]
    if not items:
        raise ExpectationError(key, "must name at least one check id, prefix or tag")
    return tuple(items)


# -- judging ---------------------------------------------------------------------------------


def _gib(n: float) -> str:
    return f"{n / (1 << 30):.1f} GiB"


def _version_in(version: str, spec: SpecifierSet) -> bool | None:
    try:
        # prereleases=True: a nightly 2.13.0.dev2025... satisfies ">=2.5" as a user means it.
        return spec.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return None


def _judge_version(what: str, version: str, e: Expectation, hint: str) -> Result:
    inside = _version_in(version, e.value)
    if inside is None:
        return fail(f"{what} version '{version}' is not a valid version, so it cannot satisfy {e.text}", hint=hint)
    if not inside:
        return fail(f"{what} {version} does not satisfy {e.text}", hint=hint)
    return ok(f"{what} {version} satisfies {e.text}")


def _pip(dist: str, e: Expectation) -> str:
    return f'pip install "{dist}{e.text if not e.text[:1].isdigit() else "==" + e.text}"'


def _cuda_index_hint(e: Expectation) -> str:
    specs = list(e.value)
    if len(specs) == 1 and specs[0].operator == "==":
        parts = specs[0].version.rstrip(".*").split(".")
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
            tag = f"cu{parts[0]}{parts[1]}"
            return f"pip install torch --index-url https://download.pytorch.org/whl/{tag}"
    return f"Install a torch wheel built for CUDA {e.shown}: pip install torch --index-url https://download.pytorch.org/whl/cuXYZ"


def judge(e: Expectation, facts: Mapping[str, Any]) -> Result:
    """The verdict on one expectation, given the facts it asked for (a Missing when unavailable)."""
    options = facts.get("options") or {}
    if e.key in GPU_KEYS and not profile(options.get("profile") or "default").gpu:
        return skip(BUILD_SKIP)
    return _JUDGES[e.key](e, from_facts(facts))


def _why(s: Stack, component: str) -> str:
    return s.missing.get(component) or "the run did not record it"


def _python(e: Expectation, s: Stack) -> Result:
    if s.python is None:
        return fail(
            f"cannot tell the Python version to compare with {e.text}: {_why(s, 'python')}",
            hint="Run envdoctor with the interpreter in question.",
        )
    return _judge_version(
        "Python",
        s.python.version,
        e,
        hint=f"Use a Python that satisfies {e.text} (e.g. a venv made with python{_example(e)} -m venv).",
    )


def _example(e: Expectation) -> str:
    m = re.search(r"\d+\.\d+", e.text)
    return m.group(0) if m else "3"


def _package(label: str, dists_names: Sequence[str], pip_name: str) -> Callable[[Expectation, Stack], Result]:
    def judge_package(e: Expectation, s: Stack) -> Result:
        hint = _pip(pip_name, e)
        if s.dists is None:
            return fail(f"cannot tell which {label} is installed to compare with {e.text}: {_why(s, 'dists')}", hint=hint)
        found = s.dist(*dists_names)
        if found is None:
            return fail(f"{label} is not installed; expected {label} {e.shown}", hint=hint)
        return _judge_version(found.name, found.version, e, hint=hint)

    return judge_package


def _torch_cuda(e: Expectation, s: Stack) -> Result:
    torch = s.torch
    hint = _cuda_index_hint(e)
    if torch is None:
        return fail(f"cannot tell torch's CUDA version to compare with {e.text}: {_why(s, 'torch')}", hint=hint)
    if not torch.cuda:
        kind = torch.kind or "non-CUDA"
        what = "CPU-only" if kind == "cpu" else kind.upper()
        return fail(f"torch {torch.version} is a {what} build without CUDA; expected CUDA {e.shown}", hint=hint)
    return _judge_version(f"torch {torch.version} is built for CUDA", torch.cuda, e, hint=hint)


_DRIVER_HINT = (
    "Install or upgrade the NVIDIA driver on the host (containers use the host's driver): "
    "run nvidia-smi there; start containers with --gpus all (nvidia-container-toolkit)."
)
_GPU_HINT = (
    "Give the process the GPUs: docker run --gpus all, Kubernetes resources.limits nvidia.com/gpu, "
    "and check CUDA_VISIBLE_DEVICES; nvidia-smi -L lists the GPUs the driver sees."
)


def _driver(e: Expectation, s: Stack) -> Result:
    if s.driver is None:
        return fail(f"expected NVIDIA driver {e.shown}, but {_why(s, 'driver')}", hint=_DRIVER_HINT)
    return _judge_version("NVIDIA driver", s.driver.version, e, hint=_DRIVER_HINT)


def _visible(s: Stack) -> tuple[list[Gpu] | None, str]:
    """The GPUs the process sees, and a note when CUDA_VISIBLE_DEVICES hides some."""
    vis, all_gpus = s.visible_gpus, s.gpus
    if vis is None:
        return None, _why(s, "visible_gpus")
    note = ""
    if all_gpus is not None and len(all_gpus) > len(vis):
        note = f"; CUDA_VISIBLE_DEVICES hides {len(all_gpus) - len(vis)} of the {len(all_gpus)} GPUs the driver sees"
    return list(vis), note


def _gpus(e: Expectation, s: Stack) -> Result:
    gpus, note = _visible(s)
    want = e.value.describe()
    if gpus is None:
        if 0 in e.value:
            return ok(f"no GPU ({note}), as expected")
        return fail(f"expected {want} GPUs, but {note}", hint=_GPU_HINT)
    n = len(gpus)
    names = sorted({g.name for g in gpus})
    seen = f"{n} GPU{'s' if n != 1 else ''}" + (f" ({', '.join(names)})" if names else "")
    if n not in e.value:
        return fail(f"expected {want} GPUs, found {seen}{note}", hint=_GPU_HINT)
    return ok(f"{seen} visible{note}, as expected ({want})")


def _gpu_items(s: Stack, test: Callable[[Gpu], tuple[bool, str]]) -> tuple[list[Item] | None, str]:
    gpus, note = _visible(s)
    if gpus is None:
        return None, note
    items = []
    for g in gpus:
        good, msg = test(g)
        items.append(Item(f"GPU {g.index}", Status.PASS if good else Status.FAIL, msg))
    return items, note


def _gpu_name(e: Expectation, s: Stack) -> Result:
    raw = e.value
    # A plain word ("H200") matches anywhere in the name; a glob ("NVIDIA H200*") as written.
    pattern = (raw if any(c in raw for c in "*?[") else f"*{raw}*").lower()
    items, note = _gpu_items(s, lambda g: (fnmatchcase(g.name.lower(), pattern), g.name))
    if items is None:
        return fail(f"expected GPUs named {raw}, but {note}", hint=_GPU_HINT)
    if not items:
        return fail(f"expected GPUs named {raw}, but no GPU is visible{note}", hint=_GPU_HINT)
    bad = [i for i in items if i.status is Status.FAIL]
    if bad:
        names = ", ".join(f"{i.name} is {i.message}" for i in bad)
        return fail(
            f"{len(bad)} of {len(items)} GPUs do not match {raw}: {names}",
            hint="Schedule the job on nodes with the expected GPU model (node selector/label), or fix gpu_name.",
            items=items,
        )
    return ok(f"all {len(items)} GPUs match {raw} ({', '.join(sorted({i.message for i in items}))})", items=items)


def _gpu_memory(e: Expectation, s: Stack) -> Result:
    need = e.value

    def test(g: Gpu) -> tuple[bool, str]:
        if g.memory_total is None:
            return False, "memory size unknown"
        return g.memory_total >= need, _gib(g.memory_total)

    items, note = _gpu_items(s, test)
    if items is None:
        return fail(f"expected GPUs with at least {e.text} of memory, but {note}", hint=_GPU_HINT)
    if not items:
        return fail(f"expected GPUs with at least {e.text} of memory, but no GPU is visible{note}", hint=_GPU_HINT)
    bad = [i for i in items if i.status is Status.FAIL]
    if bad:
        return fail(
            f"{len(bad)} of {len(items)} GPUs have less than {e.text} ({_gib(need)}) of memory: "
            + ", ".join(f"{i.name} has {i.message}" for i in bad),
            hint="Use GPUs with more memory, or lower gpu_memory (NVML reports slightly less than the marketing size: an H100 80GB shows 79.6 GiB; write 80GB, not 80GiB).",
            items=items,
        )
    return ok(f"every GPU has at least {e.text} (smallest {min(i.message for i in items)})", items=items)


_JUDGES: dict[str, Callable[[Expectation, Stack], Result]] = {
    "python": _python,
    "torch": _package("torch", ("torch",), "torch"),
    "torch_cuda": _torch_cuda,
    "triton": _package("triton", TRITON_DISTS, "triton"),
    "torch_xla": _package("torch_xla", ("torch-xla",), "torch_xla"),
    "driver": _driver,
    "gpus": _gpus,
    "gpu_name": _gpu_name,
    "gpu_memory": _gpu_memory,
}
# The facts each expectation reads (all optional: an unavailable fact fails the expectation).
_FACTS: dict[str, tuple[str, ...]] = {
    "python": facts_for("python"),
    "torch": facts_for("dists"),
    "torch_cuda": facts_for("torch"),
    "triton": facts_for("dists"),
    "torch_xla": facts_for("dists"),
    "driver": facts_for("driver"),
    "gpus": facts_for("visible_gpus", "gpus"),
    "gpu_name": facts_for("visible_gpus", "gpus"),
    "gpu_memory": facts_for("visible_gpus", "gpus"),
}
_TITLES = {
    "python": "expected: Python {}",
    "torch": "expected: torch {}",
    "torch_cuda": "expected: torch built for CUDA {}",
    "triton": "expected: triton {}",
    "torch_xla": "expected: torch_xla {}",
    "driver": "expected: NVIDIA driver {}",
    "gpus": "expected: {} GPUs",
    "gpu_name": "expected: GPUs named {}",
    "gpu_memory": "expected: at least {} of memory per GPU",
}


def to_spec(e: Expectation) -> CheckSpec:
    """A check spec the runner evaluates like any other: id ``expect.<key>``."""
    names = ("options", *_FACTS[e.key])

    def run(**facts: Any) -> Result:
        return judge(e, facts)

    tags = ("expect", "gpu") if e.key in GPU_KEYS else ("expect", "build")
    return CheckSpec(
        id=f"expect.{e.key}",
        func=run,
        title=_TITLES[e.key].format(e.shown),
        tags=tags,
        params=tuple(Param(n, optional=True) for n in names),
        source=f"expectation ({e.origin})",
    )


# -- planning and must_pass ------------------------------------------------------------------


@dataclass(frozen=True)
class Expectations:
    """Everything expected for one run, merged from the config file and ``--expect``."""

    items: tuple[Expectation, ...] = ()

    def get(self, key: str) -> Expectation | None:
        return next((e for e in self.items if e.key == key), None)

    @property
    def facts(self) -> tuple[Expectation, ...]:
        """The expectations judged as ``expect.*`` rows (``torch = "none"`` is not one)."""
        return tuple(e for e in self.items if e.key in FACT_KEYS and e.value is not None)

    @property
    def torch_expected(self) -> bool:
        e = self.get("torch")
        return not (e is not None and e.value is None)

    @property
    def must_pass(self) -> tuple[str, ...]:
        e = self.get("must_pass")
        return e.value if e else ()

    @property
    def skip(self) -> tuple[str, ...]:
        e = self.get("skip")
        return e.value if e else ()

    def merged(self, later: Sequence[Expectation]) -> Expectations:
        """``later`` (the command line) overrides fact keys and extends the two lists."""
        out = {e.key: e for e in self.items}
        for e in later:
            old = out.get(e.key)
            if old is not None and e.key in LIST_KEYS:
                value = tuple(dict.fromkeys((*old.value, *e.value)))
                e = dataclasses.replace(e, value=value, text=",".join(value), origin=f"{old.origin}, {e.origin}")
            out[e.key] = e
        return Expectations(tuple(out[k] for k in KEYS if k in out))


def for_profile(exp: Expectations, profile_name: str) -> Expectations:
    """``--profile runtime`` and ``full`` are for a GPU node or container: unless told how many
    GPUs to expect, they expect at least one, so a health check fails when the container has lost
    its GPUs ("Failed to initialize NVML: Unknown Error") instead of skipping every GPU check."""
    if profile(profile_name).expects_gpu and exp.get("gpus") is None:
        return exp.merged([parse("gpus", ">=1", f"--profile {profile_name}")])
    return exp


def plan(
    exp: Expectations, available: Sequence[CheckSpec], chosen: Sequence[CheckSpec], profile: str, deselect: Sequence[str] = ()
) -> list[CheckSpec]:
    """The checks to run: the chosen ones, the must_pass checks the profile would leave out
    (except GPU checks under --profile build), and one spec per fact expectation."""
    out = list(chosen)
    have = {s.id for s in out}
    for s in available:
        if s.id in have or not any(matches(s, p) for p in exp.must_pass):
            continue
        if not judged_here(s, profile) or any(matches(s, p) for p in deselect):
            continue
        out.append(s)
        have.add(s.id)
    specs = [to_spec(e) for e in exp.facts]
    return out + [s for s in specs if not any(matches(s, p) for p in deselect)]


def judge_must_pass(report: Report, exp: Expectations, available: Sequence[CheckSpec], profile: str) -> Report:
    """Add the row ``expect.must_pass``: every named check passed (a warning, a skip or a check
    that did not run fails it; under --profile build a GPU check is not judged)."""
    e = exp.get("must_pass")
    if e is None:
        return report
    rows = {r.id: r for r in report.results}
    items: list[Item] = []
    for pattern in e.value:
        specs = [s for s in available if matches(s, pattern)]
        if not specs:
            items.append(Item(pattern, Status.FAIL, "no check matches it (see `envdoctor list`; is the plugin installed?)"))
            continue
        for s in specs:
            row = rows.get(s.id)
            if not judged_here(s, profile):
                items.append(Item(s.id, Status.SKIP, f"GPU check, not judged under --profile {profile}"))
            elif row is None:
                items.append(Item(s.id, Status.FAIL, "did not run (left out by --deselect or skip?)"))
            elif row.status is Status.PASS:
                items.append(Item(s.id, Status.PASS, "passed"))
            else:
                items.append(Item(s.id, Status.FAIL, f"{row.status.value}: {row.message}" if row.message else row.status.value))
    bad = [i for i in items if i.status is Status.FAIL]
    status = worst(items) if bad else Status.PASS
    if bad:
        message = f"{len(bad)} of {len(items)} must-pass checks did not pass: " + ", ".join(i.name for i in bad)
        hint = "Fix the checks listed (their own rows carry the hints), or remove them from must_pass."
    else:
        judged = [i for i in items if i.status is Status.PASS]
        message = f"all {len(judged)} must-pass checks passed" + (
            f" ({len(items) - len(judged)} not judged here)" if len(judged) < len(items) else ""
        )
        hint = ""
    row = CheckOutcome(
        id="expect.must_pass",
        title="expected: the must_pass checks pass",
        status=status,
        message=message,
        hint=hint,
        tags=("expect",),
        source=f"expectation ({e.origin})",
        items=tuple(items),
    )
    return dataclasses.replace(report, results=(*report.results, row))
