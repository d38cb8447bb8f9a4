"""Plugin discovery through real entry points and --checks-path (no mocking of imports)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import make_plugin

GOOD = """
from envdoctor import check, fact, ok

@fact("site_answer")
def site_answer():
    return 42

@check("site.answer", tags=("build",))
def answer(site_answer):
    '''The site answer is known'''
    return ok(f"the answer is {site_answer}")
"""

BAD = """
raise ImportError("libfrob.so.3: cannot open shared object file")
"""


def test_plugin_distribution_appears_in_list_and_report(cli_inproc, tmp_path):
    site = make_plugin(tmp_path / "site", "envdoctor-siteplugin", "envdoctor_siteplugin", GOOD, version="2.5")
    listing = cli_inproc("list", site=site)
    assert "site.answer" in listing.stdout
    assert "envdoctor-siteplugin 2.5 [envdoctor_siteplugin]" in listing.stdout
    r = cli_inproc("check", "--select", "site", "--format", "json", site=site)
    assert r.returncode == 0, r.stderr
    row = next(x for x in json.loads(r.stdout)["results"] if x["id"] == "site.answer")
    assert row["status"] == "pass" and row["message"] == "the answer is 42"
    assert row["source"].startswith("envdoctor-siteplugin 2.5")


def test_broken_plugin_is_one_error_row_and_breaks_nothing(cli_inproc, tmp_path):
    site = make_plugin(tmp_path / "site", "envdoctor-badplugin", "envdoctor_badplugin", BAD)
    assert cli_inproc("--help", site=site).returncode == 0
    listing = cli_inproc("list", site=site)
    assert listing.returncode == 0
    assert "system.python" in listing.stdout  # the built-ins still load
    assert "envdoctor-badplugin 1.0" in listing.stdout and "libfrob.so.3" in listing.stdout
    r = cli_inproc("check", "--select", "system.python", "--format", "json", site=site)
    rows = json.loads(r.stdout)["results"]
    errors = [x for x in rows if x["status"] == "error"]
    assert len(errors) == 1
    assert errors[0]["id"] == "plugin.envdoctor_badplugin"
    assert "envdoctor-badplugin 1.0" in errors[0]["message"] and "ImportError" in errors[0]["message"]
    assert any(x["id"] == "system.python" and x["status"] == "pass" for x in rows)
    assert r.returncode == 1  # an error row means the environment was not fully verified


def test_checks_path_modules_and_their_errors(cli_inproc, tmp_path):
    (tmp_path / "good.py").write_text(GOOD.replace("site.answer", "local.answer").replace("site_answer", "local_answer"))
    (tmp_path / "broken.py").write_text("def (:\n")
    (tmp_path / "_private.py").write_text("raise SystemExit('must not be imported')\n")
    r = cli_inproc("check", "--checks-path", str(tmp_path), "--select", "local", "--format", "json")
    rows = {x["id"]: x for x in json.loads(r.stdout)["results"]}
    assert rows["local.answer"]["status"] == "pass"
    assert rows["local.answer"]["source"] == f"path:{tmp_path / 'good.py'}"
    assert rows["plugin.path.broken"]["status"] == "error"
    assert "SyntaxError" in rows["plugin.path.broken"]["message"]


def test_missing_checks_path_is_reported(cli_inproc, tmp_path):
    r = cli_inproc("check", "--checks-path", str(tmp_path / "nope"), "--select", "system.python", "--format", "json")
    rows = json.loads(r.stdout)["results"]
    assert any(x["status"] == "error" and "is not a directory" in x["message"] for x in rows)


def test_duplicate_check_id_is_an_error_row(cli_inproc, tmp_path):
    (tmp_path / "dup.py").write_text(
        "from envdoctor import check, ok\n@check('system.python')\ndef again():\n    '''dup'''\n    return ok()\n"
    )
    r = cli_inproc("check", "--checks-path", str(tmp_path), "--select", "system.python", "--format", "json")
    rows = json.loads(r.stdout)["results"]
    assert any(x["status"] == "error" and "duplicate check id" in x["message"] for x in rows)


MISSPELT = """
from envdoctor import check, fact, ok

@fact("site_gpus")
def site_gpus(gpuz):
    return gpuz

@check("site.gpus", tags=("build",))
def site_gpu_count(gpuss):
    '''The site's GPUs are all there'''
    return ok(str(gpuss))

@check("site.fine", tags=("build",))
def fine(env):
    '''A check whose parameters are all known'''
    return ok("fine")
