"""Container images from the command line, as the Dockerfile drives them: ``envdoctor baseline``
at build time, ``check --baseline``/``--lock`` at run time, ``--as-user`` rehearsing the runtime
user. Real processes on this machine's own venv; drift is made in temporary PYTHONPATH
distributions and in copies of the baseline, never in the real torch."""

from __future__ import annotations

import json
import os
import pathlib
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time

import pytest

from envdoctor import BASELINE_SCHEMA
from envdoctor.core import inputs
from tests.checks.test_baseline import _write_dist
from tests.conftest import REPO, run_cli

LIB = "nvidia/fake/lib/libfake.so"


def _site(root: pathlib.Path) -> pathlib.Path:
    """A PYTHONPATH directory with a guarded distribution (its files digested) and a plain one."""
    site = root / "site"
    _write_dist(site, "nvidia-fake-cublas", "13.0.1", {LIB: b"\x7fELF" + b"a" * 60, "nvidia/fake/__init__.py": b""})
    _write_dist(site, "tinydist", "1.0", {"tinydist.py": b"X = 1\n"})
    return site


def _record(root: pathlib.Path, site: pathlib.Path) -> pathlib.Path:
    out = root / "baseline.json"
    proc = run_cli("baseline", str(out), env={"PYTHONPATH": str(site)})
    assert proc.returncode == 0, proc.stderr
    assert "nvidia-fake-cublas" in proc.stdout and "recorded" in proc.stdout
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """(site, baseline file) recorded once for the tests that do not touch the site's files."""
    root = tmp_path_factory.mktemp("image")
    site = _site(root)
    return site, _record(root, site)


def _check(site, *args, cwd=None) -> tuple[int, dict, str]:
    """Run `envdoctor check ARGS` with the site on PYTHONPATH: (exit code, rows by id, stderr)."""
    fd, report = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        proc = run_cli("check", "--format", "json", "-o", report, *args, env={"PYTHONPATH": str(site)}, cwd=cwd)
        with open(report, encoding="utf-8") as f:
            text = f.read()
    finally:
        os.unlink(report)
    rows = {r["id"]: r for r in json.loads(text)["results"]} if text else {}
    return proc.returncode, rows, proc.stderr


def _edited(baseline: pathlib.Path, dest: pathlib.Path, **versions: str) -> pathlib.Path:
    data = json.loads(baseline.read_text())
    for name, version in versions.items():
        data["facts"]["dists"][name]["version"] = version
    dest.write_text(json.dumps(data))
    return dest


@pytest.mark.slow
def test_an_unchanged_environment_passes_against_its_own_baseline(recorded):
    site, baseline = recorded
    data = json.loads(baseline.read_text())
    assert data["schema"] == BASELINE_SCHEMA and {"tinydist", "torch"} <= set(data["facts"]["dists"])
    code, rows, err = _check(site, "--baseline", str(baseline), "--select", "baseline")
    assert code == 0, (err, rows)
    # --baseline brings the checks that read the baseline; baseline.lock needs --lock.
    assert {"baseline.distributions", "baseline.files", "baseline.interpreter"} <= set(rows) and "baseline.lock" not in rows
    assert rows["baseline.files"]["status"] == "pass" and rows["baseline.distributions"]["status"] == "pass"


@pytest.mark.slow
def test_the_config_file_names_the_baseline_and_the_default_profile_runs_it(recorded, tmp_path):
    site, baseline = recorded
    shutil.copy(baseline, tmp_path / "b.json")
    (tmp_path / "envdoctor.toml").write_text('baseline = "b.json"\n')
    code, rows, err = _check(site, "--select", "system.python", cwd=str(tmp_path))
    assert code == 0, err
    assert rows["baseline.distributions"]["status"] == "pass" and rows["system.python"]["status"] == "pass"


@pytest.mark.slow
def test_a_changed_distribution_version_fails_by_name(recorded, tmp_path):
    site, baseline = recorded
    changed = _edited(baseline, tmp_path / "b.json", tinydist="0.9")
    code, rows, _ = _check(site, "--baseline", str(changed), "--select", "baseline")
    row = rows["baseline.distributions"]
    assert code == 1 and row["status"] == "fail"
    assert "tinydist is 1.0, recorded 0.9" in row["message"]
    assert "-m pip install --no-deps tinydist==0.9" in row["hint"]


@pytest.mark.slow
def test_a_swapped_torch_local_tag_fails_and_the_fix_names_the_cuda_index(recorded, tmp_path):
    site, baseline = recorded
    live = json.loads(baseline.read_text())["facts"]["dists"]["torch"]["version"]
    cuda = live.split("+")[0] + "+cu130"
    changed = _edited(baseline, tmp_path / "b.json", torch=cuda)
    code, rows, _ = _check(site, "--baseline", str(changed), "--select", "baseline.distributions")
    row = rows["baseline.distributions"]
    assert code == 1 and row["status"] == "fail"
    assert f"torch is {live}, recorded {cuda}" in row["message"]
    assert f"-m pip install --no-deps torch=={cuda} --index-url https://download.pytorch.org/whl/cu130" in row["hint"]


