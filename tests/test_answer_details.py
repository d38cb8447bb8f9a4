"""Issue 30.7: answers right in their details (triage fixes and asks, pasted listings, the
Markdown answer, --help)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from envdoctor.cli import COMMANDS
from envdoctor.core.registry import discover
from envdoctor.core.triage import triage
from envdoctor.reporters.triage import render_markdown, render_text
from envdoctor.sources import read_paste
from envdoctor.testing import gather
from envdoctor_checks._cuda_compat import fabric_possible
from envdoctor_checks.pasted import pasted_gpus as _pasted_gpus
from tests.conftest import run_cli

CORPUS = Path(__file__).parent / "fixtures" / "triage"
REG = discover()

GTX1080_CU128 = """\
$ pip list | grep torch
torch                    2.11.0+cu128

$ nvidia-smi
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 570.86.15              Driver Version: 570.86.15      CUDA Version: 12.8     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|=========================================+========================+======================|
|   0  NVIDIA GeForce GTX 1080        Off |   00000000:01:00.0 Off |                  N/A |
| 27%   35C    P8              7W /  180W |       1MiB /   8192MiB |      0%      Default |
+-----------------------------------------+------------------------+----------------------+

RuntimeError: CUDA error: no kernel image is available for execution on the device
"""


def pasted_gpus(facts: dict) -> list:
    return gather(_pasted_gpus, pasted=facts)


def _triage(text: str):
    return triage(REG, read_paste(text), text)


def test_headerless_pip_list_rows_are_read():
    paste = read_paste("$ pip list | grep torch\ntorch   2.5.1+cu124\ntorchvision   0.20.1+cu124\n")
    assert paste.facts["dists"]["torch"]["version"] == "2.5.1+cu124"
    assert paste.facts["torch_build"]["cuda"] == "12.4"
    assert paste.facts["dists"]["torchvision"]["version"] == "0.20.1+cu124"
    # one space, as `python --version` prints: prose, not a listing
    assert "dists" not in read_paste("Python 3.10.12\n").facts


def test_sm61_under_the_cu128_build_is_told_the_cu126_build_first():
    t = _triage(GTX1080_CU128)
    top = t.causes[0]
    assert top.cause_id == "arch_not_in_torch_build" and top.status == "fail"  # judged from the pasted facts
    first = top.fix.splitlines()[0]
    assert "cu126" in first and "cu128" not in first


def test_markdown_fix_lines_do_not_run_together():
    md = render_markdown(_triage(GTX1080_CU128), "paste.txt")
    fix = md.split("**Fix:**", 1)[1].split("**", 1)[0]
    lines = [ln for ln in fix.splitlines() if ln.strip()]
    assert len(lines) >= 2 and all(ln.startswith("- ") for ln in lines), fix


@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS.glob("*.txt")))
def test_no_fabric_ask_where_the_gpus_have_no_nvswitch_fabric(name):
    """The Fabric section was asked for in every answer, however unrelated (a GTX 1050)."""
    text = (CORPUS / name).read_text(encoding="utf-8")
    paste = read_paste(text)
    gpus = paste.facts.get("gpus")
    t = triage(REG, paste, text)
    if isinstance(gpus, list) and not fabric_possible(pasted_gpus(paste.facts)):
        assert not any("Fabric" in a for a in t.asks), t.asks
        assert "Fabric section" not in render_text(t, name)


def test_gtx1050_answer_asks_nothing_about_nvswitch():
    t = _triage((CORPUS / "045-nvidia-smi-windows-gtx1050-conda-nightly.txt").read_text(encoding="utf-8"))
    assert not any("Fabric" in a for a in t.asks)


def test_help_lists_whole_command_summaries():
    out = "".join(run_cli("--help").stdout.split())  # wrapped at any width
    for name, (module, attr, text) in COMMANDS.items():
        assert "".join(text.split()) in out, name  # click's short help cut it at ~45 characters
        cmd = getattr(__import__(module, fromlist=[attr]), attr)
        assert " ".join(inspect.cleandoc(cmd.help).split("\n\n")[0].split()) == text, name
