"""Finding checks and facts: the built-ins (a static list, core.builtins), third parties'
entry points and --checks-path.

Discovery is a short pipeline: entry points found → modules imported → decorated objects
collected, sorted for determinism, then validated. A plugin that fails to import becomes an
``error`` row naming the plugin and its distribution; discovery goes on. Validation turns what
would otherwise surface only at run time (or never) into such rows too: a check or fact
parameter that names no fact, a fact name already taken (the first one loaded, built-ins
first, is kept) and a duplicate check id.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import re
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from envdoctor.core import live_index
from envdoctor.core import signatures as catalog
from envdoctor.core.api import CHECK_ATTR, FACT_ATTR, CheckSpec, FactSpec, Status
from envdoctor.core.outcome import CheckOutcome
from envdoctor.core.signals import watched as watched_signals
from envdoctor.core.signatures import Signature, row_problem
from envdoctor.core.signatures import validate as validate_signatures

if TYPE_CHECKING:
    import importlib.metadata as md

GROUP = "envdoctor.checks"
SELF = "envdoctor"

# Facts the engine supplies itself (see core.session; ``pasted`` only to the adapters of
# ``envdoctor triage``, core.triage); any other parameter must name a provider.
SPECIALS = ("probe", "options", "env", "interpreter", "pasted")


_Spec = TypeVar("_Spec", CheckSpec, FactSpec)


def _sourced(spec: _Spec, source: str) -> _Spec:
    """``spec`` from ``source`` (a frozen spec that already says so is itself)."""
    return spec if spec.source == source else replace(spec, source=source)


@dataclass
class Registry:
    """What discovery found: checks, facts, pasted-fact adapters, signatures, and load problems."""

    checks: list[CheckSpec] = field(default_factory=list)
    facts: dict[str, FactSpec] = field(default_factory=dict)
    problems: list[CheckOutcome] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # extra sys.path entries for probe children
    pasted_facts: dict[str, FactSpec] = field(default_factory=dict)  # adapters of pasted facts (triage)
    signatures: list[Signature] = field(default_factory=list)  # the error-signature catalog, built-ins first

    def add_module(self, module: ModuleType, source: str) -> None:
        self._add_signatures(module, source)
        self.add_specs(module_specs(module), source)

    def add_specs(self, specs: Sequence[CheckSpec | FactSpec], source: str) -> None:
        """Checks and facts as a module declares them (a duplicate check id or fact name is an
        error row, the first one kept)."""
        seen = {c.id: c for c in self.checks}
        for spec in specs:
            if isinstance(spec, CheckSpec):
                spec = _sourced(spec, source)
                if spec.id in seen:
                    self.problem(
                        f"plugin.duplicate.{spec.id}",
                        spec.title,
                        f"duplicate check id {spec.id}: defined by {seen[spec.id].source} and by {source}; the second is ignored",
                        "Rename one of the checks; ids must be unique.",
                        source,
                    )
                    continue
                seen[spec.id] = spec
                self.checks.append(spec)
            elif spec.origin == "pasted":
                self.pasted_facts.setdefault(spec.name, _sourced(spec, source))
            else:
                self._add_fact(spec, source)

    def _add_fact(self, fspec: FactSpec, source: str) -> None:
        taken = self.facts.get(fspec.name)
        if taken is not None:
            self.problem(
                f"plugin.fact.{fspec.name}",
                f"fact {fspec.name}",
                f"fact name {fspec.name!r} is provided by {taken.source} and again by {source}; the second is ignored",
                "Rename the plugin's fact (prefix it with the plugin's name), or use the existing fact.",
                source,
            )
            return
        self.facts[fspec.name] = _sourced(fspec, source)

    def _add_signatures(self, module: ModuleType, source: str) -> None:
        """A module-level ``SIGNATURES`` tuple extends the catalog; a broken one is an error row
        (its valid signatures are kept, a duplicate id keeps the first)."""
        sigs = vars(module).get("SIGNATURES")
        if sigs is None:
            return
        if isinstance(sigs, (str, bytes)) or not hasattr(sigs, "__iter__"):
            sigs = [sigs]
        # A module that imports another's catalog (``from .signatures import SIGNATURES``) re-exports
        # the same entries: not duplicates (by identity: comparing every field of every row was
        # quadratic in the catalog's size).
        have = {id(s) for s in self.signatures}
        sigs = [s for s in sigs if not (isinstance(s, Signature) and id(s) in have)]
        if not sigs:
            return
        taken = {s.id for s in self.signatures}
        # A plugin's patterns are compiled here, so a bad one is an error row from the start. The
        # engine's and the built-in catalog's are compiled on first use (tests/checks/test_signatures.py
        # compiles them all): `list` and a healthy run need none of them.
        engine = source == "engine"
        patterns = source != "built-in" and not engine
        problems = validate_signatures(sigs, taken=taken, patterns=patterns, engine=engine)
        for sig in sigs:
            ok = isinstance(sig, Signature) and sig.id not in taken and not row_problem(sig, engine)
            if ok and not (patterns and _bad_pattern(sig)):
                taken.add(sig.id)
                self.signatures.append(replace(sig, source=source) if sig.source == "built-in" and source != "built-in" else sig)
        if problems:
            self.problem(
                f"plugin.signatures.{module.__name__.rsplit('.', 1)[-1]}",
                f"error signatures of {module.__name__}",
                f"{module.__name__} from {source}: " + "; ".join(problems[:5]),
                "Fix the module's SIGNATURES: each entry an envdoctor.Signature with a unique id, a valid pattern and scope.",
                source,
            )

    def problem(self, id: str, title: str, message: str, hint: str, source: str) -> None:
        self.problems.append(CheckOutcome(id=id, title=title, status=Status.ERROR, message=message, hint=hint, source=source))

    def validate(self, known: Sequence[str] = ()) -> None:
        """Parameters that name no fact: the check is dropped (it could only ever be an error),
        the fact kept (its dependents say at run time that it could not be gathered). ``known``:
        more fact names that exist elsewhere (a contained plugin's host: the built-ins')."""
        names = set(self.facts) | set(SPECIALS) | set(known)
        keep = []
        for c in self.checks:
            unknown = [p.name for p in c.params if p.name not in names]
            if unknown:
                self.problem(c.id, c.title, f"check {c.id} from {c.source} {_unknown_text(unknown, names)}", _UNKNOWN_HINT, c.source)
            else:
                keep.append(c)
        self.checks = keep
        for f in sorted([*self.facts.values(), *self.pasted_facts.values()], key=lambda f: (f.name, f.origin)):
            unknown = [p.name for p in f.params if p.name not in names]
            if unknown:
                self.problem(
                    f"plugin.fact.{f.name}",
                    f"fact {f.name}",
                    f"fact {f.name} from {f.source} {_unknown_text(unknown, names)}",
                    _UNKNOWN_HINT,
                    f.source,
                )

    def plugin_error(self, key: str, label: str, exc: BaseException) -> None:
        import traceback  # on use: most runs load every plugin cleanly

        tb = traceback.extract_tb(exc.__traceback__)
        where = f" ({Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
        what = f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, Exception):  # SystemExit, KeyboardInterrupt, ... raised by the plugin itself
            what = f"it raised {type(exc).__name__}({exc!s}), which would have ended the whole run"
        self.problems.append(
            CheckOutcome(
                id=f"plugin.{key}",
                title=f"load plugin {label}",
                status=Status.ERROR,
                message=f"plugin {label} failed to load: {what}{where}",
                hint="Fix or uninstall the plugin; the other checks ran without it.",
                source=label,
            )
        )


def module_specs(module: ModuleType) -> list[CheckSpec | FactSpec]:
    """The checks and facts ``module`` defines (not those it imports), in the order of their names."""
    out: list[CheckSpec | FactSpec] = []
    for name in sorted(vars(module)):
        obj = getattr(module, name, None)
        if getattr(obj, "__module__", None) != module.__name__:
            continue  # imported from elsewhere: registered where it is defined
        spec = getattr(obj, CHECK_ATTR, None)
        if isinstance(spec, CheckSpec):
            out.append(spec)
        fspec = getattr(obj, FACT_ATTR, None)
        if isinstance(fspec, FactSpec):
            out.append(fspec)
    return out


def _bad_pattern(sig: Signature) -> bool:
    try:
        sig.regex  # noqa: B018 - compiling is the test
    except re.error:
        return True
    return False


_UNKNOWN_HINT = "Fix the parameter name: each parameter names a fact (see the README's plugin section), or `probe`, `options`, `env`."


def _unknown_text(unknown: list[str], known: set[str]) -> str:
    import difflib  # only a plugin's bad parameter needs it; every start-up would pay for it

    parts = []
    for name in unknown:
        close = difflib.get_close_matches(name, sorted(known), n=1)
        parts.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return f"asks for {', '.join(parts)}, which no fact provider supplies"


class _Signals:
    """Tells the user's Ctrl-C, SIGTERM or SIGHUP (a signal delivered to this process while plugins load)
    from a KeyboardInterrupt a plugin raises itself: the first must stop envdoctor, the second
    is the plugin's failure. Signals reach only the main thread; elsewhere nothing is watched
    and every KeyboardInterrupt is the plugin's."""

    def __init__(self) -> None:
        self.seen = False
        self._old: dict[int, Any] = {}  # as signal.signal returned them: a handler, SIG_DFL, SIG_IGN or None

    def __enter__(self) -> _Signals:
        if threading.current_thread() is threading.main_thread():
            for sig in watched_signals():  # INT, TERM and HUP (as a run), unless ignored
                try:
                    self._old[sig] = signal.signal(sig, self._handler)
                except (ValueError, OSError):
                    pass
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)

    def _handler(self, signum: int, frame: object) -> None:
        self.seen = True
        old = self._old.get(signum)
        if callable(old):
            old(signum, frame)
        elif old != signal.SIG_IGN:
            raise KeyboardInterrupt

    def contain(self, reg: Registry, key: str, label: str, exc: BaseException) -> None:
        """Record a plugin's failure, or re-raise the user's interrupt."""
        if isinstance(exc, KeyboardInterrupt) and self.seen:
            raise exc
        reg.plugin_error(key, label, exc)


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


