"""Readers for other tools' dumps and hand-written facts, and the reader registration a plugin
uses (``@envdoctor.reader`` and the ``envdoctor.readers`` entry-point group). Pastes are quoted
from public threads (tests/fixtures/triage_corpus names them)."""

from __future__ import annotations

import pytest

import envdoctor
from envdoctor.sources import read_paste
from envdoctor.sources import readers as readers_mod

ACCELERATE = """### System Info

```Shell
- `Accelerate` version: 0.28.0
- Platform: Linux-5.4.0-173-generic-x86_64-with-glibc2.31
- Python version: 3.9.13
- Numpy version: 1.21.5
- PyTorch version (GPU?): 2.2.1+cu121 (True)
- PyTorch XPU available: False
- GPU type: NVIDIA A800-SXM4-80GB
```"""

LLAMAFACTORY = """- `llamafactory` version: 0.9.4.dev0
- Platform: Linux-6.11.0-29-generic-x86_64-with-glibc2.39
- Python version: 3.10.6
- PyTorch version: 2.7.1+cu126 (GPU)
- Transformers version: 4.52.4
- GPU type: NVIDIA GeForce RTX 2080 Ti"""

SGLANG = """Python: 3.11.5 (main, Sep 11 2023, 13:54:46) [GCC 11.2.0]
CUDA available: True
GPU 0,1: NVIDIA A40
GPU 0,1 Compute Capability: 8.6
CUDA_HOME: /usr/local/cuda
NVCC: Cuda compilation tools, release 12.1, V12.1.66
CUDA Driver Version: 535.104.12
PyTorch: 2.4.0+cu121
sglang: 0.4.0.post2
flashinfer: 0.1.6+cu121torch2.4
triton: 3.0.0"""

NVCC = """nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2024 NVIDIA Corporation
Built on Thu_Mar_28_02:18:24_PDT_2024
Cuda compilation tools, release 12.4, V12.4.131"""

PIP_SHOW = """Name: flashinfer-python
Version: 0.2.3+cu121torch2.5
Summary: FlashInfer: Kernel Library for LLM Serving"""

BULLETS = """**System**
- Ubuntu 24.04.4 LTS
- PyTorch: 2.9.1+cu130, CUDA (PyTorch): 13.0
- 2xRTX 5000 16GB (driver version: 590.48.01) with nvlink"""

PROSE = """GPU：Tesla V100S
pytorch：python=3.7 pytorch==1.7.0 cudatoolkit=10.1 torchvision -c pytorch"""


def test_accelerate_env():
    p = read_paste(ACCELERATE)
    assert p.facts["torch_build"]["version"] == "2.2.1+cu121" and p.facts["torch_build"]["cuda"] == "12.1"
    assert p.facts["dists"]["accelerate"]["version"] == "0.28.0"
    assert p.facts["gpus"][0]["name"] == "NVIDIA A800-SXM4-80GB"
    assert p.facts["python_info"]["version"].startswith("3.9.13")
    assert "hf_env" in p.kinds


def test_llamafactory_env_says_gpu_build():
    p = read_paste(LLAMAFACTORY)
    assert p.facts["torch_build"]["version"] == "2.7.1+cu126"
    assert p.facts["dists"]["transformers"]["version"] == "4.52.4"
    assert p.facts["gpus"][0]["name"] == "NVIDIA GeForce RTX 2080 Ti"


def test_sglang_check_env():
    p = read_paste(SGLANG)
    f = p.facts
    assert f["torch_build"]["version"] == "2.4.0+cu121"
    assert f["driver"]["version"] == "535.104.12"
    assert [g["name"] for g in f["gpus"]] == ["NVIDIA A40", "NVIDIA A40"] and f["gpus"][1]["cc"] == "8.6"
    assert f["dists"]["triton"]["version"] == "3.0.0" and f["cuda_toolkit"]["version"] == "12.1"
    assert "sglang_check_env" in p.kinds


def test_nvcc_and_pip_show():
    assert read_paste(NVCC).facts["cuda_toolkit"]["version"] == "12.4"
    assert read_paste(PIP_SHOW).facts["dists"]["flashinfer-python"]["version"] == "0.2.3+cu121torch2.5"


def test_bullets_and_prose():
    b = read_paste(BULLETS).facts
    assert b["torch_build"]["version"] == "2.9.1+cu130" and b["driver"]["version"] == "590.48.01"
    p = read_paste(PROSE).facts
    assert p["torch_build"]["version"] == "1.7.0" and p["torch_build"]["cuda"] == "10.1"
    assert p["gpus"][0]["name"] == "Tesla V100S"


