"""``envdoctor triage-event EVENT.json``: the reply to a GitHub ``issues`` event (opened, edited).

Reads the event payload GitHub Actions writes to ``$GITHUB_EVENT_PATH`` and writes the
Markdown reply for the issue (``-o FILE`` or stdout). The reply starts with a hidden marker
(:data:`MARKER`): the Action (``action.yml``) finds its own earlier comment by it and edits it
in place, so an issue has one envdoctor comment however often it is edited.

Silent (nothing written, exit 0) when the body shows nothing to read: no tool output, no error
text. The one exception is an issue template's environment section left empty: then the reply
is a short "what to paste". Pull requests, other actions and other events are silent too.
The reply never echoes secrets (the triage renderer scrubs them) or terminal escape sequences.
Exit codes: 0 a reply (or silence), 1 a reply naming a cause, 2 a payload that cannot be read.
"""

from __future__ import annotations

import json
import re
from typing import Any

import click

from envdoctor.commands.triage import deliver, prepare
from envdoctor.core.exitcode import ExitCode

MARKER = "<!-- envdoctor-triage -->"
MAX_EVENT = 16 * 1024 * 1024
ACTIONS = ("opened", "edited", "reopened")

# An issue form's environment heading, and what GitHub writes for a field left empty.
ENV_HEADING = re.compile(r"^#{2,4}[ \t]{0,4}(?:your (?:current )?)?(?:environment|system info|versions?|env)\b[^\n]{0,80}$", re.I | re.M)
HEADING = re.compile(r"^#{2,4}[ \t]", re.M)
EMPTY_VALUES = {"", "_no response_", "no response", "n/a", "none", "-"}
ESCAPES = re.compile(
    r"\x1b\[[0-9;?]{0,40}[ -/]{0,4}[@-~]|\x1b\][^\x07\x1b]{0,400}(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"
)

ASK = """{marker}
Thanks for the report. The environment section is empty: please paste, inside a code block,

- the output of `python -m torch.utils.collect_env`
- the output of `nvidia-smi` (or `rocm-smi` on AMD)
- the full error message or traceback

<sub>`envdoctor triage` reads these and looks for known environment causes.</sub>
"""


class EventError(Exception):
    pass


def load_event(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_EVENT + 1)
    except OSError as e:
        raise EventError(f"cannot read {path}: {e.strerror or e}") from None
    if len(data) > MAX_EVENT:
        raise EventError(f"{path} is larger than {MAX_EVENT >> 20} MiB: not a GitHub event payload")
    try:
        event = json.loads(data.decode("utf-8", "replace"))
    except ValueError as e:
        raise EventError(f"{path} is not JSON: {e}") from None
    if not isinstance(event, dict) or not isinstance(event.get("issue"), dict):
        raise EventError(f"{path} is not a GitHub issues event (no 'issue' object)")
    return event


def _section_empty(body: str) -> bool:
    """The template's environment section is there and holds nothing but placeholders."""
    m = ENV_HEADING.search(body)
    if not m:
        return False
    rest = body[m.end() :]
    nxt = HEADING.search(rest)
    section = rest[: nxt.start()] if nxt else rest
    lines = [ln.strip() for ln in section.splitlines()]
    content = [ln for ln in lines if ln and not ln.startswith(("```", "<details", "</details", "<summary", "<!--"))]
    return all(c.lower() in EMPTY_VALUES or c.lower().startswith("the output of") for c in content)


def reply(event: dict[str, Any], reg=None) -> tuple[str, bool]:
    """(the Markdown reply or "" for silence, whether it names a cause)."""
    from envdoctor.core.triage import triage
    from envdoctor.reporters.triage import render_markdown
    from envdoctor.sources import read_paste

    issue = event["issue"]
    if event.get("action") not in ACTIONS or issue.get("pull_request"):
        return "", False
    body = ESCAPES.sub("", str(issue.get("body") or ""))
    if not body.strip():
        return ASK.format(marker=MARKER), False
    if reg is None:
        from envdoctor.core.registry import discover

        reg = discover(paste=True)
    t = triage(reg, read_paste(body), body)
    if not t.kinds and not t.found:
        return (ASK.format(marker=MARKER), False) if _section_empty(body) else ("", False)
    answer = render_markdown(t, f"issue #{issue.get('number', '?')}")
    return f"{MARKER}\n{ESCAPES.sub('', answer)}", t.found


@click.command("triage-event")
@click.argument("event_file", metavar="EVENT.json")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the reply to FILE (nothing is written when silent).")
def triage_event_cmd(event_file, output) -> None:
    """The Markdown reply to a GitHub issues event payload ($GITHUB_EVENT_PATH): the likely
    cause with a hidden marker, or nothing when the issue shows nothing to read."""
    event = prepare(output, "triage-event", load_event, event_file, EventError)
    answer, found = reply(event)
    if answer:
        deliver(answer, output, "triage-event")
    raise SystemExit(ExitCode.FAILED if found else ExitCode.OK)
