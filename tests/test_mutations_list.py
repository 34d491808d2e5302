"""scripts/mutations.toml stays in step with the code: each named mutation's snippet is in its
file exactly once and changes it, and its owning test files exist. A refactor that moves a
snippet fails here (fast), not only when someone runs ``make mutants``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _mutants():
    spec = importlib.util.spec_from_file_location("_mutants", ROOT / "scripts" / "mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


try:
    MUTATIONS = _mutants().load()
except SystemExit as err:  # Python 3.10 without tomli
    pytest.skip(str(err), allow_module_level=True)


def test_the_list_covers_the_modules_the_issue_names():
    areas = {m.file.split("/")[1] if m.file.count("/") > 1 else m.file for m in MUTATIONS}
    assert {"analysis", "docs", "render"} <= areas
    files = {m.file for m in MUTATIONS}
    assert any("/memory/" in f for f in files) and any("pass" in f for f in files)


@pytest.mark.parametrize("m", MUTATIONS, ids=[m.name for m in MUTATIONS])
def test_each_mutation_applies_once_and_names_its_tests(m):
    text = (ROOT / m.file).read_text(encoding="utf-8")
    assert text.count(m.original) == 1, f"{m.name}: the snippet is not in {m.file} exactly once; update the list"
    assert m.mutated != m.original
    assert m.tests and all((ROOT / t).is_file() for t in m.tests), m.tests