def test_a_tool_reading_beats_a_hand_written_one():
    text = "PyTorch version: 2.5.1+cu124\nIs debug build: False\nCUDA used to build PyTorch: 12.4\n\nI use torch 2.4.0 I think"
    assert read_paste(text).facts["torch_build"]["version"] == "2.5.1+cu124"


@pytest.fixture
def clean_registry(monkeypatch):
    monkeypatch.setattr(readers_mod, "_REGISTERED", dict(readers_mod._REGISTERED))
    monkeypatch.setattr(readers_mod, "_ENTRY_POINTS", [])
    return readers_mod


def test_a_plugin_reader_registered_with_the_decorator(clean_registry):
    @envdoctor.reader("mytool")
    def read_mytool(lines, out):
        for line in lines:
            if line.startswith("mytool torch="):
                out.torch(line.split("=", 1)[1], line)
                out.kind("mytool")

    p = read_paste("mytool torch=2.6.0+cu126\n")
    assert p.facts["torch_build"]["version"] == "2.6.0+cu126" and "mytool" in p.kinds
    assert p.evidence["torch_build.version"] == "mytool torch=2.6.0+cu126"


def test_a_plugin_reader_from_an_entry_point(clean_registry, monkeypatch):
    class EP:
        name, value = "epreader", "mypkg.readers:read"

        def load(self):
            return lambda lines, out: out.package("mypkg", "1.2.3", lines[0])

    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [EP()] if group == "envdoctor.readers" else [])
    monkeypatch.setattr(readers_mod, "_ENTRY_POINTS", None)
    assert read_paste("anything\n").facts["dists"]["mypkg"]["version"] == "1.2.3"


def test_a_reader_that_raises_is_a_note_not_a_crash(clean_registry):
    @envdoctor.reader("broken")
    def broken(lines, out):
        raise ValueError("bad plugin")

    p = read_paste("PyTorch version: 2.5.1+cu124\nIs debug build: False\n")
    assert any("broken" in n and "ValueError" in n for n in p.notes)
    assert p.facts["torch_build"]["version"] == "2.5.1+cu124"


def test_long_and_hostile_lines_stay_linear():
    # every reader regex is bounded: a long line of near-matches reads without blowing up
    text = ("- torch version " + "9." * 3000 + "\n") + ("GPU: " + "A" * 5000 + "\n") + ("torch==" + "1" * 5000 + "\n")
    p = read_paste(text * 50)
    assert isinstance(p.facts, dict)


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("**torch**: 2.1.2+cu121", "2.1.2+cu121"),
        ("| torch | 2.1.2+cu121 |", "2.1.2+cu121"),
        ("* torch: 2.1.2", "2.1.2"),
    ],
)
def test_torch_versions_in_markdown_bold_and_tables(line, want):
    assert read_paste(line).facts["dists"]["torch"]["version"] == want


@pytest.mark.parametrize(
    "line", ["CUDA used to build PyTorch: 12.1", "CUDA used to build PyTorch   : 13.0", "ROCM used to build PyTorch: 6.1.40091"]
)
def test_the_cuda_that_built_torch_is_not_torch_s_version(line):
    # collect_env's line alone (a cut paste): no torch 12.1 among the packages
    assert "torch" not in (read_paste(line).facts.get("dists") or {})
    assert read_paste("I build torch 2.1.0 from source").facts["dists"]["torch"]["version"] == "2.1.0"


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("GPU: 2x RTX 4090", "RTX 4090"),
        ("GPUs: 8 x H100", "H100"),
        ("Graphics card: GTX 1080 Ti", "GTX 1080 Ti"),
        ("GPU Model: Tesla T4", "Tesla T4"),
        ("| GPU | RTX 4090 |", "RTX 4090"),
        ("GPU is GeForce GT 740M | 3.0", "GeForce GT 740M"),
    ],
)
def test_gpus_named_by_hand(line, want):
    assert [g["name"].strip(" |") for g in read_paste(line).facts["gpus"]] == [want]


