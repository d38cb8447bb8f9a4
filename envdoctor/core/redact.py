"""Keep secrets out of every report, and identities out of public ones.

Two layers, both pure functions of a Report:

* :func:`scrub_report` is always on (the rules are :mod:`envdoctor.core.scrub`'s, whose
  :func:`~envdoctor.core.scrub.scrub` any writer calls on any text or structure): :func:`protect` applies it once, at the report boundary
  (every renderer sees only protected reports; a rank's summary is scrubbed before it travels
  to rank 0). A user pastes envdoctor output into public bug trackers, so a value
  must never be printed when its key looks secret (``HF_TOKEN``, ``AWS_SECRET_ACCESS_KEY``), when
  it looks like a token itself (``hf_...``, ``ghp_...``, ``AKIA...``, a JWT, a long random
  string), or when it is a URL carrying credentials (``https://user:pass@host`` becomes
  ``https://***@host``). It walks *everything* (messages, hints, details, items, facts), so a
  plugin that prints ``os.environ["HF_TOKEN"]`` cannot leak it either: the literal values of
  the process's secret-looking variables are replaced wherever they appear.

* :func:`redact_report` (``--redact``) also replaces the host name, user name, home directory,
  IPv4 addresses and GPU UUIDs/serials with stable placeholders (``<host>``, ``<user>``,
  ``<home>``, ``<ip-1>``, ``<gpu-uuid-1>``, ``<gpu-serial-1>``). The same value always gets the
  same placeholder, so a maintainer can still follow "GPU <gpu-uuid-2> is the one in MIG mode".
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from envdoctor.core.api import Item
from envdoctor.core.report import CheckOutcome, Report

# What a secret looks like and the scrubber live in envdoctor.core.scrub; these names are
# re-exported for the modules that import them from here.
from envdoctor.core.scrub import (  # noqa: F401
    REDACTED,
    SECRET_SEGMENTS,
    SECRET_SUFFIXES,
    SECRET_WORDS,
    Scrubber,
    is_secret_key,
    looks_random,
    scrub,
    scrubber,
    secret_values,
    walk,
)


def _map_report(report: Report, fn: Callable[[str, str | None], str], *, key_rule: bool) -> Report:
    def w(v: Any, key: str | None = None) -> Any:
        return walk(v, fn, key=key, key_rule=key_rule)

    def outcome(r: CheckOutcome) -> CheckOutcome:
        return dataclasses.replace(
            r,
            title=fn(r.title, None),
            message=fn(r.message, None),
            hint=fn(r.hint, None),
            source=fn(r.source, None),
            details=w(dict(r.details)),
            items=tuple(item(i) for i in r.items),
            fixes=tuple(dataclasses.replace(f, argv=tuple(fn(a, None) for a in f.argv)) for f in r.fixes),
        )

    def item(i: Item) -> Item:
        # An item named after a secret variable (a plugin listing HF_TOKEN) shows no value.
        if key_rule and i.message and is_secret_key(i.name):
            return dataclasses.replace(i, message=REDACTED)
        return dataclasses.replace(i, name=fn(i.name, None), message=fn(i.message, None))

    facts = {fn(k, None): walk(v, fn, key=k, path=("facts",), key_rule=key_rule) for k, v in report.facts.items()}
    return dataclasses.replace(
        report,
        platform=w(dict(report.platform)),
        options=w(dict(report.options)),
        facts=facts,
        results=tuple(outcome(r) for r in report.results),
    )


def scrub_report(report: Report, env: Mapping[str, str] | None = None) -> Report:
    """The always-on layer. ``env`` defaults to this process's environment."""
    scrubber = Scrubber(secret_values(os.environ if env is None else env))
    return _map_report(report, scrubber.text, key_rule=True)


# ---------------------------------------------------------------- --redact (identities)

