"""envdoctor.core.entry_points: the scan that spares triage importlib.metadata never says "none"
where importlib.metadata would find an entry point (real dist-info folders, no mocking)."""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import subprocess
import sys
import zipfile

import pytest

from envdoctor.core.entry_points import installed, may_declare
from tests.conftest import REPO, make_plugin

GROUP = "envdoctor.checks"


def _dist(root, name, entry_points: str | bytes | None) -> str:
    info = root / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if isinstance(entry_points, bytes):
        (info / "entry_points.txt").write_bytes(entry_points)
    elif entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)
    return str(root)


def _found(root: str) -> list[str]:
    """What importlib.metadata itself finds on ``root`` (the truth the scan must not undercut);
    an error it raises (an entry line it cannot read) counts as something found: the registry
    reports it as an error row."""
    try:
        return [ep.value for d in md.distributions(path=[root]) for ep in d.entry_points if ep.group == GROUP]
    except Exception as e:  # noqa: BLE001 - whatever it raises, the scan must have said "maybe"
        return [f"raised {type(e).__name__}"]


@pytest.mark.parametrize(
    ("text", "declares"),
    [
        (None, False),  # no entry_points.txt
        ("[console_scripts]\nfoo = foo:main\n", False),
        ("[envdoctor.checks.extra]\nx = y\n", False),  # another group that starts alike
        ("[envdoctor.checks]\nbuiltin = envdoctor_checks\n", False),  # the built-ins' own (older metadata)
        ("[envdoctor.checks]\nmine = my_checks\n", True),
        ("# a comment\n\n[envdoctor.checks]\n\n  mine=my_checks:mod  \n", True),
        ("[envdoctor.checks]\nbuiltin = envdoctor_checks\nmine = my_checks\n", True),
        ("[ENVDOCTOR.CHECKS]\nmine = my_checks\n", True),  # not the group for importlib.metadata: "maybe" is safe
        ("[envdoctor.checks]\nno equals sign\n", True),  # importlib.metadata raises: its error row, then
        ("[console_scripts]\nno equals sign\n", True),
        ("no section = yet\n", False),
    ],
)
def test_the_scan_says_maybe_wherever_importlib_metadata_finds_one(tmp_path, text, declares):
    root = _dist(tmp_path / "site", "somedist", text)
    assert may_declare(GROUP, "envdoctor_checks", [root]) is declares
    real = [v for v in _found(root) if v.split(":")[0].strip() != "envdoctor_checks"]
    assert not real or declares  # never "none" where importlib.metadata finds a plugin


def test_an_egg_info_folder_is_read_too(tmp_path):
    info = tmp_path / "site" / "oldplugin.egg-info"
    info.mkdir(parents=True)
    (info / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: oldplugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[envdoctor.checks]\nold = old_checks\n")
    assert _found(str(tmp_path / "site")) == ["old_checks"]
    assert may_declare(GROUP, "envdoctor_checks", [str(tmp_path / "site")])


def test_what_the_scan_cannot_read_is_left_to_importlib_metadata(tmp_path):
    bad = _dist(tmp_path / "bad", "baddist", b"[envdoctor.checks]\nx = \xff\xfe\n")
    assert may_declare(GROUP, "", [bad])  # not UTF-8: importlib.metadata says what it makes of it
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zipped-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped\nVersion: 1.0\n")
        z.writestr("zipped-1.0.dist-info/entry_points.txt", "[envdoctor.checks]\nz = zipped_checks\n")
    assert _found(str(archive)) == ["zipped_checks"]
    assert may_declare(GROUP, "", [str(archive)])
    egg = tmp_path / "thing.egg"
    egg.mkdir()
    assert may_declare(GROUP, "", [str(egg)])
    assert may_declare(GROUP, "", [tmp_path])  # not a string: only importlib.metadata knows
    assert not may_declare(GROUP, "", [str(tmp_path / "missing")])  # nothing there for either


def test_a_finder_that_lists_distributions_is_left_to_importlib_metadata(tmp_path, monkeypatch):
    class Finder:
        @staticmethod
        def find_distributions(context=None):
            return iter(())

    empty = str(tmp_path)
    assert not may_declare(GROUP, "", [empty])
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    assert may_declare(GROUP, "", [empty])


SCAN = """
import json, sys
from envdoctor.core.entry_points import installed
eps = installed("envdoctor.checks", "envdoctor_checks")
print(json.dumps([sorted(e.value for e in eps), "importlib.metadata" in sys.modules]))
"""


def _scan(pythonpath: str) -> tuple[list[str], bool]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = pythonpath
    done = subprocess.run([sys.executable, "-c", SCAN], capture_output=True, text=True, timeout=60, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr
    values, loaded = json.loads(done.stdout)
    return values, loaded


def test_a_real_plugin_is_found_through_importlib_metadata(tmp_path):
    site = make_plugin(tmp_path / "site", "envdoctor-scanplugin", "envdoctor_scanplugin", "")
    values, loaded = _scan(str(site))
    assert "envdoctor_scanplugin" in values and loaded


def test_without_a_plugin_importlib_metadata_is_not_loaded(tmp_path):
    values, loaded = _scan(str(tmp_path))
    plugins = [ep.value for ep in md.entry_points(group=GROUP) if ep.value.split(":")[0].strip() != "envdoctor_checks"]
    if plugins:  # an environment with a plugin installed: then it must be found
        assert loaded and set(plugins) <= set(values)
    else:
        assert values == [] and not loaded


def test_once_importlib_metadata_is_loaded_it_is_asked(monkeypatch):
    calls = []
    monkeypatch.setattr(md, "entry_points", lambda group: calls.append(group) or [])
    assert installed("envdoctor.readers") == [] and calls == ["envdoctor.readers"]
