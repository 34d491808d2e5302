"""Imports point down the layers of design.md, never up.

Every ``import`` in ``hloviz/`` — at module level or inside a function — is read with :mod:`ast`
and each module is mapped to its layer::

    errors/source → ir → parser/printer → graph → analysis → render → capture → api → cli

A module may import from its own layer and the ones below it. Third-party frameworks have their
own rule: typer and rich belong to ``cli``; TensorFlow and JAX to ``capture`` (inside functions,
so ``import hloviz`` stays light); networkx to ``graph`` and above.

A new top-level module or package must be given a layer here (the test says so by name).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "hloviz"

#: Layers from the bottom (0) up, as in design.md, and the modules or packages in each.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("errors", ("hloviz.errors", "hloviz.source", "hloviz.inputs", "hloviz.units", "hloviz.collector")),
    ("ir", ("hloviz.ir", "hloviz.opcodes")),
    ("parser", ("hloviz.parser", "hloviz.printer")),
    ("graph", ("hloviz.graph", "hloviz.verify")),
    # The package itself re-exports the library (parse … diff_modules), so it sits with analysis.
    ("analysis", ("hloviz.analysis", "hloviz")),
    ("render", ("hloviz.render",)),
    ("capture", ("hloviz.capture",)),
    ("api", ("hloviz.api",)),
    # Pictures built with the docs: the Sphinx extension and the MkDocs plugin, over the api.
    ("docs", ("hloviz.docs", "hloviz.sphinx", "hloviz.mkdocs")),
    ("cli", ("hloviz.cli", "hloviz.__main__")),
)
LAYER_NAMES = [name for name, _ in LAYERS]

#: Third-party packages allowed only from a layer up (and, for frameworks, only inside functions).
THIRD_PARTY_FLOOR = {"networkx": "graph", "graphviz": "render", "typer": "cli", "rich": "cli",
                     "sphinx": "docs", "docutils": "docs", "mkdocs": "docs", "yaml": "docs",
                     "tensorflow": "capture", "jax": "capture", "jaxlib": "capture"}
ONLY_LAZY = {"tensorflow", "jax", "jaxlib"}
#: The one module below capture allowed a framework, and why (still only inside a function).
FRAMEWORK_BELOW_FLOOR: dict[tuple[str, str], str] = {
    ("hloviz.parser.proto", "jaxlib"): "XLA's own HloModuleProto -> text conversion, imported only "
                                       "when a binary proto is read",
    ("hloviz.parser.proto", "jax"): "the same class where older jaxlibs keep it (jax._src.lib)",
}

#: Known upward imports, each with the reason it still stands. The test fails when one of these
#: goes away too, so the list only shrinks.
KNOWN_UPWARD: dict[tuple[str, str], str] = {}


def layer_of(module: str) -> int:
    best, best_len = None, -1
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if (module == member or module.startswith(member + ".")) and len(member) > best_len:
                best, best_len = index, len(member)
    if best is None:
        raise LookupError(module)
    return best


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    lazy: bool  # inside a function: runs on use, not on import


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> list[Import]:
    name = module_name(path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[Import] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend(Import(name, a.name, child.lineno, lazy) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = name.split(".") if is_package else name.split(".")[:-1]
                    anchor = anchor[: len(anchor) - (child.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in child.names:
                    # `from hloviz import api` names a submodule; `from hloviz import parse` the package.
                    full = f"{base}.{alias.name}"
                    target = full if _is_module(full) else base
                    found.append(Import(name, target, child.lineno, lazy))
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                continue  # annotations only: never runs
            visit(child, inner)

    visit(tree, False)
    return found


def _is_module(dotted: str) -> bool:
    rel = Path(*dotted.split("."))
    return (PACKAGE.parent / rel).with_suffix(".py").is_file() or (PACKAGE.parent / rel / "__init__.py").is_file()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def all_imports() -> list[Import]:
    return [imp for path in sorted(PACKAGE.rglob("*.py")) for imp in imports_of(path)]


def test_every_module_has_a_layer():
    missing = sorted({module_name(p) for p in PACKAGE.rglob("*.py") if _no_layer(module_name(p))})
    assert not missing, f"give these modules a layer in tests/test_layers.py (see design.md): {missing}"


def _no_layer(module: str) -> bool:
    try:
        layer_of(module)
    except LookupError:
        return True
    return False


def upward_imports() -> dict[tuple[str, str], Import]:
    found: dict[tuple[str, str], Import] = {}
    for imp in all_imports():
        if not imp.imported.startswith("hloviz") or _no_layer(imp.importer):
            continue
        if layer_of(imp.imported) > layer_of(imp.importer):
            found.setdefault((imp.importer, imp.imported), imp)
    return found


def test_imports_point_down_the_layers():
    found = upward_imports()
    new = [f"{imp.importer} ({LAYER_NAMES[layer_of(imp.importer)]}) imports {imp.imported} "
           f"({LAYER_NAMES[layer_of(imp.imported)]}) at line {imp.line}"
           for key, imp in sorted(found.items()) if key not in KNOWN_UPWARD]
    assert not new, "imports going up the layers:\n" + "\n".join(new)
    gone = sorted(set(KNOWN_UPWARD) - set(found))
    assert not gone, f"fixed, so remove from KNOWN_UPWARD: {gone}"


def test_third_party_frameworks_stay_in_their_layer():
    wrong = []
    for imp in all_imports():
        top = imp.imported.split(".")[0]
        floor = THIRD_PARTY_FLOOR.get(top)
        if floor is None:
            continue
        below = (imp.importer, top) not in FRAMEWORK_BELOW_FLOOR and layer_of(imp.importer) < LAYER_NAMES.index(floor)
        if below:
            wrong.append(f"{imp.importer}:{imp.line} imports {top} (allowed from {floor} up)")
        elif top in ONLY_LAZY and not imp.lazy:
            wrong.append(f"{imp.importer}:{imp.line} imports {top} at module level (import it inside a function)")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("source, importer, expected", [
    ("from ..render import dot\n", "analysis/x.py", ("hloviz.render.dot",)),
    ("from hloviz import parse\n", "parser/x.py", ("hloviz",)),
    ("def f():\n    from .. import api\n", "cli/x.py", ("hloviz.api",)),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hloviz.api import x\n", "ir_x.py",
     ("typing",)),
])
def test_the_checker_reads_imports(tmp_path, monkeypatch, source, importer, expected):
    """The walk itself: relative imports resolve, lazy ones count, TYPE_CHECKING blocks do not."""
    root = tmp_path / "hloviz"
    for sub in ("analysis", "parser", "cli", "render", "api"):
        (root / sub).mkdir(parents=True)
        (root / sub / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "render" / "dot.py").write_text("")
    path = root / importer
    path.write_text(source)
    monkeypatch.setattr(__import__(__name__, fromlist=["PACKAGE"]), "PACKAGE", root)
    assert tuple(i.imported for i in imports_of(path)) == expected
