"""Code layout rules, read from the source with ast (nothing is imported):

- no function in envdoctor/ or checks/ is longer than 60 lines (def line to last line);
- no import cycle among the built-in checks' modules (tests/test_imports.py does envdoctor's).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO
from tests.test_imports import CHECKS, ENGINE, _find_cycle, _imports, _parsed

MAX_LINES = 60


def _long_functions(root: Path, base: Path = REPO) -> list[str]:
    out = []
    for path, tree in _parsed(root):
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_LINES:
                    out.append(f"{path.relative_to(base)}:{node.lineno}: {node.name} is {n} lines")
    return out


def test_no_function_over_60_lines():
    long = _long_functions(ENGINE) + _long_functions(CHECKS)
    assert not long, f"split these along their seams (at most {MAX_LINES} lines each):\n" + "\n".join(long)


def test_long_function_finder_counts_def_to_last_line(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(59))
    (tmp_path / "a.py").write_text(f"def fits():\n{body}\n\n\ndef too_long():\n{body}\n    return x0\n", encoding="utf-8")
    assert _long_functions(tmp_path, base=tmp_path) == ["a.py:63: too_long is 61 lines"]


def _lazy_edges(tree: ast.Module) -> set[str]:
    """Modules a check module names with ``lazy("...")`` at its top level (envdoctor_checks._lazy):
    imported on first use, but a dependency all the same."""
    found = set()
    for stmt in tree.body:
        for node in ast.walk(stmt):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "lazy"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found.add(node.args[0].value)
    return found


def _checks_graph() -> dict[str, set[str]]:
    """Import edges among checks/ modules, named as installed (``envdoctor_checks.*``), lazy
    ones included."""

    def name(path: Path) -> str:
        parts = ["envdoctor_checks", *path.relative_to(CHECKS).with_suffix("").parts]
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    modules = {name(p): (p, t) for p, t in _parsed(CHECKS)}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod_name, (path, tree) in modules.items():
        for mod, names, _line in _imports(tree, mod_name, path.name == "__init__.py", top_level_only=True):
            subs = [f"{mod}.{n}" for n in names if f"{mod}.{n}" in modules]
            if subs:
                graph[mod_name].update(subs)
            elif mod in modules:
                graph[mod_name].add(mod)
        graph[mod_name].update(m for m in _lazy_edges(tree) if m in modules)
    return graph


def test_no_import_cycles_among_the_builtin_checks():
    graph = _checks_graph()
    assert "envdoctor_checks._cuda_compat" in graph["envdoctor_checks.torch"]  # the graph sees real edges
    cycle = _find_cycle(graph)
    assert not cycle, "import cycle: " + " -> ".join(cycle)
