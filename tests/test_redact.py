"""Secrets never reach any output; --redact hides identities with stable placeholders."""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from envdoctor.core.api import Item, Status
from envdoctor.core.redact import REDACTED, Identity, Scrubber, is_secret_key, redact_report, scrub_report, secret_values
from envdoctor.core.report import CheckOutcome, Report
from tests.conftest import run_cli

HF = "hf_CanaryAbcdefghijklmnopqrstuvwxyz01"
AWS = "wJalrCanaryXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLE"  # has "/" so no single run of it is long
PIP_URL = "https://canaryuser:canarypass@pypi.example.com/simple"
TORCH_URL = "redis://cacheuser:cachepw99@10.0.0.5:6379/0"
GH = "ghp_CanaryCanaryCanaryCanary0123456789"
DB_URL = "postgres://dbcanary:pa@ss/w0rdCanary@db.internal:5432/app"  # '@' and '/' in the password
DEPLOY = "deploycanary:s3cretCanary@deploy.example.net"  # no scheme
DB_PASS = "Kx7canary"  # a short password under a *_PASS name, printed by a plugin
CANARIES = (
    "hf_Canary",
    "wJalrCanary",
    "canaryuser",
    "canarypass",
    "cacheuser",
    "cachepw99",
    "ghp_Canary",
    "dbcanary",
    "w0rdCanary",
    "pa@ss",
    "deploycanary",
    "s3cretCanary",
    "Kx7canary",
)

# A site-local plugin that does everything wrong: it puts secrets in its message, hint,
# details, items and in a fact. The central scrub must catch all of it.
LEAKY = textwrap.dedent(
    """
    import os
    from envdoctor import Item, check, fact, warn
    from envdoctor.core.api import Status

    @fact("leaky")
    def leaky():
        e = os.environ
        return {"token": e["HF_TOKEN"], "note": "aws " + e["AWS_SECRET_ACCESS_KEY"], "url": e["PIP_INDEX_URL"], "env": dict(e)}

    @check("leak.everything")
    def everything(leaky):
        \"\"\"A plugin that prints secrets\"\"\"
        e = os.environ
        return warn(
            f"token {e['HF_TOKEN']} aws {e['AWS_SECRET_ACCESS_KEY']} gh {e['GH_PAT']} db {e['DATABASE_URL']} to {e['DEPLOY_TO']} pw {e['DB_PASS']}",
            hint=f"pip install --index-url {e['PIP_INDEX_URL']} torch; export HF_TOKEN={e['HF_TOKEN']}",
            details={"all": dict(e), "leaky": leaky, "cmd": "curl -H 'Authorization: Bearer " + e["GH_PAT"] + "'"},
            items=[Item("HF_TOKEN", Status.WARN, e["HF_TOKEN"]), Item("aws", Status.WARN, "value " + e["AWS_SECRET_ACCESS_KEY"])],
        )
    """
)


def _secret_env() -> dict[str, str]:
    return {
        "HF_TOKEN": HF,
        "AWS_SECRET_ACCESS_KEY": AWS,
        "PIP_INDEX_URL": PIP_URL,  # captured by the allowlist: must show as https://***@...
        "TORCHINDUCTOR_REDIS_URL": TORCH_URL,  # a TORCH* variable: captured, credentials hidden
        "TORCH_HUB_TOKEN": GH,  # captured by name, value hidden
        "GH_PAT": GH,
        "DATABASE_URL": DB_URL,
        "DEPLOY_TO": DEPLOY,
        "DB_PASS": DB_PASS,
    }


def _assert_clean(text: str, where: str) -> None:
    for c in CANARIES:
        assert c not in text, f"{c!r} leaked in {where}"


@pytest.fixture(scope="module")
def leaky_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("leaky")
    (d / "leaky.py").write_text(LEAKY)
    return d


