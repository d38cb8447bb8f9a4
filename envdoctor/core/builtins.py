"""The built-in checks: the one place the engine names them (as pytest's ``default_plugins`` and
llm's ``DEFAULT_PLUGINS`` do), so they load from a static list, not from an installed entry point.

They live in the top-level ``checks/`` folder, installed as the package ``envdoctor_checks``. In a
checkout that is not installed (``PYTHONPATH=<checkout> python -m envdoctor``) that folder is not
importable under its package name, so it is loaded by file path, the one mechanism the probe boots
use too (core.probe), and registered in ``sys.modules`` once: every later import of
``envdoctor_checks`` (its own submodules, the probe bodies) finds that one copy. Everything the
engine needs from the built-ins by name (the probe's preload body, bench's body, the areas'
order) the built-in package declares itself, and :func:`declared` reads it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any

PACKAGE = "envdoctor_checks"

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _checkout_dir() -> str | None:
    """``checks/`` beside this envdoctor package when it is a source checkout (a pyproject.toml
    there): the built-ins that belong to this very engine, installed or not."""
    checks = os.path.join(_ROOT, "checks")
    if os.path.isfile(os.path.join(checks, "__init__.py")) and os.path.isfile(os.path.join(_ROOT, "pyproject.toml")):
        return checks
    return None


def location() -> str | None:
    """The directory of the built-in package, found without importing it; None when there is none."""
    loaded = sys.modules.get(PACKAGE)
    if loaded is not None and getattr(loaded, "__path__", None):
        return list(loaded.__path__)[0]
    found = _checkout_dir()
    if found:
        return found
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def load_by_path(name: str, directory: str) -> ModuleType:
    """Import the package in ``directory`` as ``name`` from its files (its submodules then import
    as usual, through its ``__path__``)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(directory, "__init__.py"), submodule_search_locations=[directory])
    if spec is None or spec.loader is None:
        raise ImportError(f"{directory} holds no Python package")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def load() -> ModuleType:
    """The built-in package, imported once: the checkout's own ``checks/`` when envdoctor runs from
    one, else the installed ``envdoctor_checks``. ImportError when neither exists."""
    if PACKAGE in sys.modules:
        return sys.modules[PACKAGE]
    directory = _checkout_dir()
    if directory is not None:
        return load_by_path(PACKAGE, directory)
    return importlib.import_module(PACKAGE)


def declared(name: str, default: Any = None) -> Any:
    """What the built-in package declares under ``name`` (``PRELOAD``, ``BENCH_BODY``,
    ``AREA_ORDER``; see checks/__init__.py); ``default`` when it cannot be loaded."""
    try:
        return getattr(load(), name, default)
    except Exception:  # noqa: BLE001 - a broken install is reported by discovery, not here
        return default
