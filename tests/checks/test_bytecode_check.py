"""torch.bytecode: torch without .pyc files, where Python may not save them, is compiled again by
every process that imports it. A real package tree under tmp_path stands in for torch."""

from __future__ import annotations

import os
import sys

import pytest

from envdoctor import Status
from envdoctor.testing import run_check
from envdoctor_checks import torch as t

TAG = sys.implementation.cache_tag


def _package(root, files: dict[str, str]):
    pkg = root / "site-packages" / "torch"
    for name, text in files.items():
        path = pkg / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


def _pyc(pkg, name: str, prefix=None):
    """An (empty) bytecode file for module ``name`` where the importer looks for it."""
    directory = (pkg / name).parent
    cache = (prefix / str(directory).lstrip(os.sep)) if prefix else directory / "__pycache__"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / f"{(pkg / name).stem}.{TAG}.pyc").write_bytes(b"")


def _spec(pkg) -> dict:
    return {"dir": str(pkg), "copies": [str(pkg)], "leftovers": []}


FILES = {
    "__init__.py": "x" * 100,
    "functional.py": "y" * 1000,
    "_inductor/__init__.py": "",
    "_inductor/codegen.py": "z" * 10,
    "tests/test_big.py": "t" * 5000,  # tests are left out
    "testing/test/helper.py": "h" * 7000,  # so is a test directory anywhere
    "lib/libtorch.so": "not python",
}


def test_coverage_counts_modules_without_bytecode_and_their_source_size(tmp_path):
    pkg = _package(tmp_path, FILES)
    assert t.bytecode_coverage(str(pkg), TAG) == (4, 4, 1110)
    _pyc(pkg, "functional.py")
    assert t.bytecode_coverage(str(pkg), TAG) == (4, 3, 110)
    # Bytecode of another Python (another cache tag) does not count.
    (pkg / "__pycache__" / "__init__.cpython-20.pyc").write_bytes(b"")
    assert t.bytecode_coverage(str(pkg), TAG) == (4, 3, 110)
    assert t.bytecode_coverage(str(pkg), "cpython-20") == (4, 3, 1010)


def test_coverage_looks_under_the_pycache_prefix_when_set(tmp_path):
    pkg = _package(tmp_path, FILES)
    prefix = tmp_path / "prefix"
    for name in ("__init__.py", "functional.py", "_inductor/codegen.py"):
        _pyc(pkg, name, prefix)
    assert t.bytecode_coverage(str(pkg), TAG, str(prefix)) == (4, 1, 0)
    assert t.bytecode_coverage(str(pkg), TAG) == (4, 4, 1110)  # not beside the sources