@pytest.mark.parametrize(
    "args",
    [
        ["--format", "text"],
        ["--format", "text", "-v"],
        ["--format", "json"],
        ["--format", "markdown"],
        ["--format", "junit"],
        ["--format", "text", "-v", "--strict"],
        ["-q"],
    ],
    ids=["text", "text-v", "json", "markdown", "junit", "strict-v", "quiet"],
)
@pytest.mark.slow
def test_canary_secrets_never_printed(args, leaky_dir):
    done = run_cli("check", "--checks-path", str(leaky_dir), "-s", "leak,system.environment,packages", *args, env=_secret_env())
    assert done.returncode in (0, 1), done.stderr
    _assert_clean(done.stdout + done.stderr, " ".join(args))
    assert "leak.everything" in done.stdout or "A plugin that prints secrets" in done.stdout or args == ["-q"]


@pytest.mark.slow
def test_canary_secrets_never_written_to_report_files(leaky_dir, tmp_path):
    files = {"json": tmp_path / "r.json", "junit-xml": tmp_path / "r.xml", "markdown": tmp_path / "r.md"}
    done = run_cli(
        "check",
        "--checks-path",
        str(leaky_dir),
        "-s",
        "leak,system,packages,toolchain,triton",
        "-v",
        *[x for k, p in files.items() for x in (f"--{k}", str(p))],
        env=_secret_env(),
    )
    assert done.returncode in (0, 1), done.stderr
    _assert_clean(done.stdout + done.stderr, "stdout of a full run")
    for name, p in files.items():
        _assert_clean(p.read_text(), name)
    data = json.loads(files["json"].read_text())
    env_vars = data["facts"]["env_vars"]
    # Captured, so a maintainer knows they are set, but without their secret parts.
    assert env_vars["PIP_INDEX_URL"] == "https://***@pypi.example.com/simple"
    assert env_vars["TORCHINDUCTOR_REDIS_URL"] == "redis://***@10.0.0.5:6379/0"
    assert env_vars["TORCH_HUB_TOKEN"] == REDACTED
    assert "HF_TOKEN" not in env_vars and "HOME" not in env_vars  # not on the allowlist
    leak = next(r for r in data["results"] if r["id"] == "leak.everything")
    assert leak["details"]["all"]["HF_TOKEN"] == REDACTED
    assert leak["items"][0]["message"] == REDACTED


def test_secret_key_names():
    for k in (
        "HF_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "MYSQL_PWD_PASSWD",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "api_key",
        "token",
        "Cookie",
    ):
        assert is_secret_key(k), k
    for k in ("PATH", "CUDA_VISIBLE_DEVICES", "key", "keyring", "version", "TORCH_HOME", "monkey"):
        assert not is_secret_key(k), k


@pytest.mark.parametrize(
    "text, gone, kept",
    [
        (f"token is {HF}", HF, "token is"),
        (f"git clone https://x-access-token:{GH}@github.com/org/repo", GH, "@github.com/org/repo"),
        ("AKIAIOSFODNN7EXAMPLE is the key id", "AKIAIOSFODNN7EXAMPLE", "is the key id"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "eyJhbGci", "jwt"),
        ("random Xk9vQ2pLmN8rT4sW6yZ1aB3cD5eF7gH9 string", "Xk9vQ2pLmN8rT4sW6yZ1aB3cD5eF7gH9", "random"),
        ("MY_API_KEY=plainsecret1 next", "plainsecret1", "next"),
        ("Authorization: Bearer abcdef123456789", "abcdef123456789", "Authorization"),
    ],
)
def test_scrubber_removes_tokens(text, gone, kept):
    out = Scrubber().text(text)
    assert gone not in out
    assert kept in out


@pytest.mark.parametrize(
    "text",
    [
        "torch 2.11.0+cu130 git 4e9bd1a7c8f3b2d6a5e4f3c2b1a09f8e7d6c5b4a",  # a commit hash is not a secret
        "/usr/local/lib/python3.12/dist-packages/nvidia/cublas/lib/libcublas.so.12",
        "GPU-3f1c2a9e-8b7d-4c6e-9a51-2d0e7f4b1c93",
        "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE=1",
        "nvidia-cublas-cu12==12.4.5.8",
    ],
)
def test_scrubber_keeps_ordinary_text(text):
    assert Scrubber().text(text) == text


