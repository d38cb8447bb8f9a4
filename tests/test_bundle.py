"""``envdoctor bundle``: the archive, its repros run on their own, nothing secret in any member,
its size, and ``triage`` / ``diff`` reading it.

The real-stack tests run the compile smoke twice (about 40 s each on a quiet machine): once on a
PATH without any C/C++ compiler (CC and CXX unset), where the bundle's repro_smoke.compile.py,
run on its own, must fail as the smoke did; once as the machine is, where the bundle holds no repro.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.conftest import make_plugin, run_cli
from tests.secret_shapes import ENV_SECRETS, SHAPES

CANARIES = tuple(c for _, _, cs in SHAPES for c in cs) + tuple(c for _, cs in ENV_SECRETS.values() for c in cs)
ROOT = "envdoctor-bundle"


def members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path, "r:gz") as tar:
        out = {}
        for info in tar.getmembers():
            assert info.isfile() and info.name.startswith(f"{ROOT}/"), info.name
            out[info.name.split("/", 1)[1]] = tar.extractfile(info).read()
        return out


def assert_no_canary(files: dict[str, bytes]) -> None:
    for name, data in files.items():
        text = data.decode("utf-8", "replace")
        leaked = [c for c in CANARIES if c in text]
        assert not leaked, f"{leaked[:3]} leaked in {name}"


def assert_manifest_true(files: dict[str, bytes]) -> dict:
    """Every member but the manifest is listed with its real size and sha256; 1 MB in all."""
    manifest = json.loads(files["manifest.json"])
    listed = {f["name"]: f for f in manifest["files"]}
    assert set(listed) == set(files) - {"manifest.json"}
    for name, data in files.items():
        if name != "manifest.json":
            assert listed[name]["bytes"] == len(data) and listed[name]["sha256"] == hashlib.sha256(data).hexdigest(), name
    assert sum(len(d) for d in files.values()) <= manifest["limit_bytes"] == 1024 * 1024
    return manifest


def no_compiler_env() -> dict[str, str]:
    """This environment with PATH holding only the Python interpreter's directory (no gcc, g++,
    cc or clang) and CC/CXX unset, as tests/test_profiles.py simulates a machine without a compiler."""
    env = {k: v for k, v in os.environ.items() if k not in ("CC", "CXX")}
    env["PATH"] = os.path.dirname(sys.executable)
    return env


def bundle(tmp_path: Path, *args: str, env: dict | None = None, name: str = "b.tar.gz") -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path / name
    done = subprocess.run(
        [sys.executable, "-m", "envdoctor", "bundle", "-o", str(out), *args],
        capture_output=True,
        text=True,
        env=env if env is not None else dict(os.environ),
        timeout=600,
        cwd=str(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"wrote {out}" in done.stdout
    return out, done


# ---------------------------------------------------------------- on the real stack


@pytest.fixture(scope="module")
def nocc_bundle(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("nocc")
    env = {**no_compiler_env(), **{k: v for k, (v, _) in ENV_SECRETS.items()}}
    return bundle(d, "-s", "smoke.compile,system.environment", env=env)[0]


@pytest.fixture(scope="module")
def healthy_bundle(tmp_path_factory) -> Path:
    return bundle(tmp_path_factory.mktemp("healthy"), "-s", "smoke.compile,system.environment")[0]


@pytest.mark.slow
def test_without_a_compiler_the_repro_fails_on_its_own_as_the_smoke_did(nocc_bundle, tmp_path):
    files = members(nocc_bundle)
    manifest = assert_manifest_true(files)
    assert [r["check"] for r in manifest["repros"]] == ["smoke.compile"] and manifest["no_repro"] is None
    log = files["smoke.compile.log"].decode()
    assert "# smoke.compile: fail" in log and "compiler" in log
    error = next(ln for ln in reversed(log.splitlines()) if "InvalidCxxCompiler" in ln)  # the probe's own error line
    script = tmp_path / "repro_smoke.compile.py"  # alone in a directory of its own
    script.write_bytes(files["repro_smoke.compile.py"])
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=no_compiler_env(), timeout=600, cwd=str(tmp_path)
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert error.strip() in done.stderr and "g++" in done.stderr
    assert "step: torch.compile of the function on cpu" in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["repro_smoke.compile.py"]  # its caches are gone


@pytest.mark.slow
def test_no_secret_of_the_environment_reaches_any_member(nocc_bundle):
    files = members(nocc_bundle)
    assert_no_canary(files)
    env = files["env.txt"].decode()
    assert "PIP_INDEX_URL=https://***@pkgs.example.com/simple" in env and "MYSQL_PWD" not in env  # allowlisted only
    assert f"PATH={os.path.dirname(sys.executable)}" in env


@pytest.mark.slow
def test_a_healthy_machine_has_no_repro_and_says_so(healthy_bundle):
    files = members(healthy_bundle)
    manifest = assert_manifest_true(files)
    assert manifest["repros"] == [] and manifest["no_repro"].startswith("No repro: no smoke failed or errored")
    assert not [n for n in files if n.startswith("repro_") or n.endswith(".log")]
    assert "No repro: no smoke failed or errored on this machine" in files["README.md"].decode()
    assert json.loads(files["report.json"])["summary"]["healthy"] is True


@pytest.mark.slow
def test_triage_reads_a_bundle(nocc_bundle):
    done = run_cli("triage", str(nocc_bundle))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Likely cause" in done.stdout and "no working C++ compiler" in done.stdout
    assert "envdoctor_json" in done.stdout.splitlines()[1]


@pytest.mark.slow
def test_diff_takes_the_bundles_report(healthy_bundle, nocc_bundle):
    done = run_cli("diff", str(healthy_bundle), str(nocc_bundle), "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    changed = json.dumps(json.loads(done.stdout))
    assert "smoke.compile" in changed


# ---------------------------------------------------------------- secrets in every member, sizes


LEAKY = '''
import json, os
from envdoctor import check, fail

SHAPES = json.loads({shapes!r})


@check("leak.repro", repro="repro/leak.py")
def leaky():
    """A failing check with a repro, printing every secret shape"""
    env = " ".join(os.environ.get(k, "") for k in {names!r})
    return fail(
        "failed: " + " ; ".join(SHAPES[:30]) + " env " + env,
        hint=" ; ".join(SHAPES[30:]),
        details={{"output": "\\n".join(SHAPES) + "\\n" + env, "traceback": "Traceback\\nRuntimeError: " + env, "more": SHAPES}},
    )
'''

FAKE_SMI = """#!{python}
import os, sys
sys.stdout.write("GPU 00000000:17:00.0\\n    Product Name : NVIDIA H200\\n" * 60000)
print("    Serial Number : " + os.environ["MYSQL_PWD"] + " " + {shape!r})
print("    Last line of nvidia-smi -q")
"""

FAKE_BUG_REPORT = """#!{python}
import gzip, os, sys
out = sys.argv[sys.argv.index("--output-file") + 1]
assert "--safe-mode" in sys.argv
with gzip.open(out + ".gz", "wt") as f:
    f.write("dmesg line\\n" * 300000)
    f.write("kernel: NVRM: Xid 79, GPU has fallen off the bus " + os.environ["DATABASE_URL"] + "\\n")