def load_builtins(reg: Registry, *, paste: bool = False) -> None:
    """The built-in checks, from the engine's static list (core.builtins): from an install or
    from a checkout alike; a failure is an error row like any plugin's. ``paste``: the modules
    the built-ins' live index describes are read from it, not imported (core.live_index)."""
    from envdoctor.core import builtins

    with _Signals() as sigs:
        try:
            package = builtins.load()
        except BaseException as e:  # noqa: BLE001 - see _load_entry_point
            sigs.contain(reg, "builtin", f"built-in checks ({builtins.PACKAGE})", e)
            return
        doc = live_index.document(package) if paste else {}
        catalog.seed_needles(live_index.needles(doc))  # a paste's start-up parses no built-in pattern again
        _add_package(reg, package, "built-in", "builtin", "built-in", sigs, live_index.load(package, doc))


def _is_builtin(ep: md.EntryPoint) -> bool:
    """An entry point naming the built-ins (an older install's metadata has one): they are loaded
    from the static list already, never a second time."""
    from envdoctor.core.builtins import PACKAGE

    return ep.value.split(":", 1)[0].strip() == PACKAGE or _dist_label(ep)[1]


def third_party(reg: Registry, eps: Sequence[md.EntryPoint] | None = None, group: str = GROUP) -> list[md.EntryPoint]:
    """The ``envdoctor.checks`` entry points other than the built-ins' (``eps``: given instead of
    read from the installed metadata, for tests); broken metadata is an error row."""
    from envdoctor.core.builtins import PACKAGE
    from envdoctor.core.entry_points import installed

    try:
        found = installed(group, PACKAGE) if eps is None else list(eps)
        return sorted((e for e in found if not _is_builtin(e)), key=lambda e: e.name)
    except Exception as e:  # noqa: BLE001 - broken metadata must not stop the doctor
        reg.plugin_error("metadata", "entry points", e)
        return []


