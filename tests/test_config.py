"""The config file: found from the current directory upwards or named with --config; every
mistake is one message naming the file and the key, with exit code 2."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from envdoctor.core import config
from envdoctor.core.config import ConfigError

GOOD = """\
must_pass = ["system.python"]
skip = ["system.disk"]

[expect]
python = ">=3.10"
torch = ">=2.0"
gpus = 8
gpu_name = "*H200*"
gpu_memory = "140GB"
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_found_in_a_parent_directory(tmp_path):
    cfg = write(tmp_path / "envdoctor.toml", GOOD)
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert config.find(deep) == cfg
    conf = config.load(start=deep)
    assert conf.path == str(cfg)
    exp = conf.expectations
    assert exp.get("torch").text == ">=2.0"
    assert exp.get("gpus").value.describe() == "8"
    assert exp.must_pass == ("system.python",) and exp.skip == ("system.disk",)
    assert exp.get("torch").origin == str(cfg)


def test_pyproject_only_with_a_tool_envdoctor_table(tmp_path):
    outer = write(tmp_path / "pyproject.toml", '[tool.envdoctor.expect]\ntorch = ">=2.1"\n')
    inner = write(tmp_path / "proj" / "pyproject.toml", '[project]\nname = "x"\n')  # not ours: keep looking
    assert config.find(inner.parent) == outer
    assert config.load(start=inner.parent).expectations.get("torch").text == ">=2.1"


def test_envdoctor_toml_wins_over_pyproject_in_the_same_directory(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.envdoctor.expect]\ntorch = ">=2.1"\n')
    own = write(tmp_path / "envdoctor.toml", '[expect]\ntorch = ">=2.2"\n')
    assert config.find(tmp_path) == own


def test_a_broken_unrelated_pyproject_is_ignored_but_a_broken_one_of_ours_is_reported(tmp_path):
    write(tmp_path / "pyproject.toml", "[project\nname = ")
    assert config.find(tmp_path) is None
    assert config.load(start=tmp_path).expectations.items == ()
    ours = write(tmp_path / "x" / "pyproject.toml", "[tool.envdoctor.expect\ntorch = 1\n")
    with pytest.raises(ConfigError, match=f"{ours}: not valid TOML"):
        config.load(start=ours.parent)


def test_named_file_and_command_line_override(tmp_path):
    cfg = write(tmp_path / "ci.toml", GOOD)
    conf = config.load(str(cfg), ["torch==1.0", "gpus=1"])
    assert conf.expectations.get("torch").text == "==1.0"
    assert conf.expectations.get("torch").origin == "--expect"
    assert conf.expectations.get("gpus").value.describe() == "1"
    assert conf.expectations.get("python").origin == str(cfg)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[expect]\ntourch = ">=2"\n', "expect.tourch: unknown key 'tourch' (did you mean 'torch'?)"),
        ('[expect]\ntorch = ">=2,5"\n', "expect.torch: bad version specifier '>=2,5'"),
        ("[expect]\npython = 3.10\n", 'expect.python: must be a string version specifier like ">=3.10", got float 3.1'),
        ('[expect]\ngpus = "eight"\n', "expect.gpus: bad GPU count 'eight'"),
        ("[expect]\ngpu_memory = 80\n", "expect.gpu_memory: must be a size with a unit"),
        ('must_pass = "x"\nskip = 3\n', "skip: must be a list of check ids"),
        ('torch = ">=2"\n', "unknown key 'torch' (known: expect, must_pass, skip; version and GPU keys go under [expect])"),
        ('expect = ">=2"\n', "'expect' must be a table"),
        ('[expect]\nskip = ["x"]\n', "'expect.skip' belongs at the top level"),
        ('must_pass = ["system.python"]\nskip = ["system.python"]\n', "system.python is in both 'must_pass' and 'skip'"),
        ("[expect\ntorch = 1\n", "not valid TOML"),
    ],
)
def test_errors_name_the_file_and_the_key(tmp_path, text, words):
    cfg = write(tmp_path / "envdoctor.toml", text)
    with pytest.raises(ConfigError) as err:
        config.load(str(cfg))
    assert err.value.message.startswith(f"{cfg}: ")
    assert words in err.value.message
    assert err.value.exit_code == 2


def test_pyproject_errors_name_the_tool_table(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.envdoctor.expect]\ntorch = "two"\n')
    with pytest.raises(ConfigError, match=r"pyproject.toml: tool\.envdoctor\.expect\.torch: bad version specifier 'two'"):
        config.load(start=tmp_path)
    bare = write(tmp_path / "other" / "pyproject.toml", '[project]\nname = "x"\n')
    with pytest.raises(ConfigError, match=r"has no \[tool.envdoctor\] table"):
        config.load(str(bare))


def test_missing_named_file(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        config.load(str(tmp_path / "nope.toml"))


# -- through the CLI, as a user meets it -------------------------------------------------------


def test_cli_config_error_is_one_line_and_exit_2(cli, tmp_path):
    write(tmp_path / "envdoctor.toml", '[expect]\ntorch = ">=2,5"\n')
    res = cli("check", cwd=str(tmp_path))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert f"{tmp_path / 'envdoctor.toml'}: expect.torch: bad version specifier '>=2,5'" in res.stderr


def test_cli_malformed_toml_exit_2(cli, tmp_path):
    cfg = write(tmp_path / "bad.toml", "[expect\n")
    res = cli("check", "--config", str(cfg), cwd=str(tmp_path))
    assert res.returncode == 2
    assert f"{cfg}: not valid TOML" in res.stderr


def test_cli_bad_expect_exit_2(cli, tmp_path):
    res = cli("check", "--expect", "gpus=lots", cwd=str(tmp_path))
    assert res.returncode == 2
    assert "--expect 'gpus=lots': bad GPU count 'lots'" in res.stderr


def test_cli_unknown_skip_pattern_exit_2(cli, tmp_path):
    cfg = write(tmp_path / "envdoctor.toml", 'skip = ["sytem.disk"]\n')
    res = cli("check", cwd=str(tmp_path))
    assert res.returncode == 2
    assert f"{cfg}: skip: no check matches 'sytem.disk'" in res.stderr


def test_cli_uses_the_config_found_upwards(cli, tmp_path):
    write(tmp_path / "envdoctor.toml", 'skip = ["system.disk"]\n[expect]\ntorch = "==1.0"\n')
    sub = tmp_path / "src"
    sub.mkdir()
    res = cli("check", "--profile", "build", "--select", "system.python", "--format", "json", cwd=str(sub))
    assert res.returncode == 1, res.stderr
    rows = {r["id"]: r for r in json.loads(res.stdout)["results"]}
    assert rows["expect.torch"]["status"] == "fail"
    assert "does not satisfy ==1.0" in rows["expect.torch"]["message"]
    assert "system.disk" not in rows


def test_cli_select_expect_runs_only_the_expectations(cli, tmp_path):
    res = cli("check", "--select", "expect", "--expect", "torch>=2.0", "--expect", "python>=3.10", "--format", "json", cwd=str(tmp_path))
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr
    assert sorted(rows_of(res)) == ["expect.python", "expect.torch"]
    res = cli("check", "--select", "system.python", "--deselect", "expect.torch", "-e", "torch==1.0", "--format", "json", cwd=str(tmp_path))
    assert res.returncode == 0 and sorted(rows_of(res)) == ["system.python"]


def rows_of(res) -> dict[str, dict]:
    return {r["id"]: r for r in json.loads(res.stdout)["results"]}
