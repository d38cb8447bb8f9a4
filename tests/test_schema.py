"""The JSON envdoctor writes is a public contract: every JSON it produces validates against the
schema shipped in the package, and reports already on users' disks keep loading."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from envdoctor.core.report import SCHEMA_VERSION
from envdoctor.reporters import render
from envdoctor.reporters.json import from_dict, to_dict
from tests.conftest import run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "reports"
# Slow smoke tests (torch.compile, Triton builds) add nothing to the report's shape.
BROAD = ("--deselect", "smoke")


def _schema(name: str) -> dict:
    return json.loads(resources.files("envdoctor").joinpath("schema", f"{name}.schema.json").read_text())


def _validate(data, name: str = "report") -> None:
    jsonschema.Draft202012Validator(_schema(name), format_checker=jsonschema.FormatChecker()).validate(data)


@pytest.mark.parametrize("name", ["report", "diff", "list"])
def test_schemas_ship_in_the_package_and_are_valid(name):
    jsonschema.Draft202012Validator.check_schema(_schema(name))


def test_schema_major_matches_the_code():
    pattern = _schema("report")["properties"]["schema_version"]["pattern"]
    assert pattern.startswith(f"^{SCHEMA_VERSION.split('.')[0]}\\.")


@pytest.mark.slow
def test_check_format_json_validates():
    done = run_cli("check", *BROAD, "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(done.stdout)
    _validate(data)
    assert data["schema_version"] == SCHEMA_VERSION
    assert "env_vars" in data["facts"]


@pytest.mark.slow
def test_json_file_beside_another_format_validates_and_matches(tmp_path):
    j = tmp_path / "r.json"
    done = run_cli("check", "-s", "system,packages", "--format", "markdown", "--json", str(j), "--redact")
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(j.read_text())
    _validate(data)
    assert data["platform"]["hostname"] == "<host>"
    assert {r["id"] for r in data["results"]} >= {"system.environment", "packages.versions"}


@pytest.mark.slow
def test_report_with_plugin_error_row_validates(tmp_path):
    plug = tmp_path / "plugs"
    plug.mkdir()
    (plug / "broken.py").write_text("raise RuntimeError('boom at import')\n")
    done = run_cli("check", "-s", "system.python", "--checks-path", str(plug), "--format", "json")
    data = json.loads(done.stdout)
    _validate(data)
    assert any(r["status"] == "error" and r["id"].startswith("plugin.") for r in data["results"])


@pytest.mark.slow
def test_list_format_json_validates():
    done = run_cli("list", "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    _validate(rows, "list")
    assert any(r["id"] == "system.environment" for r in rows)


@pytest.mark.slow
@pytest.mark.parametrize(
    "a, b, code",
    [("v1.0-gpu-h200.json", "v1.0-gpu-h200-triton-mismatch.json", 1), ("v1.0-gpu-h200.json", "v1.0-gpu-h200.json", 0)],
)
def test_diff_format_json_validates(a, b, code):
    done = run_cli("diff", str(FIXTURES / a), str(FIXTURES / b), "--format", "json")
    assert done.returncode == code, done.stderr
    data = json.loads(done.stdout)
    _validate(data, "diff")
    assert data["identical"] is (code == 0 and a == b)


FIXTURE_FILES = sorted(FIXTURES.glob("*.json"))


def test_there_are_fixtures():
    assert len(FIXTURE_FILES) >= 4


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[p.name for p in FIXTURE_FILES])
def test_old_reports_keep_loading(path):
    """A report written by an earlier (or later minor) envdoctor validates, loads, renders in
    every format, and survives a round trip through the Report object."""
    data = json.loads(path.read_text())
    _validate(data)
    report = from_dict(data)
    assert len(report.results) == len(data["results"])
    for fmt in ("text", "json", "markdown", "junit"):
        out = render(report, fmt, verbose=True)
        assert out.strip()
    ET.fromstring(render(report, "junit").split("\n", 1)[1])
    again = to_dict(report)
    _validate(again)
    assert [r["status"] for r in again["results"]] == [r["status"] for r in data["results"]]
    assert again["schema_version"] == data["schema_version"]


@pytest.mark.parametrize(
    "breakage",
    [
        lambda d: d.pop("results"),
        lambda d: d["results"][0].update(status="broken"),
        lambda d: d.update(schema_version="2.0"),
        lambda d: d["summary"].pop("healthy"),
        lambda d: d["tool"].update(name="other"),
    ],
    ids=["no-results", "bad-status", "major-2", "no-healthy", "other-tool"],
)
def test_schema_rejects_what_it_must(breakage):
    data = json.loads((FIXTURES / "v1.0-gpu-h200.json").read_text())
    breakage(data)
    with pytest.raises(jsonschema.ValidationError):
        _validate(data)
