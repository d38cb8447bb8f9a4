"""The installed entry points of a group, without importing ``importlib.metadata`` when none can exist.

``importlib.metadata`` costs about 20 ms to import (``email``, ``zipfile``, ``csv``, ``inspect``)
and reads every distribution's metadata on each ``entry_points()`` call; ``envdoctor triage``
asks twice (plugin checks, plugin readers) and, with no plugin installed, learns nothing. So
:func:`installed` first looks where ``importlib.metadata``'s own path finder looks (each
``sys.path`` directory's ``*.dist-info`` and ``*.egg-info`` folders) for an ``entry_points.txt``
that could declare the group. Only when one could (or when the scan cannot be sure: a zip or an
egg on ``sys.path``, a finder of another kind that lists distributions) is
``importlib.metadata`` asked, and its answer is the answer. The scan may say "maybe" wrongly,
never "none" wrongly: everything it skips, ``importlib.metadata`` would not have found.

Once ``importlib.metadata`` is loaded anyway (pytest, a plugin, a check that ran), the scan
saves nothing and it is asked directly.
"""

from __future__ import annotations

import os
import sys
from typing import Any

_INFO = (".dist-info", ".egg-info")


def installed(group: str, ignore: str = "") -> list[Any]:
    """``importlib.metadata.entry_points(group=group)`` as a list; ``[]`` without loading it when
    no distribution can declare an entry point in ``group`` other than one whose module is
    ``ignore`` (the built-ins' own, which an older install's metadata declares). Errors of broken
    metadata propagate, as from ``importlib.metadata``."""
    if "importlib.metadata" not in sys.modules and not may_declare(group, ignore, sys.path):
        return []
    import importlib.metadata as md

    return list(md.entry_points(group=group))


def may_declare(group: str, ignore: str, path: list[Any]) -> bool:
    """Whether some distribution on ``path`` might declare an entry point in ``group`` (other
    than one naming the module ``ignore``)."""
    if _other_finders():
        return True
    return any(_entry_may_declare(entry, group, ignore) for entry in path)


def _other_finders() -> bool:
    """A meta-path finder other than the standard path finder that can list distributions:
    only ``importlib.metadata`` knows what it finds."""
    from importlib.machinery import PathFinder

    return any(finder is not PathFinder and hasattr(finder, "find_distributions") for finder in sys.meta_path)


def _entry_may_declare(entry: Any, group: str, ignore: str) -> bool:
    if not isinstance(entry, str):
        return True
    root = entry or "."
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return False  # importlib.metadata finds nothing there either
    except OSError:
        return os.path.exists(root)  # a zip (importlib.metadata reads inside it) or unreadable: ask it
    if root.lower().rstrip("/\\").endswith(".egg"):
        return True  # an egg's EGG-INFO: importlib.metadata's reading of it
    for name in names:
        if name.lower().endswith(_INFO) and _info_may_declare(os.path.join(root, name), group, ignore):
            return True
    return False


def _info_may_declare(info: str, group: str, ignore: str) -> bool:
    try:
        with open(os.path.join(info, "entry_points.txt"), encoding="utf-8") as f:
            text = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return False  # no entry points (an egg-info may be a file: PKG-INFO itself)
    except (OSError, ValueError):
        return True  # unreadable or not UTF-8: importlib.metadata says what it makes of it
    return _text_may_declare(text, group, ignore)


def _text_may_declare(text: str, group: str, ignore: str) -> bool:
    """Whether ``text`` (an ``entry_points.txt``) has an entry in a section that names ``group``
    (loosely: case and spaces aside, so the scan errs toward "maybe") other than one naming the
    module ``ignore``; or a line that ``importlib.metadata`` cannot read (an entry without ``=``,
    in any section): then the error is its to report."""
    inside = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            inside = line.strip("[]").strip().lower() == group.lower()
        elif inside is not None and "=" not in line:
            return True
        elif inside and (not ignore or line.partition("=")[2].split(":", 1)[0].strip() != ignore):
            return True
    return False
