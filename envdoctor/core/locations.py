"""Where the stack writes when it compiles, resolved from an environment as the stack resolves it.

Triton's cache: ``TRITON_CACHE_DIR``, else ``<TRITON_HOME or HOME>/.triton/cache``
(``triton/knobs.py``). Inductor's cache: ``TORCHINDUCTOR_CACHE_DIR``, else
``<tempfile.gettempdir()>/torchinductor_<getpass.getuser()>``
(``torch/_inductor/runtime/cache_dir_utils.py``). The temporary directory, as
``tempfile.gettempdir()`` chooses it: Inductor's precompiled headers and every compiler's
temporaries go there. HOME's cache (``XDG_CACHE_HOME``, else ``~/.cache``).

One resolution serves three users: the checks that judge each place, the probe workers, which
compile inside a fresh subdirectory of each (so a smoke meets the user's file systems, not a
private one), and the smokes, which name the place a failed compile wrote to.
"""

from __future__ import annotations

import os
import pwd
import re
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """One place the stack writes to while compiling."""

    key: str  # "triton", "inductor", "temp", "home_cache"
    what: str  # "Triton cache"
    path: str | None  # absolute; None when nothing can resolve it (no HOME, no passwd entry)
    source: str  # the variable that chose it (HOME for Triton's default), or "default"
    variable: str  # the variable that moves it (what a fix sets)
    default: str  # the rule that chooses it when ``variable`` is unset

    def chosen_by(self) -> str:
        """Who chose this path: 'TORCHINDUCTOR_CACHE_DIR', or
        'TRITON_CACHE_DIR unset: the default <TRITON_HOME or HOME>/.triton/cache (from HOME)'."""
        if self.source == self.variable:
            return self.variable
        origin = f" (from {self.source})" if self.source not in ("default", "none") else ""
        return f"{self.variable} unset: the default {self.default}{origin}"


def user_name(env: Mapping[str, str]) -> tuple[str | None, str]:
    """getpass.getuser(), with its environment taken from ``env``: (name or None, where from)."""
    for var in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        if env.get(var):
            return env[var], var
    try:
        return pwd.getpwuid(os.getuid()).pw_name, "passwd"
    except KeyError:
        return None, f"uid {os.getuid()} has no passwd entry and LOGNAME/USER are unset"


def cannot_create_in(directory: str) -> OSError | None:
    """Why a file cannot be created in ``directory`` (one is created and removed), or None when
    it can."""
    import tempfile  # on use: a paste's triage creates no file

    try:
        fd, name = tempfile.mkstemp(prefix=".envdoctor-", dir=directory)
    except OSError as e:
        return e
    os.close(fd)
    try:
        os.unlink(name)
    except OSError:
        pass
    return None


def temp_dir(env: Mapping[str, str]) -> tuple[str, str]:
    """tempfile.gettempdir() for ``env`` (the first candidate a file can be created in) and the
    variable that named it, or 'default'."""
    named = [(env[v], v) for v in ("TMPDIR", "TEMP", "TMP") if env.get(v)]
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = "/"
    candidates = named + [(d, "default") for d in ("/tmp", "/var/tmp", "/usr/tmp", cwd)]
    for path, source in candidates:
        if os.path.isdir(path) and cannot_create_in(path) is None:
            return os.path.abspath(path), source
    return os.path.abspath(candidates[0][0]), candidates[0][1]


def _home(env: Mapping[str, str]) -> tuple[str | None, str]:
    if env.get("HOME"):
        return env["HOME"], "HOME"
    try:  # os.path.expanduser("~") falls back to the passwd entry; without one it stays "~"
        return pwd.getpwuid(os.getuid()).pw_dir, "passwd (HOME is unset)"
    except KeyError:
        return None, "none"


def triton_cache(env: Mapping[str, str]) -> Location:
    path: str | None
    if env.get("TRITON_CACHE_DIR"):
        path, source = env["TRITON_CACHE_DIR"], "TRITON_CACHE_DIR"
    else:
        home, source = (env["TRITON_HOME"], "TRITON_HOME") if env.get("TRITON_HOME") else _home(env)
        path = os.path.join(home, ".triton", "cache") if home else None
    where = os.path.abspath(path) if path else None
    return Location("triton", "Triton cache", where, source, "TRITON_CACHE_DIR", "<TRITON_HOME or HOME>/.triton/cache")


def inductor_cache(env: Mapping[str, str]) -> Location:
    if env.get("TORCHINDUCTOR_CACHE_DIR"):
        path, source = env["TORCHINDUCTOR_CACHE_DIR"], "TORCHINDUCTOR_CACHE_DIR"
    else:
        user = user_name(env)[0]
        name = user if user is not None else f"uid_{os.getuid()}"
        path, source = os.path.join(temp_dir(env)[0], "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", name)), "default"
    rule = "<tempfile.gettempdir()>/torchinductor_<user>"
    return Location("inductor", "Inductor cache", os.path.abspath(path), source, "TORCHINDUCTOR_CACHE_DIR", rule)


def temp_location(env: Mapping[str, str]) -> Location:
    path, source = temp_dir(env)
    return Location(
        "temp", "temporary directory", path, source, "TMPDIR", "chosen by tempfile.gettempdir() (TEMP, TMP, /tmp, /var/tmp, ...)"
    )


def home_cache(env: Mapping[str, str]) -> Location:
    if env.get("XDG_CACHE_HOME"):
        return Location("home_cache", "HOME's cache", os.path.abspath(env["XDG_CACHE_HOME"]), "XDG_CACHE_HOME", "XDG_CACHE_HOME", "")
    home, source = _home(env)
    path = os.path.abspath(os.path.join(home, ".cache")) if home else None
    return Location("home_cache", "HOME's cache", path, source, "XDG_CACHE_HOME", "~/.cache")


def compile_locations(env: Mapping[str, str]) -> dict[str, Location]:
    """Every place a compile writes to, by key: triton, inductor, temp, home_cache."""
    return {loc.key: loc for loc in (triton_cache(env), inductor_cache(env), temp_location(env), home_cache(env))}


def missing_ancestors(path: str) -> list[str]:
    """``path`` and those of its parents that do not exist yet, deepest first: what creating
    ``path`` would create, so that cleaning up after it can remove them again (if empty)."""
    out = []
    p = os.path.abspath(path)
    while not os.path.lexists(p):
        out.append(p)
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    return out
