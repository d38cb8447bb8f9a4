"""Every built-in fixer for real, in a throwaway venv (tests/fixvenv.py's round): break it,
`envdoctor fix` without --yes changes nothing, --yes fixes it and the re-check passes, --undo
restores the whole distribution list and the files, and the re-check fails again.

torch is a stand-in (tests/fixvenv.py: its metadata, version.py and a few modules), so each
round takes seconds. ninja comes from pip's configured index, torchaudio from PyPI (2 MB CPU
wheels, --no-deps); where the index cannot be reached the test skips saying so (a failure under
.ci/run, which has PyPI)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.components import absent
from tests.conftest import run_cli
from tests.fixvenv import dist_list, fix_round, make_venv, on_path, site_packages, state_env, torch_standin, tree, wheel

pytestmark = pytest.mark.slow


def fetched(tmp_path: Path, *requirements: str) -> None:
    """Skip (fail under .ci/run) when pip's index does not have ``requirements`` or cannot be reached."""
    for req in requirements:
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:", "-d", str(tmp_path / "dl"), req]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            absent(f"pip's index cannot give {req} (no network to PyPI?): {' '.join(done.stderr.strip().splitlines()[-1:])}")


def test_torch_without_bytecode_is_compiled_and_undone_file_by_file(tmp_path):
    python = make_venv(tmp_path, torch_standin(tmp_path, "2.9.0"), compile_bytecode=False)
    site = site_packages(python)
    before = tree(site, exact=True)
    tag = subprocess.run(
        [str(python), "-c", "import sys; print(sys.implementation.cache_tag)"], capture_output=True, text=True
    ).stdout.strip()

    def compiled(python):
        after = tree(site, exact=True)
        added = set(after) - set(before)
        assert f"torch/__pycache__/version.{tag}.pyc" in added and f"torch/nn/__pycache__/functional.{tag}.pyc" in added
        assert all("__pycache__" in p for p in added), sorted(added)  # only bytecode was added
        assert {p: v for p, v in after.items() if p in before} == before  # nothing else changed

    env = state_env(tmp_path, PYTHONDONTWRITEBYTECODE="1")  # Python saves no bytecode at import either
    out = fix_round(python, "torch.bytecode", env, "torch has no bytecode (6 of 6 modules", plan_code=0, fixed=compiled)
    assert f"-m compileall -q -j 0 {site}" in out["plan"]
    assert tree(site, exact=True) == before  # undo removed exactly what compileall added


def test_missing_ninja_is_installed_and_uninstalled(tmp_path):
    fetched(tmp_path, "ninja")
    needs = wheel(tmp_path, "jitops", "1.0", requires=("ninja",))  # builds its ops with cpp_extension.load
    python = make_venv(tmp_path, torch_standin(tmp_path, "2.9.0"), needs)
    env = state_env(tmp_path, PATH=on_path(python))  # an activated venv; a system ninja must not answer

    def installed(python):
        assert "ninja" in dict(dist_list(python)) and (python.parent / "ninja").exists()

    out = fix_round(python, "toolchain.ninja", env, "ninja is not installed, but jitops requires it", plan_code=0, fixed=installed)
    assert f"{python} -m pip install ninja" in out["plan"] and "distributions: ninja (none) -> " in out["done"]


def test_ninja_without_network_is_one_line_and_changes_nothing(tmp_path):
    """pip cannot reach its index (a dead port, the machine's pip config left out): the fix
    fails, says why in one line, exits 1, and the venv is as it was."""
    python = make_venv(tmp_path, torch_standin(tmp_path, "2.9.0"), wheel(tmp_path, "jitops", "1.0", requires=("ninja",)))
    offline = {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_RETRIES": "0", "PIP_TIMEOUT": "5"}
    env = state_env(tmp_path, PATH=on_path(python), **offline)
    before, files = dist_list(python), tree(site_packages(python))
    r = run_cli("fix", "--python", str(python), "--select", "toolchain.ninja", "--yes", env=env, timeout=600)
    assert r.returncode == 1, r.stdout + r.stderr
    (line,) = [x for x in r.stdout.splitlines() if x.startswith("  not fixed    toolchain.ninja: ")]
    assert "python exited with 1: " in line and "ninja" in line and line.endswith("; rolled back"), r.stdout
    assert "Traceback" not in r.stdout + r.stderr
    assert dist_list(python) == before and tree(site_packages(python)) == files


def test_companion_off_torchs_release_is_paired_and_undone(tmp_path):
    fetched(tmp_path, "torchaudio==2.8.0", "torchaudio==2.9.0")
    python = make_venv(tmp_path, torch_standin(tmp_path, "2.9.0"), "torchaudio==2.8.0")

    def paired(python):
        assert dict(dist_list(python))["torchaudio"] == "2.9.0" and dict(dist_list(python))["torch"] == "2.9.0"

    out = fix_round(python, "torch.companions", state_env(tmp_path), "torch 2.9.0 pairs with torchaudio 2.9.0", fixed=paired)
    assert f"{python} -m pip install --no-deps torchaudio==2.9.0" in out["plan"]
    assert "distributions: torchaudio 2.8.0 -> 2.9.0" in out["done"] and "torchaudio 2.9.0 -> 2.8.0" in out["undo"]


def test_cache_location_is_fixed_by_lines_to_source(tmp_path):
    """An unusable TORCHINDUCTOR_CACHE_DIR: the fix writes `export TORCHINDUCTOR_CACHE_DIR=...` to
    a file in the state directory, the re-check runs with it set (as a shell that sourced it),
    and undo removes the file. The venv and every shell profile stay as they were."""
    (tmp_path / "a-file").write_text("not a directory")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# the user's\n")
    python = make_venv(tmp_path, torch_standin(tmp_path, "2.9.0"))
    env = state_env(tmp_path, TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "a-file" / "cache"), HOME=str(home))
    state, homes = tmp_path / "state", tree(home)

    def sourced(python):
        (script,) = (state / "envdoctor").glob("*.env.sh")
        shell = subprocess.run(["sh", "-c", f'. "{script}" && echo "$TORCHINDUCTOR_CACHE_DIR"'], capture_output=True, text=True)
        assert shell.stdout.strip().startswith("/tmp/torchinductor-"), shell
        assert tree(home) == homes  # no profile was edited

    out = fix_round(python, "compile.inductor_cache", env, "is not writable", fixed=sourced)
    assert "export TORCHINDUCTOR_CACHE_DIR=/tmp/torchinductor-" in out["plan"] and "for you to source" in out["plan"]
    assert "In your shell: source " in out["done"] and ".env.sh" in out["done"]
    assert "Environment lines undone in " in out["undo"]
    assert not list((state / "envdoctor").glob("*.env.sh")) and tree(home) == homes
