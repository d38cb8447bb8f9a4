"""Readers for other tools' environment dumps and for facts written by hand, registered through
the same ``@reader`` mechanism a plugin uses.

- ``accelerate env``, ``transformers env`` / ``transformers-cli env``, ``diffusers-cli env``,
  ``llamafactory-cli env``: ``- `Accelerate` version: 0.28.0``, ``- PyTorch version (GPU?):
  2.2.1+cu121 (True)``, ``- GPU type: NVIDIA A800-SXM4-80GB``
- ``python -m sglang.check_env``: ``PyTorch: 2.4.0+cu121``, ``GPU 0,1: NVIDIA A40``, ``GPU 0,1
  Compute Capability: 8.6``, ``CUDA Driver Version: 535.104.12``, ``triton: 3.0.0``
- DeepSpeed's ``ds_report``: ``torch version .................... 2.1.0+cu121``, ``torch cuda
  version ............... 12.1``, ``nvcc version ..................... 11.8``
- ``nvcc --version`` (``Cuda compilation tools, release 12.4, V12.4.131``) and ``pip show``
- ROCm: an AMD GPU's gfx target from ``rocminfo`` (``Name: gfx1032``), ``gcnArchName`` or a GPU
  line naming one (``AMD Radeon RX 6600 (gfx1032)``), and ``HSA_OVERRIDE_GFX_VERSION=10.3.0``
- torch's own answers as people paste them: a REPL or ``print`` echo (``>>> torch.__version__``
  then ``'2.3.1+cpu'``; ``print(torch.__version__, torch.cuda.is_available())`` then
  ``2.1.0+cu121 False``), the same said in a sentence (``torch.cuda.is_available() returns
  False``), and a reporter saying CUDA or the GPU does not work ("CUDA is not available", "torch
  does not detect my GPU")
- pip's own output: ``Successfully installed torch-2.2.0 torchvision-0.17.0``, ``Requirement
  already satisfied: torch in ./venv/lib/python3.10/site-packages (2.1.0)``, and the Python a
  ``pythonX.Y/site-packages`` path shows (when every such path shows the same one), and the
  build an install command asked torch's index for (``--index-url …/whl/cu124``)
- container images whose tag names what they hold: ``pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime``
  (torch and its CUDA), ``vllm/vllm-openai:v0.6.3.post1`` (vLLM), ``nvidia/cuda:12.4.1-devel-…``
  (a CUDA toolkit: only the devel images carry nvcc)
- the GPU stack's variables a command line or script sets: ``export CUDA_VISIBLE_DEVICES=``,
  ``NCCL_P2P_DISABLE=1 torchrun …``, ``set HSA_OVERRIDE_GFX_VERSION=10.3.0``,
  ``os.environ["CUDA_VISIBLE_DEVICES"] = "1"``
- versions as people write them: ``- torch 2.1.2``, ``torch==2.3.0``, ``PyTorch: 2.9.1+cu130``,
  ``torch version：1.8.1+cu102``, ``cudatoolkit=10.1``, ``driver version: 590.48.01``,
  ``GPU: Tesla V100S``

Every pattern is anchored and bounded (no nested quantifiers): linear in the line's length.
"""

from __future__ import annotations

import re

from envdoctor.core.patterns import lazy
from envdoctor.sources.readers import PasteWriter, reader