def test_literal_secret_values_are_removed_everywhere_but_paths_and_flags_are_not():
    env = {"AWS_SECRET_ACCESS_KEY": AWS, "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1", "XDG_SESSION_TYPE": "tty", "PATH": "/usr/bin"}
    assert secret_values(env) == (AWS,)
    r = Report("0", "t", 0.0, {}, (CheckOutcome("a.b", "t", Status.PASS, f"x {AWS} y", items=(Item("i", Status.PASS, AWS),)),))
    out = scrub_report(r, env)
    assert AWS not in out.results[0].message and AWS not in out.results[0].items[0].message


def test_package_names_that_look_secret_are_not_redacted():
    facts = {"dists": {"google-auth": {"name": "google-auth", "version": "2.40"}, "keyring": {"name": "keyring", "version": "25"}}}
    out = scrub_report(Report("0", "t", 0.0, {}, (), facts=facts), {})
    assert out.facts["dists"]["google-auth"]["version"] == "2.40"
    assert out.facts["dists"]["keyring"]["version"] == "25"


# ------------------------------------------------------------------ --redact

UUID_A = "GPU-3f1c2a9e-8b7d-4c6e-9a51-2d0e7f4b1c93"
UUID_B = "GPU-0a1b2c3d-4e5f-6789-abcd-ef0123456789"


def test_redact_gives_stable_placeholders():
    ident = Identity(hostnames=("gpu-node-17",), users=("alice",), homes=("/home/alice",))
    gpus = [{"index": 0, "uuid": UUID_A, "serial": "1654023019876"}, {"index": 1, "uuid": UUID_B, "serial": "1654023019877"}]
    r = Report(
        "0",
        "t",
        0.0,
        {"hostname": "gpu-node-17"},
        (
            CheckOutcome("nvidia.gpus", "t", Status.WARN, f"{UUID_B} is in MIG mode; {UUID_A} is not", hint="ssh alice@gpu-node-17"),
            CheckOutcome("x.y", "t", Status.PASS, "cache /home/alice/.triton and /home/alice/.triton; peer 10.1.2.3, 10.1.2.4, 10.1.2.3"),
        ),
        facts={"gpus": gpus, "dists": {"nvidia-cublas-cu12": {"version": "12.4.5.8"}}, "inductor": {"path": "/tmp/torchinductor_alice"}},
    )
    out = redact_report(r, ident)
    text = json.dumps([out.platform, out.facts, [(x.message, x.hint) for x in out.results]])
    for v in ("gpu-node-17", "alice", "/home/alice", UUID_A, UUID_B, "1654023019876", "10.1.2.3"):
        assert v not in text
    assert out.platform["hostname"] == "<host>"
    # The same value reads the same everywhere: the facts and the message agree.
    assert out.facts["gpus"][1]["uuid"] in out.results[0].message
    assert out.facts["gpus"][0]["uuid"] != out.facts["gpus"][1]["uuid"]
    assert out.results[1].message == "cache <home>/.triton and <home>/.triton; peer <ip-1>, <ip-2>, <ip-1>"
    assert out.results[0].hint == "ssh <user>@<host>"
    assert out.facts["inductor"]["path"] == "/tmp/torchinductor_<user>"
    assert out.facts["dists"]["nvidia-cublas-cu12"]["version"] == "12.4.5.8"  # a version, not an address
    assert out.facts["gpus"][0]["serial"].startswith("<gpu-serial-")


