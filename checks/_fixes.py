"""Remediation commands as data, shared by the checks (a helper module: not loaded as checks)."""

from __future__ import annotations

import os

from envdoctor import Fix, env_fix

# Distribution ids (os_release["id"], from the distro package) by package manager.
APT = frozenset({"debian", "ubuntu", "linuxmint", "pop", "raspbian", "kali"})
DNF = frozenset({"fedora", "rhel", "centos", "rocky", "almalinux", "amzn", "ol"})


def directory_fix(env_var: str, suggest: str) -> list[Fix]:
    """A hint's ``export VAR=/tmp/name-$(id -u)`` as a fix, for this UID."""
    return [env_fix(env_var, suggest.replace("$(id -u)", str(os.getuid())))]


def system_package(os_release, *, apt: str, dnf: str) -> list[Fix]:
    """Install a system package with this distribution's package manager; none where the
    manager is unknown (the hint's sentence still names both)."""
    distro = (os_release or {}).get("id", "") if os_release else ""
    if distro in APT:
        return [Fix(("apt-get", "install", "-y", apt), scope="system", needs_root=True)]
    if distro in DNF:
        return [Fix(("dnf", "install", "-y", dnf), scope="system", needs_root=True)]
    return []
