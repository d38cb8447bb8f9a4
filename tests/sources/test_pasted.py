"""read_paste on real pastes: this project's own machines (tests/fixtures/pastes), the triage
corpus of public issue pastes (tests/fixtures/triage) and hand-written edge cases."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from envdoctor import Status
from envdoctor.core.config import tomllib
from envdoctor.reporters.json import from_dict
from envdoctor.reporters.markdown import render_markdown
from envdoctor.sources import Paste, read_paste
from envdoctor.testing import run_check
from envdoctor_checks import extensions as ext
from envdoctor_checks import nvidia as nv
from envdoctor_checks import packages as pk
from envdoctor_checks import torch as t
from envdoctor_checks import triton as tr

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PASTES = FIXTURES / "pastes"
CORPUS = FIXTURES / "triage"
H200_MIB = 143771


def paste(name: str) -> Paste:
    return read_paste((PASTES / name).read_text(encoding="utf-8"))


def corpus(prefix: str) -> Paste:
    return read_paste(next(CORPUS.glob(f"{prefix}-*.txt")).read_text(encoding="utf-8"))


# ---- this project's machines -----------------------------------------------------------------


def test_collect_env_h200():
    p = paste("collect_env_gpu.txt")
    f = p.facts
    assert p.kinds == ("collect_env",)
    assert f["torch_build"] == {
        "version": "2.11.0+cu130",
        "local": "cu130",
        "cuda": "13.0",
        "hip": None,
        "git_version": None,
        "kind": "cuda",
        "location": "",
        "source": "pasted",
    }
    assert f["driver"]["version"] == "580.159.04" and f["driver"]["source"] == "pasted"
    assert f["driver"]["cuda_version"] is None  # collect_env does not print it; nvidia-smi does
    assert [(g["index"], g["name"]) for g in f["gpus"]] == [(0, "NVIDIA H200"), (1, "NVIDIA H200")]
    assert "cc" not in f["gpus"][0]
    assert f["visible_gpus"] == f["gpus"]
    assert f["python_info"]["version"] == "3.12.3" and f["python_info"]["version_info"] == [3, 12, 3]
    assert f["os_release"]["name"] == "Ubuntu 24.04.3 LTS" and f["os_release"]["libc"] == ["glibc", "2.39"]
    assert f["os_release"]["kernel"] == "6.18.44-fc-v973-gpu" and f["os_release"]["machine"] == "x86_64"
    assert f["torch_runtime"]["cuda_available"] is True and f["torch_runtime"]["device_count"] == 2
    assert f["cuda_toolkit"]["version"] == "13.0"
    assert f["dists"]["torch"]["version"] == "2.11.0" and f["dists"]["triton"]["version"] == "3.6.0"
    assert f["dists"]["numpy"] == {
        "name": "numpy",
        "version": "2.5.2",
        "location": "",
        "requires": [],
        "installer": "pip",
        "source": "pasted",
    }
    assert f["triton_pkg"]["version"] == "3.6.0"
    assert p.evidence["driver.version"] == "Nvidia driver version: 580.159.04"
    assert p.evidence["torch_build.version"] == "PyTorch version: 2.11.0+cu130"
    assert p.errors == () and p.missing == ()


def test_collect_env_cpu_box():
    p = paste("collect_env_cpu.txt")
    f = p.facts
    assert f["torch_build"]["kind"] == "cpu" and f["torch_build"]["version"] == "2.13.0+cpu" and f["torch_build"]["cuda"] is None
    assert f["torch_runtime"]["cuda_available"] is False and f["torch_runtime"]["device_count"] == 0
    assert "driver" not in f and "gpus" not in f
    assert ("driver", "gpus") in [w.facts for w in p.missing]
    assert f["dists"]["torch"]["version"] == "2.13.0+cpu"


def test_nvidia_smi_table():
    p = paste("nvidia_smi.txt")
    f = p.facts
    assert p.kinds == ("nvidia_smi",)
    assert f["driver"]["version"] == "580.159.04"
    assert f["driver"]["cuda_version"] == "13.0" and f["driver"]["cuda_version_source"] == "nvidia-smi"
    g0, g1 = f["gpus"]
    assert g0["name"] == "NVIDIA H200" and g0["pci_bus_id"] == "00000000:00:06.0" and g1["pci_bus_id"] == "00000000:00:07.0"
    assert g0["memory_total"] == H200_MIB << 20 and g0["memory_used"] == 0
    assert g0["persistence_mode"] is True and g0["mig_mode"] is False and g0["compute_mode"] == "Default"
    assert g0["processes"] == []


def test_nvidia_smi_q():
    p = paste("nvidia_smi_q.txt")
    f = p.facts
    assert p.kinds == ("nvidia_smi_q",)
    assert f["driver"]["version"] == "580.159.04" and f["driver"]["cuda_version"] == "13.0"
    g0 = f["gpus"][0]
    assert g0["uuid"] == "GPU-510e93a1-bd71-3faf-534a-a8c10c8309c4" and g0["serial"] == "1653924170277"
    assert g0["memory_total"] == H200_MIB << 20 and g0["mig_mode"] is False and g0["brand"] == "NVIDIA"
    assert f["fabric_state"] == {
        "00000000:00:06.0": {"state": "Completed", "status": "Success"},
        "00000000:00:07.0": {"state": "Completed", "status": "Success"},
    }


@pytest.mark.parametrize(("name", "kind"), [("pip_list.txt", "pip_list"), ("pip_freeze.txt", "pip_freeze")])
def test_pip_listings(name, kind):
    p = paste(name)
    assert p.kinds == (kind,)
    d = p.facts["dists"]
    assert d["torch"]["version"] == "2.11.0" and d["triton"]["version"] == "3.6.0" and d["numpy"]["version"] == "2.5.2"
    assert len(d) > 150
    # torch from PyPI has no local tag; the nvidia-cuda-runtime wheel it pins says CUDA 13.0
    assert p.facts["torch_build"]["kind"] == "cuda" and p.facts["torch_build"]["cuda"] == "13.0"


def test_whole_issue_body_with_several_pastes():
    """collect_env and nvidia-smi in one issue: markdown, <details>, CRLF, quoting, colours."""
    env = (PASTES / "collect_env_gpu.txt").read_text()
    smi = (PASTES / "nvidia_smi.txt").read_text()
    quoted = "\n".join("> " + ln for ln in smi.splitlines())
    body = (
        f"### Bug\nIt hangs.\n\n<details><summary>env</summary>\n\n```text\n{env}\n```\n</details>\n\n\x1b[1mnvidia-smi\x1b[0m:\n{quoted}\n"
    )
    p = read_paste(body.replace("\n", "\r\n"))
    assert set(p.kinds) >= {"collect_env", "nvidia_smi"}
    f = p.facts
    assert f["driver"]["version"] == "580.159.04" and f["driver"]["cuda_version"] == "13.0"  # from nvidia-smi
    assert len(f["gpus"]) == 2 and f["gpus"][0]["memory_total"] == H200_MIB << 20  # the richer listing wins
    assert f["torch_build"]["cuda"] == "13.0" and f["python_info"]["version"] == "3.12.3"


# ---- the checks judge pasted facts without false alarms ---------------------------------------


def test_healthy_h200_paste_passes_the_static_checks():
    body = (PASTES / "collect_env_gpu.txt").read_text() + "\n" + (PASTES / "nvidia_smi.txt").read_text()
    f = read_paste(body).facts
    rows = [
        run_check(t.build, torch_build=f["torch_build"]),
        run_check(t.cpu_build_on_gpu_machine, torch_build=f["torch_build"], gpus=f["gpus"], driver=f["driver"]),
        run_check(t.driver_supports_cuda, torch_build=f["torch_build"], driver=f["driver"]),
        run_check(
            t.cuda_available, torch_build=f["torch_build"], torch_runtime=f["torch_runtime"], gpus=f["gpus"], visible_gpus=f["visible_gpus"]
        ),
        run_check(t.numpy_abi, dists=f["dists"]),
        run_check(ext.extension_abi, dists=f["dists"], torch_build=f["torch_build"]),
        run_check(tr.single_dist, dists=f["dists"]),
        run_check(tr.torch_pin, dists=f["dists"], torch_build=f["torch_build"], triton_pkg=f["triton_pkg"]),
        run_check(nv.driver_present, driver=f["driver"]),
        run_check(nv.gpu_list, gpus=f["gpus"]),
        run_check(nv.mig, gpus=f["gpus"], env={}),
        run_check(nv.compute_mode, gpus=f["gpus"]),
        run_check(nv.gpu_processes, gpus=f["gpus"]),
        run_check(pk.versions, dists=f["dists"]),
    ]
    bad = [(r.id, r.status, r.message) for r in rows if r.status not in (Status.PASS, Status.SKIP)]
    assert bad == []


def test_broken_pastes_fail_the_checks_that_judge_them():
    # 023: torch 1.5.0 (CUDA 10.2) on driver 410.104; CUDA not available although 4 GPUs are listed
    f = corpus("023").facts
    assert run_check(t.cuda_available, torch_build=f["torch_build"], torch_runtime=f["torch_runtime"], gpus=f["gpus"]).status is Status.FAIL
    # 032: a CPU torch on a machine with an RTX 4080
    f = corpus("032").facts
    assert run_check(t.cpu_build_on_gpu_machine, torch_build=f["torch_build"], gpus=f["gpus"], driver=f["driver"]).status is Status.FAIL
    # 028: the NVSwitch fabric is still training
    p = read_paste((PASTES / "nvidia_smi_q.txt").read_text().replace("Completed", "In Progress"))
    assert run_check(nv.fabric_manager, gpus=p.facts["gpus"], fabric_state=p.facts["fabric_state"]).status is Status.FAIL


# ---- the public corpus --------------------------------------------------------------------------

CASES = tomllib.loads((CORPUS / "cases.toml").read_text(encoding="utf-8"))["case"]
READ_KINDS = {"collect_env", "collect_env_1x", "vllm_collect_env", "nvidia_smi", "nvidia_smi_q", "pip_list", "pip_freeze"}


@pytest.mark.parametrize("case", CASES, ids=[c["file"][:3] for c in CASES])
def test_corpus_case_is_read(case):
    p = read_paste((CORPUS / case["file"]).read_text(encoding="utf-8"))
    for kind in set(case["kinds"]) & READ_KINDS:
        assert kind in p.kinds, (kind, p.kinds)
    if {"traceback", "error_line"} & set(case["kinds"]):
        assert p.errors, "the error text is kept for the signature catalog"
    if case["evidence"] and {"traceback", "error_line"} & set(case["kinds"]) and not READ_KINDS & set(case["kinds"]):
        first = case["evidence"].splitlines()[0].strip()
        assert any(first in e for e in p.errors), first
    assert "the paste could not be read completely" not in " ".join(p.notes)


def test_corpus_values():
    p = corpus("023")  # the 1.x layout: "Is debug build: No", "GPU 0： Tesla P100" (full-width colon)
    assert "collect_env_1x" in p.kinds
    assert p.facts["torch_build"]["version"] == "1.5.0" and p.facts["torch_build"]["cuda"] == "10.2"
    assert p.facts["driver"]["version"] == "410.104"
    assert [g["name"] for g in p.facts["gpus"]] == ["Tesla P100-PCIE-16GB"] * 4
    assert p.facts["torch_runtime"]["cuda_available"] is False
    p = corpus("032")  # Windows, CPU torch 2.2.2 without a +cpu tag: "CUDA used to build PyTorch: Could not collect"
    assert p.facts["torch_build"]["kind"] == "cpu" and "Windows paste" in p.notes
    assert p.facts["gpus"][0]["name"] == "NVIDIA GeForce RTX 4080 Laptop GPU" and p.facts["driver"]["version"] == "551.86"
    p = corpus("021")  # only the library list: conda's pytorch build string says CUDA 10.2; two numpys
    assert p.facts["torch_build"]["kind"] == "cuda" and p.facts["torch_build"]["cuda"] == "10.2"
    assert p.facts["dists"]["numpy"]["version"] == "1.21.5" and p.facts["dists"]["numpy"]["others"][0]["version"] == "1.19.5"
    p = corpus("045")  # nvidia-smi on Windows: WDDM, a name cut short
    assert p.facts["driver"]["version"] == "461.72" and p.facts["driver"]["cuda_version"] == "11.2"
    assert p.facts["gpus"][0]["memory_total"] == 4096 << 20 and any("cut the GPU name" in n for n in p.notes)
    p = corpus("049")  # vLLM collect-env with an empty driver line
    assert "vllm_collect_env" in p.kinds and p.facts["torch_build"]["version"] == "2.7.0+cu128"
    assert len(p.facts["gpus"]) == 2 and ("driver", "gpus") in [w.facts for w in p.missing]
    p = corpus("028")  # an nvidia-smi -q Fabric block without its GPU header
    assert p.facts["fabric_state"][""]["state"] == "In Progress"
    assert corpus("050").facts["dists"]["flash-attn"]["version"] == "2.3.0"
    assert corpus("047").facts["torch_build"]["kind"] == "cpu"  # "CUDA used to build PyTorch: None"


# ---- envdoctor's own reports ------------------------------------------------------------------


def test_envdoctor_json_report_in_prose():
    text = (FIXTURES / "reports" / "v1.0-gpu-h200.json").read_text()
    p = read_paste(f"Here is my report:\n```json\n{text}\n```\nthanks")
    assert "envdoctor_json" in p.kinds
    assert p.facts["driver"]["version"] == "580.65.06" and p.facts["driver"]["source"] == "pasted"
    assert p.facts["dists"]["torch"]["version"] == "2.11.0+cu130" and "source" not in p.facts["dists"]
    assert p.facts["torch_runtime"]["arch_list"][:2] == ["sm_75", "sm_80"]
    assert p.unavailable == {"torch_xla": "torch_xla is not installed"} and "torch_xla" not in p.facts


def test_envdoctor_markdown_report():
    report = from_dict(json.loads((FIXTURES / "reports" / "v1.0-gpu-h200.json").read_text()))
    p = read_paste(render_markdown(report))
    assert "envdoctor_markdown" in p.kinds
    assert p.facts["driver"]["version"] == "580.65.06"
    assert p.facts["gpus"][0]["name"] == "NVIDIA H200" and p.facts["gpus"][0]["cc"] == "9.0"
    assert p.facts["torch_build"]["version"] == "2.11.0+cu130" and p.facts["dists"]["torch"]["version"] == "2.11.0+cu130"
    assert p.facts["env_vars"]["CUDA_VISIBLE_DEVICES"] == "0"


# ---- edge cases ------------------------------------------------------------------------------


def test_truncated_collect_env():
    p = read_paste(
        "PyTorch version: 2.5.1+cu124\nIs debug build: False\nCUDA used to build PyTorch: 12.4\n\nVersions of relevant libraries:\n"
    )
    assert p.facts["torch_build"]["cuda"] == "12.4"
    assert "the full collect_env output (it looks truncated after 'Versions of relevant libraries')" in [w.text for w in p.missing]
    assert "truncated" in p.notes
    assert "torch_runtime" not in p.facts  # "Is CUDA available" is not shown: no runtime fact to misjudge
    p = read_paste("Collecting environment information...\nPyTorch version: 2.1.0+cu121\nIs debug build: False\nCUDA used to bu")
    assert any("stops around 'is debug build'" in w.text for w in p.missing)


def test_torch_not_importable_and_rocm():
    p = read_paste("PyTorch version: N/A\nIs debug build: N/A\nCUDA used to build PyTorch: N/A\n")
    assert "torch_build" not in p.facts and any("could not import torch" in n for n in p.notes)
    p = read_paste("PyTorch version: 2.4.1+rocm6.1\nCUDA used to build PyTorch: N/A\nROCM used to build PyTorch: 6.1.40091-a8dbc0c19\n")
    assert p.facts["torch_build"]["kind"] == "rocm" and p.facts["torch_build"]["hip"] == "6.1"
    # cut before its driver line: a ROCm build has no NVIDIA driver to ask for; a CUDA build does
    asked = " ".join(w.text for w in p.missing)
    assert "'Is CUDA available'" in asked and "Nvidia driver version" not in asked
    cuda = read_paste("PyTorch version: 2.4.1+cu121\nCUDA used to build PyTorch: 12.1\nROCM used to build PyTorch: N/A\n")
    assert "Nvidia driver version" in " ".join(w.text for w in cuda.missing)


@pytest.mark.parametrize(
    ("line", "kind", "cuda"),
    [
        ("pytorch                   2.1.0           py3.10_cuda12.1_cudnn8.9.2_0    pytorch", "cuda", "12.1"),
        ("pytorch                   2.1.0           cpu_py310h1234567_0    conda-forge", "cpu", None),
        ("pytorch                   2.3.1           cuda118py310h0123456_300    conda-forge", "cuda", "11.8"),
    ],
)
def test_conda_list(line, kind, cuda):
    p = read_paste(f"# packages in environment at /opt/conda:\n#\n# Name  Version  Build  Channel\n{line}\nnumpy 1.26.4 py310h_0\n")
    assert "conda_list" in p.kinds
    assert p.facts["torch_build"]["kind"] == kind and p.facts["torch_build"]["cuda"] == cuda
    assert p.facts["dists"]["torch"]["version"] == "2.1.0" or p.facts["dists"]["torch"]["version"] == "2.3.1"
    assert p.facts["dists"]["torch"]["installer"] == "conda"


def test_conda_metapackages_and_the_defaults_cpu_selector():
    # conda's own metapackages start with "_" (the first row under the header, so a reader that
    # stopped there read nothing); Anaconda defaults' _pytorch_select cpu_0 selects the CPU build
    p = read_paste(
        "# Name                    Version                   Build  Channel\n"
        "_libgcc_mutex             0.1                        main  \n"
        "_pytorch_select           0.1                       cpu_0  \n"
        "pytorch                   1.3.1                          0  \n"
    )
    assert "conda_list" in p.kinds and any(d["name"] == "_libgcc_mutex" for d in p.facts["dists"].values())
    assert p.facts["torch_build"]["kind"] == "cpu" and p.facts["torch_build"]["version"] == "1.3.1"
    gpu = read_paste("_pytorch_select           0.2                       gpu_0  \npytorch   1.3.1   cuda100py37h53c1284_0\n")
    assert gpu.facts["torch_build"]["kind"] == "cuda"


def test_pip_freeze_urls_and_editables():
    text = (
        "torch @ https://download.pytorch.org/whl/cu121/torch-2.1.0%2Bcu121-cp310-cp310-linux_x86_64.whl\n"
        "mylib @ file:///home/me/mylib\n"
        "-e git+https://github.com/org/repo@abc123#egg=repo\n"
        "numpy==1.26.4\n"
    )
    p = read_paste(text)
    assert p.kinds == ("pip_freeze",)
    assert p.facts["dists"]["torch"]["version"] == "2.1.0+cu121" and p.facts["torch_build"]["cuda"] == "12.1"
    assert "mylib" not in p.facts["dists"] and any("mylib" in n for n in p.notes) and any("repo" in n for n in p.notes)


def test_traceback_with_log_prefix_and_found_version():
    text = (
        "[rank7]: Traceback (most recent call last):\n"
        '[rank7]:   File "/opt/venv/lib/python3.11/site-packages/torch/cuda/__init__.py", line 319, in _lazy_init\n'
        "[rank7]:     torch._C._cuda_init()\n"
        "[rank7]: RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update\n"
        "\nsome prose after it\n"
    )
    p = read_paste(text)
    assert p.kinds[0] == "traceback"
    assert p.errors[0].startswith("Traceback (most recent call last):") and "[rank7]" not in p.errors[0]
    assert p.errors[0].endswith("(found version 11040). Please update")
    assert p.facts["python_info"]["version"] == "3.11"
    # torch's message states the driver's CUDA; without the driver version there is no driver fact
    assert "driver" not in p.facts
    p = read_paste(text + "\nNvidia driver version: 470.182.03\nPyTorch version: 2.1.0+cu121\n")
    assert p.facts["driver"]["cuda_version"] == "11.4" and p.facts["driver"]["version"] == "470.182.03"


def test_cut_traceback_is_said():
    p = read_paste('Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n    import torch\n')
    assert p.errors and any("cut off" in n for n in p.notes) and any("whole traceback" in w.text for w in p.missing)


def test_ansi_and_secrets_in_env_section():
    text = (
        "==============================\n     Environment Variables\n==============================\n"
        "\x1b[32mNCCL_CUMEM_ENABLE=0\x1b[0m\nHF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz\nCUDA_VISIBLE_DEVICES=1\n\n"
        "PyTorch version              : 2.7.0+cu128\nIs CUDA available             : True\n"
    )
    p = read_paste(text)
    assert p.facts["env_vars"] == {"NCCL_CUMEM_ENABLE": "0", "HF_TOKEN": "<redacted>", "CUDA_VISIBLE_DEVICES": "1"}
    assert "hf_abc" not in json.dumps(p.evidence) and "visible_gpus" not in p.facts


def test_empty_and_prose():
    assert read_paste("").facts == {} and read_paste("").kinds == ()
    p = read_paste("It does not work, please help.")
    assert p.facts == {} and any("error message" in w.text for w in p.missing)


# ---- never raises, stays fast ------------------------------------------------------------------


def test_fuzz_never_raises():
    rng = random.Random(15)
    pool = [ln for f in sorted(CORPUS.glob("*.txt")) + sorted(PASTES.glob("*.txt")) for ln in f.read_text().splitlines()]
    for _ in range(300):
        kind = rng.random()
        if kind < 0.3:
            text = bytes(rng.randrange(256) for _ in range(rng.randrange(2000))).decode("latin-1")
        elif kind < 0.7:
            text = "\n".join(rng.choice(pool) for _ in range(rng.randrange(200)))
        else:
            src = rng.choice(pool)
            text = "\n".join(src[: rng.randrange(len(src) + 1)] for _ in range(20))
        p = read_paste(text)
        assert isinstance(p, Paste) and not any("could not be read completely" in n for n in p.notes), text[:200]
    assert isinstance(read_paste(b"\xff\x00PyTorch version: 2.1"), Paste)  # bytes too
    assert isinstance(read_paste(None), Paste)  # type: ignore[arg-type]


@pytest.mark.slow
def test_typical_paste_fast_and_huge_paste_finishes():
    body = "\n".join((PASTES / n).read_text() for n in ("collect_env_gpu.txt", "nvidia_smi.txt", "pip_freeze.txt"))
    start = time.perf_counter()
    read_paste(body)
    assert time.perf_counter() - start < 0.5
    huge = (body + "\n" + "x" * 50_000 + "\n" + " " * 50_000 + ":" + "\n") * 90  # ~10 MB
    assert len(huge) > 9_000_000
    start = time.perf_counter()
    p = read_paste(huge)
    assert time.perf_counter() - start < 5
    assert p.facts["driver"]["version"] == "580.159.04"


@pytest.mark.parametrize(
    "text",
    ["a: b\n" * 2_000_000, "a==1\n" * 2_000_000, "Package Version\n" + "a 1\n" * 2_500_000, "\x1b[1m" * 2_000_000, "> " * 5_000_000],
    ids=["key-value", "freeze", "pip-list", "ansi", "quotes"],
)
@pytest.mark.slow
def test_pathological_10mb_inputs_stay_fast(text):
    start = time.perf_counter()
    p = read_paste(text)
    assert time.perf_counter() - start < 5
    assert isinstance(p, Paste)