def test_no_bytecode_and_pythondontwritebytecode_warns_with_the_compileall_fix(tmp_path):
    pkg = _package(tmp_path, FILES)
    row = run_check(t.bytecode, torch_spec=_spec(pkg), env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert row.status is Status.WARN
    assert row.message.startswith("torch has no bytecode (4 of 4 modules, 0 MB of source)"), row.message
    assert "PYTHONDONTWRITEBYTECODE=1 stops Python from saving it" in row.message
    site = str(pkg.parent)
    assert f"{sys.executable} -m compileall -q -j 0 {site}" in row.hint
    assert "UV_COMPILE_BYTECODE=1" in row.hint
    assert [f.argv for f in row.fixes] == [(sys.executable, "-m", "compileall", "-q", "-j", "0", site)]
    assert row.fixes[0].scope == "venv"
    assert row.details == {"package": str(pkg), "modules": 4, "without_bytecode": 4, "source_bytes": 1110}


def test_no_bytecode_in_a_writable_tree_is_fine_python_saves_it(tmp_path):
    pkg = _package(tmp_path, FILES)
    for env in ({}, {"PYTHONDONTWRITEBYTECODE": ""}):  # empty is unset, for Python too
        row = run_check(t.bytecode, torch_spec=_spec(pkg), env=env)
        assert row.status is Status.PASS, row.message
        assert row.message == "4 of 4 modules have no bytecode yet; Python saves it at their first import"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_no_bytecode_in_a_read_only_tree_warns(tmp_path):
    pkg = _package(tmp_path, FILES)
    pkg.chmod(0o555)
    try:
        row = run_check(t.bytecode, torch_spec=_spec(pkg), env={})
    finally:
        pkg.chmod(0o755)
    assert row.status is Status.WARN
    assert f"{pkg} is not writable here" in row.message


def test_a_tree_python_cannot_write_warns_with_a_root_fix(tmp_path, monkeypatch):
    # What access(2) answers for a read-only mount, where root too is refused (the test above
    # needs a non-root user); only the tree's own answer changes.
    pkg = _package(tmp_path, FILES)
    real = os.access
    monkeypatch.setattr(t.os, "access", lambda path, mode, **kw: False if str(path).startswith(str(tmp_path)) else real(path, mode, **kw))
    row = run_check(t.bytecode, torch_spec=_spec(pkg), env={})
    assert row.status is Status.WARN
    assert f"{pkg} is not writable here, so Python cannot save it" in row.message
    assert [(f.argv[-1], f.needs_root) for f in row.fixes] == [(str(pkg.parent), True)]


def test_mostly_compiled_torch_passes(tmp_path):
    pkg = _package(tmp_path, FILES)
    for name in ("__init__.py", "functional.py"):
        _pyc(pkg, name)
    row = run_check(t.bytecode, torch_spec=_spec(pkg), env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert row.status is Status.PASS
    assert row.message == "2 of 4 modules have bytecode"


def test_bytecode_under_pythonpycacheprefix_passes(tmp_path):
    pkg = _package(tmp_path, FILES)
    prefix = tmp_path / "prefix"
    for name in ("__init__.py", "functional.py", "_inductor/__init__.py", "_inductor/codegen.py"):
        _pyc(pkg, name, prefix)
    env = {"PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": "1"}
    row = run_check(t.bytecode, torch_spec=_spec(pkg), env=env)
    assert row.status is Status.PASS
    assert row.message == f"4 of 4 modules have bytecode (under PYTHONPYCACHEPREFIX={prefix})"


def test_an_empty_pycacheprefix_writable_is_fine(tmp_path):
    pkg = _package(tmp_path, FILES)
    prefix = tmp_path / "prefix"
    row = run_check(t.bytecode, torch_spec=_spec(pkg), env={"PYTHONPYCACHEPREFIX": str(prefix)})
    assert row.status is Status.PASS
    assert "Python saves it at their first import" in row.message


def test_an_empty_pycacheprefix_with_pythondontwritebytecode_warns(tmp_path):
    """The prefix only says where bytecode goes; PYTHONDONTWRITEBYTECODE still stops Python saving it."""
    pkg = _package(tmp_path, FILES)
    env = {"PYTHONPYCACHEPREFIX": str(tmp_path / "prefix"), "PYTHONDONTWRITEBYTECODE": "1"}
    row = run_check(t.bytecode, torch_spec=_spec(pkg), env=env)
    assert row.status is Status.WARN
    assert "PYTHONDONTWRITEBYTECODE=1 stops Python from saving it" in row.message


def test_a_tree_without_sources_is_skipped(tmp_path):
    pkg = _package(tmp_path, {"lib/libtorch.so": "", "tests/test_x.py": ""})
    row = run_check(t.bytecode, torch_spec=_spec(pkg), env={})
    assert row.status is Status.SKIP
    assert row.message == f"no Python sources under {pkg}"


def test_the_venvs_own_torch_is_not_a_false_alarm():
    """This venv's torch was installed by pip, which compiles it: no finding on a healthy machine."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        pytest.skip("torch is not installed")
    pkg = os.path.dirname(spec.origin)
    row = run_check(t.bytecode, torch_spec={"dir": pkg, "copies": [pkg], "leftovers": []}, env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert row.status is Status.PASS, row.message