"""


@pytest.fixture()
def leaky_setup(tmp_path) -> tuple[Path, dict]:
    plugins = tmp_path / "plugins"
    (plugins / "repro").mkdir(parents=True)
    shapes = [t for _, t, _ in SHAPES]
    (plugins / "leaky.py").write_text(LEAKY.format(shapes=json.dumps(shapes), names=sorted(ENV_SECRETS)))
    env_values = [v for v, _ in ENV_SECRETS.values()]
    (plugins / "repro" / "leak.py").write_text("".join(f"# {s}\n" for s in shapes + env_values) + "print('repro')\n")
    fake = tmp_path / "bin"
    fake.mkdir()
    for name, src in (("nvidia-smi", FAKE_SMI), ("nvidia-bug-report.sh", FAKE_BUG_REPORT)):
        (fake / name).write_text(src.format(python=sys.executable, shape=shapes[0]))
        (fake / name).chmod(0o755)
    env = {**os.environ, **{k: v for k, (v, _) in ENV_SECRETS.items()}, "TORCH_SHAPE_URL": shapes[0]}
    env["PATH"] = f"{fake}{os.pathsep}{os.path.dirname(sys.executable)}"
    return plugins, env


@pytest.mark.slow
def test_every_shape_hidden_in_every_member_and_long_logs_tailed(leaky_setup, tmp_path):
    plugins, env = leaky_setup
    args = ("--checks-path", str(plugins), "-s", "leak,system.environment", "--nvidia-bug-report")
    path, done = bundle(tmp_path, *args, env=env)
    assert "1 repro(s): repro_leak.repro.py" in done.stdout
    files = members(path)
    assert {"repro_leak.repro.py", "leak.repro.log", "nvidia-smi-q.txt", "nvidia-bug-report.log", "env.txt"} <= set(files)
    assert_no_canary(files)
    manifest = assert_manifest_true(files)
    cuts = {f["name"]: f.get("cut", "") for f in manifest["files"]}
    for name, last in (("nvidia-smi-q.txt", "Last line of nvidia-smi -q"), ("nvidia-bug-report.log", "GPU has fallen off the bus")):
        text = files[name].decode()
        assert cuts[name].startswith("the first ") and text.startswith(f"[envdoctor bundle: {cuts[name]}]"), name
        assert text.rstrip().endswith(last) or last in text.splitlines()[-1], name
    assert "TORCH_SHAPE_URL=" in files["env.txt"].decode()
    assert os.access(path, os.R_OK) and path.stat().st_size <= 1024 * 1024
    with tarfile.open(path, "r:gz") as tar:
        assert tar.getmember(f"{ROOT}/repro_leak.repro.py").mode == 0o755


@pytest.mark.slow
def test_a_check_without_a_declared_repro_is_named_but_gets_none(tmp_path):
    plugins = tmp_path / "p"
    plugins.mkdir()
    (plugins / "plain.py").write_text(
        'from envdoctor import check, fail\n\n\n@check("plain.fails")\ndef f():\n    """Fails, no repro"""\n    return fail("broken")\n'
    )
    path, done = bundle(tmp_path, "--checks-path", str(plugins), "-s", "plain")
    files = members(path)
    manifest = assert_manifest_true(files)
    assert manifest["repros"] == [] and manifest["failing_without_repro"] == ["plain.fails"]
    assert "no repro" in done.stdout and "plain.fails" in files["README.md"].decode() and "nvidia-smi-q.txt" in files


@pytest.mark.slow
def test_an_installed_plugins_contained_check_ships_its_repro(tmp_path):
    # Entry-point plugins run contained (a host process describes their checks): the repro survives.
    root = make_plugin(
        tmp_path / "site",
        "envdoctor-mysite",
        "envdoctor_mysite",
        'from envdoctor import check, fail\n\n\n@check("mysite.x", repro="repro/x.py")\n'
        'def x():\n    """Fails, with a repro"""\n    return fail("broken here")\n',
    )
    (root / "repro").mkdir()
    (root / "repro" / "x.py").write_text("import sys\n\nsys.exit(1)\n")
    env = {**os.environ, "PYTHONPATH": str(root)}
    path, done = bundle(tmp_path, "-s", "mysite", env=env)
    files = members(path)
    assert "1 repro(s): repro_mysite.x.py" in done.stdout
    assert files["repro_mysite.x.py"].decode().endswith("import sys\n\nsys.exit(1)\n")


def test_every_smoke_declares_a_repro_that_stands_alone(tmp_path):
    from envdoctor.commands.bundle import repro_script
    from envdoctor.core.registry import discover

    smokes = [c for c in discover(()).checks if "smoke" in c.tags]
    assert smokes and all(c.repro and Path(c.repro).is_file() for c in smokes), [c.id for c in smokes if not c.repro]
    allowed = {"os", "sys", "shutil", "tempfile", "torch", "triton", "triton.language", "torch_xla", "torch_xla.core.xla_model"}
    allowed.add("torch_xla.runtime")
    for c in smokes:
        script = repro_script(c.repro)
        tree = ast.parse(script)
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert imported <= allowed, (c.id, imported - allowed)  # no envdoctor, no helper module left to find
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert {"run_in_fresh_caches", "no_gpu"} & names <= defined, c.id


@pytest.mark.slow
def test_a_shipped_repro_runs_alone_and_cleans_its_caches(tmp_path):
    # The Triton repro under the interpreter (this CPU machine): exact, and its caches removed.
    from envdoctor.commands.bundle import repro_script
    from envdoctor.core.registry import discover

    spec = next(c for c in discover(()).checks if c.id == "smoke.triton")
    script = tmp_path / "alone" / "repro_smoke.triton.py"
    script.parent.mkdir()
    script.write_text(repro_script(spec.repro))
    caches = tmp_path / "caches"
    env = {**os.environ, "TRITON_CACHE_DIR": str(caches)}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600, cwd=str(script.parent))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok: max error 0" in done.stdout and list(caches.iterdir()) == []
    assert sorted(p.name for p in script.parent.iterdir()) == ["repro_smoke.triton.py"]


# ---------------------------------------------------------------- hostile bundles


def _tar_gz(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize(
    "data, said",
    [
        (gzip.compress(b"just some gzipped text\n" * 10), "not a readable envdoctor bundle"),
        (_tar_gz({"other/x.txt": b"hello"}), "without an envdoctor bundle's manifest.json"),
        (_tar_gz({f"{ROOT}/big.log": b"\0" * (9 * 1024 * 1024), f"{ROOT}/manifest.json": b"{}"}), "unpacks to more than 8 MB"),
        (b"\x1f\x8b" + os.urandom(2000), "not a readable envdoctor bundle"),
    ],
    ids=["gzip-text", "no-manifest", "bomb", "garbage"],
)
def test_triage_and_diff_refuse_what_is_not_a_bundle_in_one_line(tmp_path, data, said):
    path = tmp_path / "x.tar.gz"
    path.write_bytes(data)
    for args in (("triage", str(path)), ("diff", str(path), str(path))):
        done = run_cli(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert said in done.stderr and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_the_reader_takes_only_files_under_the_bundle_folder():
    from envdoctor.sources.bundle import members as read

    data = _tar_gz({f"{ROOT}/manifest.json": b"{}", f"{ROOT}/a.log": b"x", "../evil.log": b"y", f"{ROOT}/sub/b.log": b"z"})
    assert set(read(data)) == {"manifest.json", "a.log"}


def test_tail_keeps_the_last_lines_and_says_the_cut():
    from envdoctor.commands.bundle import tail

    text = "".join(f"line {i}\n" for i in range(10000))
    kept, cut = tail(text, 1000)
    assert len(kept) <= 1000 and kept.decode().rstrip().endswith("line 9999")
    assert kept.decode().startswith(f"[envdoctor bundle: {cut}]\nline ") and cut.startswith("the first ")
    assert tail("short\n", 1000) == (b"short\n", "")


def test_a_bug_report_cut_short_keeps_what_it_holds():
    from envdoctor.commands.bundle import last_bytes

    packed = gzip.compress(b"".join(b"line %d\n" % i for i in range(200000)))
    got = last_bytes(gzip.open(io.BytesIO(packed[: len(packed) // 2])), 1000)
    assert len(got) == 1000 and b"line 199999" not in got and got.count(b"line ") > 50  # the tail up to the cut
    assert last_bytes(gzip.open(io.BytesIO(packed)), 1000).endswith(b"line 199999\n")


@pytest.mark.slow
def test_redact_hides_identities_in_every_member(tmp_path):
    import socket

    uuid = "GPU-3f1c2a9e-8b7d-4c6e-9a51-2d0e7f4b1c93"
    host, home = socket.gethostname(), os.path.expanduser("~")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text(f"#!{sys.executable}\nprint('GPU UUID : {uuid}\\nhost {host} home {home}/x')\n")
    (fake / "nvidia-smi").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.path.dirname(sys.executable)}"}
    plain, _ = bundle(tmp_path, "-s", "system.environment", env=env, name="plain.tar.gz")
    assert uuid in members(plain)["nvidia-smi-q.txt"].decode()  # an identity, not a secret: kept without --redact
    redacted, _ = bundle(tmp_path, "-s", "system.environment", "--redact", env=env, name="redacted.tar.gz")
    files = members(redacted)
    assert "GPU UUID : <gpu-uuid-1>" in files["nvidia-smi-q.txt"].decode() and "home <home>/x" in files["nvidia-smi-q.txt"].decode()
    for name, data in files.items():
        text = data.decode()
        assert uuid not in text and home + "/" not in text and f"host {host} " not in text, name
    assert_manifest_true(files)


def test_a_check_id_never_becomes_a_path_in_the_archive(tmp_path):
    from types import SimpleNamespace

    from envdoctor.commands.bundle import build
    from envdoctor.core.api import Status
    from envdoctor.core.report import CheckOutcome, Report

    template = tmp_path / "t.py"
    template.write_text("print('x')\n")
    cid = "../../evil/x.y"
    report = Report("0.1.0", "2026-12-01T00:00:00+00:00", 1.0, {}, (CheckOutcome(cid, "t", Status.FAIL, "m"),))
    out = tmp_path / "b.tar.gz"
    out.write_bytes(build(report, [SimpleNamespace(id=cid, repro=str(template))], {}).archive())
    files = members(out)  # every member directly under envdoctor-bundle/
    assert [n for n in files if n.startswith("repro_") or n.endswith(".log")] == ["repro__.._evil_x.y.py", "_.._evil_x.y.log"]