def _invoke_check(monkeypatch, tmp_path, *args):
    """The real CLI in-process, with a host name we control (a subprocess cannot fake it)."""
    import socket

    from envdoctor.cli import cli

    home = tmp_path / "home" / "canaryuser"
    (home / "cache").mkdir(parents=True)
    monkeypatch.setattr(socket, "gethostname", lambda: "canary-host-7")
    env = {
        "HOME": str(home),
        "USER": "canaryuser",
        "LOGNAME": "canaryuser",
        "TORCH_HOME": str(home / "cache"),
        "TRITON_CACHE_DIR": str(home / "cache"),
        "MASTER_ADDR": "10.20.30.40",
        "NCCL_SOCKET_IFNAME": "eth0",
        "NO_COLOR": "1",
    }
    result = CliRunner().invoke(cli, ["check", "-s", "system.environment,system.python", *args], env=env, catch_exceptions=False)
    return result, home


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "junit"])
def test_redact_hides_host_user_home_in_every_format(fmt, monkeypatch, tmp_path):
    result, home = _invoke_check(monkeypatch, tmp_path, "--redact", "-v", "--format", fmt)
    assert result.exit_code == 0, result.output
    out = result.output
    for v in ("canary-host-7", "canaryuser", str(home), "10.20.30.40"):
        assert v not in out, f"{v} in {fmt}"
    if fmt in ("text", "json"):
        # Two mentions of the same path get the same placeholder.
        assert out.count("<home>/cache") >= 2, out
        assert "<ip-1>" in out
    if fmt == "markdown":
        assert out.count("&lt;home&gt;/cache") + out.count("<home>/cache") >= 2


def test_without_redact_the_identities_are_there(monkeypatch, tmp_path):
    # The test above could pass vacuously if nothing printed them in the first place.
    result, home = _invoke_check(monkeypatch, tmp_path, "-v", "--format", "json")
    data = json.loads(result.output)
    assert data["platform"]["hostname"] == "canary-host-7"
    assert data["facts"]["env_vars"]["TORCH_HOME"] == str(home / "cache")


@pytest.mark.slow
def test_real_hostname_absent_from_redacted_report():
    import socket

    host = socket.gethostname()
    done = run_cli("check", "-s", "system,packages,toolchain,compile", "--redact", "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(done.stdout)
    assert data["platform"]["hostname"] == "<host>"
    if len(host) >= 3:
        assert not re.search(rf"(?<![A-Za-z0-9\-]){re.escape(host)}(?![A-Za-z0-9\-])", done.stdout)
    home = os.path.expanduser("~")
    if home not in ("/", ""):
        assert f'"{home}/' not in done.stdout and f'"{home}"' not in done.stdout


def test_url_credentials_with_at_and_slash_and_without_scheme():
    s = Scrubber()
    assert s.text(DB_URL) == "postgres://***@db.internal:5432/app"
    assert s.text(f"rsync to {DEPLOY} now") == "rsync to ***@deploy.example.net now"
    assert s.text("https://u:pa/ss@host.example.com/x") == "https://***@host.example.com/x"
    # Not credentials: a pip VCS reference, an ssh remote, an e-mail address, host:port/path@ref.
    for keep in (
        "pkg @ git+https://github.com/o/r.git@abc123",
        "git@github.com:org/repo.git",
        "user@example.com",
        "http://host:8080/p@ref",
    ):
        assert s.text(keep) == keep


def test_password_names_and_short_values():
    assert is_secret_key("DB_PASS") and is_secret_key("SMTP_PW") and not is_secret_key("BYPASS") and not is_secret_key("OLDPWD")
    assert secret_values({"DB_PASS": DB_PASS, "MY_TOKEN": "true", "X_KEY": "abc"}) == (DB_PASS,)


def _write_report(path: Path, message: str, facts: dict) -> None:
    data = {
        "schema_version": "1.0",
        "tool_version": "0.0.9",
        "started_at": "t",
        "duration": 1.0,
        "platform": {"hostname": "n1"},
        "results": [
            {
                "id": "x.y",
                "title": "t",
                "status": "fail",
                "message": message,
                "hint": "",
                "tags": [],
                "source": "p",
                "details": {},
                "items": [],
                "duration": 0.1,
            }
        ],
        "facts": facts,
        "options": {},
    }
    path.write_text(json.dumps(data))


def test_diff_and_fleet_scrub_reports_written_elsewhere(cli_inproc, tmp_path):
    """Reports from other machines (or older envdoctors) carry secrets by value and in URLs."""
    leaked = f"db {DB_URL} deploy {DEPLOY} hf {HF}"
    _write_report(tmp_path / "a.json", "ok", {})
    _write_report(tmp_path / "b.json", leaked, {"env_vars": {"DATABASE_URL": DB_URL}})
    for args in (
        ("diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")),
        ("fleet", str(tmp_path / "a.json"), str(tmp_path / "b.json")),
    ):
        for fmt in ("text", "json", "markdown") if args[0] == "diff" else ("text", "json"):
            done = cli_inproc(*args, "--format", fmt)
            assert done.returncode in (0, 1), done.stderr
            _assert_clean(done.stdout + done.stderr, f"{args[0]} {fmt}")