@pytest.mark.parametrize("line", ["GPU: 1", "GPU: yes", "GPU is not detected", "the driver 100% fails"])
def test_prose_that_names_no_gpu_or_driver(line):
    facts = read_paste(line).facts
    assert "gpus" not in facts and "driver" not in facts


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("NVIDIA driver 470, torch 2.3.0+cu121", "470"),
        ("Driver: R535", "535"),
        ("My driver is 470.82 and CUDA 11.4", "470.82"),
        ("driver 535.", "535"),
    ],
)
def test_driver_versions_in_prose(line, want):
    assert read_paste(line).facts["driver"]["version"] == want


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("I run it on my RTX 5090", ["RTX 5090"]),
        ("training on 8 A100 80GB GPUs", ["A100 80GB"]),
        ("NVIDIA GeForce RTX 3060 Ti here, and the RTX 3060 Ti again", ["NVIDIA GeForce RTX 3060 Ti"]),
        ("works on RTX 3090 but not on my RTX 4090", []),  # two products: comparing machines
        ("GPU: RTX 3090\nalso tried an A100", ["RTX 3090"]),  # a stated GPU wins over a mention
        ("RTX PRO 6000 Blackwell", []),  # not a name the mention pattern can bound
        ("my laptop has a GeForce MX250 and torch 2.3.1", ["GeForce MX250"]),
        ("CUDA on a 940MX", ["940MX"]),
    ],
)
def test_a_gpu_mentioned_in_prose(text, want):
    assert [g["name"] for g in read_paste(text).facts.get("gpus") or []] == want


@pytest.mark.parametrize(
    ("text", "version", "kind", "available"),
    [
        (">>> import torch; torch.__version__\n'2.4.0+cpu'", "2.4.0+cpu", "cpu", None),
        ("torch.__version__ is 2.3.1+cpu", "2.3.1+cpu", "cpu", None),
        ('python -c "import torch; print(torch.__version__)"\n2.5.1+cu124', "2.5.1+cu124", "cuda", None),
        (">>> print(torch.__version__, torch.version.cuda, torch.cuda.is_available())\n2.1.0 None False", "2.1.0", "cpu", False),
        ("print(torch.__version__, torch.cuda.is_available())\n('2.1.0+cu121', True)", "2.1.0+cu121", "cuda", True),
        ("`torch.cuda.is_available()` returns `False` with torch 2.2.0+cu121", "2.2.0+cu121", "cuda", False),
    ],
)
def test_torch_answers_echoed_or_said(text, version, kind, available):
    facts = read_paste(text).facts
    assert facts["torch_build"]["version"] == version and facts["torch_build"]["kind"] == kind
    assert (facts.get("torch_runtime") or {}).get("cuda_available") == available


@pytest.mark.parametrize(
    "text",
    [
        ">>> torch.__version__\nTraceback (most recent call last):",  # no value on the next line
        ">>> print(torch.__version__, torch.version.cuda)\n2.1.0",  # two asked, one answered: not paired
        "if torch.cuda.is_available():\n    x = x.cuda()",  # code, not an answer
        "torch.__version__ is 42",  # not a version
    ],
)
def test_torch_answers_that_are_not_answers(text):
    facts = read_paste(text).facts
    assert "torch_build" not in facts and "torch_runtime" not in facts


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "Successfully installed torch-2.2.0+cu121 typing_extensions-4.9.0 nvidia-cudnn-cu12-8.9.2.26",
            {"torch": "2.2.0+cu121", "nvidia-cudnn-cu12": "8.9.2.26"},
        ),
        ("Requirement already satisfied: torch in ./venv/lib/python3.10/site-packages (2.1.0)", {"torch": "2.1.0"}),
        (
            "Requirement already satisfied: numpy>=1.17 in /usr/lib/python3/dist-packages (from torchvision) (1.24.0)",
            {"numpy": "1.24.0"},
        ),
    ],
)
def test_pip_install_output(text, want):
    dists = read_paste(text).facts["dists"]
    assert {k: dists[k]["version"] for k in want} == want


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Python 3.12.1", "3.12.1"),
        ("python version: 3.8.10", "3.8.10"),
        ("pytorch：python=3.7 pytorch==1.7.0", "3.7"),
        ('File "/home/u/venv/lib/python3.11/site-packages/torch/__init__.py", line 1', "3.11"),
        ("C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python312\\Lib\\site-packages\\torch\\__init__.py", "3.12"),
        ("Requires-Python >=3.8", None),  # a requirement, not the interpreter
        ("/home/u/.local/lib/python3.8/site-packages/a and /usr/lib/python3.10/site-packages/b", None),  # two: which?
    ],
)
def test_the_python_a_paste_states(text, want):
    assert (read_paste(text).facts.get("python_info") or {}).get("version") == want