VERSION = r"v?(\d{1,4}(?:\.[0-9A-Za-z]{1,20}){1,4}(?:\+[0-9A-Za-z.]{1,40})?)"
HF_LINE = lazy(
    r"^\s{0,8}[-*]\s{1,4}`?([A-Za-z][\w .-]{0,40}?)`?\s{1,4}version(?:\s{0,2}\([^)\n]{0,20}\))?\s{0,4}:\s{0,4}"
    + VERSION
    + r"(?:\s{0,4}\((\w{1,10})\))?"
)
HF_GPU = lazy(r"^\s{0,8}[-*]\s{1,4}GPU type\s{0,4}:\s{0,4}(\S.{0,120})$")
SGLANG_GPU = lazy(r"^\s{0,4}GPU ([\d,]{1,40}):\s{0,4}(\S.{0,120})$")
SGLANG_CC = lazy(r"^\s{0,4}GPU ([\d,]{1,40}) Compute Capability:\s{0,4}(\d{1,2}\.\d)\s*$")
SGLANG_KV = lazy(
    r"^\s{0,4}(PyTorch|sglang|sgl_kernel|flashinfer|flashinfer_python|triton|transformers|vllm|xformers|numpy):\s{0,4}" + VERSION
)
SGLANG_DRIVER = lazy(r"^\s{0,4}CUDA Driver Version:\s{0,4}(\d{2,4}(?:\.\d{1,3}){1,2})\s*$")
NVCC = lazy(r"Cuda compilation tools, release (\d{1,2}\.\d{1,2}), V(\d{1,2}\.\d{1,2}\.\d{1,4})")
PIP_SHOW_NAME = lazy(r"^\s{0,4}Name:\s{0,4}([A-Za-z0-9][A-Za-z0-9._-]{0,80})\s*$")
PIP_SHOW_VERSION = lazy(r"^\s{0,4}Version:\s{0,4}" + VERSION + r"\s*$")
PROSE_PACKAGES = (
    "torch|pytorch|torchvision|torchaudio|triton|pytorch-triton|xformers|flash[-_]attn|vllm|transformers|numpy|bitsandbytes|deepspeed"
)
PROSE_VERSION = lazy(  # not collect_env's "CUDA used to build PyTorch: 12.1" (that is torch's CUDA, not its version)
    r"(?:^|[\s`(\[,;*|])(?<!to build\s)("
    + PROSE_PACKAGES
    + r")(?:\s{0,2}version)?(?:\s{0,2}\([^)\n]{0,20}\))?\*{0,2}\s{0,3}(?:===?|=|:|：|\||\s)\s{0,3}"
    r"(?:PyTorch\s{1,2})?" + VERSION + r"(?![\w.])",
    re.I,
)
PROSE_PYTHON = lazy(
    r"(?:^|[\s`(\[,;*|:：])python(?:\s{0,2}version)?\*{0,2}\s{0,3}[:=：]?\s{0,3}v?(3\.\d{1,2}(?:\.\d{1,3})?)(?![\w+]|\.\d)", re.I
)
# "PyTorch 2.1.0 with CUDA 11.8", "torch 2.3.0 (CUDA 12.1)": the CUDA of that torch build
PROSE_TORCH_CUDA = lazy(
    r"\b(?:py)?torch\s{0,2}(?:version\s{0,2})?[:=]{0,2}\s{0,2}v?\d{1,2}\.\d{1,3}(?:\.\d{1,3})?\s{0,3}(?:with|built with|for|\(|\+)\s{0,3}"
    r"CUDA\s{0,2}(\d{1,2}\.\d{1,2})\b",
    re.I,
)
CUDATOOLKIT = lazy(r"\bcudatoolkit\s{0,2}[=:]{1,2}\s{0,2}(\d{1,2}\.\d{1,2})\b", re.I)
# "driver 535.104", "driver version: 590.48.01", "my driver is 470.82", a branch alone ("NVIDIA
# driver 470", "driver: R535")
PROSE_DRIVER = lazy(
    r"\b(?:nvidia\s{1,2})?driver(?:\s{1,2}version)?(?:\s{1,2}is)?\s{0,2}[:=：]?\s{0,2}R?(\d{3}(?:\.\d{1,3}){0,2})(?![\d%]|\.\d)", re.I
)
PROSE_GPU = lazy(
    r"\b(?:GPUs?|Graphics card|Video card)(?:\s{0,2}(?:model|type|name))?\*{0,2}(?:\s{0,2}[:：|]|\s{1,2}is)\s{0,2}\**"
    r"(?:\d{1,2}\s?[x×]\s?)?"  # a count: "2x RTX 4090", "8 x H100"
    r"((?:NVIDIA\s|GeForce\s|Tesla\s|Quadro\s){0,3}(?:[A-Za-z]{0,8}\s?[A-Z]?\d{2,4}|[A-Z]\d\b)[A-Za-z0-9 -]{0,30})",
    re.I,
)

