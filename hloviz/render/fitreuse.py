"""A module's unit tree and the cut that fits the budget, built once for all the pictures of an
explorer page that draw the same module the same way and differ only in what they open.

Every block the explorer opens in place is a picture of its own, drawn by
:func:`~hloviz.render.views.draw_module` with the parent picture's options and one more key in
``open``: the same unit graph, the same tree (``layers.scope_tree``, blocks by structure,
repeats), the same :func:`~hloviz.render.cut.fit` — about 20 ms of DenseNet121's module each
time — before the one node is opened. Inside :func:`fits_reused` the tree and its fitted cut are
kept per (module, marks, parameter names, source map, options but ``open``) and handed to the
next picture.

A kept tree is only read: :func:`~hloviz.render.cut.open_in_place` restructures the tree it is
given where it opens a repeat (its copies move under a ``×N-1 more`` node), so a picture that
opens a repeat, or a key the tree does not have (a node made by such an opening), builds its
own tree as before, and one built so is never kept. Outside the block nothing is kept.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cut import Cut
    from .model import ViewGraph
    from .tree import Tree
    from .views import Mark, ViewOptions

__all__ = ["fits_reused", "fitted"]

_kept: dict[tuple, tuple[Tree, Cut, tuple[Any, ...]]] | None = None
_depth = 0
_lock = threading.Lock()


@contextmanager
def fits_reused() -> Iterator[None]:
    """Within this block, :func:`fitted` answers a picture drawn as an earlier one was (but for
    what it opens) with that one's tree and cut. Blocks nest; threads share them."""
    global _kept, _depth
    with _lock:
        _depth += 1
        if _kept is None:
            _kept = {}
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _kept = None


def _opens_read_only(tree: Tree, keys: tuple[str, ...]) -> bool:
    """Whether opening ``keys`` in turn leaves ``tree`` as it is (no repeat among them, every
    key a node of the tree)."""
    return all(k in tree.nodes and tree.nodes[k].kind != "repeat" for k in keys)


def fitted(g: ViewGraph, marks: Mapping[str, Mark], options: ViewOptions,
           build: Callable[[], tuple[Tree, Cut]]) -> tuple[Tree, Cut]:
    """``build()`` — ``g``'s tree and the cut that fits, before ``options.open`` is applied — or
    the one kept for a picture drawn the same way (see the module docstring)."""
    kept = _kept
    if kept is None:
        return build()
    source = g.source_map
    key = (id(g.module), id(marks) if marks else 0, tuple(sorted(g.param_names.items())),
           id(source) if source else 0, replace(options, open=()))
    with _lock:
        hit = kept.get(key)
    if hit is not None and _opens_read_only(hit[0], options.open):
        return hit[0], hit[1]
    tree, cut = build()
    if _opens_read_only(tree, options.open):
        with _lock:  # the objects behind the ids are held with the tree, so no id is reused
            kept.setdefault(key, (tree, cut, (g.module, marks, source)))
    return tree, cut
