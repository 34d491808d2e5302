"""One module drawn many times over: the work that does not depend on the cut, done once.

``render`` draws its overview again with fewer boxes when the first is too long
(:func:`hloviz.api.fit.fitted`), and ``show``'s explorer draws the same module hundreds
of times — searching a first view that fits the screen, each block opened in place, each layer
alone — with options that differ only in the node budget, the nodes opened and the scope. Each
of those pictures made the same work again. Inside :func:`drawings_reused`, it is made once:

* the **graph of units** (:mod:`hloviz.render.view_graph`): each picture draws on a copy
  (:meth:`~hloviz.render.tree.model.ViewGraph.copy`: a cut merges units, a layer's picture hides
  all but the layer) — :func:`kept_graph`;
* the **tree of units** (:func:`hloviz.render.tree.layers.scope_tree`: the scopes, the blocks
  found by structure, a training step's forward order; 60 % of a picture's Python): a copy each
  (:meth:`~hloviz.render.tree.nodes.Tree.copy`: a cut regroups its tree) — :func:`kept_tree`;
* answers nobody changes, the marks of a side-by-side picture — :func:`kept`;
* each module's scope tree (:func:`hloviz.analysis.scopes.scope_trees_reused`, which the block
  opens);
* the forked copy that draws a side-by-side picture's other column (:mod:`hloviz.render.beside`),
  which keeps its own trees for the next picture — :func:`kept_beside`, ended with the block.

Outside such a block nothing is kept, so a module edited between two pictures is never drawn
from an old graph.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from .beside import Beside
from .tree.model import ViewGraph
from .tree.nodes import Tree

__all__ = ["drawings_reused", "kept", "kept_beside", "kept_graph", "kept_tree"]

T = TypeVar("T")

#: While :func:`drawings_reused` is active: (what kind, key) → (the objects the key names by id,
#: what was compared by value, what is kept).
_kept: dict[tuple[str, Hashable], tuple[tuple[Any, ...], tuple[Any, ...], Any]] | None = None
_depth = 0
_lock = threading.Lock()


@contextmanager
def drawings_reused() -> Iterator[None]:
    """Within this block each module's graph of units, tree of units, marks and scope tree are
    made once (see the module docstring): for a caller that draws one module many times and
    edits no module meanwhile. Blocks nest; threads drawing inside one share what it keeps."""
    from ..analysis.scopes import scope_trees_reused

    global _kept, _depth
    with _lock:
        _depth += 1
        if _kept is None:
            _kept = {}
    try:
        with scope_trees_reused():
            yield
    finally:
        ended = None
        with _lock:
            _depth -= 1
            if _depth == 0:
                ended, _kept = _kept, None
        for key, (_held, _alike, value) in (ended or {}).items():
            if key[0] == "beside":
                value.close()


def _found(key: tuple[str, Hashable], held: tuple[Any, ...], alike: tuple[Any, ...]) -> Any | None:
    """What was kept for ``key``, when ``held`` are the same objects (an id reused by a new object
    is no hit) and ``alike`` equal values; else None."""
    kept_now = _kept
    if kept_now is None:
        return None
    with _lock:
        hit = kept_now.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], held, strict=True)) and hit[1] == alike:
        return hit[2]
    return None


def _keep(key: tuple[str, Hashable], held: tuple[Any, ...], alike: tuple[Any, ...], value: Any) -> None:
    kept_now = _kept
    if kept_now is not None:
        with _lock:
            kept_now[key] = (held, alike, value)


def kept(key: Hashable, held: tuple[Any, ...], build: Callable[[], T]) -> T:
    """``build()``, or what it gave for the same ``key`` earlier in this :func:`drawings_reused`
    block (the same object: for answers nobody changes, such as the marks of a side-by-side
    picture, :func:`hloviz.render.layout.sidebyside.pre_marks`, which each of the explorer's
    layer pictures asked for again). ``held``: the objects ``key`` names by ``id``."""
    hit = _found(("answer", key), held, ())
    if hit is not None:
        return hit
    out = build()
    _keep(("answer", key), held, (), out)
    return out


def kept_tree(key: Hashable, held: tuple[Any, ...], alike: tuple[Any, ...], phases: dict[int, str],
              build: Callable[[], Tree]) -> Tree:
    """``build()``, or a copy of the tree it gave for the same ``key`` and equal ``alike``
    earlier in this :func:`drawings_reused` block. ``held``: the objects ``key`` names by ``id``.
    ``alike``: what else the tree depends on, compared by value (each picture of a pair makes its
    own marks and its own copy of the capture's info). ``phases``: the graph's ``phases``, which
    building fills (a step counter drawn as its optimizer's work) and a hit fills the same way."""
    hit = _found(("tree", key), held, alike)
    if hit is not None:
        tree, added = hit
        phases.update(added)
        return tree.copy()
    before = dict(phases)
    tree = build()
    if _kept is not None:
        _keep(("tree", key), held, alike, (tree.copy(), {k: v for k, v in phases.items() if before.get(k) != v}))
    return tree


def kept_graph(key: Hashable, held: tuple[Any, ...], alike: tuple[Any, ...],
               build: Callable[[], ViewGraph]) -> ViewGraph:
    """``build()``, or a copy of the graph of units it gave for the same ``key`` and equal
    ``alike`` earlier in this :func:`drawings_reused` block (as :func:`kept_tree`).
    The explorer's layer pictures and opened blocks each made the whole module's graph again
    (a layer's picture then hides all but the layer): the one step every picture repeats."""
    hit = _found(("graph", key), held, alike)
    if hit is not None:
        return hit.copy()
    g = build()
    if _kept is not None:
        _keep(("graph", key), held, alike, g.copy())
    return g


@contextmanager
def kept_beside(key: Hashable, held: tuple[Any, ...], alike: tuple[Any, ...],
                work: Callable[..., T]) -> Iterator[Beside[T]]:
    """A :class:`~hloviz.render.beside.Beside` answering ``work``: the one started for the same
    ``key`` (``held``, ``alike`` as :func:`kept_tree`) earlier in this :func:`drawings_reused`
    block, whose copy drew from the trees it kept, else a new one — ended with the block, or
    on leaving the ``with`` outside any block."""
    hit = _found(("beside", key), held, alike)
    if hit is not None and hit.claim():  # (one thread at a time asks a copy)
        try:
            yield hit
        finally:
            hit.release()
        return
    beside = Beside(work)
    if _kept is None or hit is not None:
        try:
            yield beside
        finally:
            beside.close()
        return
    beside.claim()
    _keep(("beside", key), held, alike, beside)
    try:
        yield beside
    finally:
        beside.release()