HF_NAMES = {"pytorch": "torch", "transformers": "transformers", "accelerate": "accelerate", "python": "python"}


def _hf_line(m: re.Match, line: str, out: PasteWriter) -> None:
    name, version, flag = m.group(1).strip().lower(), m.group(2), (m.group(3) or "").lower()
    name = HF_NAMES.get(name, name)
    if name == "python":
        out.python(version, line)
        return
    out.package(name.replace(" ", "-"), version, line)
    if name == "torch" and flag in ("true", "false", "gpu", "cpu"):
        out.cuda_available(flag in ("true", "gpu"), line)


@reader("hf-env")
def read_hf_env(lines: list[str], out: PasteWriter) -> None:
    """``accelerate env`` / ``transformers env`` / ``llamafactory-cli env`` bullet dumps."""
    seen = False
    for line in lines:
        if ("version" not in line and "GPU type" not in line) or line.lstrip()[:1] not in ("-", "*"):
            continue  # both patterns open with a bullet
        m = HF_LINE.match(line)
        if m:
            seen = True
            _hf_line(m, line, out)
            continue
        g = HF_GPU.match(line)
        if g:
            seen = True
            out.gpu(g.group(1).strip(), line)
    if seen:
        out.kind("hf_env")


def _sglang_line(line: str, out: PasteWriter, ccs: dict[str, str]) -> bool:
    m = SGLANG_KV.match(line)
    if m:
        name = "torch" if m.group(1) == "PyTorch" else m.group(1).replace("_", "-")
        out.package(name, m.group(2), line)
        return True
    m = SGLANG_DRIVER.match(line)
    if m:
        out.driver(m.group(1), line)
        return True
    m = SGLANG_CC.match(line)
    if m:
        for i in m.group(1).split(","):
            ccs[i] = m.group(2)
        return True
    return False


@reader("sglang-check-env")
def read_sglang(lines: list[str], out: PasteWriter) -> None:
    """``python -m sglang.check_env``."""
    if not any(ln.startswith(("sglang:", "CUDA Driver Version:")) for ln in lines):
        return
    ccs: dict[str, str] = {}
    gpus: list[tuple[str, str, str]] = []
    for line in lines:
        if _sglang_line(line, out, ccs):
            continue
        g = SGLANG_GPU.match(line)
        if g and "Compute Capability" not in line:
            gpus.extend((i, g.group(2).strip(), line) for i in g.group(1).split(",") if i)
    for i, name, line in gpus:
        out.gpu(name, line, ccs.get(i), index=int(i))
    out.kind("sglang_check_env")


@reader("nvcc-version")
def read_nvcc(lines: list[str], out: PasteWriter) -> None:
    for line in lines:
        if "Cuda compilation tools" in line:
            m = NVCC.search(line)
            if m:
                out.toolkit(m.group(1), line)
                out.kind("nvcc_version")
                return


@reader("pip-show")
def read_pip_show(lines: list[str], out: PasteWriter) -> None:
    for i, line in enumerate(lines):
        m = PIP_SHOW_NAME.match(line) if line.lstrip().startswith("Name:") else None
        if not m:
            continue
        for nxt in lines[i + 1 : i + 3]:
            v = PIP_SHOW_VERSION.match(nxt)
            if v:
                out.package(m.group(1), v.group(1), nxt)
                out.kind("pip_show")
                break


DS_LINE = lazy(r"^\s{0,4}(torch version|torch cuda version|nvcc version|deepspeed info)\s{1,4}\.{3,80}\s{1,4}" + VERSION + r"(?![\w.])")


