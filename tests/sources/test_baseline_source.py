"""The baseline fact source: one file format, written atomically, read back typed as ``baseline``."""

from __future__ import annotations

import json

import pytest

import envdoctor
from envdoctor.sources.baseline import SCHEMA, BaselineError, load_baseline, load_lock, write_baseline

FACTS = {
    "dists": {"torch": {"name": "torch", "version": "2.11.0+cu130"}, "numpy": {"name": "numpy", "version": "2.1.0"}},
    "python_info": {"executable": "/opt/venv/bin/python3", "version": "3.12.3"},
    "env_vars": {"HF_TOKEN": "hf_abcdefghijklmnopqrstuvwxyz0123"},
}


def test_written_then_loaded_is_a_stack_from_the_baseline_source(tmp_path):
    path = tmp_path / "b.json"
    write_baseline(str(path), FACTS, {"driver": "no NVIDIA GPU"}, "0.1.0")
    assert [p.name for p in tmp_path.iterdir()] == ["b.json"]  # no temporary file left
    raw = json.loads(path.read_text())
    assert raw["schema"] == SCHEMA == envdoctor.BASELINE_SCHEMA and "hf_abcdef" not in path.read_text()
    loaded = load_baseline(str(path))
    assert loaded.not_recorded == {"driver": "no NVIDIA GPU"} and loaded.tool_version == "0.1.0"
    stack = loaded.stack()
    assert stack.source == "baseline" and stack.dist("torch").version == "2.11.0+cu130"
    fact = loaded.as_fact()
    assert fact["source"] == "baseline" and fact["facts"]["dists"]["numpy"]["version"] == "2.1.0"


def test_bad_files_are_one_line(tmp_path):
    (tmp_path / "x.json").write_text('{"schema": "something-else/1", "facts": {}}')
    with pytest.raises(BaselineError, match="is not an envdoctor baseline"):
        load_baseline(str(tmp_path / "x.json"))
    with pytest.raises(BaselineError, match="cannot read the lock file"):
        load_lock(str(tmp_path))
    (tmp_path / "pylock.toml").write_text("packages = 3\n")
    with pytest.raises(BaselineError, match="is not a pylock.toml"):
        load_lock(str(tmp_path / "pylock.toml"))