@pytest.mark.slow
def test_a_modified_file_of_a_guarded_distribution_fails_by_name(tmp_path):
    site = _site(tmp_path)
    baseline = _record(tmp_path, site)
    lib = site / LIB
    lib.write_bytes(b"\x7fELF" + b"b" * 60)  # same size, other content: overwritten by another package
    later = time.time_ns() + 10**9
    os.utime(lib, ns=(later, later))
    code, rows, _ = _check(site, "--baseline", str(baseline), "--select", "baseline")
    row = rows["baseline.files"]
    assert code == 1 and row["status"] == "fail"
    assert LIB in row["message"] and "nvidia-fake-cublas" in row["message"]
    assert "-m pip install --no-deps --force-reinstall nvidia-fake-cublas==13.0.1" in row["hint"]
    assert rows["baseline.distributions"]["status"] == "pass"


@pytest.mark.slow
def test_lock_pins_a_requirements_file(recorded, tmp_path):
    site, _ = recorded
    req = tmp_path / "requirements.txt"
    req.write_text("--index-url https://example.invalid/simple\ntinydist==0.9\nnvidia-fake-cublas==13.0.1\nrequests>=2\n")
    code, rows, _ = _check(site, "--lock", str(req), "--select", "baseline")
    assert set(rows) == {"baseline.lock"}  # --lock alone: no check that needs a baseline
    row = rows["baseline.lock"]
    assert code == 1 and row["status"] == "fail" and "tinydist is 1.0, recorded 0.9" in row["message"]
    assert "-m pip install --no-deps tinydist==0.9" in row["hint"] and "nvidia-fake-cublas" not in row["message"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--baseline", "missing.json"), "--baseline: cannot read the baseline missing.json: No such file or directory"),
        (("--baseline", "pins.txt"), "--baseline: pins.txt is not an envdoctor baseline"),
        (("--lock", "pins.txt"), "--lock: pins.txt pins nothing with =="),
        (("--as-user", "app"), "--as-user wants UID or UID:GID (numbers), got 'app'"),
    ],
)
@pytest.mark.slow
def test_bad_inputs_are_one_line_and_exit_2_before_the_run(tmp_path, args, words):
    (tmp_path / "pins.txt").write_text("requests>=2\n")
    proc = run_cli("check", *args, cwd=str(tmp_path))
    assert proc.returncode == 2 and words in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_as_user_needs_root_and_normalises_the_spec():
    with pytest.raises(ValueError, match="needs root"):
        inputs.validate(as_user="1000680000", euid=1000)
    assert inputs.validate(as_user=" 1000680000 ", euid=0).as_options() == {"as_user": "1000680000:0"}


UID = 12345  # no passwd entry here (asserted)
SYSTEM_PYTHON = "/usr/bin/python3"
# What envdoctor needs to run, without torch: the rehearsal's compile smoke then skips, and the
# run takes seconds (tests/checks/test_rehearsal.py covers the compile with torch).
RUNTIME_DEPS = ("click", "packaging", "psutil", "distro", "pynvml.py")


def _no_torch_path(root: pathlib.Path) -> str:
    """A PYTHONPATH every user can read: envdoctor, its checks, its dependencies and its entry
    point (this venv lives under /root, which the runtime UID cannot enter)."""
    shim = root / "shim"
    shim.mkdir()
    purelib = pathlib.Path(sysconfig.get_paths()["purelib"])
    (shim / "envdoctor_checks").symlink_to(REPO / "checks")
    for name in RUNTIME_DEPS:
        (shim / name).symlink_to(purelib / name)
    for info in purelib.glob("envdoctor-*.dist-info"):
        (shim / info.name).symlink_to(info)
    return os.pathsep.join([str(shim), str(REPO)])


@pytest.fixture
def open_tmp():
    d = pathlib.Path(tempfile.mkdtemp(prefix="envdoctor-test-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="switching users needs root (CI and the GPU machine run as root)")
@pytest.mark.slow
def test_as_user_rehearses_the_runtime_user_and_finds_the_unwritable_cache(open_tmp):
    with pytest.raises(KeyError):
        pwd.getpwuid(UID)
    if not os.path.exists(SYSTEM_PYTHON) or not os.path.realpath(SYSTEM_PYTHON).endswith(
        f"python{sys.version_info[0]}.{sys.version_info[1]}"
    ):
        pytest.skip(f"{SYSTEM_PYTHON} is missing or not Python {sys.version_info[0]}.{sys.version_info[1]}")
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_CACHE_DIR", "XDG_CACHE_HOME", "TORCH_EXTENSIONS_DIR")}
    env["PYTHONPATH"] = _no_torch_path(open_tmp)

    def rehearse(extra_env):
        argv = [SYSTEM_PYTHON, "-m", "envdoctor", "check", "--no-color", "-v", "--select", "system.python", "--as-user", str(UID)]
        return subprocess.run(argv, capture_output=True, text=True, env={**env, **extra_env}, cwd=str(open_tmp), timeout=240)

    bare = rehearse({})
    assert bare.returncode == 1, bare.stdout + bare.stderr
    assert f"as UID {UID}:0 (no passwd entry, HOME=/)" in bare.stdout
    assert "Triton cache /.triton/cache" in bare.stdout and "ENV TRITON_CACHE_DIR=/tmp/triton" in bare.stdout
    # The fix it names, as a Dockerfile's ENV gives it, makes the rehearsal pass.
    caches = open_tmp / "caches"
    caches.mkdir(mode=0o1777)
    caches.chmod(0o1777)
    fixed = rehearse(
        {"TRITON_CACHE_DIR": f"{caches}/triton", "XDG_CACHE_HOME": f"{caches}/.cache", "TORCH_EXTENSIONS_DIR": f"{caches}/ext"}
    )
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "every runtime path is writable" in fixed.stdout
