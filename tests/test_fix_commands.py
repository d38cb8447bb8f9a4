"""Every fix command envdoctor prints is run in a test: ``bash -n`` on all of them; pip commands
through pip itself (``--dry-run`` against the local wheels, uninstalls in a throwaway venv);
``export`` lines in bash; apt-get as a simulation (``-s``); compileall on a scratch tree; the
Triton-pin shell line of the error catalog on a sample torch; the rest (dnf, ldconfig: root on
another distribution) by syntax. A table of the call sites that build fixes keeps new ones here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from envdoctor import Fix, env_fix, pip_fix
from envdoctor.testing import run_check
from envdoctor_checks import _fixes, baseline, companions, signatures
from envdoctor_checks import torch as torch_checks

ROOT = Path(__file__).resolve().parents[1]
PY = {"executable": sys.executable}
SITE = re.compile(r"\b(?:Fix|pip_fix|env_fix|system_package|restore_fix|_index_fix)\(")

# Where the built-in checks build fixes: file -> number of call sites. A new site must get a
# producer below (and this count raised), so no printed command goes untested.
SITES = {
    "_fixes.py": 3,
    "baseline.py": 4,
    "companions.py": 1,
    "compile.py": 4,
    "nvidia.py": 3,
    "toolchain.py": 5,
    "torch.py": 7,
    "triton.py": 11,
}


def test_every_fix_site_is_known():
    found = {}
    for path in sorted((ROOT / "checks").glob("*.py")):
        n = sum(1 for line in path.read_text().splitlines() if SITE.search(line) and not line.lstrip().startswith("def "))
        if n:
            found[path.name] = n
    assert found == SITES


def produced() -> list[Fix]:
    """The fixes the checks print, built by the checks themselves where a fact set is short, else
    by the same helpers with the arguments each site passes."""
    out: list[Fix] = []
    recorded = {"torch": {"name": "torch", "version": "2.13.0+cpu"}, "numpy": {"name": "numpy", "version": "1.26.4"}}
    live = {"torch": {"name": "torch", "version": "2.11.0+cu130"}, "numpy": {"name": "numpy", "version": "2.1.0"}}
    live["pytorch-triton"] = {"name": "pytorch-triton", "version": "3.6.0"}
    base = {"facts": {"dists": recorded}}
    row = run_check(baseline.distributions, baseline=base, dists=live, python_info=PY)
    out += row.fixes
    out.append(baseline.restore_fix(PY, "nvidia-cublas-cu12", "12.8.4.1", "--force-reinstall"))
    for distro in ("ubuntu", "fedora"):
        out += _fixes.system_package({"id": distro}, apt="libgomp1", dnf="libgomp")
        out += _fixes.system_package({"id": distro}, apt="python3.11-dev", dnf="python3-devel")
        out += _fixes.system_package({"id": distro}, apt="g++", dnf="gcc-c++")
    out.append(torch_checks._index_fix({"cuda_version": "12.8"}, PY))
    out.append(pip_fix(PY, "install", "--force-reinstall", "torch==2.13.0"))
    out.append(pip_fix(PY, "install", "--force-reinstall", "--no-cache-dir", "torch==2.13.0"))
    out.append(pip_fix(PY, "install", "numpy<2"))
    out.append(Fix((sys.executable, "-m", "compileall", "-q", "-j", "0", "SITE"), scope="venv"))
    out += [pip_fix(PY, "install", "--force-reinstall", "--no-deps", "triton==3.6.0"), pip_fix(PY, "install", "triton>=3.5,<3.7")]
    out += [
        pip_fix(PY, "uninstall", "-y", "triton", "pytorch-triton"),
        pip_fix(PY, "install", "--force-reinstall", "--no-deps", "triton==3.6.0"),
    ]
    out.append(Fix(("ldconfig",), scope="system", needs_root=True))
    out.append(pip_fix(PY, "install", "ninja"))
    for torch_version in ("2.9.0", "2.13.0+cpu", "2.11.0+cu130"):  # the companion fix, with torch's own index
        out.append(pip_fix(PY, "install", "--no-deps", *companions._index(torch_version), "torchaudio==2.9.0"))
    out += _fixes.directory_fix("TORCHINDUCTOR_CACHE_DIR", "/tmp/torchinductor-$(id -u)")
    for name, value in (
        ("CXX", "/usr/bin/g++"),
        ("CUDA_DEVICE_ORDER", "PCI_BUS_ID"),
        ("NCCL_P2P_DISABLE", "1"),
        ("CUDA_HOME", "/usr/local/cuda-12.8"),
        ("TRITON_CACHE_DIR", f"/tmp/triton-{os.getuid()}"),
        ("CC", "/usr/bin/gcc"),
        ("TRITON_LIBCUDA_PATH", "/usr/lib/x86_64-linux-gnu"),
        ("USER", str(os.getuid())),
        ("ODD", "a b'c"),  # quoting holds for any value
    ):
        out.append(env_fix(name, value))
    return out


FIXES = produced()


@pytest.mark.parametrize("fix", FIXES, ids=lambda f: f.command[:60])
def test_every_fix_parses_in_bash(fix):
    done = subprocess.run(["bash", "-n", "-c", fix.command], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def throwaway(tmp_path_factory) -> str:
    """An empty venv (no pip of its own): pip runs against it with --python."""
    where = tmp_path_factory.mktemp("throwaway") / "venv"
    venv.EnvBuilder(with_pip=False).create(where)
    return str(where / "bin" / "python")


def _pip(fix: Fix, throwaway: str) -> subprocess.CompletedProcess:
    args = list(fix.argv[3:])
    if args[0] == "install":
        # No network here: resolve against the local wheels only (an index URL is then unused,
        # but the options and requirements are parsed and resolved as pip would).
        args += ["--dry-run", "--no-index", "--find-links", "/opt/wheels"]
    return subprocess.run(
        [sys.executable, "-m", "pip", "--python", throwaway, "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


PIP = [f for f in FIXES if f.argv[1:3] == ("-m", "pip")]


@pytest.mark.parametrize("fix", PIP, ids=lambda f: f.command[:60])
@pytest.mark.slow
def test_pip_fixes_run_in_a_throwaway_venv(fix, throwaway):
    assert fix.argv[0] == sys.executable and fix.scope == "venv"  # the examined interpreter, never a bare pip
    done = _pip(fix, throwaway)
    err = done.stdout + done.stderr
    assert "no such option" not in err and "Invalid requirement" not in err and "usage:" not in err.lower(), err
    if fix.argv[3] == "uninstall":
        assert done.returncode == 0, err
    else:  # resolved, or the version is not among the local wheels: never a usage error
        assert done.returncode == 0 or "No matching distribution found" in err, err


def test_pip_local_versions_come_from_the_pytorch_index():
    for f in PIP:
        local = [a for a in f.argv if re.fullmatch(r"[\w.-]+==[\w.]+\+(cu\d+|rocm[\d.]+|cpu|xpu)", a)]
        for req in local:
            tag = req.rpartition("+")[2]
            assert f"https://download.pytorch.org/whl/{tag}" in f.argv, f.command


@pytest.mark.parametrize("fix", [f for f in FIXES if f.argv[0] == "export"], ids=lambda f: f.command)
def test_export_fixes_set_the_variable(fix):
    name, _, value = fix.argv[1].partition("=")
    done = subprocess.run(["bash", "-c", f'{fix.command} && printf %s "${name}"'], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == value


@pytest.mark.skipif(not shutil.which("apt-get"), reason="apt-get is not on this machine")
@pytest.mark.parametrize("fix", [f for f in FIXES if f.argv[0] == "apt-get"], ids=lambda f: f.command)
@pytest.mark.slow
def test_apt_fixes_simulate(fix):
    assert fix.needs_root
    done = subprocess.run([*fix.argv[:2], "-s", *fix.argv[2:]], capture_output=True, text=True, timeout=120)
    # -s simulates without root; a machine without package lists cannot locate the package
    assert done.returncode == 0 or "Unable to locate package" in done.stderr, done.stderr


def test_root_fixes_say_so():
    for f in FIXES:
        if f.argv[0] in ("apt-get", "dnf", "ldconfig"):
            assert f.needs_root and f.scope == "system", f.command


def test_compileall_fix_runs(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\n")
    (fix,) = [f for f in FIXES if "compileall" in f.argv]
    argv = [a if a != "SITE" else str(tmp_path) for a in fix.argv]
    assert subprocess.run(argv, capture_output=True).returncode == 0
    assert list((tmp_path / "__pycache__").glob("m.*.pyc"))


def test_the_catalogs_triton_pin_line_prints_the_pin(tmp_path):
    """Issue 30.7: `pip show torch | sed -n 's/^Requires: .*//p'` printed nothing."""
    info = tmp_path / "torch-2.11.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0\nRequires-Dist: filelock\n"
        'Requires-Dist: triton==3.6.0; platform_system == "Linux"\n'
    )
    (sig,) = [s for s in signatures.SIGNATURES if s.id == "triton.triton_key"]
    line = re.search(r"pins: (python -m pip install .*?) — ", sig.fix).group(1)
    assert subprocess.run(["bash", "-n", "-c", line]).returncode == 0
    shown = line.replace("python -m pip install", "printf %s", 1)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(["bash", "-c", shown], capture_output=True, text=True, env=env)
    assert done.stdout == "triton==3.6.0", done.stderr
