"""The doctor's own process never imports torch, triton or torch_xla: only probe children do."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SCRIPT = """
import json, sys
from envdoctor.core import plan, session
from envdoctor.core.registry import discover
from envdoctor.core.selection import choose
reg = discover()
report = session.execute(plan.for_specs(reg, choose(reg.checks, sys.argv[1:], (), "default"), timeout=600))
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "triton", "torch_xla", "numpy"))
print(json.dumps({"heavy": heavy, "ids": [r.id for r in report.results], "torch": report.facts.get("torch_runtime", {}).get("version")}))
"""


@pytest.mark.slow
def test_a_run_with_the_torch_probe_imports_no_torch_in_the_doctor():
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, "torch", "triton", "compile", "toolchain", "xla", "packages"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert "torch.importable" in data["ids"]
    assert data["torch"], "the torch probe ran and reported torch's version"
    assert data["heavy"] == []


def test_help_and_list_import_nothing_heavy():
    code = (
        "import sys\n"
        "from envdoctor.cli import main\n"
        "try:\n    main(['list'])\nexcept SystemExit:\n    pass\n"
        "print([m for m in sys.modules if m.split('.')[0] in ('torch', 'triton', 'torch_xla', 'numpy', 'pynvml')])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "[]"
