"""A run's default time limits. Light on purpose: the CLI's options and the built-in
``distributed`` checks read them when ``envdoctor --help`` and ``envdoctor list`` start."""

from __future__ import annotations

# The one place for the run's time defaults.
DEFAULT_TIMEOUT = 300.0  # --timeout: the whole local run
DEFAULT_RANK_TIMEOUT = 120.0  # --rank-timeout: a silent rank is reported after this long


def distributed_budget(local_timeout: float, rank_timeout: float) -> float:
    """How long the distributed probe may take: the slowest rank's local checks (bounded by
    its --timeout), then up to a few rank timeouts (rendezvous, reports, collectives), plus
    the child's start-up. The engine's session deadline and the probe call both use it."""
    return local_timeout + 5 * rank_timeout + 60