@pytest.mark.parametrize(
    ("text", "kind", "cuda"),
    [
        ("PyTorch 2.1.0 with CUDA 11.8 on an RTX 4090", "cuda", "11.8"),
        ("torch 2.3.0 (CUDA 12.1)", "cuda", "12.1"),
        ("torch 2.3.0+cpu with CUDA 12.1 installed", "cpu", None),  # the build's own tag wins
    ],
)
def test_a_torch_build_named_with_its_cuda_in_prose(text, kind, cuda):
    tb = read_paste(text).facts["torch_build"]
    assert (tb["kind"], tb["cuda"]) == (kind, cuda)


@pytest.mark.parametrize(
    ("text", "kind", "cuda"),
    [
        ("pip install torch==2.4.0 torchvision --index-url https://download.pytorch.org/whl/cu124", "cuda", "12.4"),
        ("pip3 install torch==2.3.1 --index-url https://download.pytorch.org/whl/cpu", "cpu", None),
        ("pip install --pre torch==2.6.0.dev20241112 --index-url https://download.pytorch.org/whl/nightly/cu126", "cuda", "12.6"),
        ("pip install torch==2.5.1+cu118 --index-url https://download.pytorch.org/whl/cu124", "cuda", "11.8"),  # the version's own tag
    ],
)
def test_the_build_an_install_command_asked_torch_s_index_for(text, kind, cuda):
    tb = read_paste(text).facts["torch_build"]
    assert (tb["kind"], tb["cuda"]) == (kind, cuda)


DS_REPORT = """DeepSpeed general environment info:
torch install path ............... ['/usr/local/lib/python3.10/dist-packages/torch']
torch version .................... 2.1.0
deepspeed install path ........... ['/usr/local/lib/python3.10/dist-packages/deepspeed']
deepspeed info ................... 0.12.6, unknown, unknown
torch cuda version ............... 12.1
torch hip version ................ None
nvcc version ..................... 11.8
deepspeed wheel compiled w. ...... torch 2.1, cuda 12.1
shared memory (/dev/shm) size .... 64.00 MB"""


def test_deepspeed_ds_report():
    p = read_paste(DS_REPORT)
    assert "ds_report" in p.kinds
    tb = p.facts["torch_build"]
    assert (tb["version"], tb["kind"], tb["cuda"]) == ("2.1.0", "cuda", "12.1")
    assert p.facts["cuda_toolkit"]["version"] == "11.8" and p.facts["dists"]["deepspeed"]["version"] == "0.12.6"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("export CUDA_VISIBLE_DEVICES=", {"CUDA_VISIBLE_DEVICES": ""}),
        ("NCCL_P2P_DISABLE=1 torchrun --nproc_per_node 2 train.py", {"NCCL_P2P_DISABLE": "1"}),
        ("set HSA_OVERRIDE_GFX_VERSION=10.3.0", {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}),
        ('os.environ["CUDA_VISIBLE_DEVICES"] = "1"', {"CUDA_VISIBLE_DEVICES": "1"}),
        ('export LD_LIBRARY_PATH="/usr/local/cuda/lib64:$LD_LIBRARY_PATH"', {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64:$LD_LIBRARY_PATH"}),
        ("HF_TOKEN=hf_abcdefghijklmnopqrst python x.py", None),  # not the stack's: never read
        ("if CUDA_VISIBLE_DEVICES==1: pass", None),  # a comparison, not an assignment
    ],
)
def test_the_stack_s_variables_a_command_line_or_script_sets(text, want):
    assert read_paste(text).facts.get("env_vars") == want


def test_what_an_image_tag_says_it_holds():
    tb = read_paste("docker run --gpus all -it pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime").facts["torch_build"]
    assert (tb["version"], tb["kind"], tb["cuda"]) == ("2.1.0", "cuda", "12.1")
    assert read_paste("FROM vllm/vllm-openai:v0.6.3.post1").facts["dists"]["vllm"]["version"] == "0.6.3.post1"
    assert read_paste("FROM nvidia/cuda:12.4.1-devel-ubuntu22.04").facts["cuda_toolkit"]["version"] == "12.4"
    assert "cuda_toolkit" not in read_paste("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04").facts  # no nvcc in a runtime image


def test_a_plugin_reader_s_secret_variable_is_hidden_at_once(clean_registry):
    @envdoctor.reader("secrets")
    def read(lines, out):
        for line in lines:
            if line.startswith("export "):
                name, _, value = line[7:].partition("=")
                out.env_var(name, value, line)

    p = read_paste("export NCCL_TOKEN=hunter2-abcdefgh\n")
    assert p.facts["env_vars"]["NCCL_TOKEN"] != "hunter2-abcdefgh"
    assert all("hunter2" not in line for line in p.evidence.values())
