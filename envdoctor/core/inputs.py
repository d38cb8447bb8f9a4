"""A run's input files and identities: ``--baseline FILE``, ``--lock FILE``, ``--as-user UID[:GID]``.

Each is validated before anything runs (a missing baseline, a lock that pins nothing, a bad UID,
``--as-user`` without root: one line, exit code 2), goes into the ``options`` fact for the
checks, and brings in the opt-in checks that take the fact it supplies: the checks taking
``baseline`` with ``--baseline``, those taking ``lock`` with ``--lock``, those taking
``rehearsal`` with ``--as-user``. Which checks those are is read from their parameters, so a
plugin's check that takes ``baseline`` comes with ``--baseline`` too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from envdoctor.core.api import CheckSpec
from envdoctor.core.selection import judged_here, matches

# fact a check takes -> the option that supplies it
INPUT_FACTS = {"baseline": "--baseline", "lock": "--lock", "rehearsal": "--as-user"}


def parse_as_user(text: str) -> tuple[int, int]:
    """``"1000680000"`` or ``"1000:0"`` -> (uid, gid); the gid defaults to 0 (OpenShift's root group)."""
    m = re.fullmatch(r"\s*(\d+)(?::(\d+))?\s*", text or "")
    if not m:
        raise ValueError(f"--as-user wants UID or UID:GID (numbers), got {text!r}")
    return int(m.group(1)), int(m.group(2) or 0)


@dataclass(frozen=True)
class RunInputs:
    baseline: str | None = None
    lock: str | None = None
    as_user: str | None = None  # normalised "UID:GID"

    def given(self) -> frozenset[str]:
        """The input facts this run supplies."""
        have = {"baseline": self.baseline, "lock": self.lock, "rehearsal": self.as_user}
        return frozenset(k for k, v in have.items() if v)

    def as_options(self) -> dict[str, Any]:
        """Entries for the ``options`` fact (absent when not given)."""
        out = {"baseline": self.baseline, "lock": self.lock, "as_user": self.as_user}
        return {k: v for k, v in out.items() if v}


def validate(
    baseline: str | None = None,
    lock: str | None = None,
    as_user: str | None = None,
    *,
    labels: tuple[str, str] = ("--baseline", "--lock"),
    euid: int | None = None,
) -> RunInputs:
    """The inputs, each tried now; raises ValueError with one line for the user, starting with
    what named the file (``labels``: the option, or the config file's key)."""
    from envdoctor.sources.baseline import BaselineError, load_baseline, load_lock

    for option, path, load in ((labels[0], baseline, load_baseline), (labels[1], lock, load_lock)):
        try:
            if path:
                load(path)
        except BaselineError as e:
            raise ValueError(f"{option}: {e}") from None
    user = None
    if as_user:
        uid, gid = parse_as_user(as_user)
        if (os.geteuid() if euid is None else euid) != 0:
            raise ValueError(
                "--as-user: switching to another user needs root; rehearse during the image build, where it runs as root "
                "(or run as that user directly: envdoctor check)"
            )
        user = f"{uid}:{gid}"
    return RunInputs(baseline, lock, user)


def patterns(option: str, values: Sequence[str]) -> list[str]:
    """``--select``/``--deselect`` values as patterns; a value naming none (``''``, ``','``) is
    a mistake, not "every check" (ValueError, one line)."""
    from envdoctor.core.selection import split_patterns

    empty = next((v for v in values if not split_patterns([v])), None)
    if empty is not None:
        raise ValueError(f"{option} {empty!r}: names no check (give check ids, id prefixes, tags or globs, comma-separated)")
    return split_patterns(values)


def needs(spec: CheckSpec) -> frozenset[str]:
    """The input facts a check takes (required parameters only)."""
    return frozenset(p.name for p in spec.params if p.name in INPUT_FACTS and not p.optional)


def with_inputs(
    chosen: Sequence[CheckSpec],
    available: Sequence[CheckSpec],
    inputs: RunInputs,
    profile: str,
    select: Sequence[str],
    deselect: Sequence[str],
) -> list[CheckSpec]:
    """The chosen checks plus those that take a given input (not deselected, judged under the
    profile); when some input is given, a check taking another one that is not given is left
    out (``--baseline`` alone does not run ``baseline.lock``) unless named by its id."""
    given = inputs.given()
    out = [s for s in chosen if not given or needs(s) <= given or s.id in select]
    have = {s.id for s in out}
    for s in available:
        want = needs(s)
        if s.id in have or not want or not want <= given:
            continue
        if not judged_here(s, profile) or any(matches(s, p) for p in deselect):
            continue
        out.append(s)
        have.add(s.id)
    return out
