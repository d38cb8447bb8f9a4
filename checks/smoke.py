"""Smoke tests: real work on the real stack, compared with a reference, with a diagnosis.

Versions can all look right while nothing runs. These checks run a matmul on every visible GPU,
a Triton kernel from a file, ``torch.compile`` of a function and of a small conv net, CUDA
graphs, bf16 autocast under compile and an op on the XLA device. The bodies live in
``bodies/smoke.py`` and run in probe workers (fresh Triton/Inductor caches, so the real
toolchain is exercised); this module decides what to run and judges the numbers.

Speed. Importing torch and a first ``torch.compile`` dominate a run. Two long-lived workers,
both started (and importing torch) as the run begins, share the work: the compile smokes run in
turn in the ``compile`` lane, so Inductor is imported and warmed up once; the matmul, the
Triton kernel and torch's own facts run beside them in the shared worker (figures in
docs/benchmarks.md). ``ENVDOCTOR_SMOKE_PARALLEL=0`` puts everything in the shared worker;
``=1`` gives each compile smoke and the Triton kernel a one-off worker of its own (each pays
its own import and first compile, at the same time).

Each smoke declares its repro (``bodies/repro/``): the same step as a standalone script with
torch alone, which ``envdoctor bundle`` ships when the smoke fails or errors.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from envdoctor import (
    ACTIONS,
    TRITON_DISTS,
    Item,
    ProbeError,
    ProbeRaised,
    Result,
    Skip,
    Status,
    best_signature,
    check,
    compile_locations,
    fail,
    ok,
    skip,
    warn,
    worst,
)
from envdoctor_checks import health
from envdoctor_checks._lazy import lazy
from envdoctor_checks.signatures import SIGNATURES

if TYPE_CHECKING:
    from envdoctor import Location

BODY = "envdoctor_checks.bodies.smoke"
_xla = lazy("envdoctor_checks.xla")  # the pairing rules, when the XLA smoke failed
_dirs = lazy("envdoctor_checks._dirs")  # the cache checks' directory probe, when a smoke failed

# Generous: a first compile on a slow, busy CI machine takes tens of seconds; a hang is still
# cut off and diagnosed from the last stage the body announced.
TIMEOUT = {"matmul": 120.0, "triton": 180.0, "compile": 300.0, "cudagraphs": 240.0, "amp": 240.0, "xla": 180.0}

DEFAULT_HINT = "Rerun this smoke alone to see its full output: envdoctor check --select {id} -v"


def parallel_lanes(env) -> bool:
    """Whether compile smokes get their own workers, running side by side (opt-in)."""
    return (env or {}).get("ENVDOCTOR_SMOKE_PARALLEL", "").strip() == "1"


# The compile smokes run in turn in a worker of their own, beside the shared one where torch's
# facts, the matmul and the Triton kernel run; ENVDOCTOR_SMOKE_PARALLEL=0 puts them back in the
# shared worker (everything in one process, to measure against).
COMPILE_LANE = "compile"


def compile_lane(env) -> str:
    return "main" if (env or {}).get("ENVDOCTOR_SMOKE_PARALLEL", "").strip() == "0" else COMPILE_LANE


def diagnose(e: ProbeRaised, check_id: str) -> tuple[str, str]:
    """(cause, hint) for a smoke whose body raised: the first known error signature in what it
    printed (the compiler error Triton or Inductor printed, a missing Python.h or compiler, a
    CUDA error), from the same catalog ``envdoctor triage`` reads pastes with; else the exception."""
    text = "\n".join((e.output or "", e.traceback or "", f"{e.exc_type}: {e.message}"))
    # not a check's own hints (a bare "numpy" is no cause), nor the rows that need a check's agreement
    found = best_signature(text, [s for s in SIGNATURES if not s.confirm], scope="paste")
    if found is not None:
        return found.cause, found.fix
    first = (e.message or "").strip().splitlines()
    return f"{e.exc_type}: {first[0][:300] if first else ''}", DEFAULT_HINT.format(id=check_id)


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join((text or "").strip().splitlines()[-lines:])


# --- a location that breaks compiling ---------------------------------------------------------

# What a file system the compile writes to does to it, as the error says it: (the error's
# words, what the location is, the fix). The fix names the location and the variable that moves it.
_LOCATION_ERRORS = tuple(
    (re.compile(words), condition, fix)
    for words, condition, fix in (
        (
            r"\[Errno 28\]|No space left on device",
            "is full",
            "Free space there (df -h {path}; df -i {path}) or export {var}=<a directory on a disk with room>",
        ),
        (
            r"\[Errno 122\]|Disk quota exceeded",
            "is over its disk quota",
            "Free space within the quota (quota -s) or export {var}=<a directory on a disk with room>",
        ),
        (r"\[Errno 30\]|Read-only file system", "is on a read-only file system", "export {var}=<a writable local directory>"),
        (
            r"\[Errno 13\]|Permission denied",
            "is not writable for this user",
            "Make it writable for this user (ls -ld {path}) or export {var}=<a directory this user owns>",
        ),
        (
            r"failed to map segment from shared object",
            "is on a noexec mount, so compiled .so files there cannot be loaded",
            "export {var}=<a directory on a mount without noexec>",
        ),
    )
)


def _line_of(text: str, m: re.Match, most: int = 1000) -> str:
    """The line around a match (at most ``most`` characters each side): found by searching
    outwards from it, so a long text without newlines costs linear time, not quadratic."""
    start = text.rfind("\n", max(0, m.start() - most), m.start()) + 1 or max(0, m.start() - most)
    end = text.find("\n", m.end(), m.end() + most)
    return text[start : end if end >= 0 else m.end() + most]


def _named_location(line: str, places) -> Location | None:
    """The location whose path (or a path inside it) the error line names; the deepest wins
    (Inductor's default cache lies inside the temporary directory)."""
    for loc in sorted(places, key=lambda p: -len(p.path)):
        if re.search(re.escape(loc.path) + r"(?:/|['\"\s:]|$)", line):
            return loc
    return None


def _existing(path: str) -> str:
    """``path``, or its nearest parent that exists (what df and ls can be pointed at)."""
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


def _judged_unusable(places, full: bool) -> list:
    """The locations that fail the cache checks' judgement right now: short of room (``full``),
    else not writable. For errors that name no path (Inductor's "OSError: [Errno 28] No space
    left on device" from a write)."""
    out = []
    for loc in places:
        probe = _dirs.probe_dir(loc.path)
        if (full and probe.writable and _dirs.lacks_room(probe)) or (not full and not probe.writable):
            out.append(loc)
    return out


def location_failure(text: str, env, what: str) -> Result | None:
    """The failing row for a smoke that a location broke: it names the location's path, the
    variable or default that chose it, the error and the fix; None when no location is to blame."""
    if not text or env is None:
        return None
    places = [p for p in compile_locations(env).values() if p.path]
    for pattern, condition, fix in _LOCATION_ERRORS:
        lines = [_line_of(text, m) for m in pattern.finditer(text)]
        if not lines:
            continue
        line = lines[0].strip()[:300]
        loc = next((x for x in (_named_location(ln, places) for ln in lines) if x), None)
        if loc is None and "noexec" not in condition:
            blamed = _judged_unusable(places, full=condition.startswith("is full") or "quota" in condition)
            loc = blamed[0] if blamed else None
        if loc is None or loc.path is None:  # (every place has a path)
            continue
        return fail(
            f"{what} failed because the {loc.what} {loc.path} ({loc.chosen_by()}) {condition}: {line}",
            fix.format(path=_existing(loc.path), var=loc.variable),
            details={"location": {"path": loc.path, "variable": loc.variable, "chosen_by": loc.chosen_by()}, "error": line},
        )
    return None


def _raised(e: ProbeRaised, what: str, check_id: str, env=None):
    """A smoke whose body raised: torch that cannot import is the torch checks' finding, so
    the smoke skips; a location that broke the compile is named; anything else fails with the cause."""
    torch_broken = e.message.strip() == "No module named 'torch'" or "/torch/__init__.py" in (e.traceback or "")
    if e.exc_type in ("ImportError", "ModuleNotFoundError", "OSError") and torch_broken:
        return skip(f"torch cannot be imported ({e.message.strip().splitlines()[0][:200]}); see torch.importable")
    if e.exc_type == "AttributeError" and e.message.startswith("module 'torch' has no attribute"):
        # An incomplete torch (a shadowing directory, an unbuilt checkout): torch.importable names it.
        return skip(f"the torch that is imported is incomplete ({e.message.strip()[:200]}); see torch.importable")
    details = {"output": _tail(e.output), "traceback": _tail(e.traceback, 12)}
    located = location_failure("\n".join((e.output or "", e.traceback or "", f"{e.exc_type}: {e.message}")), env, what)
    if located is not None:
        return replace(located, details={**located.details, **details})
    cause, hint = diagnose(e, check_id)
    return fail(f"{what} failed: {cause}", hint, details=details)


def _died(e: ProbeError, what: str, env) -> Result | None:
    """A smoke whose worker died or hung, when a location is to blame (a compiler killed by a
    full temporary directory); None otherwise (the run reports the ProbeError as it is)."""
    return location_failure("\n".join((e.output or "", e.diagnosis or "")), env, what)


def gpu_gate(torch_build, gpus, visible_gpus, env, *, reports_hidden: bool = False):
    """None when there are GPUs to test; else the result that says why not.

    A CPU build of torch or a machine without an NVIDIA GPU skips (other checks judge that).
    GPUs the driver lists but CUDA_VISIBLE_DEVICES hides fail the one smoke that
    ``reports_hidden`` (the matmul) and skip the rest with the same reason.
    """
    if torch_build.get("kind") != "cuda":
        return skip(f"torch {torch_build.get('version', '?')} is a {torch_build.get('kind', '?')} build: no CUDA smoke to run")
    if not gpus:
        return skip(getattr(gpus, "reason", "") or "no NVIDIA GPU found")
    if isinstance(visible_gpus, list) and not visible_gpus:
        setting = (env or {}).get("CUDA_VISIBLE_DEVICES")
        why = f"CUDA_VISIBLE_DEVICES={setting!r} hides all {len(gpus)} GPU(s)"
        if reports_hidden:
            return fail(
                f"torch can use none of the GPUs: {why}",
                "Unset CUDA_VISIBLE_DEVICES or list the GPUs to use, e.g. export CUDA_VISIBLE_DEVICES=0",
            )
        return skip(f"no GPU to run on: {why}")
    return None


# --- hardware evidence: stack or silicon? -----------------------------------------------------


def _cuda_gpu(visible_gpus, gpus, torch_index: int) -> dict | None:
    """The GPU (as the gpus fact lists it) that torch calls cuda:<torch_index>."""
    if isinstance(visible_gpus, list):
        return visible_gpus[torch_index] if torch_index < len(visible_gpus) else None
    if isinstance(gpus, list):
        return next((g for g in gpus if g.get("index") == torch_index), None)
    return None


def gpu_evidence(gpu_health, visible_gpus, gpus, indices=(0,)) -> list:
    """Hardware evidence for the GPUs torch numbers ``indices`` (cuda:0 for the single-GPU
    smokes); labelled as torch numbers them, with NVML's index where CUDA_VISIBLE_DEVICES
    renumbers. The kernel log is read again: the failure may just have logged an Xid."""
    out = []
    for i in indices:
        target = _cuda_gpu(visible_gpus, gpus, i)
        if target is None:
            continue
        label = f"GPU {i}" + (f" (NVML GPU {target.get('index')})" if target.get("index") != i else "")
        ev = health.evidence_for(gpu_health, target, label)
        if ev is not None:
            out.append(ev)
    return out


def _evidence_text(evidence: list) -> str:
    """Every GPU's sentence for one or two GPUs; for more, those with hardware evidence and a count."""
    if len(evidence) <= 2:
        return "; ".join(e.line for e in evidence)
    faulty = [e for e in evidence if e.hardware_fault]
    clean = len(evidence) - len(faulty)
    return "; ".join([e.line for e in faulty] + ([f"no hardware evidence on {clean} other GPU(s)"] if clean else []))


def cite_evidence(result: Result, gpu_health, visible_gpus, gpus, indices=(0,)) -> Result:
    """A failing GPU smoke names its GPU's hardware evidence, or says there is none: a GPU with
    uncorrectable ECC errors or an Xid 79 is to be reset or replaced, not debugged."""
    if result.status is not Status.FAIL or not gpu_health:
        return result
    evidence = gpu_evidence(gpu_health, visible_gpus, gpus, indices)
    if not evidence:
        return result
    message = f"{result.message} — {_evidence_text(evidence)}"
    hardware = [e for e in evidence if e.hardware_fault]
    hint, action = result.hint, result.action
    if hardware:
        hint = f"{hardware[0].label}: {hardware[0].action}, then rerun" + (f"; if it still fails: {hint}" if hint else "")
        action = max((e.recommended for e in hardware), key=ACTIONS.index)
    details = {**result.details, "gpu_evidence": [e.to_dict() for e in evidence]}
    return replace(result, message=message, hint=hint, details=details, action=action)


def _died_with_evidence(e: ProbeError, gpu_health, visible_gpus, gpus, indices=(0,)) -> ProbeError:
    """A GPU smoke that hung or crashed (a GPU that fell off the bus does that) keeps its error
    row, with the GPU's evidence added."""
    evidence = gpu_evidence(gpu_health, visible_gpus, gpus, indices) if gpu_health else []
    if not evidence:
        return e
    return ProbeError(f"{e.diagnosis} — {_evidence_text(evidence)}", output=e.output)


def _body_skipped(value) -> None:
    """The body found no usable GPU (smoke.matmul reports that as the failure)."""
    if isinstance(value, dict) and value.get("skipped"):
        raise Skip(value["skipped"])


# --- matmul ---------------------------------------------------------------------------------


def _fmt(x) -> str:
    return "nan/inf" if x is None else f"{x:.1e}"


# health: the HEALTHCHECK's proof that a kernel runs
@check("smoke.matmul", tags=("smoke", "gpu", "health"), repro="bodies/repro/smoke_matmul.py")
def matmul(probe, torch_build, env, gpus=None, visible_gpus=None, gpu_health=None):
    """Matmul on every visible GPU (fp32, TF32, bf16) matches a CPU float64 reference"""
    gate = gpu_gate(torch_build, gpus, visible_gpus, env, reports_hidden=True)
    if gate is not None:
        return gate
    every = range(len(visible_gpus)) if isinstance(visible_gpus, list) else (0,)
    try:
        value = probe.call(f"{BODY}:matmul", {}, timeout=TIMEOUT["matmul"], what="the matmul smoke")
    except ProbeRaised as e:
        return cite_evidence(_raised(e, "the matmul smoke", "smoke.matmul"), gpu_health, visible_gpus, gpus, every)
    except ProbeError as e:
        raise _died_with_evidence(e, gpu_health, visible_gpus, gpus, every) from e
    result = judge_matmul(value, visible_gpus)
    failed = [g["index"] for g, i in zip(value.get("gpus") or [], result.items, strict=False) if i.status is Status.FAIL]
    missing = list(range(len(result.items), len(visible_gpus))) if isinstance(visible_gpus, list) else []
    return cite_evidence(result, gpu_health, visible_gpus, gpus, failed + missing or every)


def judge_matmul(value: dict, visible_gpus) -> Result:
    if value.get("skipped"):
        # NVML lists GPUs, torch is a CUDA build, yet torch sees none: that is the failure.
        return fail(
            f"torch cannot use the GPU: {value['skipped']}",
            "See the torch.cuda_available and nvidia.* checks for the cause; python -c 'import torch; torch.cuda.init()' shows CUDA's error",
        )
    items = []
    for g in value["gpus"]:
        label = f"GPU {g['index']}" + (f" ({g['name']})" if g.get("name") else "")
        if g.get("error"):
            items.append(Item(label, Status.FAIL, g["error"]))
            continue
        bad = [k for k, r in g["results"].items() if r["error"] is None or r["error"] > r["tolerance"]]
        summary = ", ".join(f"{k} {_fmt(r['error'])}" for k, r in g["results"].items())
        if bad:
            worst_k = bad[0]
            r = g["results"][worst_k]
            items.append(Item(label, Status.FAIL, f"{worst_k} result off: error {_fmt(r['error'])} > {r['tolerance']:.0e} ({summary})"))
        else:
            items.append(Item(label, Status.PASS, f"relative error {summary}"))
    expected = len(visible_gpus) if isinstance(visible_gpus, list) else None
    details = {"size": value.get("size"), "gpus": value["gpus"]}
    if expected is not None and len(items) < expected:
        return fail(
            f"torch sees {len(items)} of the {expected} visible GPUs",
            "Check nvidia-smi and dmesg for a GPU that fell off the bus (Xid 79) and the nvidia.* checks",
            details=details,
            items=items,
        )
    status = worst(items)
    if status is Status.FAIL:
        failed = [i for i in items if i.status is Status.FAIL]
        return fail(
            f"matmul fails or is wrong on {len(failed)} of {len(items)} GPUs: {failed[0].name}: {failed[0].message}",
            "Inspect that GPU: nvidia-smi -q -d ECC,PAGE_RETIREMENT -i <index>; dmesg | grep -i xid; take it out of service if it repeats",
            details=details,
            items=items,
        )
    return ok(f"fp32, TF32 and bf16 matmul correct on {len(items)} GPU(s)", details=details, items=items)


# --- Triton ---------------------------------------------------------------------------------


@check("smoke.triton", tags=("smoke", "gpu"), blame=("triton", "pytorch-triton"), repro="bodies/repro/smoke_triton.py")
def triton_kernel(probe, torch_build, dists, env, gpus=None, visible_gpus=None, gpu_health=None):
    """A Triton vector-add kernel from a file compiles, launches and computes x + y exactly"""
    if not any(k in dists for k in TRITON_DISTS):
        return skip("triton is not installed")
    on_gpu = torch_build.get("kind") == "cuda" and bool(gpus) and (not isinstance(visible_gpus, list) or bool(visible_gpus))
    if not on_gpu and "numpy" not in dists:
        return skip("no GPU to run Triton on, and its CPU interpreter (TRITON_INTERPRET=1) needs numpy, which is not installed")
    try:
        if on_gpu:
            value = probe.call(
                f"{BODY}:triton_add", {}, timeout=TIMEOUT["triton"], fresh=parallel_lanes(env), what="the Triton vector-add smoke"
            )
        else:
            # No GPU: Triton's interpreter runs the same kernel on CPU tensors; that needs a
            # worker started with TRITON_INTERPRET=1.
            value = probe.call(
                f"{BODY}:triton_add",
                {},
                timeout=TIMEOUT["triton"],
                env={"TRITON_INTERPRET": "1"},
                what="the Triton vector-add smoke (TRITON_INTERPRET=1)",
            )
    except ProbeRaised as e:
        result = _raised(e, "the Triton vector-add kernel", "smoke.triton", env)
        return cite_evidence(result, gpu_health, visible_gpus, gpus) if on_gpu else result
    except ProbeError as e:
        located = _died(e, "the Triton vector-add kernel", env)
        if located is not None:
            return located
        raise (_died_with_evidence(e, gpu_health, visible_gpus, gpus) if on_gpu else e) from e
    _body_skipped(value)
    where = "under TRITON_INTERPRET=1 on CPU (no GPU here)" if value["interpreted"] else "on GPU"
    if not value["ok"]:
        result = fail(
            f"the Triton vector-add kernel ran {where} but computed wrong values (max error {value['max_error']:.3g})",
            "Reinstall the triton version torch pins (see triton.torch_pin) and rerun",
            details=value,
        )
        return cite_evidence(result, gpu_health, visible_gpus, gpus) if on_gpu else result
    return ok(f"triton {value['triton_version']}: vector-add compiled and exact {where}", details=value)


# --- torch.compile --------------------------------------------------------------------------


def _compile_calls(probe, env, deliberate_break: bool = False) -> dict:
    """Run the compile smoke: one call (shared worker) or two lanes side by side."""
    kw = {"deliberate_break": deliberate_break}
    if not parallel_lanes(env):
        return probe.call(
            f"{BODY}:compile_smoke",
            {"parts": ["function", "module"], **kw},
            timeout=TIMEOUT["compile"],
            lane=compile_lane(env),
            what="the torch.compile smoke",
        )

    def lane(part: str) -> dict:
        return probe.call(
            f"{BODY}:compile_smoke", {"parts": [part], **kw}, timeout=TIMEOUT["compile"], fresh=True, what=f"torch.compile of the {part}"
        )

    from concurrent.futures import ThreadPoolExecutor  # on use: `envdoctor list` stays light

    with ThreadPoolExecutor(2, thread_name_prefix="envdoctor-compile") as pool:
        futures = [pool.submit(lane, p) for p in ("function", "module")]
        results = [f.result() for f in futures]  # re-raises the first lane's ProbeError/ProbeRaised
    merged = dict(results[0])
    merged["parts"] = {**results[0]["parts"], **results[1]["parts"]}
    merged["left_out"] = {**results[0].get("left_out", {}), **results[1].get("left_out", {})}
    return merged


def compile_switched_off(env) -> Result | None:
    """torch.compile is a no-op when the environment switches it off (torch honours only "1"):
    the smoke would compile nothing and blame Inductor. Say what really happened."""
    on = [v for v in ("TORCH_COMPILE_DISABLE", "TORCHDYNAMO_DISABLE") if (env or {}).get(v) == "1"]
    if not on:
        return None
    return skip(
        f"{' and '.join(v + '=1' for v in on)} switches torch.compile off here, so there is nothing to compile (see compile.disabled_by_env)"
    )


def driver_hung(nvidia_query) -> str:
    """The hang reason when the driver stopped answering (NVML or nvidia-smi hung), else ''."""
    hung = (nvidia_query or {}).get("hung") if isinstance(nvidia_query, dict) else None
    return next(iter(hung.values()), "") if hung else ""


# blame: Inductor's GPU backend
@check("smoke.compile", tags=("smoke", "build"), blame=("triton", "pytorch-triton"), repro="bodies/repro/smoke_compile.py")
def compile_smoke(probe, torch_build, env, gpus=None, visible_gpus=None, gpu_health=None, nvidia_query=None):
    """torch.compile (Inductor) of a function and a small conv net matches eager, without graph breaks"""
    off = compile_switched_off(env)
    if off is not None:
        return off
    hung = driver_hung(nvidia_query)
    if hung and torch_build.get("kind") == "cuda":
        # The compile would run on the GPU (torch sees it), where a wedged driver hangs it until
        # its deadline: the other GPU smokes skip here too, through their gate.
        return skip(f"the NVIDIA driver stopped answering, so nothing runs on the GPU ({hung}); see nvidia.driver")
    try:
        value = _compile_calls(probe, env)
    except ProbeRaised as e:
        # The body compiles on cuda when torch has a usable GPU; the GPU gate says whether it had one.
        on_gpu = gpu_gate(torch_build, gpus, visible_gpus, env) is None
        result = _raised(e, "torch.compile", "smoke.compile", env)
        return cite_evidence(result, gpu_health, visible_gpus, gpus) if on_gpu else result
    except ProbeError as e:
        located = _died(e, "torch.compile", env)
        if located is None:
            raise
        return located
    result = judge_compile(value)
    return cite_evidence(result, gpu_health, visible_gpus, gpus) if value.get("device") == "cuda" else result


def judge_compile(value: dict):
    device = value["device"]
    backend = "Triton" if device == "cuda" else "C++"
    items, problems, kernels = [], [], 0
    for name, part in value["parts"].items():
        made = part["kernels"]["triton" if device == "cuda" else "cpp"]
        kernels += len(made)
        if not part["ok"]:
            items.append(Item(name, Status.FAIL, f"compiled result differs from eager (max error {part['max_error']:.3g})"))
            problems.append(("fail", f"the compiled {name} differs from eager on {device} (max error {part['max_error']:.3g})"))
        elif not made:
            items.append(Item(name, Status.FAIL, f"Inductor generated no {backend} kernel"))
            problems.append(("fail", f"Inductor generated no {backend} kernel for the {name} on {device}"))
        elif part["graph_breaks"]:
            reason = part["break_reasons"][0] if part["break_reasons"] else "?"
            items.append(Item(name, Status.WARN, f"{part['graph_breaks']} graph break(s): {reason}"))
            problems.append(("warn", f"Dynamo broke the {name} into {part['graphs']} graphs: {reason}"))
        else:
            items.append(Item(name, Status.PASS, f"matches eager; {len(made)} {backend} kernel(s); 0 graph breaks; {part['seconds']:.1f}s"))
    if any(kind == "fail" for kind, _ in problems):
        msg = next(m for kind, m in problems if kind == "fail")
        return fail(
            msg,
            "Report it with this output to PyTorch; meanwhile torch.compile(backend='aot_eager') avoids Inductor",
            details=value,
            items=items,
        )
    if problems:
        return warn(
            problems[0][1],
            "These reference graphs have no graph break on a supported setup: check compile.python_version, "
            "or see why with TORCH_LOGS=graph_breaks",
            details=value,
            items=items,
        )
    left_out = value.get("left_out") or {}
    compiled = " and ".join(PART_NAMES.get(n, n) for n in value["parts"])
    verb = "match" if len(value["parts"]) > 1 else "matches"
    note = f" ({', '.join(PART_NAMES.get(n, n) for n in left_out)} left out: {next(iter(left_out.values()))})" if left_out else ""
    return ok(
        f"{compiled} {verb} eager on {device}; Inductor built {kernels} {backend} kernel(s); no graph breaks{note}",
        details=value,
        items=items,
    )


PART_NAMES = {"function": "function", "module": "conv net"}


# --- CUDA graphs and AMP ---------------------------------------------------------------------


def _gpu_smoke(probe, torch_build, env, gpus, visible_gpus, function: str, timeout: float, what: str, check_id: str, gpu_health=None):
    """Run one GPU smoke body when a GPU is usable: the body's value, or the Result that ends the
    check (no usable GPU; the body raised, with cuda:0's hardware evidence; the body skipped itself)."""
    gate = gpu_gate(torch_build, gpus, visible_gpus, env) or compile_switched_off(env)
    if gate is not None:
        return gate
    try:
        value = probe.call(f"{BODY}:{function}", {}, timeout=timeout, fresh=parallel_lanes(env), lane=compile_lane(env), what=what)
    except ProbeRaised as e:
        return cite_evidence(_raised(e, what, check_id, env), gpu_health, visible_gpus, gpus)
    except ProbeError as e:
        located = _died(e, what, env)
        if located is not None:
            return located
        raise _died_with_evidence(e, gpu_health, visible_gpus, gpus) from e
    _body_skipped(value)
    return value


@check("smoke.cudagraphs", tags=("smoke", "gpu"), repro="bodies/repro/smoke_cudagraphs.py")
def cudagraphs(probe, torch_build, env, gpus=None, visible_gpus=None, gpu_health=None):
    """torch.compile(mode="reduce-overhead") captures and replays a CUDA graph correctly"""
    value = _gpu_smoke(
        probe,
        torch_build,
        env,
        gpus,
        visible_gpus,
        "cudagraphs",
        TIMEOUT["cudagraphs"],
        'torch.compile(mode="reduce-overhead")',
        "smoke.cudagraphs",
        gpu_health,
    )
    if isinstance(value, Result):
        return value
    if not value["ok"]:
        result = fail(
            f"CUDA graph replay gave wrong values (max error {value['max_error']:.3g})",
            "Compare with mode='default'; check the driver (nvidia-smi) and report it to PyTorch with this output",
            details=value,
        )
        return cite_evidence(result, gpu_health, visible_gpus, gpus)
    if value.get("cudagraph_skips"):
        return warn(
            "Inductor skipped CUDA graphs for a plain pointwise function (the code ran without them)",
            "Rerun with TORCH_LOGS=perf_hints to see why CUDA graphs were skipped",
            details=value,
        )
    return ok(f"captured and replayed; matches eager (max error {value['max_error']:.1e})", details=value)


@check("smoke.amp_compile", tags=("smoke", "gpu"), repro="bodies/repro/smoke_amp_compile.py")
def amp_compile(probe, torch_build, env, gpus=None, visible_gpus=None, gpu_health=None):
    """bf16 autocast with torch.compile matches eager autocast"""
    value = _gpu_smoke(
        probe,
        torch_build,
        env,
        gpus,
        visible_gpus,
        "amp_compile",
        TIMEOUT["amp"],
        "torch.compile under bf16 autocast",
        "smoke.amp_compile",
        gpu_health,
    )
    if isinstance(value, Result):
        return value
    if not value["ok"]:
        result = fail(
            f"compiled bf16 autocast differs from eager (dtype {value['dtype']}, max error {value['max_error']:.3g})",
            "Check that this GPU supports bf16 (compute capability >= 8.0) and report it to PyTorch with this output",
            details=value,
        )
        return cite_evidence(result, gpu_health, visible_gpus, gpus)
    return ok(f"bf16 output matches eager autocast (max error {value['max_error']:.1e})", details=value)


# --- torch_xla ------------------------------------------------------------------------------


@check("smoke.xla", tags=("smoke",), repro="bodies/repro/smoke_xla.py")
def xla(probe, dists, env):
    """A tensor op on the XLA device matches CPU"""
    if "torch-xla" not in dists:
        return skip("torch_xla is not installed")
    try:
        # A one-off worker: initialising PJRT claims devices and must not linger in the shared one.
        value = probe.call(f"{BODY}:xla_op", {}, timeout=TIMEOUT["xla"], fresh=True, what="the torch_xla smoke")
    except ProbeRaised as e:
        return _xla_built_for_another_torch(e, dists) or _raised(e, "the torch_xla op", "smoke.xla", env)
    where = f"{value['device']} ({value.get('device_type') or 'unknown type'}, PJRT_DEVICE={value.get('pjrt_device') or 'unset'})"
    if not value["ok"]:
        return fail(
            f"matmul on {where} differs from CPU (max error {value['max_error']:.3g})",
            "Pair torch and torch_xla exactly: pip install torch~=X.Y.0 'torch_xla[tpu]~=X.Y.0'",
            details=value,
        )
    return ok(f"matmul on {where} matches CPU", details=value)


def _xla_built_for_another_torch(e: ProbeRaised, dists) -> Result | None:
    """'import torch_xla' stopped by an undefined symbol in _XLAC: torch_xla and torch are not
    one release pair (seen for real: torch_xla 2.9.0 under torch 2.13.0, 2026-12-01). Reinstalling
    torch_xla cannot help when no torch_xla exists for that torch: the fix pairs them."""
    text = f"{e.message}\n{e.traceback or ''}"
    if "_XLAC" not in text or "undefined symbol" not in text:
        return None
    torch_v, xla_v = (dists.get(n, {}).get("version", "?") for n in ("torch", "torch-xla"))
    pair = (_xla.major_minor(torch_v), _xla.major_minor(xla_v))
    hint = _xla.xla_pair_hint(*pair) if None not in pair else 'pip install "torch~=X.Y.0" "torch_xla~=X.Y.0"   # one release pair'
    return fail(
        f"import torch_xla fails: its extension _XLAC was built for another torch (undefined symbol); torch_xla {xla_v} "
        f"is installed with torch {torch_v} (see xla.torch_match)",
        hint,
        details={"traceback": _tail(e.traceback, 12)},
    )