_IPV4 = re.compile(r"(?<![\w.\-+])((?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3})(?![\w\-+]|\.\d)")
_GPU_UUID = re.compile(r"\b(?:GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b")
# Not identifying: loopback, any-address, and the like.
_KEEP_IPS = frozenset({"0.0.0.0", "127.0.0.1", "255.255.255.255"})


@dataclass(frozen=True)
class Identity:
    hostnames: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    homes: tuple[str, ...] = ()


def _nonempty(xs: Iterable[str | None], minlen: int = 1) -> tuple[str, ...]:
    out: list[str] = []
    for x in xs:
        if x and len(x) >= minlen and x not in out:
            out.append(x)
    return tuple(out)


def local_identity(report: Report | None = None) -> Identity:
    """Who and where this is: names from the machine, its environment and the report itself."""
    import getpass
    import socket

    hosts: list[str | None] = []
    if report is not None:
        hosts.append(str(report.platform.get("hostname") or ""))
    try:
        hosts.append(socket.gethostname())
    except OSError:
        pass
    hosts += [h.split(".", 1)[0] for h in list(hosts) if h]
    users: list[str | None] = [os.environ.get(k) for k in ("LOGNAME", "USER", "LNAME", "USERNAME")]
    homes: list[str | None] = [os.environ.get("HOME")]
    try:
        users.append(getpass.getuser())
    except Exception:  # noqa: BLE001 - no passwd entry in some containers (KeyError/OSError)
        pass
    try:
        import pwd

        ent = pwd.getpwuid(os.getuid())
        users.append(ent.pw_name)
        homes.append(ent.pw_dir)
    except (ImportError, KeyError, OSError):
        pass
    # A home of "/" would erase every path; "localhost" identifies nobody.
    homes_t = tuple(h.rstrip("/") for h in _nonempty(homes) if h.rstrip("/"))
    return Identity(
        hostnames=tuple(h for h in _nonempty(hosts, 2) if h != "localhost"),
        users=_nonempty(users, 2),
        homes=homes_t,
    )


@dataclass
class Anonymizer:
    """Replaces identities with placeholders, numbering IPs, GPU UUIDs and serials in the
    order they are first met so the same value always reads the same."""

    identity: Identity
    serials: tuple[str, ...] = ()
    seen: dict[str, dict[str, str]] = field(default_factory=dict)

    def _placeholder(self, kind: str, value: str) -> str:
        table = self.seen.setdefault(kind, {})
        if value not in table:
            table[value] = f"<{kind}-{len(table) + 1}>"
        return table[value]

    def text(self, s: str, key: str | None = None) -> str:
        for home in sorted(self.identity.homes, key=len, reverse=True):
            s = re.sub(re.escape(home) + r"(?=/|\b|$)", "<home>", s)
        s = _GPU_UUID.sub(lambda m: self._placeholder("gpu-uuid", m.group(0)), s)
        for serial in self.serials:
            s = re.sub(rf"(?<![\w]){re.escape(serial)}(?![\w])", lambda m: self._placeholder("gpu-serial", m.group(0)), s)
        if not (key and "version" in key.lower()):  # cuBLAS 12.4.5.8 is a version, not an address
            s = _IPV4.sub(lambda m: m.group(0) if m.group(0) in _KEEP_IPS else self._placeholder("ip", m.group(0)), s)
        # "_" is no boundary here: Inductor's default cache is /tmp/torchinductor_<user>.
        for host in sorted(self.identity.hostnames, key=len, reverse=True):
            s = re.sub(rf"(?<![A-Za-z0-9\-]){re.escape(host)}(?![A-Za-z0-9\-])", "<host>", s)
        for user in sorted(self.identity.users, key=len, reverse=True):
            s = re.sub(rf"(?<![A-Za-z0-9\-]){re.escape(user)}(?![A-Za-z0-9\-])", "<user>", s)
        return s


