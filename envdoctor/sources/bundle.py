"""Reading a bundle that ``envdoctor bundle`` wrote (a gzipped tar): its report for ``diff`` and
``fleet``, its report and logs as the paste for ``triage``.

Bounded like every reader: at most ``MAX_PACKED`` bytes of archive are read, members are read
only while the unpacked total stays under ``MAX_UNPACKED`` (a bundle is at most 1 MB unpacked;
a gzip bomb stops there, before its large member is inflated), at most ``MAX_MEMBERS`` entries
are looked at, and only regular files directly under the bundle's folder are read.
"""

from __future__ import annotations

import io
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tarfile

ROOT = "envdoctor-bundle"
GZIP_MAGIC = b"\x1f\x8b"
MAX_PACKED = 16 * 1024 * 1024
MAX_UNPACKED = 8 * 1024 * 1024
MAX_MEMBERS = 256
# The captured logs and outputs triage reads (with the JSON report).
PASTE_SUFFIXES = (".log", ".txt")


class BundleError(Exception):
    """A gzip file that cannot be read as a bundle; ``str()`` is the reason."""


def is_bundle(data: bytes) -> bool:
    return data[:2] == GZIP_MAGIC


def members(data: bytes) -> dict[str, str]:
    """{file name: text} of the bundle's files (decoded as UTF-8, bad bytes replaced)."""
    import tarfile  # here: every triage asks is_bundle, few read a bundle

    out: dict[str, str] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for count, info in enumerate(_entries(tar)):
                if count >= MAX_MEMBERS:
                    break
                if info.offset_data + info.size > MAX_UNPACKED:
                    raise BundleError(f"unpacks to more than {MAX_UNPACKED // (1024 * 1024)} MB, which no bundle does")
                folder, _, name = info.name.partition("/")
                if info.isfile() and folder == ROOT and name and "/" not in name:
                    f = tar.extractfile(info)
                    out[name] = f.read(info.size).decode("utf-8", "replace") if f else ""
    except (tarfile.TarError, EOFError, zlib.error, OSError) as e:
        raise BundleError(f"is gzip data but not a readable envdoctor bundle ({type(e).__name__})") from None
    if "manifest.json" not in out:
        raise BundleError("is a gzipped archive without an envdoctor bundle's manifest.json; make one with `envdoctor bundle`")
    return out


def _entries(tar: tarfile.TarFile):
    while True:
        info = tar.next()
        if info is None:
            return
        yield info


def paste_text(data: bytes) -> str:
    """The text triage reads from a bundle: its logs and captured outputs (the error text, quoted
    as evidence from there), then its JSON report (the facts whole)."""
    files = members(data)
    parts = [text for name, text in sorted(files.items()) if name.endswith(PASTE_SUFFIXES)]
    parts.append(files.get("report.json", ""))
    return "\n\n".join(p for p in parts if p.strip())


def report_text(data: bytes) -> str:
    """The JSON report inside the bundle whose bytes are ``data``."""
    if len(data) > MAX_PACKED:
        raise BundleError(f"is larger than {MAX_PACKED // (1024 * 1024)} MB, which no bundle is")
    report = members(data).get("report.json")
    if report is None:
        raise BundleError("is an envdoctor bundle without report.json")
    return report