def load_entry_points(reg: Registry, eps: Sequence[md.EntryPoint] | None = None, group: str = GROUP) -> None:
    """Third-party checks imported into this process: what a contained plugin's own host does
    (core.plugin_host); envdoctor's process loads them through their hosts (:func:`discover`)."""
    with _Signals() as sigs:
        for ep in third_party(reg, eps, group):
            _load_entry_point(reg, ep, sigs)


def _load_entry_point(reg: Registry, ep: md.EntryPoint, sigs: _Signals) -> None:
    # BaseException: a plugin calling sys.exit() at import must not end the run (issue 14).
    label, _ = _dist_label(ep)
    try:
        target = ep.load()
    except BaseException as e:  # noqa: BLE001
        sigs.contain(reg, ep.name, f"{label} ({ep.value})", e)
        return
    if not isinstance(target, ModuleType):
        reg.plugin_error(ep.name, f"{label} ({ep.value})", TypeError("entry point must name a module"))
        return
    _add_package(reg, target, label, ep.name, label, sigs)


def _add_package(
    reg: Registry, target: ModuleType, source: str, key: str, label: str, sigs: _Signals, index: Mapping[str, Any] | None = None
) -> None:
    """A module and, for a package, its public submodules; one that ``index`` describes (the
    built-ins' live index) is added from there, in its place in the order."""
    parts: list[ModuleType | Mapping[str, Any]] = [target]
    if hasattr(target, "__path__"):
        for name in _submodules(target):
            short = name.rsplit(".", 1)[-1]
            if index and short in index:
                parts.append(index[short])
                continue
            try:
                parts.append(importlib.import_module(name))
            except BaseException as e:  # noqa: BLE001
                sigs.contain(reg, f"{key}.{short}", f"{label} module {name}", e)
    folder = _folder(target)
    for part in parts:
        if isinstance(part, ModuleType):
            reg.add_module(part, source)
        else:
            checks, facts = live_index.specs(part, folder)
            reg.add_specs([*checks, *facts], source)