def test_redact_hides_network_mount_servers():
    facts = {
        "mounts": [
            {"mount_point": "/data", "fstype": "nfs4", "source": "filer07.corp.example:/export/data", "options": ["rw"]},
            {"mount_point": "/scratch", "fstype": "cifs", "source": "//smbhost9/scratch", "options": []},
        ]
    }
    r = Report(
        "0",
        "t",
        0.0,
        {},
        (CheckOutcome("triton.cache_dir", "t", Status.WARN, "cache on nfs4 at /data (filer07.corp.example)"),),
        facts=facts,
    )
    out = redact_report(r, Identity())
    text = json.dumps([out.facts, out.results[0].message])
    assert "filer07" not in text and "smbhost9" not in text and "<host>" in text


# ------------------------------------------------------------------ the table of secret shapes

from tests.secret_shapes import ENV_SECRETS, ORDINARY, SHAPES, write_report  # noqa: E402

ALL_CANARIES = tuple(c for _, _, cs in SHAPES for c in cs) + tuple(c for _, cs in ENV_SECRETS.values() for c in cs)
SCHEMAS = Path(__file__).parent.parent / "envdoctor" / "schema"


def _assert_no_canary(text: str, where: str) -> None:
    leaked = [c for c in ALL_CANARIES if c in text]
    assert not leaked, f"{leaked[:5]} leaked in {where}"


def test_the_table_covers_every_kind_with_enough_shapes():
    assert len(SHAPES) >= 60 and len({i for i, _, _ in SHAPES}) == len(SHAPES)
    for cs in (cs for _, _, cs in SHAPES):
        assert all(c.isalnum() for c in cs)  # no format's escaping can hide a leak from the check


@pytest.mark.parametrize("random", [True, False], ids=["report", "paste"])
@pytest.mark.parametrize("shape", SHAPES, ids=[s[0] for s in SHAPES])
def test_every_secret_shape_is_hidden(shape, random):
    _, text, canaries = shape
    out = Scrubber(random=random).text(text)
    for c in canaries:
        assert c not in out, out
    assert REDACTED in out or "***@" in out


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_facts_are_never_redacted(text):
    assert Scrubber().text(text) == text
    assert Scrubber(random=False).text(text) == text


def test_secrets_by_value_from_variables_whose_names_do_not_look_secret():
    env = {k: v for k, (v, _) in ENV_SECRETS.items()}
    s = Scrubber(secret_values(env))
    for name, (value, canaries) in ENV_SECRETS.items():
        for c in canaries:
            # printed bare, URL-encoded, base64-encoded, or broken across two lines
            import base64
            from urllib.parse import quote

            for form in (c, quote(value, safe=""), base64.b64encode(c.encode()).decode(), c[:7] + "\n" + c[7:]):
                assert c not in s.text(f"plugin says {form} done"), (name, form)
                assert form not in s.text(f"plugin says {form} done") or len(form) < 5, (name, form)


def test_scrub_takes_any_structure_and_keeps_its_shape():
    from dataclasses import dataclass

    from envdoctor.core.scrub import scrub

    @dataclass(frozen=True)
    class Row:
        name: str
        lines: tuple[str, ...]
        status: Status

    row = Row("x", ("url https://h.example.com/?token=QtokC4n4ry11", "ok"), Status.FAIL)
    out = scrub({"rows": [row], "n": 3, "MY_TOKEN": "abc12345"}, {})
    assert out["n"] == 3 and out["MY_TOKEN"] == REDACTED
    assert isinstance(out["rows"][0], Row) and out["rows"][0].status is Status.FAIL
    assert out["rows"][0].lines == ("url https://h.example.com/?token=<redacted>", "ok")


