"""envdoctor's exit codes: one enum, documented in the README and tested in tests/test_cli.py."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0  # healthy (warnings allowed unless --strict)
    FAILED = 1  # a check failed or errored (or warned, under --strict); diff: a regression
    USAGE = 2  # bad option, unknown check, unreadable input, unwritable output
    INTERNAL = 3  # envdoctor's own internal error
    NO_CHECKS = 4  # no check ran (none loaded, or the selection left none): never healthy
    INTERRUPTED = 130  # Ctrl-C or SIGTERM; the partial report is still printed
