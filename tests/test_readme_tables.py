"""The README's Layout table names every module of the package, and its public-API table every
name in ``envdoctor.__all__``: a module or public name added without a line there fails here.

A module ``envdoctor/PKG/NAME.py`` (or a data file such as ``schema/report.schema.json``) must
appear in backticks, as ``NAME`` or ``NAME.py`` (the file name, for data files), in the row of
the Layout table whose first cell is ```envdoctor/PKG/```; a top-level module in a row whose first
cell starts with ```envdoctor/```. Package ``__init__.py`` files are their row.
"""

from __future__ import annotations

import re
from pathlib import Path

import envdoctor

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "envdoctor"


def _section(title: str) -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _rows(table_text: str) -> list[tuple[str, str]]:
    rows = []
    for line in table_text.splitlines():
        cells = line.split(" | ")
        if line.startswith("| ") and len(cells) >= 2 and not set(cells[0]) <= set("|- "):
            rows.append((cells[0].strip("| "), " | ".join(cells[1:])))
    return rows


def _layout_rows() -> dict[str, str]:
    return {where.strip("`"): what for where, what in _rows(_section("Layout"))}


def _named(text: str) -> set[str]:
    return set(re.findall(r"`([^`\s]+)`", text))


def _modules() -> list[Path]:
    files = [p for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return sorted(p for p in files if p.suffix in (".py", ".json"))


def test_every_subpackage_has_a_layout_row():
    rows = _layout_rows()
    packages = sorted(
        p for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__" and any(p.glob("*.py")) | any(p.glob("*.json"))
    )
    missing = [f"envdoctor/{p.name}/" for p in packages if f"envdoctor/{p.name}/" not in rows]
    assert not missing, f"README Layout table has no row for {missing}"


def test_every_module_is_named_in_its_layout_row():
    rows = _layout_rows()
    top_rows = {
        where: what for where, what in rows.items() if where.startswith("envdoctor/") and where.count("/") == 1 and not where.endswith("/")
    }
    top_names = _named(" ".join(top_rows.values())) | {where.split("/", 1)[1] for where in top_rows}
    missing = []
    for path in _modules():
        rel = path.relative_to(PACKAGE)
        if path.name == "__init__.py" and len(rel.parts) > 1:
            continue  # the package itself: its row
        where = f"envdoctor/{'/'.join(rel.parts[:-1])}/" if len(rel.parts) > 1 else f"envdoctor/{path.name}"
        names = _named(rows.get(where, "")) if len(rel.parts) > 1 else top_names
        forms = {path.name, path.stem} if path.suffix == ".py" else {path.name}
        if not forms & names:
            missing.append(f"{where}: {path.name}" if len(rel.parts) > 1 else where)
    assert not missing, "README Layout table does not name: " + ", ".join(missing)


def _api_names() -> set[str]:
    table = _section("Writing a plugin")
    names: set[str] = set()
    for first, _ in _rows(table[table.index("The public API, in full") :]):
        names |= _named(first)
    return names


def test_every_public_name_is_in_the_api_table():
    missing = [n for n in envdoctor.__all__ if n not in _api_names()]
    assert not missing, f"README public-API table lacks {missing}"


def test_the_api_table_names_nothing_that_is_not_public():
    extra = _api_names() - set(envdoctor.__all__)
    assert not extra, f"README public-API table names what envdoctor.__all__ does not: {extra}"
