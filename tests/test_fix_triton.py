"""The issue's "done when", with the built-in check and real Triton wheels: in a fresh venv whose
Triton does not match the pin, `envdoctor fix` without --yes changes nothing, --yes installs the
pinned Triton and triton.torch_pin passes again, --undo restores the identical distribution list.

torch itself is a metadata-only distribution declaring a CUDA build's pin (a real CUDA torch is a
2 GB wheel; triton.torch_pin reads only its metadata). Triton 3.6.0 and 3.8.0 come from pip's
configured index (slow: two 180 MB wheels)."""

from __future__ import annotations

import subprocess
import venv
import zipfile
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.test_fix import dist_list

pytestmark = pytest.mark.slow

PIN = "3.8.0"


def _torch_metadata_wheel(out: Path) -> Path:
    info = "torch-2.14.0.dist-info"
    meta = f'Metadata-Version: 2.1\nName: torch\nVersion: 2.14.0\nRequires-Dist: triton=={PIN}; platform_system == "Linux"\n'
    files = {f"{info}/METADATA": meta, f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    path = out / "torch-2.14.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for p, text in files.items():
            z.writestr(p, text)
        z.writestr(f"{info}/RECORD", "".join(f"{p},,\n" for p in files) + f"{info}/RECORD,,\n")
    return path


def test_triton_off_the_pin_is_fixed_and_undone(tmp_path):
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "--no-deps"]
    subprocess.run([*pip, str(_torch_metadata_wheel(tmp_path)), "triton==3.6.0"], check=True, capture_output=True)
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    args = ("fix", "--python", str(python), "--select", "triton.torch_pin")
    before = dist_list(python)

    plan = run_cli(*args, env=env)
    assert plan.returncode == 1, plan.stdout + plan.stderr
    assert f"install --force-reinstall --no-deps triton=={PIN}" in plan.stdout and "Nothing changed" in plan.stdout
    assert dist_list(python) == before

    done = run_cli(*args, "--yes", env=env, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fixed        triton.torch_pin" in done.stdout
    assert dict(dist_list(python))["triton"] == PIN

    undo = run_cli(*args, "--undo", env=env, timeout=900)
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert dist_list(python) == before
    assert "fail   triton.torch_pin: triton 3.6.0 is installed but torch 2.14.0 requires triton==3.8.0" in undo.stdout
