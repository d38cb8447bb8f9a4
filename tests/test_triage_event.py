"""``envdoctor triage-event``: the reply to a GitHub issues event, and the Action that posts it.
Payloads in tests/fixtures/github_events carry every field GitHub sends with an issues event
(action, issue with its user, labels, reactions and URLs, repository, sender; ``changes`` on
edits), key for key as in the payload examples GitHub's webhook documentation publishes, with
values of a fictional repository. The bodies follow the vLLM and PyTorch issue forms; the
``opened_pytorch_*`` bodies hold a public thread's paste verbatim (from the triage corpus's dev
split), the others error lines quoted from public threads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envdoctor.cli import main
from envdoctor.commands.triage_event import MARKER, load_event, reply

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ROOT / "tests" / "fixtures" / "github_events"


class Result:
    def __init__(self, code: int, output: str) -> None:
        self.exit_code, self.output = code, output


def invoke(args: list[str], capsys) -> Result:
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return Result(e.value.code, out.out + out.err)


@pytest.fixture
def run(tmp_path, capsys):
    def go(name: str):
        out = tmp_path / "reply.md"
        if out.exists():
            out.unlink()
        r = invoke(["triage-event", str(EVENTS / name), "-o", str(out)], capsys)
        return r, (out.read_text(encoding="utf-8") if out.exists() else "")

    return go


# The fields of an issues event as GitHub sends them (its documented payload, 2026): a triage
# reply must work on the whole payload, not a trimmed one.
ISSUE_FIELDS = (
    "url repository_url labels_url comments_url events_url html_url id node_id number title user labels state "
    "locked assignee assignees milestone comments created_at updated_at closed_at author_association "
    "active_lock_reason body reactions timeline_url performed_via_github_app state_reason"
).split()
USER_FIELDS = "login id node_id avatar_url html_url url type site_admin".split()
REPOSITORY_FIELDS = "id node_id name full_name private owner html_url url issues_url default_branch visibility".split()


@pytest.mark.parametrize("path", sorted(EVENTS.glob("*.json")), ids=lambda p: p.name)
def test_every_payload_has_the_fields_github_sends(path):
    ev = json.loads(path.read_text(encoding="utf-8"))
    assert set(ev) >= {"action", "issue", "repository", "sender"}
    assert set(ev["issue"]) >= set(ISSUE_FIELDS), set(ISSUE_FIELDS) - set(ev["issue"])
    assert set(ev["issue"]["user"]) >= set(USER_FIELDS) and set(ev["sender"]) >= set(USER_FIELDS)
    assert set(ev["repository"]) >= set(REPOSITORY_FIELDS)
    assert (ev["action"] == "edited") == ("changes" in ev)


@pytest.mark.parametrize(
    ("name", "cause_id"),
    [
        ("opened_pytorch_73047_toolkit.json", "toolkit_torch_cuda_mismatch"),
        ("opened_pytorch_122924_cpu_build.json", "cpu_torch_on_gpu_machine"),
    ],
)
def test_a_real_thread_s_body_gets_its_established_cause(run, name, cause_id):
    r, text = run(name)
    assert r.exit_code == 1 and text.startswith(MARKER + "\n") and f"`{cause_id}`" in text.split("**Evidence**")[0]


def test_an_opened_issue_gets_the_cause_behind_the_marker(run):
    r, text = run("opened_nccl_shm.json")
    assert r.exit_code == 1, r.output
    assert text.startswith(MARKER + "\n") and "**Likely cause:**" in text
    assert "shm_too_small" in text and "--shm-size" in text


def test_an_edit_gives_the_same_marked_reply(run):
    _, opened = run("opened_nccl_shm.json")
    r, edited = run("edited_nccl_shm.json")
    assert r.exit_code == 1 and edited.splitlines()[0] == MARKER and edited == opened


@pytest.mark.parametrize("name", ["opened_feature_request.json", "opened_pull_request.json", "closed_nccl_shm.json"])
def test_silent_when_there_is_nothing_to_read_or_nothing_to_do(run, tmp_path, name):
    r, text = run(name)
    assert r.exit_code == 0 and text == "" and not (tmp_path / "reply.md").exists()


def test_an_empty_environment_section_gets_what_to_paste(run):
    r, text = run("opened_empty_environment.json")
    assert r.exit_code == 0 and text.startswith(MARKER)
    assert "collect_env" in text and "nvidia-smi" in text and len(text) < 800


def test_no_secret_and_no_terminal_escape_in_the_reply(run):
    r, text = run("opened_secret_and_escapes.json")
    assert r.exit_code == 1 and "gpu_below_required_cc" in text
    assert "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789" not in text
    assert "\x1b" not in text and all(c in "\n\t" or ord(c) >= 32 for c in text)


def test_a_body_that_is_null_asks_for_the_environment():
    event = json.loads((EVENTS / "opened_feature_request.json").read_text())
    event["issue"]["body"] = None
    text, found = reply(event)
    assert text.startswith(MARKER) and not found


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"not json", "not JSON"), (b'{"action": "opened"}', "not a GitHub issues event"), (b"[1, 2]", "not a GitHub issues event")],
)
def test_a_bad_payload_is_one_line_and_exit_2(tmp_path, capsys, content, message):
    p = tmp_path / "event.json"
    p.write_bytes(content)
    r = invoke(["triage-event", str(p)], capsys)
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output


def test_a_missing_payload_is_exit_2(tmp_path, capsys):
    r = invoke(["triage-event", str(tmp_path / "nope.json")], capsys)
    assert r.exit_code == 2 and "cannot read" in r.output


def test_load_event_reads_the_recorded_shape():
    ev = load_event(str(EVENTS / "edited_nccl_shm.json"))
    assert ev["action"] == "edited" and ev["issue"]["number"] == 42 and "changes" in ev


def test_the_action_posts_the_command_s_reply_and_finds_it_by_the_marker():
    action = (ROOT / "action.yml").read_text(encoding="utf-8")
    assert 'envdoctor triage-event "$GITHUB_EVENT_PATH"' in action
    assert f'startswith("{MARKER}")' in action and "PATCH" in action and "POST" in action