"""


@pytest.mark.slow
def test_unknown_fact_parameters_are_error_rows_at_load_time(cli_inproc, tmp_path):
    site = make_plugin(tmp_path / "site", "envdoctor-typo", "envdoctor_typo", MISSPELT)
    listing = cli_inproc("list", site=site)
    assert listing.returncode == 0
    lines = {line.split()[0]: line for line in listing.stdout.splitlines() if line.strip()}
    assert "ERROR" in lines["site.gpus"] and "'gpuss' (did you mean 'gpus'?)" in lines["site.gpus"]
    assert "envdoctor-typo 1.0 [envdoctor_typo]" in lines["site.gpus"]
    assert "ERROR" in lines["plugin.fact.site_gpus"] and "'gpuz'" in lines["plugin.fact.site_gpus"]
    assert "ERROR" not in lines["site.fine"]
    assert "2 plugin problem(s)" in listing.stdout
    # Reported in every run, whatever is selected; selecting the broken check is no usage error.
    for sel in ("system.python", "site.gpus"):
        r = cli_inproc("check", "--select", sel, "--format", "json", site=site)
        assert r.returncode == 1, r.stderr
        rows = {x["id"]: x for x in json.loads(r.stdout)["results"]}
        assert rows["site.gpus"]["status"] == "error" and rows["site.gpus"]["source"].startswith("envdoctor-typo 1.0")
        assert rows["plugin.fact.site_gpus"]["status"] == "error"
        assert len([x for x in rows.values() if x["status"] == "error"]) == 2


def test_plugin_fact_reusing_a_builtin_fact_name_is_an_error_row(cli_inproc, tmp_path):
    (tmp_path / "clash.py").write_text(
        "from envdoctor import check, fact, ok\n"
        "@fact('python_info')\ndef mine():\n    return {'version': 'fake'}\n"
        "@check('local.py', tags=('build',))\ndef uses(python_info):\n    '''Python known'''\n    return ok(python_info['version'])\n"
    )
    r = cli_inproc("check", "--checks-path", str(tmp_path), "--select", "local", "--format", "json")
    rows = {x["id"]: x for x in json.loads(r.stdout)["results"]}
    clash = rows["plugin.fact.python_info"]
    assert clash["status"] == "error" and f"path:{tmp_path / 'clash.py'}" in clash["message"] and "built-in" in clash["message"]
    assert rows["local.py"]["status"] == "pass" and rows["local.py"]["message"] != "fake"  # the built-in fact was kept
    listing = cli_inproc("list", "--checks-path", str(tmp_path))
    assert "plugin.fact.python_info" in listing.stdout and "ERROR" in listing.stdout


def test_duplicate_check_id_names_both_sources_and_keeps_the_first(cli_inproc, tmp_path):
    (tmp_path / "dup.py").write_text(
        "from envdoctor import check, ok\n@check('system.python')\ndef again():\n    '''dup'''\n    return ok('impostor')\n"
    )
    r = cli_inproc("check", "--checks-path", str(tmp_path), "--select", "system.python", "--format", "json")
    rows = {x["id"]: x for x in json.loads(r.stdout)["results"]}
    dup = rows["plugin.duplicate.system.python"]
    assert dup["status"] == "error" and "built-in" in dup["message"] and f"path:{tmp_path / 'dup.py'}" in dup["message"]
    assert rows["system.python"]["status"] == "pass" and rows["system.python"]["message"] != "impostor"
    listing = cli_inproc("list", "--checks-path", str(tmp_path))
    assert "plugin.duplicate.system.python" in listing.stdout


def test_builtin_checks_have_no_registry_problems():
    from envdoctor.core.registry import discover

    reg = discover()
    assert reg.problems == []
    assert len(reg.checks) > 50


def test_entry_points_can_be_given_in_process(tmp_path, monkeypatch):
    """Issue 23 item 6: registry tests need no dist-info directory and no subprocess."""
    import importlib.metadata as md

    from envdoctor.core.registry import Registry, load_entry_points

    (tmp_path / "inproc_plugin.py").write_text(
        "from envdoctor import check, ok\n\n@check('inproc.one')\ndef one():\n    '''In process'''\n    return ok('yes')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry()
    load_entry_points(
        reg,
        eps=[md.EntryPoint("inproc", "inproc_plugin", "envdoctor.checks"), md.EntryPoint("gone", "no_such_module_xyz", "envdoctor.checks")],
    )
    assert [c.id for c in reg.checks] == ["inproc.one"]
    assert [p.id for p in reg.problems] == ["plugin.gone"] and "No module named 'no_such_module_xyz'" in reg.problems[0].message
