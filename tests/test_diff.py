"""`envdoctor diff`: version changes, regressions, identical reports, and bad input."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from envdoctor.commands.diff import compare, load_report, render
from tests.conftest import run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "reports"
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

# A site-local check (as a cluster would pin the stack it validated): passes with triton 3.6.0.
SITE_PIN = textwrap.dedent(
    '''
    from envdoctor import check, fail, ok

    @check("site.triton_pin")
    def triton_pin(dists):
        """Triton is the version this site validated"""
        v = dists.get("triton", {}).get("version")
        if v == "3.6.0":
            return ok("triton 3.6.0")
        return fail(f"triton {v} is installed, the site validated 3.6.0", hint='pip install "triton==3.6.0"')
    '''
)


def _fake_triton(root: Path, version: str) -> Path:
    """A triton dist-info first on PYTHONPATH shadows the installed one for importlib.metadata."""
    info = root / f"triton-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: triton\nVersion: {version}\n")
    (info / "RECORD").write_text("")
    return root


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("diff")
    site = base / "site"
    site.mkdir()
    (site / "site_pin.py").write_text(SITE_PIN)
    out = {}
    fakes = {v: _fake_triton(base / f"fake-{v}", v) for v in ("3.6.0", "3.5.0")}
    for label, version in (("before", "3.6.0"), ("again", "3.6.0"), ("after", "3.5.0")):
        fake = fakes[version]
        path = base / f"{label}.json"
        done = run_cli(
            "check",
            "--checks-path",
            str(site),
            "-s",
            "site,packages.versions,system.python",
            "--format",
            "json",
            "-o",
            str(path),
            env={"PYTHONPATH": str(fake)},
        )
        assert done.returncode in (EXIT_OK, EXIT_FAILED), done.stderr
        out[label] = path
    return out


@pytest.mark.slow
def test_diff_names_version_change_and_regression(reports):
    done = run_cli("diff", str(reports["before"]), str(reports["after"]))
    assert done.returncode == EXIT_FAILED, done.stdout + done.stderr
    out = done.stdout
    assert "triton  3.6.0 → 3.5.0" in out or "triton 3.6.0 → 3.5.0" in " ".join(out.split())
    assert "Regressions (1)" in out
    assert "site.triton_pin: pass → fail: triton 3.5.0 is installed, the site validated 3.6.0" in out
    assert 'pip install "triton==3.6.0"' in out  # the fix travels with the regression
    assert out.rstrip().endswith("REGRESSED: 1 regression, 1 version change")


def test_diff_back_is_a_recovery_and_exits_0(reports):
    done = run_cli("diff", str(reports["after"]), str(reports["before"]))
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    assert "Recovered (1)" in done.stdout and "site.triton_pin: fail → pass" in done.stdout


@pytest.mark.slow
def test_diff_identical_reports_says_so(reports):
    done = run_cli("diff", str(reports["before"]), str(reports["before"]))
    assert done.returncode == EXIT_OK
    assert "no differences" in done.stdout
    # Two separate runs of the same machine differ in timings and messages only: the same.
    again = run_cli("diff", str(reports["before"]), str(reports["again"]))
    assert again.returncode == EXIT_OK and "no differences" in again.stdout, again.stdout


@pytest.mark.slow
def test_diff_json_and_markdown(reports):
    done = run_cli("diff", str(reports["before"]), str(reports["after"]), "--format", "json")
    assert done.returncode == EXIT_FAILED
    data = json.loads(done.stdout)
    assert data["regressions"] == 1 and data["identical"] is False
    assert {"name": "triton", "a": "3.6.0", "b": "3.5.0"} in data["versions"]
    assert data["checks"]["regressed"][0]["id"] == "site.triton_pin"
    md = run_cli("diff", str(reports["before"]), str(reports["after"]), "--format", "markdown")
    assert md.returncode == EXIT_FAILED
    assert md.stdout.startswith("### envdoctor diff: REGRESSED")
    assert "| triton | `3.6.0` | `3.5.0` |" in md.stdout
    assert "#### Regressions" in md.stdout


def _bad_inputs(tmp: Path, good: Path) -> dict[str, Path]:
    text = good.read_text()
    files = {
        "garbage": b"\x89PNG\r\n\x1a\n\x00\x00 not a report",
        "text": b"hello, this is not json\n",
        "truncated": text[: len(text) // 2].encode(),
        "empty": b"",
        "array": b"[1, 2, 3]",
        "other-json": json.dumps({"name": "some other tool", "results": "none"}).encode(),
        "bad-results": json.dumps({"schema_version": "1.0", "results": [{"status": "pass"}]}).encode(),
    }
    out = {}
    for name, data in files.items():
        p = tmp / f"{name}.json"
        p.write_bytes(data)
        out[name] = p
    out["missing"] = tmp / "no-such-file.json"
    out["directory"] = tmp
    return out


@pytest.mark.parametrize("which", ["garbage", "text", "truncated", "empty", "array", "other-json", "bad-results", "missing", "directory"])
@pytest.mark.parametrize("side", ["a", "b"])
def test_bad_input_is_one_clear_line_and_usage_exit(cli_inproc, which, side, reports, tmp_path):
    bad = _bad_inputs(tmp_path, reports["before"])[which]
    args = (str(bad), str(reports["before"])) if side == "a" else (str(reports["before"]), str(bad))
    done = cli_inproc("diff", *args)
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert lines[0].startswith("envdoctor diff: ") and bad.name in lines[0]
    if which == "truncated":
        assert "truncated" in lines[0]
    if which in ("array", "other-json", "bad-results"):
        assert "is not an envdoctor report" in lines[0]


def test_fixture_diff_gpu_machine():
    """The GPU machine's shape: pin mismatch after installing triton 3.5.0."""
    a = load_report(str(FIXTURES / "v1.0-gpu-h200.json"))
    b = load_report(str(FIXTURES / "v1.0-gpu-h200-triton-mismatch.json"))
    d = compare(a, b, "before.json", "after.json")
    assert [(c.name, c.a, c.b) for c in d.versions] == [("triton", "3.6.0", "3.5.0")]
    assert [m.id for m in d.regressed] == ["triton.torch_pin"]
    text = render(d, "text")
    assert "triton.torch_pin: pass → fail" in text


