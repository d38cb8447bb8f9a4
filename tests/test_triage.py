"""envdoctor triage: the corpus of real pastes (the established cause is named first in at least
90 % of the confirmed cases, the misses are the ones docs/triage.md lists), this project's own
healthy machines (no fail), the answer's forms, bad input, speed and isolation."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from envdoctor import TRITON_DISTS, Signature, Status, check, fact
from envdoctor.cli import main
from envdoctor.core.config import tomllib
from envdoctor.core.registry import Registry, discover
from envdoctor.core.signatures import validate as validate_signatures
from envdoctor.core.triage import LIVE_ASK, triage
from envdoctor.reporters.triage import render_markdown, render_text, to_dict
from envdoctor.sources import read_paste

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "triage"
PASTES = ROOT / "tests" / "fixtures" / "pastes"
CASES = tomllib.loads((CORPUS / "cases.toml").read_text(encoding="utf-8"))["case"]
REG = discover()

# The corpus's cause ids -> the cause ids triage names (the catalog's categories). One table:
# identical names map to themselves; none of the corpus ids is named differently yet.
NAMES: dict[str, set[str]] = {}

# Checks whose verdict needs the live machine (they false-alarm on pasted facts): never run on a paste.
LIVE_ONLY = {
    "toolchain.python_h",
    "system.os",
    "compile.python_version",
    "torch.loaded_libraries",
    "torch.duplicate_installs",
    "triton.libcuda",
    "triton.ptxas",
    "compile.triton_available",
    "nvidia.forward_compat",
    "nvidia.driver_library_mismatch",
}


def run_case(case: dict):
    text = (CORPUS / case["file"]).read_text(encoding="utf-8")
    return triage(REG, read_paste(text), text)


def names_cause(t, cause_id: str) -> bool:
    """The established cause is the top-ranked cause, and a confident one (exit 1)."""
    if cause_id == "not_environment":
        return not any(c.confidence in ("high", "medium") for c in t.causes)
    return bool(t.causes) and t.causes[0].is_problem and t.causes[0].cause_id in NAMES.get(cause_id, {cause_id})


def documented_misses() -> set[str]:
    doc = (ROOT / "docs" / "triage.md").read_text(encoding="utf-8")
    section = doc.split("## Misses", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| (\d{3}) \|", section, re.M))


def test_corpus_score():
    confirmed = [c for c in CASES if c.get("confidence", "confirmed") == "confirmed"]
    assert len(confirmed) >= 30
    misses = {c["file"][:3] for c in confirmed if not names_cause(run_case(c), c["cause_id"])}
    hit = len(confirmed) - len(misses)
    assert hit / len(confirmed) >= 0.90, (hit, len(confirmed), sorted(misses))
    assert misses <= documented_misses(), f"undocumented misses: {sorted(misses - documented_misses())}"


@pytest.mark.parametrize("case", [c for c in CASES if c["cause_id"] == "not_environment"], ids=lambda c: c["file"][:3])
def test_not_environment_gets_no_confident_cause(case):
    t = run_case(case)
    assert not any(c.confidence in ("high", "medium") for c in t.causes), [(c.cause_id, c.confidence) for c in t.causes]


@pytest.mark.parametrize("case", CASES, ids=[c["file"][:3] for c in CASES])
def test_every_case_answers_in_every_form(case):
    t = run_case(case)
    data = to_dict(t, case["file"])
    jsonschema.Draft202012Validator(_schema()).validate(data)
    assert json.loads(json.dumps(data)) == data
    text, md = render_text(t, case["file"]), render_markdown(t, case["file"])
    if t.found:
        top = next(c for c in t.causes if c.is_problem)
        assert "Likely cause" in text and md.startswith("**Likely cause:**")
        # cause first, then evidence, then fix, then asks: the order a reply reads in
        order = [md.find("**Likely cause:**"), md.find("**Evidence**"), md.find("**Fix:**")]
        assert [o for o in order if o >= 0] == sorted(o for o in order if o >= 0)
        for line in top.evidence:
            quoted = line[:-1] if line.endswith("\u2026") else line  # a long line is cut with an ellipsis
            assert quoted in (CORPUS / case["file"]).read_text(encoding="utf-8") or top.basis != "error text"
    else:
        assert any(s in text for s in ("No environment problem was found", "Nothing recognisable", "too little of the environment"))
    assert all(u.id not in {r.id for r in t.rows} for u in t.unjudged)


def _schema() -> dict:
    return json.loads(resources.files("envdoctor").joinpath("schema", "triage.schema.json").read_text())


def test_schema_is_valid_and_rejects_what_it_must():
    jsonschema.Draft202012Validator.check_schema(_schema())
    data = to_dict(run_case(CASES[0]), "x")
    data["causes"][0]["confidence"] = "certain"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(_schema()).validate(data)


# ---- this project's healthy machines ----------------------------------------------------------


@pytest.mark.parametrize(
    "names",
    [[p.name] for p in sorted(PASTES.glob("*.txt"))] + [["collect_env_gpu.txt", "nvidia_smi.txt", "pip_list.txt"]],
    ids=lambda n: "+".join(n),
)
def test_healthy_machines_give_no_fail(names):
    text = "\n".join((PASTES / n).read_text(encoding="utf-8") for n in names)
    t = triage(REG, read_paste(text), text)
    fails = [(r.id, r.message) for r in t.rows if r.status in (Status.FAIL, Status.ERROR)]
    assert fails == [] and not t.found
    assert "No environment problem was found in the paste." in render_text(t, "x")


def test_the_gpu_machine_is_judged_not_skipped():
    text = (PASTES / "collect_env_gpu.txt").read_text() + "\n" + (PASTES / "nvidia_smi.txt").read_text()
    rows = {r.id: r for r in triage(REG, read_paste(text), text).rows}
    assert rows["torch.driver_supports_cuda"].status is Status.PASS  # driver 580 (CUDA 13.0) vs torch cu130
    assert rows["torch.cpu_build_on_gpu_machine"].status is Status.PASS
    assert rows["torch.arch_support"].status is Status.PASS  # H200 cc 9.0 from the table; arch list from the release table
    assert "sm_90" in rows["torch.arch_support"].message


# ---- the engine ---------------------------------------------------------------------------------


def test_default_deny_and_live_only_checks():
    sources = {c.id: c.sources for c in REG.checks}
    for cid in LIVE_ONLY:
        assert "pasted" not in sources[cid], cid
    t = run_case(CASES[0])
    judged = {r.id for r in t.rows}
    assert judged == {c.id for c in REG.checks if "pasted" in c.sources}
    assert not judged & LIVE_ONLY
    assert {u.id for u in t.unjudged} == {c.id for c in REG.checks} - judged
    assert LIVE_ASK in t.asks


def test_driver_cuda_filled_from_the_branch_table():
    text = "Nvidia driver version: 410.104\nPyTorch version: 1.5.0\nCUDA used to build PyTorch: 10.2\nIs debug build: No\n"
    t = triage(REG, read_paste(text), text)
    rows = {r.id: r for r in t.rows}
    assert rows["torch.driver_supports_cuda"].status is Status.FAIL and "10.0" in rows["torch.driver_supports_cuda"].message
    assert t.causes[0].cause_id == "driver_too_old_for_torch_cuda" and t.causes[0].confidence == "medium"


def test_corroborated_cause_beats_either_alone():
    # a CPU torch on a GPU machine: the error text and the failing check agree
    text = (
        "AssertionError: Torch not compiled with CUDA enabled\n"
        "PyTorch version: 2.3.0+cpu\nIs debug build: False\nCUDA used to build PyTorch: None\n"
        "GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4090\nNvidia driver version: 550.54.14\n"
    )
    t = triage(REG, read_paste(text), text)
    top = t.causes[0]
    assert top.cause_id == "cpu_torch_on_gpu_machine" and top.basis == "error text and check" and top.confidence == "high"
    assert "AssertionError: Torch not compiled with CUDA enabled" in top.evidence
    assert any("PyTorch version: 2.3.0+cpu" in e for e in top.evidence)


def _plugin_registry(module_text: str, tmp_path: Path) -> Registry:
    (tmp_path / "myplugin.py").write_text(module_text)
    return discover((str(tmp_path),))


def test_plugin_signatures_and_checks(tmp_path):
    reg = _plugin_registry(
        "from envdoctor import Signature, check, ok, fail\n"
        "SIGNATURES = (Signature('my.widget', r'WidgetError: (?P<w>\\w+)', 'widget {w} broke', 'widget_broken', 'my.widget', 'reinstall widget'),)\n"
        "@check('my.widget', sources=('live', 'pasted'))\n"
        "def widget(torch_build):\n    return fail('widget broken', 'reinstall widget')\n"
        "@check('my.live_only')\n"
        "def live_only(torch_build):\n    return ok('x')\n",
        tmp_path,
    )
    assert any(s.id == "my.widget" for s in reg.signatures) and reg.problems == []
    text = "WidgetError: gizmo\nPyTorch version: 2.5.1+cu124\nCUDA used to build PyTorch: 12.4\n"
    t = triage(reg, read_paste(text), text)
    assert t.causes[0].cause_id == "widget_broken" and t.causes[0].confidence == "high" and "gizmo" in t.causes[0].summary
    assert "my.live_only" in {u.id for u in t.unjudged}


def test_a_broken_signature_catalog_is_an_error_row(tmp_path):
    reg = _plugin_registry(
        "from envdoctor import Signature\nSIGNATURES = (Signature('bad', '(', 'c', 'x', 'y.z', 'f'), 'junk')\n", tmp_path
    )
    assert [p.id for p in reg.problems] == ["plugin.signatures.envdoctor_local_myplugin"]
    assert "bad pattern" in reg.problems[0].message and "not an envdoctor Signature" in reg.problems[0].message
    assert not any(s.id == "bad" for s in reg.signatures)


def test_a_plugin_row_with_a_bad_scope_is_an_error_row(tmp_path):
    reg = _plugin_registry(
        "from envdoctor import Signature\n"
        "SIGNATURES = (\n"
        "    Signature('my.typo', 'WidgetError', 'c', 'x', 'y.z', 'f', scope='pastes'),\n"
        "    Signature('my.probe', 'WidgetError', 'c', 'x', 'y.z', 'f', scope='probe'),\n"
        "    Signature('my.hint', 'Widget(Error)?', 'widget hint', 'x', 'y.z', 'f', scope='check:y.z'),\n"
        "    Signature('my.asks', 'WidgetError', 'c', 'x', 'y.z', 'f', ask_facts='driver'),\n"
        ")\n",
        tmp_path,
    )
    assert [p.id for p in reg.problems] == ["plugin.signatures.envdoctor_local_myplugin"]
    assert "bad scope 'pastes'" in reg.problems[0].message and "'probe' is the engine's own" in reg.problems[0].message
    ids = {s.id for s in reg.signatures}
    assert "ask_facts must be a tuple of fact names" in reg.problems[0].message
    assert "my.hint" in ids and not ids & {"my.typo", "my.probe", "my.asks"}
    text = "WidgetError: gizmo\n"
    assert all(c.signature != "my.hint" for c in triage(reg, read_paste(text), text).causes)


def test_a_check_hint_or_a_probe_text_in_a_paste_is_no_cause():
    # "numpy", "802", "too old" mean something inside torch's import error or CUDA's warning;
    # "Permission denied" in a dead probe's output: in a paste none of them is a cause.
    text = "$ pip install numpy\nError 802 in my own code\nmy laptop is too old\nPermission denied: /home/me/notes.txt\n"
    t = triage(REG, read_paste(text), text)
    assert not any(c.signature.startswith(("hint.", "probe.")) for c in t.causes), [c.signature for c in t.causes]
    assert any(s.scope != "paste" and s.regex.search(text) for s in REG.signatures)  # the rows exist and would match


@pytest.mark.slow
def test_an_installed_plugins_rows_keep_their_scope_and_ask_facts(tmp_path, monkeypatch):
    # an installed plugin is described by a child of its own (core.plugin_host): its rows cross as JSON
    from tests.conftest import _plugin_eps, make_plugin

    source = (
        "from envdoctor import Signature\n"
        "SIGNATURES = (\n"
        "    Signature('gizmo.broke', r'GizmoError: \\w+', 'gizmo broke', 'gizmo_broken', 'torch.importable', 'reinstall gizmo',\n"
        "              ask='`nvidia-smi` and `pip list`', ask_facts=('driver', 'gpus')),\n"
        "    Signature('gizmo.hint', r'gizmo', 'gizmo hint', 'gizmo_hint', 'torch.importable', 'f', scope='check:torch.importable'),\n"
        ")\n"
    )
    site = make_plugin(tmp_path / "site", "envdoctor-gizmo", "envdoctor_gizmo", source)
    monkeypatch.setenv("PYTHONPATH", str(site))
    reg = discover(eps=_plugin_eps(site))
    rows = {s.id: s for s in reg.signatures}
    assert (
        reg.problems == [] and rows["gizmo.broke"].ask_facts == ("driver", "gpus") and rows["gizmo.hint"].scope == "check:torch.importable"
    )
    text = "GizmoError: boom\n"
    t = triage(reg, read_paste(text), text)
    assert t.causes[0].signature == "gizmo.broke" and t.asks[0] == "`nvidia-smi` and `pip list`"
    assert REG.facts["driver"].ask not in t.asks  # its answer shows the driver and the GPUs


def test_asks_merge_by_the_facts_their_answers_show_not_by_wording():
    from envdoctor.core.triage import Ask, _merged

    asks = [
        Ask("`nvidia-smi -L`", ("gpus",)),
        Ask("the output of `nvidia-smi`", ("driver", "gpus")),
        Ask("the output of `nvidia-smi`", ("gpus",)),
    ]
    assert _merged([*asks, Ask("x"), Ask("x"), Ask("")]) == ["`nvidia-smi -L`", "the output of `nvidia-smi`", "x"]
    assert _merged([Ask("`pip list | grep torch` and `nvidia-smi`", ("dists", "driver", "gpus")), *asks[1:]]) == [
        "`pip list | grep torch` and `nvidia-smi`"
    ]
    # the readers name the facts a paste lacks; the asks are those facts' own ask= words
    text = (PASTES / "collect_env_cpu.txt").read_text()
    t = triage(REG, read_paste(text), text)
    assert REG.facts["driver"].ask in t.asks and not any("nvidia-smi output" in a for a in t.asks)
    # a signature whose ask shows the driver and GPUs: no second ask for nvidia-smi
    text = (CORPUS / "006-cpu-torch-windows-smi-header.txt").read_text()
    t = triage(REG, read_paste(text), text)
    assert t.asks[0] == "`pip list | grep torch` and `nvidia-smi`" and REG.facts["driver"].ask not in t.asks


def test_the_built_in_catalog_the_registry_loads_is_valid():
    # The registry compiles only a plugin's patterns at load; every built-in one must compile here.
    builtin = [s for s in REG.signatures if s.source == "built-in"]
    assert len(builtin) > 20
    assert validate_signatures(builtin) == []


@pytest.mark.parametrize("dist", TRITON_DISTS)
def test_a_pasted_pip_list_finds_triton_under_each_of_its_distribution_names(dist):
    # One tuple (envdoctor.core.names) for the live stack and pasted text; the pasted side's own
    # copy once lacked triton-xpu, so a paste listing it showed no Triton.
    paste = read_paste(f"$ pip list\nPackage     Version\ntorch       2.5.1\n{dist}  3.1.0\n")
    assert paste.facts["triton_pkg"]["version"] == "3.1.0"


def test_check_sources_are_validated():
    with pytest.raises(ValueError):
        check("a.b", sources=("remote",))
    assert fact("x", ask="the output of `x`")(lambda: 1).__envdoctor_fact__.ask == "the output of `x`"
    assert isinstance(REG.signatures[0], Signature)


# ---- the command --------------------------------------------------------------------------------


def cli(args: list[str], capsys, stdin: bytes | None = None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        import io

        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


def test_cli_exit_codes_and_formats(capsys, monkeypatch, tmp_path):
    case = CORPUS / "003-driver-too-old-11000-container-cu121.txt"
    code, out, _ = cli(["triage", str(case)], capsys)
    assert code == 1 and "driver_too_old_for_torch_cuda" in out
    code, out, _ = cli(["triage", str(case), "-f", "json"], capsys)
    assert code == 1 and json.loads(out)["causes"][0]["cause_id"] == "driver_too_old_for_torch_cuda"
    code, out, _ = cli(["triage", str(PASTES / "collect_env_gpu.txt"), "-f", "markdown"], capsys)
    assert code == 0 and out.startswith("**No environment problem was found in the paste.**")
    code, out, _ = cli(["triage", "-"], capsys, case.read_bytes(), monkeypatch)
    assert code == 1 and "standard input" in out
    target = tmp_path / "answer.md"
    code, out, _ = cli(["triage", str(case), "-f", "markdown", "-o", str(target)], capsys)
    assert code == 1 and out == "" and target.read_text().startswith("**Likely cause:**")
    code, out, _ = cli(["triage", "-"], capsys, b"It does not work, please help.\n", monkeypatch)
    assert code == 0 and "Nothing recognisable" in out and "collect_env" in out


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda d: str(d / "missing.txt"), "cannot read"),
        (lambda d: str(d), "is a directory"),
        (lambda d: _write(d / "junk.bin", bytes(range(256)) * 40), "looks binary"),
        (lambda d: _write(d / "empty.txt", b" \n\n"), "is empty"),
    ],
    ids=["missing", "directory", "binary", "empty"],
)
def test_bad_input_is_one_line_and_exit_2(cli_inproc, tmp_path, make, says):
    out = cli_inproc("triage", make(tmp_path))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and says in out.stderr and "Traceback" not in out.stderr


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def test_utf16_paste_is_read(cli_inproc, tmp_path):
    path = tmp_path / "win.txt"
    path.write_bytes((CORPUS / "003-driver-too-old-11000-container-cu121.txt").read_text().encode("utf-16"))
    out = cli_inproc("triage", str(path))
    assert out.returncode == 1 and "driver_too_old_for_torch_cuda" in out.stdout


@pytest.mark.slow
def test_triage_imports_no_torch_and_is_fast():
    code = (
        "import sys, time\n"
        "from envdoctor.cli import main\n"
        f"sys.argv = ['envdoctor', 'triage', {str(PASTES / 'collect_env_gpu.txt')!r}]\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print([m for m in sys.modules if m.split('.')[0] in ('torch', 'triton', 'torch_xla', 'numpy', 'pynvml')])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    text = "\n".join((PASTES / n).read_text() for n in ("collect_env_gpu.txt", "nvidia_smi.txt", "pip_freeze.txt"))
    start = time.perf_counter()
    triage(REG, read_paste(text), text)
    assert time.perf_counter() - start < 0.5


def test_a_cpu_torch_the_reporter_asked_cuda_of_is_named_without_any_gpu_in_the_paste():
    # "is_available() returns False" beside a +cpu build: that build has no CUDA, whatever the
    # GPU. collect_env's own "Is CUDA available: False" is no such question (collect_env_cpu.txt).
    text = "torch.cuda.is_available() returns False\n>>> import torch; torch.__version__\n'2.4.0+cpu'\n"
    t = triage(REG, read_paste(text), text)
    assert t.found and t.causes[0].cause_id == "cpu_torch_on_gpu_machine"
    assert "CPU-only torch 2.4.0+cpu: it has no CUDA" in t.causes[0].summary and "returns False" in t.causes[0].summary
    assert "download.pytorch.org/whl/cu" in t.causes[0].fix and "device='cpu'" in t.causes[0].fix
    text = (PASTES / "collect_env_cpu.txt").read_text()
    assert not triage(REG, read_paste(text), text).found
    lightning = "pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested GPUs: [0]"
    for said in ("[Bug] CUDA not available", "PyTorch does not detect my GPU", "torch can't use the GPU", lightning):
        text = f"{said}\nPyTorch version: 2.2.0+cpu\nIs debug build: False\nCUDA used to build PyTorch: None\n"
        assert triage(REG, read_paste(text), text).causes[0].cause_id == "cpu_torch_on_gpu_machine", said
    text = "torch.cuda.is_available() returns False\ntorch 2.4.0+cu124\n"  # a CUDA build: some other cause
    assert not any(c.cause_id == "cpu_torch_on_gpu_machine" for c in triage(REG, read_paste(text), text).causes)


def test_an_empty_cuda_visible_devices_a_command_line_set_is_named():
    # the variable as a shell sets it, torch's own answer, the GPUs nvidia-smi -L lists
    text = (
        "$ export CUDA_VISIBLE_DEVICES=\n$ python -c 'import torch; print(torch.__version__, torch.cuda.is_available())'\n"
        "2.11.0+cu130 False\nGPU 0: NVIDIA H200 (UUID: GPU-1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901)\n"
    )
    t = triage(REG, read_paste(text), text)
    assert t.causes[0].cause_id == "cuda_visible_devices" and t.causes[0].is_problem
    # a paste that does not show the variable says nothing of it (absent from a paste is not unset)
    text = "GPU 0: NVIDIA H200 (UUID: GPU-1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901)\nNCCL_DEBUG=INFO torchrun x.py\n"
    row = next(r for r in triage(REG, read_paste(text), text).rows if r.id == "nvidia.cuda_visible_devices")
    assert row.status is Status.SKIP and "does not show CUDA_VISIBLE_DEVICES" in row.message


def test_facts_written_by_hand_are_read_not_nothing():
    text = "I run PyTorch 2.11.0 with CUDA 13.0 on an NVIDIA H200, Python 3.12.3\n"
    out = render_text(triage(REG, read_paste(text), text), "x")
    assert "Read: facts written by hand" in out and "No environment problem was found" in out


def test_an_nvidia_paste_is_not_asked_for_rocminfo_and_a_rocm_one_is():
    text = (CORPUS / "023-collect-env-1x-torch150-driver-410.txt").read_text()
    assert not any("rocminfo" in a for a in triage(REG, read_paste(text), text).asks)
    text = "PyTorch version: 2.3.0+rocm6.0\nIs debug build: False\nROCM used to build PyTorch: 6.0.32830-d62f6a171\n"
    assert any("rocminfo" in a for a in triage(REG, read_paste(text), text).asks)


def test_an_amd_paste_is_not_asked_for_nvidia_smi_and_an_nvidia_one_is():
    # a ROCm torch (or AMD GPUs) shows there is no NVIDIA driver to ask for; the NVIDIA checks skip saying so
    text = "PyTorch version: 2.3.0+rocm6.0\nIs debug build: False\nROCM used to build PyTorch: 6.0.32830-d62f6a171\n"
    t = triage(REG, read_paste(text), text)
    assert not any("nvidia-smi" in a for a in t.asks), t.asks
    gpus = next(r for r in t.rows if r.id == "nvidia.gpus")
    assert gpus.status.value == "skip" and "AMD paste" in gpus.message
    text = "PyTorch version: 2.3.0+cu121\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n"
    assert any("nvidia-smi" in a for a in triage(REG, read_paste(text), text).asks)


def test_a_rocm_torch_beside_an_nvidia_gpu_is_still_asked_for_nvidia_smi():
    # a ROCm build on an NVIDIA machine is a wrong build: the driver is worth asking for
    text = "PyTorch version: 2.3.0+rocm6.0\nIs debug build: False\nGPU models and configuration: GPU 0: NVIDIA GeForce RTX 3090\n"
    assert any("nvidia-smi" in a for a in triage(REG, read_paste(text), text).asks)


JETSON = """PyTorch version              : 2.10.0+cu130
Is debug build               : False
CUDA used to build PyTorch   : 13.0
OS                           : Ubuntu 24.04.4 LTS ({machine})
Python platform              : Linux-6.8.12-{kernel}-{machine}-with-glibc2.39
Is CUDA available            : True
GPU models and configuration : GPU 0: {gpu}
Nvidia driver version        : {driver}
"""


def test_the_x86_64_release_table_does_not_judge_another_machine():
    # a Jetson Thor (aarch64, L4T driver 580.00): the aarch64 cu130 wheels have sm_110 and L4T's
    # driver numbers are not the desktop branches; neither table may judge it
    text = JETSON.format(machine="aarch64", kernel="tegra", gpu="NVIDIA Thor", driver="580.00")
    t = triage(REG, read_paste(text), text)
    assert not t.found, [(c.cause_id, c.summary) for c in t.causes]
    rows = {r.id: r for r in t.rows}
    assert rows["torch.arch_support"].status is Status.SKIP and "x86_64 wheels" in rows["torch.arch_support"].message
    assert rows["torch.driver_supports_cuda"].status is Status.SKIP
    # the same facts from an x86_64 machine with a GTX 1080 (sm_61, not in any cu130 wheel) are judged
    text = JETSON.format(machine="x86_64", kernel="generic", gpu="NVIDIA GeForce GTX 1080", driver="580.65.06")
    t = triage(REG, read_paste(text), text)
    assert t.causes and t.causes[0].cause_id == "arch_not_in_torch_build"


def test_the_text_answer_says_what_it_read():
    # an error text alone is "a known error text", not "nothing recognisable"; prose alone is nothing
    text = "NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus\n"
    assert "Read: a known error text" in render_text(triage(REG, read_paste(text), text), "x")
    text = "my training is slow, please help\n"
    assert "Read: nothing recognisable" in render_text(triage(REG, read_paste(text), text), "x")