# registered before "prose": its "deepspeed wheel compiled w. ... torch 2.1" is the torch DeepSpeed was built
# for, not the one installed
@reader("ds-report")
def read_ds_report(lines: list[str], out: PasteWriter) -> None:
    """DeepSpeed's ``ds_report``: torch's version and CUDA, the toolkit's nvcc, DeepSpeed's own."""
    seen = False
    for line in lines:
        if "..." not in line or not (m := DS_LINE.match(line)):
            continue
        seen = True
        key, version = m.group(1), m.group(2)
        if key == "torch version":
            out.package("torch", version, line)
        elif key == "torch cuda version":
            out.torch_cuda_hint(version, line)
        elif key == "nvcc version":
            out.toolkit(version, line)
        else:
            out.package("deepspeed", version, line)
    if seen:
        out.kind("ds_report")


PACKAGE_WORDS = ("torch", "triton", "xformers", "flash", "vllm", "transformers", "numpy", "bitsandbytes", "deepspeed")
GPU_WORDS = ("gpu", "graphics card", "video card")


def _prose_line(line: str, low: str, out: PasteWriter) -> None:
    # each pattern only where its own word is (every one names its word, case-insensitively)
    if any(w in low for w in PACKAGE_WORDS):
        for m in PROSE_VERSION.finditer(line):
            name = m.group(1).lower().replace("_", "-")
            out.package("torch" if name == "pytorch" else name, m.group(2), line)
        if "cuda" in low and (cuda := PROSE_TORCH_CUDA.search(line)):
            out.torch_cuda_hint(cuda.group(1), line)
    if "python" in low and (py := PROSE_PYTHON.search(line)):
        out.python(py.group(1), line)
    if "cudatoolkit" in low and (toolkit := CUDATOOLKIT.search(line)):
        out.torch_cuda_hint(toolkit.group(1), line)
    if "driver" in low and (driver := PROSE_DRIVER.search(line)):
        out.driver(driver.group(1), line)
    if any(w in low for w in GPU_WORDS) and (gpu := PROSE_GPU.search(line)):
        out.gpu(gpu.group(1).strip(), line)


@reader("prose")
def read_prose(lines: list[str], out: PasteWriter) -> None:
    """Versions, drivers and GPUs written by hand (bullets, prose, issue-template answers)."""
    for line in lines:
        if len(line) <= 400:
            _prose_line(line, line.lower(), out)


GFX = lazy(r"\bgfx(\d{2,4}[a-f]?)(?![\w])")
# the lines that name one GPU's target (a build's target list names several, or is a variable)
GFX_GPU = lazy(
    r"^\s{0,8}(?:Name:|Marketing Name:|gcnArchName)|amdgcn-amd-amdhsa--gfx|gcnArchName|\b(?:GPU|Radeon|Instinct|card|device|agent)\b", re.I
)
GFX_LIST = lazy(r"PYTORCH_ROCM_ARCH|AMDGPU_TARGETS|GPU_TARGETS|offload-arch|TensileLibrary|supported|[;,]\s{0,2}gfx", re.I)
HSA_OVERRIDE = lazy(r"\bHSA_OVERRIDE_GFX_VERSION\s{0,2}=\s{0,2}[\"']?(\d{1,2}\.\d{1,2}\.\d{1,2})\b")
AMD_NAME = lazy(r"\b(AMD (?:Radeon|Instinct)[\w ()-]{0,60}?)\s{0,2}(?:\(|,|$|\bgfx)")


# A GPU named in a sentence by its product name ("on my RTX 3090", "an A100 80GB"): brand-led
# consumer and workstation names and the data-centre parts whose names are unambiguous.
GPU_MENTION = lazy(
    r"\b((?:NVIDIA\s)?(?:GeForce\s)?(?:RTX|GTX|GT|TITAN)\s?[A-Z]?\d{3,4}(?:\s?(?:Ti|SUPER|Ada))?"
    r"|(?:NVIDIA\s)?(?:GeForce\s)?(?:MX\s?\d{3}|9[34]0MX)"
    r"|(?:NVIDIA\s|Tesla\s)?(?:[AHBV]100|H200|H800|H20|A800|A10G|A40|A30|L40S?|B200|GB200|K80|P100|P40|T4)(?:\s?\d{2,3}GB)?)\b"
)


