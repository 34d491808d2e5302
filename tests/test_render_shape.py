"""``hloviz/render/`` stays a package a newcomer can hold in their head (issue 36): modules of one
job and at most 400 lines, folders of at most 15 modules, each module saying what it does, and no
module reaching into another's private names (a name one module keeps to itself, ``_x``, is
its to change; a module that needs it from outside needs a public name).

Read from the files with :mod:`ast`; nothing is imported. The private-name rule holds for the
whole of ``hloviz/``; the size limits for the rest of it are tests/test_module_sizes.py's.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

RENDER = Path(__file__).resolve().parent.parent / "hloviz" / "render"
MAX_LINES = 400
MAX_MODULES = 15

MODULES = sorted(RENDER.rglob("*.py"))
#: Every module of the package, for the private-name rule.
PACKAGE_MODULES = sorted(RENDER.parent.rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(RENDER.parent.parent).as_posix()


def test_there_are_modules_to_check():
    assert len(MODULES) > 40 and (RENDER / "tree" / "tree.py") in MODULES


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_no_module_is_over_the_line_limit(path):
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{_rel(path)} has {lines} lines: split it by concept (what comes in, what goes out)"


def test_no_folder_holds_too_many_modules():
    folders = {p.parent for p in MODULES}
    for folder in folders:
        modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        assert len(modules) <= MAX_MODULES, f"{_rel(folder)} holds {len(modules)} modules: give a stage a subpackage"


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_each_module_says_what_it_does(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert (ast.get_docstring(tree) or "").strip(), f"{_rel(path)} has no module docstring"


def _private_imports(path: Path) -> list[str]:
    """``from <hloviz module> import _name`` anywhere in the file (module level or in a function)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        inside = node.level > 0 or (node.module or "").startswith("hloviz")
        if not inside:
            continue  # another package's private API is that package's business (and rare)
        out += [f"line {node.lineno}: {alias.name}" for alias in node.names
                if alias.name.startswith("_") and not alias.name.startswith("__")]
    return out


@pytest.mark.parametrize("path", PACKAGE_MODULES, ids=_rel)
def test_no_module_imports_another_modules_private_names(path):
    found = _private_imports(path)
    assert not found, f"{_rel(path)} imports private names of another module (make them public): {found}"


def test_the_private_import_check_sees_relative_and_absolute_imports(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text('"""x"""\nfrom .parts import Part, _Column\n'
                      "def f():\n    from hloviz.render.layout.wrap import _name\n"
                      "from os import _exit\nfrom .x import __version__\n")
    assert _private_imports(sample) == ["line 2: _Column", "line 4: _name"]
