"""The built-ins' live index (envdoctor.core.live_index): what triage reads instead of importing the
modules that hold no paste-capable check is exactly what importing them finds, and triage's
answer from it is the same answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import fields

import pytest

from envdoctor.core import builtins, live_index
from envdoctor.core.registry import Registry, discover, live_entries
from envdoctor.core.triage import triage
from envdoctor.reporters.triage import render
from envdoctor.sources import read_paste
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures"
PASTES = sorted((FIXTURES / "triage").glob("*.txt")) + sorted(p for p in (FIXTURES / "pastes").glob("*.txt"))


def _shape(spec) -> tuple:
    """Every field but the function (and a fact's report-compacting function)."""
    return tuple((f.name, getattr(spec, f.name)) for f in fields(spec) if f.name not in ("func", "compact"))


def _registry_shape(reg: Registry) -> tuple:
    return (
        [_shape(c) for c in reg.checks],
        {n: _shape(f) for n, f in reg.facts.items()},
        list(reg.facts),
        {n: _shape(f) for n, f in reg.pasted_facts.items()},
        [s.id for s in reg.signatures],
        [(p.id, p.message) for p in reg.problems],
    )


def test_the_index_file_is_what_full_discovery_finds():
    path = os.path.join(builtins.location(), builtins.declared("LIVE_INDEX"))
    with open(path, encoding="utf-8") as f:
        written = json.load(f)["modules"]
    assert written == json.loads(json.dumps(live_entries(builtins.load()))), (
        "checks/data/live_index.json is out of date: run `python tools/regen_live_index.py`"
    )
    assert "distributed" in written and "torch" not in written  # live-only modules in, paste-capable ones out


def test_discovery_for_a_paste_declares_what_importing_every_module_declares():
    full, paste = discover(plugins=False), discover(plugins=False, paste=True)
    assert _registry_shape(paste) == _registry_shape(full)
    assert all(c.func is live_index._not_loaded for c in paste.checks if c.id.startswith("distributed."))


@pytest.mark.parametrize("path", PASTES, ids=lambda p: p.name)
def test_triage_answers_the_same_from_the_index(path):
    text = path.read_text(encoding="utf-8")
    full, paste = discover(plugins=False), discover(plugins=False, paste=True)
    for fmt in ("json", "text", "markdown"):
        assert render(triage(paste, read_paste(text), text), fmt, path.name) == render(triage(full, read_paste(text), text), fmt, path.name)


def test_a_missing_or_broken_index_imports_every_module(tmp_path):
    class Package:
        __path__ = [str(tmp_path)]
        LIVE_INDEX = "index.json"

    assert live_index.load(Package) == {}  # no file
    (tmp_path / "index.json").write_text("{not json")
    assert live_index.load(Package) == {}
    (tmp_path / "index.json").write_text('{"modules": {"x": {"checks": [], "facts": []}}}')
    assert live_index.load(Package) == {"x": {"checks": [], "facts": []}}


def test_a_stand_in_is_never_run_silently():
    checks, _ = live_index.specs(live_index.load(builtins.load())["distributed"], "")
    with pytest.raises(RuntimeError, match="live index"):
        checks[0].func()


IMPORTED = """
import json, runpy, sys
sys.argv = ["envdoctor", "triage", sys.argv[1]]
try:
    runpy.run_module("envdoctor", run_name="__main__")
except SystemExit:
    pass
print("\\nMODULES " + json.dumps(sorted(sys.modules)))
"""


def test_triage_imports_no_live_only_check_module():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(REPO)
    paste = FIXTURES / "pastes" / "collect_env_gpu.txt"
    done = subprocess.run([sys.executable, "-c", IMPORTED, str(paste)], capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.rsplit("MODULES ", 1)[1]))
    assert "envdoctor_checks.torch" in loaded and "envdoctor_checks.pasted" in loaded
    skipped = {f"envdoctor_checks.{m}" for m in ("distributed", "perf", "rehearsal", "smoke", "liveness", "toolchain", "baseline")}
    assert sorted(loaded & skipped) == []


def test_the_seeded_needles_are_the_ones_each_pattern_gives():
    # triage's start-up takes the built-in catalog's needles from the index; each must be what
    # parsing the pattern gives (a stale index would skip a pattern in a paste it matches)
    from envdoctor.core import signatures as catalog

    reg = discover(plugins=False, paste=True)
    doc = live_index.needles(live_index.document(builtins.load()))
    built = [s for s in reg.signatures if s.source in ("built-in", "engine")]
    assert built and all(catalog.needle_key(s.pattern, s.ignore_case) in doc for s in built)
    for s in built:
        assert s.needles == catalog.needles_of(s), s.id
