"""Finding checks and facts: entry points (built-ins and third parties alike) and --checks-path.

Discovery is a short pipeline: entry points found → modules imported → decorated objects
collected, sorted for determinism. A plugin that fails to import becomes an ``error`` row
naming the plugin and its distribution; discovery goes on.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import importlib.util
import pkgutil
import sys
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType

from envdoctor.core.api import CHECK_ATTR, FACT_ATTR, CheckSpec, FactSpec, Status
from envdoctor.core.report import CheckOutcome

GROUP = "envdoctor.checks"
SELF = "envdoctor"


@dataclass
class Registry:
    checks: list[CheckSpec] = field(default_factory=list)
    facts: dict[str, FactSpec] = field(default_factory=dict)
    problems: list[CheckOutcome] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # extra sys.path entries for probe children

    def add_module(self, module: ModuleType, source: str) -> None:
        seen = {c.id: c for c in self.checks}
        for name in sorted(vars(module)):
            obj = getattr(module, name, None)
            spec = getattr(obj, CHECK_ATTR, None)
            if isinstance(spec, CheckSpec) and getattr(obj, "__module__", None) == module.__name__:
                spec = replace(spec, source=source)
                if spec.id in seen:
                    self.problems.append(
                        CheckOutcome(
                            id=spec.id,
                            title=spec.title,
                            status=Status.ERROR,
                            message=f"duplicate check id: defined by {seen[spec.id].source} and by {source}",
                            hint="Rename one of the checks; ids must be unique.",
                            source=source,
                        )
                    )
                    continue
                seen[spec.id] = spec
                self.checks.append(spec)
            fspec = getattr(obj, FACT_ATTR, None)
            if isinstance(fspec, FactSpec) and getattr(obj, "__module__", None) == module.__name__:
                self.facts.setdefault(fspec.name, replace(fspec, source=source))

    def plugin_error(self, key: str, label: str, exc: BaseException) -> None:
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" ({Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
        self.problems.append(
            CheckOutcome(
                id=f"plugin.{key}",
                title=f"load plugin {label}",
                status=Status.ERROR,
                message=f"plugin {label} failed to load: {type(exc).__name__}: {exc}{where}",
                hint="Fix or uninstall the plugin; the other checks ran without it.",
                source=label,
            )
        )


def _dist_label(ep: md.EntryPoint) -> tuple[str, bool]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return f"?[{ep.name}]", False
    name = dist.metadata["Name"] or "?"
    return f"{name} {dist.version} [{ep.name}]", name.lower() == SELF


def _submodules(package: ModuleType) -> list[str]:
    return sorted(
        f"{package.__name__}.{m.name}" for m in pkgutil.iter_modules(package.__path__) if not m.ispkg and not m.name.startswith("_")
    )


def load_entry_points(reg: Registry, group: str = GROUP) -> None:
    try:
        eps = sorted(md.entry_points(group=group), key=lambda e: (not _dist_label(e)[1], e.name))
    except Exception as e:  # noqa: BLE001 - broken metadata must not stop the doctor
        reg.plugin_error("metadata", "entry points", e)
        return
    for ep in eps:
        label, builtin = _dist_label(ep)
        source = "built-in" if builtin else label
        try:
            target = ep.load()
        except Exception as e:  # noqa: BLE001
            reg.plugin_error(ep.name, f"{label} ({ep.value})", e)
            continue
        if not isinstance(target, ModuleType):
            reg.plugin_error(ep.name, f"{label} ({ep.value})", TypeError("entry point must name a module"))
            continue
        modules = [target]
        if hasattr(target, "__path__"):
            modules = [target]
            for name in _submodules(target):
                try:
                    modules.append(importlib.import_module(name))
                except Exception as e:  # noqa: BLE001
                    reg.plugin_error(f"{ep.name}.{name.rsplit('.', 1)[-1]}", f"{label} module {name}", e)
        for mod in modules:
            reg.add_module(mod, source)


def load_checks_path(reg: Registry, directory: str) -> None:
    d = Path(directory)
    if not d.is_dir():
        reg.plugin_error(f"path.{d.name or 'dir'}", f"--checks-path {directory}", NotADirectoryError(f"{directory} is not a directory"))
        return
    reg.paths.append(str(d.resolve()))
    for file in sorted(d.glob("*.py")):
        if file.name.startswith("_"):
            continue
        name = f"envdoctor_local_{file.stem}"
        try:
            spec = importlib.util.spec_from_file_location(name, file)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        except Exception as e:  # noqa: BLE001
            sys.modules.pop(name, None)
            reg.plugin_error(f"path.{file.stem}", f"{file}", e)
            continue
        reg.add_module(module, f"path:{file}")


def discover(checks_paths: tuple[str, ...] = ()) -> Registry:
    reg = Registry()
    load_entry_points(reg)
    for p in checks_paths:
        load_checks_path(reg, p)
    reg.checks.sort(key=lambda c: c.id)
    return reg