def test_gpu_and_driver_changes_between_machines():
    a = load_report(str(FIXTURES / "v1.0-gpu-h200.json"))
    b = json.loads(json.dumps(a))
    b["facts"]["driver"] = {"version": "570.86.15", "cuda_version": "12.8", "source": "nvml", "kernel_module": "570.86.15"}
    g = b["facts"]["gpus"][0]
    b["facts"]["gpus"] = [
        {**g, "name": "NVIDIA A100-SXM4-80GB", "cc": "8.0", "uuid": "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"},
        {**g, "index": 1, "name": "NVIDIA A100-SXM4-80GB", "cc": "8.0", "uuid": "GPU-aaaaaaaa-bbbb-cccc-dddd-ffffffffffff"},
    ]
    b["facts"]["torch_runtime"]["cudnn"] = 90100
    d = compare(a, b)
    names = {c.name: (c.a, c.b) for c in d.versions}
    assert names["NVIDIA driver"] == ("580.65.06", "570.86.15")
    assert names["driver CUDA (max supported)"] == ("13.0", "12.8")
    assert names["cuDNN (torch)"] == ("9.13.0", "9.1.0")
    assert [g["index"] for g in d.gpus_added] == [1]
    assert ("GPU 0 name", "NVIDIA H200", "NVIDIA A100-SXM4-80GB") in [(c.name, c.a, c.b) for c in d.gpus_changed]
    assert any("different UUID" in n for n in d.notes)
    assert not d.regressed


def test_driver_gone_is_a_version_change_not_unknown():
    a = load_report(str(FIXTURES / "v1.0-gpu-h200.json"))
    b = json.loads(json.dumps(a))
    b["facts"]["driver"] = {"unavailable": "no NVIDIA driver found (libnvidia-ml.so.1 not found)"}
    b["facts"]["gpus"] = {"unavailable": "no NVIDIA driver found (libnvidia-ml.so.1 not found)"}
    d = compare(a, b)
    assert ("NVIDIA driver", "580.65.06", "(none)") in [(c.name, c.a, c.b) for c in d.versions]
    assert [g["index"] for g in d.gpus_removed] == [0]


@pytest.mark.slow
def test_other_schema_versions_are_compared_with_a_note(tmp_path):
    done = run_cli("diff", str(FIXTURES / "v1.0-gpu-h200.json"), str(FIXTURES / "v1.4-future-minor.json"))
    assert done.returncode == EXIT_OK, done.stderr
    assert "note: the reports use schema versions 1.0 and 1.4" in done.stdout
    future = json.loads((FIXTURES / "v1.4-future-minor.json").read_text())
    future["schema_version"] = "2.0"
    p = tmp_path / "v2.json"
    p.write_text(json.dumps(future))
    done = run_cli("diff", str(FIXTURES / "v1.0-gpu-h200.json"), str(p))
    assert done.returncode == EXIT_OK, done.stderr
    assert "newer than this envdoctor reads" in done.stdout


def test_diff_redact_and_scrub(tmp_path):
    a = json.loads((FIXTURES / "v1.0-gpu-h200.json").read_text())
    a["platform"]["hostname"] = "node-canary-12"
    a["facts"]["env_vars"]["PIP_INDEX_URL"] = "https://me:hunter2hunter2@pypi.example.com/simple"  # an older envdoctor's file
    b = json.loads(json.dumps(a))
    b["facts"]["env_vars"]["PIP_INDEX_URL"] = "https://pypi.example.com/simple"
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    done = run_cli("diff", str(pa), str(pb), "--redact", "--format", "json")
    assert done.returncode == EXIT_OK
    assert "hunter2" not in done.stdout and "node-canary-12" not in done.stdout
    assert json.loads(done.stdout)["a"]["host"] == "<host>"
