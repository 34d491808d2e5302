"""Every package hloviz declares is one it imports: a dependency that earns no place is removed
(CONTRIBUTING.md, "Dependencies, and why", says why the graphviz Python package is not one)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
tomllib = pytest.importorskip("tomllib")  # Python 3.11+

#: Distribution name → the module it is imported as, where they differ.
IMPORT_NAME = {"tensorflow-cpu": "tensorflow"}


def imported_top_level_modules() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "hloviz").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found


def _names(requirements: list[str]) -> list[str]:
    return [re.match(r"[A-Za-z0-9_.\-]+", r).group(0).lower() for r in requirements]  # type: ignore[union-attr]


def test_every_runtime_dependency_is_imported():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    imported = imported_top_level_modules()
    unused = [n for n in _names(project["dependencies"]) if IMPORT_NAME.get(n, n).replace("-", "_") not in imported]
    assert not unused, f"declared in pyproject.toml but imported nowhere in hloviz/: {unused}"
    assert "graphviz" not in _names(project["dependencies"])


def test_framework_extras_are_imported_by_the_capture_layer():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    imported = imported_top_level_modules()
    for extra in ("tf", "jax"):
        names = {IMPORT_NAME.get(n, n) for n in _names(extras[extra])}
        assert names & imported, f"extra {extra!r} ({sorted(names)}) is imported nowhere"
