"""Import structure, read from the source with ast (nothing is imported):

- the built-in checks use only the public API (``from envdoctor import ...``), as a plugin must;
- the engine never imports the built-in checks (core.builtins loads them from its static list),
  nor names them in a string outside that one declared list;
- no import cycle among envdoctor's modules;
- no module of ours shadows a standard-library module;
- and, in a real interpreter this time, ``envdoctor list`` loads none of a run's machinery.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import envdoctor
from tests.conftest import REPO

ENGINE = REPO / "envdoctor"
CHECKS = REPO / "checks"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.AST, module: str, is_package: bool, *, top_level_only: bool) -> list[tuple[str, list[str], int]]:
    """(module imported, names imported from it, line) for each import statement; relative
    imports resolved against ``module``. ``top_level_only`` skips imports inside functions and
    classes (they run late, so they cannot form a cycle at import time)."""
    out = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if top_level_only and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(child, ast.If) and top_level_only and "TYPE_CHECKING" in ast.dump(child.test):
                continue
            if isinstance(child, ast.Import):
                out.extend((a.name, [], child.lineno) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    pkg = module.split(".") if is_package else module.split(".")[:-1]
                    pkg = pkg[: len(pkg) - (child.level - 1)]
                    base = ".".join([*pkg, base] if base else pkg)
                out.append((base, [a.name for a in child.names], child.lineno))
            visit(child)

    visit(tree)
    return out


def _parsed(root: Path):
    for path in sorted(root.rglob("*.py")):
        if "venv" in path.parts or "__pycache__" in path.parts:
            continue
        yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_checks_import_only_the_public_envdoctor_package():
    bad = []
    for path, tree in _parsed(CHECKS):
        for mod, names, line in _imports(tree, "envdoctor_checks", True, top_level_only=False):
            if mod.startswith("envdoctor.") or (mod == "envdoctor" and not names):
                if mod.startswith("envdoctor."):
                    bad.append(f"{path.relative_to(REPO)}:{line}: imports {mod}")
            if mod == "envdoctor":
                private = [n for n in names if n not in envdoctor.__all__]
                if private:
                    bad.append(f"{path.relative_to(REPO)}:{line}: imports {', '.join(private)} (not in envdoctor.__all__)")
    assert not bad, "checks/ must use only `from envdoctor import ...`:\n" + "\n".join(bad)


def test_public_api_names_exist():
    for name in envdoctor.__all__:
        assert hasattr(envdoctor, name), name


def test_engine_never_imports_the_builtin_checks():
    bad = []
    for path, tree in _parsed(ENGINE):
        for mod, _names, line in _imports(tree, _module_name(path), path.name == "__init__.py", top_level_only=False):
            if mod == "envdoctor_checks" or mod.startswith("envdoctor_checks."):
                bad.append(f"{path.relative_to(REPO)}:{line}: imports {mod}")
    assert not bad, "\n".join(bad)


DECLARED_BUILTINS = ENGINE / "core" / "builtins.py"  # the one place the engine names the built-ins


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def builtin_string_references(root: Path = ENGINE) -> list[str]:
    """Strings in the engine's code (docstrings aside) that name the built-in package: a probe
    target, a module to import, a body, all hidden dependencies an import scan cannot see."""
    bad = []
    for path, tree in _parsed(root):
        if path == DECLARED_BUILTINS:
            continue
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs and "envdoctor_checks" in node.value:
                bad.append(f"{path.relative_to(root)}:{node.lineno}: {node.value[:80]!r}")
    return bad


def test_engine_names_the_builtins_in_no_string_outside_the_declared_list():
    bad = builtin_string_references()
    assert not bad, "name the built-ins through envdoctor.core.builtins (what they declare):\n" + "\n".join(bad)


def test_the_string_scan_finds_a_hidden_reference(tmp_path):
    (tmp_path / "mod.py").write_text('"""Mentions envdoctor_checks in a docstring: fine."""\nBODY = "envdoctor_checks.bodies.bench"\n')
    found = builtin_string_references(tmp_path)
    assert len(found) == 1 and "envdoctor_checks.bodies.bench" in found[0]


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): (p, t) for p, t in _parsed(ENGINE)}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, (path, tree) in modules.items():
        for mod, names, _line in _imports(tree, name, path.name == "__init__.py", top_level_only=True):
            if mod not in modules:
                continue
            # `from envdoctor.core import probe` imports the submodule, not just the package.
            subs = [f"{mod}.{n}" for n in names if f"{mod}.{n}" in modules]
            graph[name].update(subs or [mod])
            if subs and len(subs) < len(names):
                graph[name].add(mod)
    return graph


def _find_cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                found = dfs(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            found = dfs(node)
            if found:
                return found
    return []


def test_no_import_cycles_among_envdoctor_modules():
    graph = _graph()
    assert "envdoctor.core.session" in graph["envdoctor.modes.distributed"]  # the graph sees real edges
    cycle = _find_cycle(graph)
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_cycle_finder_finds_a_cycle():
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) == []


def test_no_module_shadows_the_standard_library():
    """A module shadows the stdlib when its *directory* is on sys.path: the package directories
    a script may run from (``python envdoctor/__main__.py`` puts envdoctor/ first), and the
    plugin directories. Submodules such as envdoctor.reporters.json are only ever imported
    under their package, so their last name is free."""
    names = set()
    for d in (ENGINE, CHECKS, CHECKS / "bodies"):
        names.update(p.stem for p in d.glob("*.py"))
        names.update(p.name for p in d.iterdir() if (p / "__init__.py").exists())
    shadowing = sorted(n for n in names if n in sys.stdlib_module_names)
    assert not shadowing, f"module names that shadow the standard library: {shadowing}"


def test_probe_children_get_the_directory_above_the_package_on_sys_path():
    from envdoctor import ProbeClient

    # Not envdoctor/ itself: that would make cli, core, ... importable as top-level names.
    assert ProbeClient().extra_path[0] == str(ENGINE.parent)


# What `envdoctor list` (and so `--help`) must not load: the engine of a run, and the standard
# library and packaging modules only a run or a check body needs (issue 16: both start in under
# 0.3 s; docs/benchmarks.md). Each entry was loaded by `list` once, through a module-level import.
NOT_FOR_LIST = (
    "envdoctor.core.plan",
    "envdoctor.core.session",
    "envdoctor.core.runner",
    "envdoctor.core.probe",
    "envdoctor.modes.distributed",
    "concurrent.futures",
    "logging",
    "statistics",
    "packaging.requirements",
    "packaging.markers",
    "packaging.utils",
    "envdoctor.core.stack",  # the typed stack: TRITON_DISTS and canonical_name live in core.names
    "envdoctor.sources.baseline",
    "envdoctor.core.redact",
    "hashlib",
    # The checks' helper modules, loaded on first use (envdoctor_checks._lazy).
    "envdoctor_checks._release_data",
    "envdoctor_checks._cuda_compat",
    "envdoctor_checks._xid",
    "envdoctor_checks._gpu_health",
)

LIST_MODULES = """
import json, runpy, sys
sys.argv = ["envdoctor", "list"]
try:
    runpy.run_module("envdoctor", run_name="__main__")
