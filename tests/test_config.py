"""The config file: found from the current directory upwards or named with --config; every
mistake is one message naming the file and the key, with exit code 2."""

from __future__ import annotations

import json
import os
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
    inner = write(tmp_path / "proj" / "pyproject.toml", '[project]\nname = "x"\n')  # not ours
    assert config.find(tmp_path) == outer
    assert config.load(start=tmp_path).expectations.get("torch").text == ">=2.1"
    # The inner pyproject.toml is a project of its own: its root ends the search (issue 31.3).
    assert config.find(inner.parent) is None


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


@pytest.mark.slow
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


@pytest.mark.slow
def test_cli_select_expect_runs_only_the_expectations(cli, tmp_path):
    res = cli("check", "--select", "expect", "--expect", "torch>=2.0", "--expect", "python>=3.10", "--format", "json", cwd=str(tmp_path))
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr
    assert sorted(rows_of(res)) == ["expect.python", "expect.torch"]
    res = cli("check", "--select", "system.python", "--deselect", "expect.torch", "-e", "torch==1.0", "--format", "json", cwd=str(tmp_path))
    assert res.returncode == 0 and sorted(rows_of(res)) == ["system.python"]


def rows_of(res) -> dict[str, dict]:
    return {r["id"]: r for r in json.loads(res.stdout)["results"]}


# ---- where the config comes from (issue 31.3): the project's, never a stranger's ----------------

STRANGER = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
DESELECT_ALL = 'skip = ["system", "packages"]\n[expect]\ntorch = "==0.0"\n'  # what a stranger would plant


def _shared(d: Path) -> Path:
    d.mkdir(parents=True)
    d.chmod(0o1777)
    return d


def _give(path: Path, uid: int = STRANGER) -> Path:
    os.chown(path, uid, uid)
    return path


@needs_root
def test_a_strangers_config_in_a_shared_parent_is_never_read(tmp_path):
    shared = _shared(tmp_path / "tmp")
    planted = _give(write(shared / "envdoctor.toml", DESELECT_ALL))
    work = shared / "work"
    work.mkdir()
    found = config.search(work)
    assert found.path is None
    assert found.not_read == (f"{planted}: anyone may write to its directory",)
    conf = config.load(start=work)
    assert conf.path is None and conf.expectations.items == () and conf.describe()["not_read"] == list(found.not_read)


def test_even_the_users_own_config_in_a_directory_anyone_may_write_to_is_not_read(tmp_path):
    shared = _shared(tmp_path / "tmp")
    write(shared / "envdoctor.toml", DESELECT_ALL)
    assert config.search(shared).path is None and len(config.search(shared).not_read) == 1


@needs_root
def test_a_directory_of_another_user_ends_the_search(tmp_path):
    theirs = tmp_path / "alice"
    write(theirs / "envdoctor.toml", DESELECT_ALL)
    _give(theirs), _give(theirs / "envdoctor.toml")
    mine = theirs / "mine"
    mine.mkdir()
    found = config.search(mine)
    assert found.path is None and "belongs to uid 65534" in found.not_read[0]


@needs_root
def test_a_found_config_another_user_owns_is_refused(tmp_path):
    cfg = _give(write(tmp_path / "envdoctor.toml", GOOD))
    with pytest.raises(ConfigError, match=f"config file {cfg} not read: it belongs to uid 65534"):
        config.load(start=tmp_path)
    # Named, it is the user's choice.
    assert config.load(str(cfg)).path == str(cfg)


@pytest.mark.parametrize("named", [False, True])
def test_a_config_anyone_may_write_to_is_refused(tmp_path, named):
    cfg = write(tmp_path / "envdoctor.toml", GOOD)
    cfg.chmod(0o666)
    with pytest.raises(ConfigError, match="anyone may write to it"):
        config.load(str(cfg) if named else None, start=tmp_path)


@pytest.mark.parametrize("named", [False, True])
def test_a_fifo_config_is_refused_not_waited_on(tmp_path, named):
    fifo = tmp_path / "envdoctor.toml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="not a regular file"):
        config.load(str(fifo) if named else None, start=tmp_path)


@pytest.mark.parametrize("marker", [".git", "pyproject.toml"])
def test_the_search_stops_at_the_project_root(tmp_path, marker):
    write(tmp_path / "envdoctor.toml", DESELECT_ALL)  # above the project: not its config
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / marker).mkdir() if marker == ".git" else write(project / marker, '[project]\nname = "p"\n')
    assert config.find(project / "src") is None
    own = write(project / "envdoctor.toml", GOOD)
    assert config.find(project / "src") == own


def test_the_search_stops_at_home(tmp_path):
    write(tmp_path / "envdoctor.toml", DESELECT_ALL)  # above home
    home = tmp_path / "home"
    (home / "scratch").mkdir(parents=True)
    assert config.search(home / "scratch", home=home).path is None
    own = write(home / "envdoctor.toml", GOOD)
    assert config.search(home / "scratch", home=home).path == own


@needs_root
def test_a_strangers_pyproject_is_left_unread_and_ends_the_search(tmp_path):
    write(tmp_path / "envdoctor.toml", GOOD)
    py = _give(write(tmp_path / "p" / "pyproject.toml", '[tool.envdoctor.expect]\ntorch = "==0.0"\n'))
    found = config.search(py.parent)
    assert found.path is None and found.not_read == (
        f"{py}: it belongs to uid 65534, not this user (uid 0) or root (name it with --config to use it)",
    )


@pytest.mark.slow
@needs_root
def test_cli_a_strangers_tmp_config_neither_steers_the_run_nor_hides(cli, tmp_path):
    shared = _shared(tmp_path / "tmp")
    planted = _give(write(shared / "envdoctor.toml", DESELECT_ALL))
    work = shared / "work"
    work.mkdir()
    res = cli("check", "--select", "system.python", "--format", "json", cwd=str(work))
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert "expect.torch" not in rows_of(res) and "system.python" in rows_of(res)
    assert data["options"]["config"] == {"path": None, "from": "none", "not_read": [f"{planted}: anyone may write to its directory"]}
    text = cli("check", "--select", "system.python", "--no-color", cwd=str(work)).stdout.splitlines()
    assert text[1] == f"config: none; not read: {planted}: anyone may write to its directory"


@pytest.mark.slow
def test_cli_the_report_names_the_config_used(cli, tmp_path):
    cfg = write(tmp_path / "envdoctor.toml", '[expect]\npython = ">=3.8"\n')
    (tmp_path / "src").mkdir()
    res = cli("check", "--select", "system.python,expect", "--format", "json", cwd=str(tmp_path / "src"))
    assert json.loads(res.stdout)["options"]["config"] == {"path": str(cfg), "from": "found", "not_read": []}
    res = cli("check", "--select", "system.python", "--no-color", "--config", str(cfg), cwd=str(tmp_path / "src"))
    assert res.stdout.splitlines()[1] == f"config: {cfg} (--config)"
    bare = tmp_path / "bare"
    (bare / ".git").mkdir(parents=True)  # a project of its own, with no config
    res = cli("check", "--select", "system.python", "--no-color", cwd=str(bare))
    assert res.stdout.splitlines()[1] == ""  # no config anywhere: no line


@needs_root
def test_cli_a_refused_config_is_one_line_and_exit_2(cli, tmp_path):
    cfg = _give(write(tmp_path / "envdoctor.toml", GOOD))
    res = cli("check", "--select", "system.python", cwd=str(tmp_path))
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.returncode == 2 and len(lines) == 1 and str(cfg) in lines[0] and "uid 65534" in lines[0], res.stderr