@reader("gpu-mentions")
def read_gpu_mentions(lines: list[str], out: PasteWriter) -> None:
    """A GPU named only in prose, when nothing else names one: exactly one product (a paste
    naming two may be comparing machines, so it states none)."""
    if out.gpus_known():
        return
    found: dict[str, str] = {}
    for line in lines:
        for m in GPU_MENTION.finditer(line) if len(line) <= 400 else ():
            key = re.sub(r"^(?:NVIDIA\s|GeForce\s|Tesla\s)+", "", m.group(1)).replace(" ", "").upper()
            found.setdefault(key, m.group(1))
            if len(found) > 1:
                return
    if found and (name := next(iter(found.values()))):
        line = next(ln for ln in lines if name in ln)
        out.gpu(name, line)


@reader("rocm")
def read_rocm(lines: list[str], out: PasteWriter) -> None:
    """AMD GPUs by gfx target, and the override of the target HIP reports."""
    for line in lines:
        if "gfx" in line and len(line) <= 400:
            targets = set(GFX.findall(line))
            if len(targets) == 1 and GFX_GPU.search(line) and not GFX_LIST.search(line):
                name = AMD_NAME.search(line)
                out.amd_gpu("gfx" + targets.pop(), line, name.group(1).strip() if name else None)
        if "HSA_OVERRIDE_GFX_VERSION" in line and (m := HSA_OVERRIDE.search(line)):
            out.env_var("HSA_OVERRIDE_GFX_VERSION", m.group(1), line)


# torch's answers: the expression, then its value on the same line ("torch.__version__ is
# 2.3.1+cpu", "torch.cuda.is_available() returns False") or on the next line (a REPL or print echo)
TORCH_EXPR = lazy(r"torch\.__version__|torch\.version\.cuda|torch\.cuda\.is_available\(\)")
TORCH_SAID = lazy(
    r"(torch\.__version__|torch\.version\.cuda|torch\.cuda\.is_available\(\))[`*]{0,2}\s{0,3}"
    r"(?:(?:returns?|returned|gives|gave|shows|prints|outputs|is|was|still|always|=+|->|=>|:)\s{0,3}){1,3}[`'\"*]{0,2}([\w.+]{1,40})"
)
# the reporter saying CUDA or the GPU does not work for torch ("CUDA is not available", "torch
# does not detect my GPU", "can't use the GPU", or a framework saying so): a CPU build needs no
# other sign of a GPU
CUDA_COMPLAINT = lazy(
    r"\b(?:CUDA|GPU)s?\b(?:\s(?:is|was|are))?\s(?:not|isn't|isnt|never)\s(?:available|detected|found|recogni[sz]ed|being used|used)\b"
    r"|\b(?:can(?:no|')?t|cannot|unable to|doesn't|does not|won't|will not|fails? to)\s(?:use|find|detect|see|recogni[sz]e|access)"
    r"\s(?:the\s|my\s|any\s)?(?:CUDA|GPU|NVIDIA GPU)s?\b"
    # a framework's own words for GPUs asked of a torch that sees none (PyTorch Lightning)
    r"|\bYou requested GPUs?: \[|\bGPUAccelerator\b[^\n]{0,40}can ?not run on your system",
    re.I,
)
ECHO_TAIL = lazy(r"^[\s)\"'`;]{0,10}$")  # what may follow the last expression of an echoed line
TORCH_VALUE = {
    "torch.__version__": lazy(r"\d{1,2}\.\d{1,3}(?:\.\d{1,3})?(?:[ab]\d{1,3}|\.dev\d{1,10}|rc\d{1,3})?(?:\+[0-9A-Za-z.]{1,40})?"),
    "torch.version.cuda": lazy(r"None|\d{1,2}\.\d{1,2}"),
    "torch.cuda.is_available()": lazy(r"True|False|true|false"),
}