def _folder(package: ModuleType) -> str:
    paths = list(getattr(package, "__path__", []) or [])
    return str(Path(paths[0]).resolve()) if paths else ""


def live_entries(package: ModuleType) -> dict[str, Any]:
    """What the built-ins' live index holds (tools/regen_live_index.py writes it): each public
    submodule of ``package`` (imported here) with no paste-capable check, no pasted-fact adapter
    and no error signature beyond those of the modules kept before it, described by its checks
    and facts."""
    folder, catalog, out = _folder(package), set(), {}
    for name in _submodules(package):
        module = importlib.import_module(name)
        specs = module_specs(module)
        sigs = vars(module).get("SIGNATURES", ())
        own = [s for s in (sigs if isinstance(sigs, (list, tuple)) else [sigs]) if s not in catalog]
        pasted = any("pasted" in s.sources if isinstance(s, CheckSpec) else s.origin == "pasted" for s in specs)
        if pasted or own:
            catalog.update(own)
            continue
        checks = [s for s in specs if isinstance(s, CheckSpec)]
        facts = [s for s in specs if isinstance(s, FactSpec)]
        out[name.rsplit(".", 1)[-1]] = live_index.describe(checks, facts, folder)
    return out


def catalog_needles(signatures: Sequence[Signature]) -> dict[str, list[str]]:
    """The engine's and the built-ins' rows' needles by pattern, for the live index
    (tools/regen_live_index.py writes them; tests/test_live_index.py checks them)."""
    return {
        catalog.needle_key(s.pattern, s.ignore_case): list(catalog.needles_of(s)) for s in signatures if s.source in ("built-in", "engine")
    }


def load_checks_path(reg: Registry, directory: str) -> None:
    d = Path(directory)
    if not d.is_dir():
        reg.plugin_error(f"path.{d.name or 'dir'}", f"--checks-path {directory}", NotADirectoryError(f"{directory} is not a directory"))
        return
    reg.paths.append(str(d.resolve()))
    with _Signals() as sigs:
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
            except BaseException as e:  # noqa: BLE001 - SystemExit too: see _load_entry_point
                sys.modules.pop(name, None)
                sigs.contain(reg, f"path.{file.stem}", f"{file}", e)
                continue
            reg.add_module(module, f"path:{file}")


AUTOLOAD_ENV = "ENVDOCTOR_DISABLE_PLUGIN_AUTOLOAD"


def autoload(env: Mapping[str, str] | None = None) -> bool:
    """Whether installed plugins load: not when ENVDOCTOR_DISABLE_PLUGIN_AUTOLOAD is set (to anything but 0 or empty)."""
    value = (os.environ if env is None else env).get(AUTOLOAD_ENV, "")
    return value.strip() in ("", "0")


def discover(
    checks_paths: tuple[str, ...] = (), *, plugins: bool = True, eps: Sequence[md.EntryPoint] | None = None, paste: bool = False
) -> Registry:
    """The built-ins, then (``plugins`` and autoload on) each installed plugin distribution in a
    child of its own (core.plugin_host), then the --checks-path modules (in this process: the
    user's own files, named on the command line). ``paste``: for triage, whose live-only
    built-in checks are read from the built-ins' live index (core.live_index), not imported."""
    reg = Registry()
    reg._add_signatures(catalog, "engine")  # the engine's own rows (the probe's) head the one catalog
    load_builtins(reg, paste=paste)
    found = third_party(reg, eps) if plugins and autoload() else []
    if found:  # `list` with no plugin installed loads nothing of the run
        from envdoctor.core.plugin_host import load_contained

        load_contained(reg, found)
    for p in checks_paths:
        load_checks_path(reg, p)
    reg.validate()
    reg.checks.sort(key=lambda c: c.id)
    return reg
