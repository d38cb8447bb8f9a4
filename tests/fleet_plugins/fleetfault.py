"""A site check for the fleet adapters' tests (loaded with --checks-path): it judges the file
named by $ENVDOCTOR_FAULT_FILE, so a test injects a fault without breaking the machine.
Absent file: pass. Its first line: "fail[:message]" fails (recommended action reset-gpu),
"error" crashes the check (envdoctor could not judge), "hang" never returns."""

import os
import time

from envdoctor import check, fail, ok, skip


@check("fleetfault.marker", tags=("health", "build"))
def marker(env):
    """The injected fault marker is absent"""
    path = env.get("ENVDOCTOR_FAULT_FILE")
    if not path:
        return skip("ENVDOCTOR_FAULT_FILE is not set")
    if not os.path.exists(path):
        return ok(f"no fault injected ({path} absent)")
    with open(path, encoding="utf-8") as f:
        mode, _, message = f.readline().strip().partition(":")
    if mode == "error":
        raise RuntimeError("the fault plugin crashed on purpose")
    if mode == "hang":
        time.sleep(3600)
    return fail(message or "injected fault", "remove the marker file", action="reset-gpu")
