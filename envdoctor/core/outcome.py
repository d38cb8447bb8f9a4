"""One check's row (:class:`CheckOutcome`) and the action it recommends; the report around the
rows is :mod:`envdoctor.core.report`. Apart from it because triage judges rows and writes no
report: its start-up loads neither the report nor its verdicts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from envdoctor.core.api import ACTIONS, Fix, Item, Status


@dataclass(frozen=True)
class CheckOutcome:
    """One check's row in a run: its verdict and words, as reporters print them."""

    id: str
    title: str
    status: Status
    message: str = ""
    hint: str = ""
    tags: tuple[str, ...] = ()
    source: str = "built-in"
    details: Mapping[str, Any] = field(default_factory=dict)
    items: tuple[Item, ...] = ()
    duration: float = 0.0
    fixes: tuple[Fix, ...] = ()  # the hint's commands, as data
    action: str = ""  # what the check named (one of ACTIONS), or "" to derive it

    @property
    def area(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def recommended(self) -> str:
        return recommended_action(self.status, self.action, self.fixes)

    @property
    def judged(self) -> bool:
        """False for a row envdoctor could not judge (``error``: the check or its probe could
        not run): such a row is never a finding about the machine, and no adapter drains,
        taints or alerts "unhealthy" on it."""
        return self.status is not Status.ERROR


# Fixes that (re)install or remove a package: their row asks for reinstall-package.
_PACKAGE_TOOLS = frozenset({"pip", "pip3", "uv", "conda", "mamba", "micromamba", "apt-get", "apt", "dnf", "yum", "zypper"})
_PACKAGE_VERBS = frozenset({"install", "reinstall", "uninstall", "remove", "upgrade", "sync"})


def fix_action(fix: Fix) -> str:
    """reinstall-package for a package manager's (re)install or removal (``python -m pip install``
    included), fix-environment for anything else (a variable, a mount, the linker cache)."""
    words = [a.rsplit("/", 1)[-1] for a in fix.argv]
    for n, word in enumerate(words):
        if word in _PACKAGE_TOOLS and _PACKAGE_VERBS & set(words[n + 1 :]):
            return "reinstall-package"
    return "fix-environment"


def recommended_action(status: Status, action: str, fixes: tuple[Fix, ...] = ()) -> str:
    """The recommended action of a row: "none" unless it warns or fails (an error is "could not
    judge", never a finding); else what the check named, else what its fixes do (the strongest),
    else fix-environment."""
    if status not in (Status.WARN, Status.FAIL):
        return "none"
    if action in ACTIONS:
        return action
    if fixes:
        return max((fix_action(f) for f in fixes), key=ACTIONS.index)
    return "fix-environment"
