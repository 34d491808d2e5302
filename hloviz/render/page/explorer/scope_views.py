"""Layers of the model drawn open, each as a picture of its own (``ViewOptions(scope=…)``).

In: a side and a picture of it, the layers it closes (:func:`closed_scopes`: path → size), a
way to draw one (:data:`LayerDraw`) and the :class:`~.build.Bounds`. Out: a
:class:`~.sides.ViewSpec` per layer, the biggest first, a sub-layer under its drawn parent,
until the bounds are spent (:func:`scope_expansions`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from ....errors import HlovizError
from .build import Bounds
from .sides import Side, ViewSpec

if TYPE_CHECKING:
    from ...views import View

__all__ = ["LayerDraw", "LayerInner", "ancestors", "closed_scopes", "scope_expansions"]


def closed_scopes(side: Side, drawn: View, within: str | None = None) -> dict[str, int]:
    """Layers worth a picture of their own: path → instructions, for each scope (of at least two
    instructions, and not most of the module) that the picture ``drawn`` does not draw open —
    closed into one box (alone or with other ops), or left out when Graphviz needed a coarser
    view.
    ``within``: ``drawn`` is that layer's own picture, and only the scopes inside it count (its
    sub-layers, one level down: theirs show in their own pictures)."""
    tree = side.scope_tree()
    total = side.module.instruction_count
    own: set[str] = set()
    boxes: dict[str, list[str]] = {}  # drawn box → the scope path of each instruction it holds
    for name, key in drawn.node_of.items():
        inst = side.instruction(name)
        if inst is not None:
            boxes.setdefault(key, []).append(tree.scope_of(inst).path)
    drawn_of: dict[str, int] = {}  # scope path → how many of its instructions the picture draws
    for paths in boxes.values():
        for p in paths:
            drawn_of[p] = drawn_of.get(p, 0) + 1
    for paths in boxes.values():
        path = paths[0]
        if any(p != path for p in paths):
            continue
        if len(paths) >= 2 and len(paths) == drawn_of.get(path, 0):
            continue  # the whole layer closed into one box: worth opening in a picture of its own
        own.add(path)
    out: dict[str, int] = {}
    inside = within + "/" if within is not None else ""
    for s in tree.walk():  # parents first: a layer's own sub-scopes show in its picture
        if s.kind != "scope" or s.path in own or (s.parent is not None and s.parent.path in out):
            continue
        if not s.path.startswith(inside) or s.path == within:
            continue
        n = sum(s.phases.values())
        if 2 <= n <= total // 2:
            out[s.path] = n
    return out


#: ``draw(path)`` of :func:`scope_expansions`: the layer's title, drawn columns and SVG, or None.
LayerDraw = Callable[[str], "tuple[str, list[tuple[int, View]], str] | None"]
#: ``inner(path, columns)``: the sub-layers the layer's drawn picture shows closed, path → size.
LayerInner = Callable[[str, "list[tuple[int, View]]"], Mapping[str, int]]


def scope_expansions(candidates: Mapping[str, int], draw: LayerDraw, *, walk: int, bounds: Bounds = Bounds(),
                     parent: str = "top", inner: LayerInner | None = None) -> list[ViewSpec]:
    """A view of each scope in ``candidates`` (path → size), biggest first, within ``bounds``;
    ``draw(path)`` returns ``(title, [(side index, View)], svg)`` or None; each walks ``walk``
    instructions.

    With ``inner``, layers open recursively: the sub-layers each drawn picture shows closed get
    pictures of their own (their parent is that picture, so the breadcrumb keeps it), and so on
    down. The bounds are spent breadth-first: every layer of one level (biggest first) before
    any of the next, so a big model's top-level layers are never crowded out by deep ones."""
    left = min(bounds.max_views, bounds.max_walk // 2 // max(walk, 1))
    deadline = time.monotonic() + bounds.seconds
    level: list[tuple[str, str, int]] = [(parent, p, n) for p, n in candidates.items()]
    seen: set[str] = set()
    out: list[ViewSpec] = []
    total = 0

    def one(choice: tuple[str, str, int]):
        up, path, _ = choice
        if time.monotonic() >= deadline:
            return up, path, None
        try:
            return up, path, draw(path)
        except HlovizError:
            return up, path, None

    workers = max(1, min(4, os.cpu_count() or 1))
    while level and left > 0 and time.monotonic() < deadline:
        level = list({c[1]: c for c in level if c[1] not in seen}.values())  # one of each path
        paths = {c[1] for c in level}
        # a scope inside another of this level waits for the next: its ancestor's picture first
        now = [c for c in level if not any(a in paths for a in ancestors(c[1]))]
        chosen = sorted(now, key=lambda c: (-c[2], c[1]))[:left]
        seen.update(c[1] for c in chosen)
        left -= len(chosen)
        with ThreadPoolExecutor(workers) as pool:
            results = list(pool.map(one, chosen))
        level = [c for c in level if c not in now]
        for up, path, drawn in results:
            if drawn is None:
                continue
            title, columns, svg = drawn
            if total + len(svg) > bounds.max_bytes:
                continue
            total += len(svg)
            out.append(ViewSpec(key=f"s:{path}", title=title, columns=columns, svg=svg, parent=up, opens=f"s:{path}"))
            if inner is not None:
                level += [(f"s:{path}", p, n) for p, n in inner(path, columns).items()]
    drawn_paths = {v.key for v in out}
    for v in out:  # each picture goes back up to its nearest drawn enclosing layer, for the breadcrumb
        up = next((f"s:{a}" for a in reversed(ancestors(v.key[2:])) if f"s:{a}" in drawn_paths), None)
        if up is not None:
            v.parent = up
    return out


def ancestors(path: str) -> list[str]:
    """The scope paths enclosing ``path``, outermost first (``a/b/c`` → ``a``, ``a/b``)."""
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]