SHAPE_PLUGIN = """
import json, os
from envdoctor import Item, check, fail
from envdoctor.core.api import Status

SHAPES = json.loads({shapes!r})


@check("leak.shapes")
def shapes():
    \"\"\"A plugin that prints every secret shape\"\"\"
    env = {{k: os.environ.get(k, "") for k in {env_names!r}}}
    return fail(
        " ; ".join(SHAPES[:30]) + " env " + " ".join(env.values()),
        hint=" ; ".join(SHAPES[30:]),
        details={{**{{f"d{{i}}": s for i, s in enumerate(SHAPES)}}, "env": env}},
        items=[Item(f"s{{i}}", Status.FAIL, s) for i, s in enumerate(SHAPES)],
    )
"""


@pytest.fixture(scope="module")
def shape_plugin_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("shapes")
    (d / "shapes.py").write_text(SHAPE_PLUGIN.format(shapes=json.dumps([t for _, t, _ in SHAPES]), env_names=sorted(ENV_SECRETS)))
    return d


def _shape_env() -> dict[str, str]:
    return {k: v for k, (v, _) in ENV_SECRETS.items()}


@pytest.mark.parametrize(
    "args", [["-f", "text"], ["-f", "text", "-v"], ["-f", "json"], ["-f", "markdown"], ["-f", "junit"]], ids=lambda a: "-".join(a)
)
def test_every_shape_hidden_in_every_format_of_check(args, shape_plugin_dir):
    done = run_cli("check", "--checks-path", str(shape_plugin_dir), "-s", "leak,system.environment", *args, env=_shape_env())
    assert done.returncode == 1, done.stderr
    assert "leak.shapes" in done.stdout or "A plugin that prints every secret shape" in done.stdout
    _assert_no_canary(done.stdout + done.stderr, " ".join(args))
    if "json" in args:
        import jsonschema

        data = json.loads(done.stdout)
        jsonschema.Draft202012Validator(json.loads((SCHEMAS / "report.schema.json").read_text())).validate(data)
        # the variables envdoctor records are there, without their secret parts
        env_vars = data["facts"]["env_vars"]
        assert env_vars["PIP_INDEX_URL"] == "https://***@pkgs.example.com/simple"
        assert env_vars["TRITON_NOTIFY_HOOK"] == "https://hooks.slack.com/services/<redacted>"
    if "junit" in args:
        import xml.etree.ElementTree as ET

        ET.fromstring(done.stdout.split("\n", 1)[1])


@pytest.fixture()
def shape_reports(tmp_path) -> tuple[Path, Path]:
    shapes = [t for _, t, _ in SHAPES]
    env = {k: v for k, (v, _) in ENV_SECRETS.items()}
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_report(a, "n1", ["ok"], {})
    write_report(b, "n2", shapes, env)
    return a, b


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_every_shape_hidden_in_diff(fmt, shape_reports, monkeypatch):
    from envdoctor.cli import cli

    for k in ENV_SECRETS:  # by shape alone: this machine knows none of those values
        monkeypatch.delenv(k, raising=False)
    a, b = shape_reports
    result = CliRunner().invoke(cli, ["diff", str(a), str(b), "--format", fmt])
    assert result.exit_code in (0, 1), result.output
    _assert_no_canary(result.output, f"diff {fmt}")
    if fmt == "json":
        import jsonschema

        jsonschema.Draft202012Validator(json.loads((SCHEMAS / "diff.schema.json").read_text())).validate(json.loads(result.output))


@pytest.mark.parametrize("fmt", ["text", "json", "html"])
def test_every_shape_hidden_in_fleet(fmt, shape_reports):
    from envdoctor.cli import cli

    result = CliRunner().invoke(cli, ["fleet", *map(str, shape_reports), "--format", fmt])
    assert result.exit_code in (0, 1), result.output
    _assert_no_canary(result.output, f"fleet {fmt}")
    if fmt == "json":
        json.loads(result.output)


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_every_shape_hidden_in_triage(fmt, tmp_path):
    from envdoctor.cli import cli

    paste = tmp_path / "paste.txt"
    error = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    paste.write_text("\n".join([*(f"{error} {t}" for _, t, _ in SHAPES if "\n" not in t), *(t for _, t, _ in SHAPES)]))
    result = CliRunner().invoke(cli, ["triage", str(paste), "-f", fmt])
    assert result.exit_code == 1, result.output
    _assert_no_canary(result.output, f"triage {fmt}")
    if fmt == "json":
        import jsonschema

        data = json.loads(result.output)
        jsonschema.Draft202012Validator(json.loads((SCHEMAS / "triage.schema.json").read_text())).validate(data)
        assert any(REDACTED in line for c in data["causes"] for line in c["evidence"])  # the evidence was quoted, scrubbed


