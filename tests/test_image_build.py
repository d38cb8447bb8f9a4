"""docker/Dockerfile built and run for real, with Debian's dockerd started by hand (no systemd, no
iptables, no bridge; the engine that runs a HEALTHCHECK on its own, which buildah/podman do not
without systemd timers). No registry is reachable here, so the base image is a debootstrap'd
Debian bookworm (Python 3.11, like the local CPU torch 2.13 wheel) imported into the engine, and
torch, envdoctor and its dependencies come from a wheelhouse copied into the build context.

What is shown: the build runs `envdoctor check --profile build`, the runtime-user rehearsal
(`--as-user`) and records the baseline; the running container's HEALTHCHECK reaches `healthy`;
a derived image whose runtime user cannot write its Inductor cache fails its build with
envdoctor's reason in the engine's output; a file of torch changed in the running container
turns the HEALTHCHECK `unhealthy` with the baseline check's reason in the health log.

Needs root, `dockerd` and `debootstrap` (Debian's docker.io and debootstrap: `.ci/run` installs
them) and the local torch wheel; skipped with the reason otherwise. Slow (about 5-10 minutes).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.components import absent
from tests.conftest import REPO

pytestmark = pytest.mark.slow

WORK = Path(os.environ.get("ENVDOCTOR_IMAGE_WORK", "/var/tmp/envdoctor-image"))
TORCH_WHEELS = sorted(glob.glob("/opt/wheels/torch-2.13.0+cpu-cp311-*.whl"))
BASE = "localhost/bookworm-python:envdoctor-ci"
IMAGE = "localhost/envdoctor-ci:cpu"


def _missing() -> str:
    if os.geteuid() != 0:
        return "building images needs root"
    for tool in ("dockerd", "docker", "debootstrap"):
        if not shutil.which(tool):
            return f"{tool} is not installed (apt-get install docker.io debootstrap)"
    if not TORCH_WHEELS:
        return "the local CPU torch 2.13.0 wheel for Python 3.11 is not in /opt/wheels"
    return ""


def sh(
    *argv: str, env: dict | None = None, timeout: float = 900, check: bool = True, input: str | None = None
) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, input=input)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def _rootfs() -> Path:
    """A minimal Debian bookworm, made once per machine and kept for later runs."""
    root = WORK / "rootfs"
    if (root / "etc" / "debian_version").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    mirror = "http://deb.debian.org/debian"
    sources = Path("/etc/apt/sources.list.d/debian.sources")
    if sources.exists():
        mirror = next((ln.split()[1] for ln in sources.read_text().splitlines() if ln.startswith("URIs:")), mirror)
    sh("debootstrap", "--variant=minbase", "bookworm", str(root), mirror, timeout=900)
    return root


class Dockerd:
    """dockerd started by hand in its own directories, stopped by its pid."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sock = root / "docker.sock"
        self.env = {**os.environ, "DOCKER_HOST": f"unix://{self.sock}", "DOCKER_BUILDKIT": "0"}
        root.mkdir(parents=True, exist_ok=True)
        self.log = open(root / "dockerd.log", "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            ["dockerd", "--iptables=false", "--bridge=none", "--storage-driver=overlay2", f"--data-root={root / 'data'}",
             f"--exec-root={root / 'exec'}", f"--pidfile={root / 'dockerd.pid'}", "-H", f"unix://{self.sock}"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        end = time.monotonic() + 60
        while sh("docker", "info", env=self.env, check=False).returncode != 0:
            if self.proc.poll() is not None or time.monotonic() > end:
                self.stop()
                raise AssertionError(f"dockerd did not start: {(root / 'dockerd.log').read_text()[-2000:]}")
            time.sleep(0.3)

    def docker(self, *args: str, **kw) -> subprocess.CompletedProcess:
        return sh("docker", *args, env=self.env, **kw)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        subprocess.run(["umount", str(self.root / "exec" / "netns" / "default")], capture_output=True)
        self.log.close()


def _wheelhouse(into: Path, src: Path) -> None:
    """torch from local disk, envdoctor built from ``src`` (a copy of the checkout: building in
    the checkout itself would leave a build/ directory there), the dependencies of both."""
    into.mkdir(parents=True, exist_ok=True)
    for w in TORCH_WHEELS:
        shutil.copy(w, into)
    pip = [sys.executable, "-m", "pip"]
    sh(*pip, "wheel", "-q", "--no-deps", "-w", str(into), str(src))
    sh(*pip, "download", "-q", "-d", str(into), "--only-binary=:all:", f"--find-links={into}", "torch==2.13.0", "click", "packaging",
       "psutil", "distro", "nvidia-ml-py", "setuptools>=64")  # fmt: skip


def _context(tmp: Path) -> Path:
    """The repository as the Dockerfile's context (the files git tracks or would track) plus the
    wheelhouse."""
    ctx = tmp / "ctx"
    ctx.mkdir()
    files = sh("git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout.split("\0")
    for f in filter(None, files):
        src = REPO / f
        if src.is_file():
            (ctx / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, ctx / f)
    _wheelhouse(ctx / "docker" / "wheelhouse", ctx)
    return ctx


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    why = _missing()
    if why:
        absent(why)
    rootfs = _rootfs()
    d = Dockerd(WORK / "dockerd")  # its layers stay for the next run on this machine
    try:
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        subprocess.run(["docker", "import", "-", BASE + "-raw"], stdin=tar.stdout, env=d.env, check=True, capture_output=True)
        tar.wait()
        base = tmp_path_factory.mktemp("base")
        (base / "Dockerfile").write_text(f'FROM {BASE}-raw\nCMD ["/bin/bash"]\n')
        d.docker("build", "-q", "-t", BASE, str(base))
        yield d
    finally:
        d.stop()


BUILD_ARGS = ("--build-arg", f"BASE={BASE}", "--build-arg", "PIP_ARGS=--no-index", "--build-arg", "TORCH=torch==2.13.0",
              "--build-arg", "CONFIG=docker/ci-cpu.toml", "--build-arg", "HEALTH_PROFILE=build",
              # Two CPU compiles at once (root's and the runtime user's) on a 2-core machine.
              "--build-arg", "CHECK_TIMEOUT=900")  # fmt: skip


@pytest.fixture(scope="module")
def image(engine, tmp_path_factory):
    ctx = _context(tmp_path_factory.mktemp("image"))
    # Debian's packages inside the build come from the mirror: the network is the host's.
    proc = engine.docker("build", "--network", "host", "-f", "docker/Dockerfile", "-t", IMAGE, *BUILD_ARGS, str(ctx), timeout=1800)
    return proc.stdout + proc.stderr


def _health(engine: Dockerd, cid: str) -> dict:
    return json.loads(engine.docker("inspect", "-f", "{{json .State.Health}}", cid).stdout)


def _wait_health(engine: Dockerd, cid: str, want: str, within: float = 300) -> dict:
    end = time.monotonic() + within
    while True:
        h = _health(engine, cid)
        if h.get("Status") == want or time.monotonic() > end:
            return h
        time.sleep(1)


def test_the_build_runs_the_doctor_the_rehearsal_and_records_the_baseline(image):
    # The build step passed (the build would have failed otherwise); its verdict line is there.
    warnings = [ln for ln in image.splitlines() if ln.startswith("  ! ")]
    assert "--profile build" in image and re.search(r"(HEALTHY|OK, with warnings): \d+ passed", image), image[-3000:]
    print("the build step's warnings:", warnings)
    assert "as UID 1000680000" in image or "1000680000" in image, image[-3000:]
    assert "recorded" in image, image[-3000:]


def test_the_running_image_becomes_healthy_and_a_drifted_torch_makes_it_unhealthy(engine, image):
    cid = engine.docker(
        "run", "-d", "--health-interval=3s", "--health-start-period=0s", "--health-retries=1", IMAGE, "sleep", "600"
    ).stdout.strip()
    try:
        h = _wait_health(engine, cid, "healthy")
        assert h["Status"] == "healthy", json.dumps(h)[-3000:]
        # A `pip install` or an edit in the running container: one of torch's recorded files changes.
        engine.docker("exec", cid, "sh", "-c", "f=$(python3 -c 'import sysconfig;print(sysconfig.get_paths()[\"purelib\"])')/torch/version.py; "
                      "[ -f \"$f\" ] || f=/opt/venv/lib/python3.11/site-packages/torch/version.py; echo '# drift' >> \"$f\"")  # fmt: skip
        h = _wait_health(engine, cid, "unhealthy")
        assert h["Status"] == "unhealthy", json.dumps(h)[-3000:]
        last = h["Log"][-1]["Output"]
        assert "baseline" in last and "torch" in last, last
    finally:
        engine.docker("rm", "-f", cid, check=False)


def test_a_runtime_user_without_a_writable_cache_fails_the_build_with_envdoctors_reason(engine, image, tmp_path):
    (tmp_path / "Dockerfile").write_text(
        f"FROM {IMAGE}\n"
        "RUN mkdir -p /opt/root-only-cache && chmod 0755 /opt/root-only-cache\n"
        "ENV TORCHINDUCTOR_CACHE_DIR=/opt/root-only-cache\n"
        "RUN envdoctor check --profile build --config /etc/envdoctor.toml --as-user 1000680000\n"
    )
    proc = engine.docker("build", "--network", "host", "-t", IMAGE + "-broken", str(tmp_path), check=False, timeout=1800)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "/opt/root-only-cache" in out and "TORCHINDUCTOR_CACHE_DIR" in out, out[-4000:]