def _gpu_serials(facts: Mapping[str, Any]) -> tuple[str, ...]:
    out: list[str] = []
    for fact in ("gpus", "visible_gpus"):
        gpus = facts.get(fact)
        if isinstance(gpus, list):
            for g in gpus:
                serial = g.get("serial") if isinstance(g, Mapping) else None
                if isinstance(serial, str) and len(serial) >= 4 and serial.lower() not in ("n/a", "unknown", "[n/a]") and serial not in out:
                    out.append(serial)
    return tuple(out)


_NETWORK_FS = ("nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "ceph", "glusterfs", "beegfs", "gpfs", "fuse.sshfs", "9p", "afs")


def _mount_servers(facts: Mapping[str, Any]) -> tuple[str, ...]:
    """Server names in network mounts' sources (``nfs-srv:/export``, ``//filer/share``,
    ``mon1,mon2:/ceph``): they name the site's infrastructure."""
    out: list[str] = []
    mounts = facts.get("mounts")
    for m in mounts if isinstance(mounts, list) else []:
        if not isinstance(m, Mapping) or str(m.get("fstype", "")) not in _NETWORK_FS:
            continue
        src = str(m.get("source") or "")
        head = src[2:].split("/", 1)[0] if src.startswith("//") else src.split(":/", 1)[0] if ":/" in src else ""
        for server in head.split(","):
            server = server.split("@", 1)[0].strip()  # lustre: 10.0.0.1@tcp
            if len(server) >= 2 and server not in out:
                out.append(server)
    return tuple(out)


def _with_hosts(identity: Identity, hosts: Iterable[str]) -> Identity:
    extra = tuple(h for h in hosts if h not in identity.hostnames)
    return dataclasses.replace(identity, hostnames=identity.hostnames + extra)


def anonymizer(report: Report, identity: Identity | None = None) -> Anonymizer:
    """The ``--redact`` replacer for this report's machine (its host, user, home, network-mount
    servers, GPU serials); one instance numbers placeholders the same across every file it sees."""
    ident = _with_hosts(identity or local_identity(report), _mount_servers(report.facts))
    return Anonymizer(ident, serials=_gpu_serials(report.facts))


def redact_report(report: Report, identity: Identity | None = None, anon: Anonymizer | None = None) -> Report:
    """The ``--redact`` layer (apply after :func:`scrub_report`)."""
    return _map_report(report, (anon or anonymizer(report, identity)).text, key_rule=False)


# ---------------------------------------------------------------- reports read back from JSON


def protect(report: Report, redact: bool = False, env: Mapping[str, str] | None = None, anon: Anonymizer | None = None) -> Report:
    """The report boundary: secrets always, identities with ``--redact`` (``anon``: the replacer
    other files written with the report share). Applied once, before any rendering."""
    report = scrub_report(report, env)
    return redact_report(report, anon=anon) if redact else report


def scrub_data(data: Any, env: Mapping[str, str] | None = None) -> Any:
    """:func:`scrub_report` for a report's JSON form (``envdoctor diff`` reads old files,
    possibly written by an envdoctor without this layer)."""
    return walk(data, scrubber(env).text, key_rule=True)


def redact_data(reports: list[Any]) -> list[Any]:
    """:func:`redact_report` for JSON forms; one placeholder table for all of them, so the same
    GPU in two reports reads the same."""
    hosts: list[str] = []
    serials: list[str] = []
    for d in reports:
        if isinstance(d, Mapping):
            plat, facts = d.get("platform"), d.get("facts")
            if isinstance(plat, Mapping) and isinstance(plat.get("hostname"), str):
                hosts.append(plat["hostname"])
            if isinstance(facts, Mapping):
                serials += [s for s in _gpu_serials(facts) if s not in serials]
                hosts += _mount_servers(facts)
    here = local_identity()
    more = tuple(h for h in hosts + [h.split(".", 1)[0] for h in hosts] if len(h) >= 2 and h not in here.hostnames)
    anon = Anonymizer(dataclasses.replace(here, hostnames=here.hostnames + more), serials=tuple(serials))
    return [walk(d, anon.text) for d in reports]