def _torch_value(expr: str, value: str, line: str, out: PasteWriter, said: str) -> None:
    if not TORCH_VALUE[expr].fullmatch(value):
        return
    if expr == "torch.__version__":
        out.torch(value, line)
    elif expr == "torch.version.cuda":
        out.torch_cuda(None if value == "None" else value, line)
    else:
        out.cuda_available(value.lower() == "true", line)
        if value.lower() == "false":
            out.cuda_asked(line, said)


def _echo(line: str, nxt: str, out: PasteWriter) -> bool:
    """``>>> print(torch.__version__, torch.version.cuda)`` over ``2.1.0 None``: each value in turn."""
    exprs = list(TORCH_EXPR.finditer(line))
    if not exprs or not ECHO_TAIL.match(line[exprs[-1].end() :]):
        return False
    values = [v for v in re.split(r"[\s,()]+", nxt.strip().strip("'\"")) if v.strip("'\"")]
    if len(values) != len(exprs):
        return False
    for m, value in zip(exprs, values, strict=True):
        _torch_value(m.group(0), value.strip("'\""), nxt, out, f"{m.group(0)} answered {value}")
    return True


@reader("torch-answers")
def read_torch_answers(lines: list[str], out: PasteWriter) -> None:
    """What torch itself answered, echoed or said: its version, its CUDA, whether CUDA is available."""
    for i, line in enumerate(lines):
        if len(line) > 400:
            continue
        low = line.lower()
        if ("cuda" in low or "gpu" in low) and (m := CUDA_COMPLAINT.search(line)):
            out.cuda_asked(line, m.group(0))
        if "torch." not in line:
            continue
        nxt = next((ln for ln in lines[i + 1 : i + 3] if ln.strip()), "")
        if nxt and len(nxt) <= 200 and _echo(line, nxt, out):
            continue
        for m in TORCH_SAID.finditer(line):
            _torch_value(m.group(1), m.group(2), line, out, m.group(0))


PIP_INSTALLED = lazy(r"^\s{0,8}Successfully installed\s{1,4}(\S.{0,3000})$")
PIP_ITEM = lazy(r"([A-Za-z0-9][A-Za-z0-9._-]{0,80}?)-(\d{1,4}(?:\.[0-9A-Za-z]{1,20}){0,4}(?:\+[0-9A-Za-z.]{1,40})?)")
PIP_SATISFIED = lazy(
    r"^\s{0,8}Requirement already satisfied:\s{1,4}([A-Za-z0-9][A-Za-z0-9._-]{0,80})(?:\[[^\]\n]{0,80}\])?\S{0,80}\s{1,4}in\s{1,4}"
    r"[^\n]{1,400}?\s\(" + VERSION + r"\)\s{0,4}$"
)
# the build a `pip install torch… --index-url https://download.pytorch.org/whl/cu124` asked for
TORCH_INDEX = lazy(r"download\.pytorch\.org/whl/(?:nightly/|test/)?(cu\d{2,3}|cpu)(?![\w.])")
# /usr/lib/python3.10/site-packages, and Windows' C:\...\Python312\Lib\site-packages
SITE_PYTHON = lazy(r"python(3\.\d{1,2})[/\\](?:site|dist)-packages|python3(\d{1,2})[/\\]lib[/\\]site-packages", re.I)