except SystemExit as e:
    assert not e.code, e.code
print("\\nMODULES " + json.dumps(sorted(sys.modules)))
"""


def test_list_loads_no_engine_and_no_run_only_module():
    done = subprocess.run([sys.executable, "-c", LIST_MODULES], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.rsplit("MODULES ", 1)[1]))
    assert "envdoctor_checks.distributed" in loaded and "envdoctor_checks.triton" in loaded  # it did list the checks
    assert sorted(loaded.intersection(NOT_FOR_LIST)) == []


# What `envdoctor triage` must not load for a paste when no plugin is installed (issue 25, item 5:
# triage within 2x `--help`; docs/benchmarks.md): plugin discovery's metadata reader, the
# requirement parser and the tag and logging machinery behind packaging.utils, which a paste
# (no Requires-Dist) never needs, and the modules of checks that cannot judge a paste.
NOT_FOR_TRIAGE = (
    "importlib.metadata",
    "email",
    "packaging.requirements",
    "packaging.markers",
    "packaging.utils",
    "packaging.tags",
    "logging",
    "importlib.resources",  # the release tables are plain files beside their module
    "tarfile",  # only a bundle is unpacked
    "envdoctor.core.redact",  # a report's redaction; a paste's answer is scrubbed by core.scrub
    "envdoctor_checks.distributed",  # a live-only module: described by the built-ins' live index
)

TRIAGE_MODULES = """
import json, runpy, sys
sys.argv = ["envdoctor", "triage", sys.argv[1]]
try:
    runpy.run_module("envdoctor", run_name="__main__")
except SystemExit as e:
    assert e.code in (0, 1), e.code
print("\\nMODULES " + json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize("paste", ["pastes/collect_env_gpu.txt", "pastes/pip_freeze.txt"])
def test_triage_of_a_paste_loads_no_metadata_reader_and_no_requirement_parser(paste, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ENVDOCTOR_DISABLE_PLUGIN_AUTOLOAD")}
    env["PYTHONPATH"] = str(REPO)
    path = REPO / "tests" / "fixtures" / paste
    done = subprocess.run(
        [sys.executable, "-c", TRIAGE_MODULES, str(path)], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.rsplit("MODULES ", 1)[1]))
    assert "envdoctor.core.triage" in loaded and "envdoctor_checks.torch" in loaded  # it did triage
    assert sorted(loaded.intersection(NOT_FOR_TRIAGE)) == []


LAZY_PROBE = """
import json, sys
from envdoctor_checks._lazy import lazy
m = lazy("envdoctor_checks._perf_table")
before = "envdoctor_checks._perf_table" in sys.modules
units = m.METRIC_UNITS
import envdoctor_checks._perf_table as real
real.WARN_BELOW = 0.123  # a patch of the module is seen through the proxy
try:
    m.WARN_BELOW = 1
    wrote = True
except AttributeError:
    wrote = False
print(json.dumps([before, units is real.METRIC_UNITS, m.WARN_BELOW, wrote, repr(m)]))
"""


def test_a_lazy_module_imports_on_first_read_and_reads_through():
    done = subprocess.run([sys.executable, "-c", LAZY_PROBE], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    before, same, patched, wrote, text = json.loads(done.stdout)
    assert before is False and same is True and patched == 0.123 and wrote is False
    assert text == "<lazy module 'envdoctor_checks._perf_table'>"