def test_baseline_writes_hide_every_shape(tmp_path, monkeypatch):
    from envdoctor.sources.baseline import write_baseline

    for k in ENV_SECRETS:
        monkeypatch.delenv(k, raising=False)
    path = tmp_path / "b.json"
    facts = {"env_vars": {k: v for k, (v, _) in ENV_SECRETS.items()}, "notes": {f"n{i}": t for i, (_, t, _) in enumerate(SHAPES)}}
    write_baseline(str(path), facts)
    text = path.read_text()
    json.loads(text)
    _assert_no_canary(text, "baseline")


@pytest.mark.slow
def test_scrubbing_is_linear_on_hostile_inputs():
    """Each rule's worst case, 200 KB long: a super-linear rule would not finish here."""
    s = Scrubber(("canaryvalue1",))
    for text in (
        "a" * 200_000,
        "a=" * 100_000,
        "-" * 200_000,
        "x://" + "@a" * 100_000,
        "https://h/" + "a/" * 100_000,
        "https://h/?" + "a=b&" * 50_000,
        "%41" * 70_000,
        "A" * 200_000 + "=",
        "mysql " + "x " * 100_000,
        "login " * 40_000,
        "-----BEGIN PRIVATE KEY-----" * 8_000,
        '"k": "' * 40_000,
        "eyJ" + "a" * 100_000 + "." * 3,
        "0123456789abcdef" * 12_000,
        ("a" * 30 + "\n") * 7_000,
    ):
        out = s.text(text)
        assert isinstance(out, str) and len(out) <= len(text) + 64 * (1 + text.count("@") + text.count("="))


CORPUS = Path(__file__).parent / "fixtures" / "triage"


@pytest.mark.parametrize("case", sorted(p.name for p in CORPUS.glob("*.txt")), ids=lambda n: n[:3])
def test_triage_json_is_valid_for_every_corpus_paste_with_secrets_in_its_lines(case):
    """The JSON answer was scrubbed after serialising: a ``token=...`` or ``password="..."`` in
    an evidence line swallowed the closing quote. Now scrubbed as data first, for every paste."""
    import jsonschema

    from envdoctor.core.registry import discover
    from envdoctor.core.triage import triage
    from envdoctor.reporters.triage import render_json
    from envdoctor.sources import read_paste

    text = (CORPUS / case).read_text(encoding="utf-8")
    for suffix in ("", " token=abc123def password=\"pw, x\" Authorization: Bearer abcdef123456 api_key='k1'"):
        pasted = "\n".join(line + suffix for line in text.splitlines())
        t = triage(_REGISTRY(discover), read_paste(pasted), pasted)
        data = json.loads(render_json(t, case))
        jsonschema.Draft202012Validator(json.loads((SCHEMAS / "triage.schema.json").read_text())).validate(data)
        out = json.dumps(data)
        assert "abc123def" not in out and "pw, x" not in out and "abcdef123456" not in out


def _REGISTRY(discover, _cache={}):  # noqa: B006,N802 - one registry for the corpus
    if "reg" not in _cache:
        _cache["reg"] = discover(())
    return _cache["reg"]


def test_a_commit_hash_stored_under_a_hash_name_is_kept():
    """A 40-hex value alone is an API key, unless its name says it is a hash (torch's git_version)."""
    commit = "cf30153c4c131c8164ee7798e5022d810682e2cb"
    r = Report("0", "t", 0.0, {}, (), facts={"torch_build": {"git_version": commit}, "wandb": {"note": commit}})
    out = scrub_report(r, {})
    assert out.facts["torch_build"]["git_version"] == commit
    assert out.facts["wandb"]["note"] == REDACTED