@reader("pip-output")
def read_pip_output(lines: list[str], out: PasteWriter) -> None:
    """What pip said it installed or found installed, and the Python its paths show."""
    pythons: dict[str, str] = {}
    for line in lines:
        if "Successfully installed" in line and (m := PIP_INSTALLED.match(line)):
            for item in m.group(1).split():
                if v := PIP_ITEM.fullmatch(item):
                    out.package(v.group(1), v.group(2), line)
        elif "Requirement already satisfied" in line and len(line) <= 800 and (m := PIP_SATISFIED.match(line)):
            out.package(m.group(1), m.group(2), line)
        elif (
            "download.pytorch.org/whl/" in line and "torch" in line.replace("download.pytorch.org", "") and (m := TORCH_INDEX.search(line))
        ):
            out.torch_index(m.group(1), line)
        if "-packages" in line and len(line) <= 2000:
            for unix, windows in SITE_PYTHON.findall(line):
                pythons.setdefault(unix or f"3.{windows}", line)
    if len(pythons) == 1:
        version, line = next(iter(pythons.items()))
        out.python(version, line)


# the variables of the GPU stack (not every NAME=value of a shell session: a token, a path)
VAR_PREFIXES = ("CUDA", "NCCL", "TORCH", "TORCHINDUCTOR", "TRITON", "HSA", "HIP", "ROCR", "PYTORCH", "XLA", "PJRT", "NVIDIA")
STACK_VAR = "(?:" + "|".join(VAR_PREFIXES) + ")_[A-Z0-9_]{1,60}|LD_LIBRARY_PATH"
VAR_WORDS = (*(p + "_" for p in VAR_PREFIXES), "LD_LIBRARY_PATH")  # a line holding none of these sets none of them
SHELL_ASSIGN = lazy(
    r"(?:^|[\s;(&|])(?:export\s{1,4}|set\s{1,4}|env\s{1,4})?("
    + STACK_VAR
    + r")=(?!=)(\"[^\"\n]{0,500}\"|'[^'\n]{0,500}'|[^\s;&|\"']{0,1000})(?=$|[\s;&|)])"
)
PY_ASSIGN = lazy(r"os\.environ\[\s{0,2}[\"'](" + STACK_VAR + r")[\"']\s{0,2}\]\s{0,2}=\s{0,2}[\"']([^\"'\n]{0,500})[\"']")


@reader("env-assignments")
def read_env_assignments(lines: list[str], out: PasteWriter) -> None:
    """The stack's variables set on a command line, in a shell or in Python (a tool's own
    listing, collect_env's or ``env``'s, is read first and wins)."""
    for line in lines:
        if "=" not in line or len(line) > 2000 or not any(w in line for w in VAR_WORDS):
            continue
        for m in SHELL_ASSIGN.finditer(line):
            out.env_var(m.group(1), m.group(2).strip("\"'"), line)
        if "environ" in line:
            for m in PY_ASSIGN.finditer(line):
                out.env_var(m.group(1), m.group(2), line)


IMAGE_TORCH = lazy(r"\bpytorch/pytorch:(\d{1,2}\.\d{1,3}\.\d{1,3})-cuda(\d{1,2}\.\d{1,2})(?![\w.])")
IMAGE_VLLM = lazy(r"\bvllm/vllm-openai:v?(\d{1,2}\.\d{1,3}\.\d{1,3}(?:\.post\d{1,3})?)(?![\w.])")
IMAGE_CUDA_DEVEL = lazy(r"\bnvidia/cuda:(\d{1,2}\.\d{1,2})(?:\.\d{1,3})?-(?:cudnn\d{0,2}-)?devel\b")


@reader("image-tags")
def read_image_tags(lines: list[str], out: PasteWriter) -> None:
    """What an image's tag says it holds (the tag of the image the report ran in: a Dockerfile's
    FROM, a docker run or a pod spec)."""
    for line in lines:
        if "/" not in line or len(line) > 2000:
            continue
        if "pytorch/pytorch:" in line and (m := IMAGE_TORCH.search(line)):
            out.package("torch", m.group(1), line)
            out.torch_cuda_hint(m.group(2), line)
        if "vllm/vllm-openai:" in line and (m := IMAGE_VLLM.search(line)):
            out.package("vllm", m.group(1), line)
        if "nvidia/cuda:" in line and (m := IMAGE_CUDA_DEVEL.search(line)):
            out.toolkit(m.group(1), line)
