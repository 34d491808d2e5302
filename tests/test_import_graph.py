"""No import circles in ``hloviz/``: the module import graph is a DAG.

The graph is read with :mod:`ast` by the walk of ``tests/test_layers.py`` (one reader of imports
for both tests): a node per module, an edge ``a → b`` per ``import`` of ``b`` in ``a``.

What counts, and why:

* imports at module level **and inside functions** both count. A function-level import only
  hides a circle until the function runs; the two modules still cannot be read, tested or moved
  one without the other.
* imports under ``if TYPE_CHECKING:`` do not count: they never run, so they cannot leave a module
  half-imported, and a type named in an annotation is the reader's link, not the program's.
* ``from package import name`` is an edge to the package's ``__init__`` (or to the submodule,
  when ``name`` is one). Importing ``package.sub`` also runs ``package/__init__.py``, but that
  implicit edge is not drawn: a package that re-exports its submodules would otherwise be in a
  circle with each of them by construction.

A circle is one strongly connected component of more than one module. :data:`KNOWN_CYCLES` names
the ones still standing, each with its reason and issue; the test fails on any other, and also
when a known one is gone (so the list only shrinks).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import networkx as nx
import pytest

from . import test_layers
from .test_layers import Import, all_imports

#: Circles that still stand: the modules of the circle → why, and the issue that removes it.
KNOWN_CYCLES: dict[frozenset[str], str] = {}


def import_graph(imports: Iterable[Import]) -> nx.DiGraph:
    """Modules of ``hloviz`` and the imports between them (``line`` of the first one per edge)."""
    g = nx.DiGraph()
    for imp in imports:
        if not imp.imported.startswith("hloviz") or imp.imported == imp.importer:
            continue
        if not g.has_edge(imp.importer, imp.imported):
            g.add_edge(imp.importer, imp.imported, line=imp.line, lazy=imp.lazy)
    return g


def cycles(g: nx.DiGraph) -> list[frozenset[str]]:
    """Every circle: each strongly connected component of more than one module."""
    return sorted((frozenset(c) for c in nx.strongly_connected_components(g) if len(c) > 1), key=sorted)


def describe(g: nx.DiGraph, circle: frozenset[str]) -> str:
    """One concrete loop through the circle, each import with its line, for the failure message."""
    loop = nx.find_cycle(g.subgraph(circle))
    steps = [f"  {a} imports {b} (line {g[a][b]['line']}{', inside a function' if g[a][b]['lazy'] else ''})"
             for a, b in loop]
    return f"{sorted(circle)}:\n" + "\n".join(steps)


def test_hloviz_has_no_import_circles():
    g = import_graph(all_imports())
    found = cycles(g)
    new = [describe(g, c) for c in found if c not in KNOWN_CYCLES]
    assert not new, ("import circles (break them: move what both modules need below both, or pass it "
                     "in; see tests/test_import_graph.py for what counts):\n" + "\n".join(new))
    gone = [sorted(c) for c in KNOWN_CYCLES if c not in found]
    assert not gone, f"fixed, so remove from KNOWN_CYCLES: {gone}"


@pytest.mark.parametrize("files, expected", [
    # a lazy import closes the circle: it counts
    ({"a.py": "from . import b\n", "b.py": "def f():\n    from . import a\n"}, [{"a", "b"}]),
    # through a package's __init__, explicitly named
    ({"a.py": "from .pkg import thing\n", "pkg/__init__.py": "from .c import thing\n",
      "pkg/c.py": "def f():\n    from ..a import x\n"}, [{"a", "pkg", "pkg.c"}]),
    # annotations only: no circle
    ({"a.py": "from . import b\n",
      "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"}, []),
    # a package and the submodule it re-exports: no circle (the implicit edge is not drawn)
    ({"pkg/__init__.py": "from .c import thing\n", "pkg/c.py": "thing = 1\n"}, []),
])
def test_the_checker_finds_circles(tmp_path, monkeypatch, files, expected):
    """The walk on a made-up package: a circle closed inside a function is found, one through
    ``TYPE_CHECKING`` or through a package's own re-export is not."""
    root = tmp_path / "hloviz"
    root.mkdir()
    (root / "__init__.py").write_text("")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.setattr(test_layers, "PACKAGE", root)
    found = cycles(import_graph(all_imports()))
    assert [{m.removeprefix("hloviz.") for m in c} for c in found] == expected


def test_known_circles_are_written_as_modules():
    """Each allowed circle names modules that exist, so a rename cannot keep a stale entry alive."""
    package = Path(test_layers.PACKAGE)
    for circle in KNOWN_CYCLES:
        for module in circle:
            rel = Path(*module.split(".")[1:])
            assert (package / rel).with_suffix(".py").is_file() or (package / rel / "__init__.py").is_file(), module
