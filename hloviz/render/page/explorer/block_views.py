"""Blocks, ``×N`` repeats, groups of layers and phases opened in place: the same picture with one
closed node of its cut drawn open.

In: the sides, the picture's columns (:data:`Column`), the marks, the :class:`~.build.Bounds` and,
for a pre/post pair, the :class:`~.pairs.Pairing` that opens a block's counterpart with it. Out:
a :class:`~.sides.ViewSpec` per opened node, breadth-first and the biggest first, each opened
view's own closed nodes queued under it (:func:`block_expansions`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from ....errors import HlovizError
from .build import Bounds
from .pairs import Pairing, counterpart
from .sides import Side, ViewSpec, plain_name

if TYPE_CHECKING:
    from ...layout.wrap import Wrap
    from ...views import Mark, View

__all__ = ["Column", "block_expansions", "block_name", "closed_blocks", "inner_blocks", "open_block"]


def _closed(view: View, side: Side, under: str | None = None) -> list[tuple[int, str]]:
    """``(leaves, tree key)`` of the closed nodes of ``view``'s cut that open in place
    (:func:`~hloviz.render.page.explorer.data.opens_in_place`; below tree node ``under`` only, when
    given), biggest first."""
    from .data import opens_in_place

    if view.cut is None:
        return []
    out = []
    for node in view.cut.nodes:
        if node.key in view.drawn_as and (under is None or node.key.startswith(under + "/")) \
                and opens_in_place(node, side):
            out.append((node.size, node.key))
    return sorted(out, key=lambda c: (-c[0], c[1]))


#: A picture column as the explorer draws it: (heading, side index, View).
Column = tuple[str, int, "View"]


def block_expansions(sides: Sequence[Side], columns: Sequence[Column], *,
                     marks: Sequence[Mapping[str, Mark] | None] = (), bounds: Bounds = Bounds(),
                     title: str = "", parent: str = "top", walked: int = 0, wrap: Wrap | None = None,
                     pairing: Pairing | None = None, info: Mapping | None = None) -> list[ViewSpec]:
    """The picture of ``columns`` with each closed block or repeat opened in place, biggest
    first, within ``bounds`` (``walked``: instructions other expansions walked): the same cut of
    the same column, the same options, one node opened (:func:`hloviz.render.cut.cut.open_in_place`:
    a block's members up to ``bounds.budget`` nodes; a repeat's first copy, and one node naming
    the other copies), the other columns as they were. Blocks closed inside an opened one open
    from its picture in turn, breadth-first, so the top level's blocks are never crowded out by
    deep ones. A view's key and ``opens`` are ``t:<side>:<tree key>``, as the explorer's data
    names the box it opens (:func:`hloviz.render.page.explorer.data.explorer_data`). ``wrap``: as
    the picture was laid out (:mod:`hloviz.render.layout.wrap`); ``info``: the capture's, as the
    picture was drawn with (a parameter keeps its name, ``stem/kernel``, when its block opens).

    ``pairing`` (a page of a module before and after optimization): a block opens in both
    columns — its counterpart in the other column opens with it
    (:func:`hloviz.render.page.explorer.pairs.counterpart`: the same block by name, else the blocks
    holding its ops' kernels), and the view's ``pair`` says what opened there, or why nothing
    did."""
    walk = max(sum(sides[i].module.instruction_count for _, i, _ in columns[:1]), 1)
    left = min(bounds.max_views, max(bounds.max_walk - walked, 0) // walk)
    deadline = time.monotonic() + bounds.seconds
    # (parent view key, the picture's columns, which column opens, tree key)
    level = [(parent, list(columns), c, key) for c, key in closed_blocks(sides, columns)]

    def draw(choice: tuple[str, list[Column], int, str]):
        _up, cols, c, key = choice
        if time.monotonic() >= deadline:
            return choice, None, None
        opened = open_block(sides, cols, c, key, marks=marks, timeout=bounds.timeout, title=title, wrap=wrap,
                            pairing=pairing, info=info)
        if opened is None:
            return choice, None, None
        name, new, pair, svg = opened
        return choice, (name, new, pair), svg

    out: list[ViewSpec] = []
    seen: set[str] = set()
    total = 0
    workers = max(1, min(4, os.cpu_count() or 1))
    while level and left > 0 and time.monotonic() < deadline:
        level.sort(key=lambda x: (-_size(x[1][x[2]][2], x[3]), x[2], x[3]))  # biggest first
        chosen = []
        for choice in level:
            tag = f"t:{sides[choice[1][choice[2]][1]].key}:{choice[3]}"
            if tag not in seen and len(chosen) < left:
                seen.add(tag)
                chosen.append(choice)
        left -= len(chosen)
        level = []
        with ThreadPoolExecutor(workers) as pool:
            results = list(pool.map(draw, chosen))
        for (up, _cols, c, key), drawn, svg in results:
            if drawn is None or svg is None or total + len(svg) > bounds.max_bytes:
                continue
            total += len(svg)
            name, new, pair = drawn
            tag = f"t:{sides[new[c][1]].key}:{key}"
            out.append(ViewSpec(key=tag, title=name, columns=[(s, v) for _, s, v in new], svg=svg, parent=up,
                                opens=tag, pair=pair))
            # what the opened node holds opens in turn (not the node naming a repeat's other copies)
            level += [(tag, new, c, inner) for inner in inner_blocks(sides, new, c, key)]
    return out


def closed_blocks(sides: Sequence[Side], columns: Sequence[Column]) -> list[tuple[int, str]]:
    """``(column, tree key)`` of every closed node of the picture ``columns`` that opens in place."""
    return [(c, key) for c, (_, s, view) in enumerate(columns) for _, key in _closed(view, sides[s])]


def inner_blocks(sides: Sequence[Side], opened: Sequence[Column], c: int, key: str) -> list[str]:
    """The tree keys of the closed nodes inside ``key``, which column ``c`` of ``opened`` drew open
    (not the node naming a repeat's other copies): they open from that picture in turn."""
    return [inner for _, inner in _closed(opened[c][2], sides[opened[c][1]], under=key)
            if not inner.endswith("/x:more")]


def block_name(cols: Sequence[Column], c: int, key: str) -> str:
    """The name the explorer gives tree node ``key`` of column ``c`` opened (its breadcrumb)."""
    from ...cut.apply import scope_title

    cut = cols[c][2].cut
    return plain_name(scope_title(cut.tree.nodes[key])) if cut is not None else key


def open_block(sides: Sequence[Side], cols: Sequence[Column], c: int, key: str, *,
               marks: Sequence[Mapping[str, Mark] | None] = (), timeout: float = 10.0, title: str = "",
               wrap: Wrap | None = None, pairing: Pairing | None = None,
               info: Mapping | None = None) -> tuple[str, list[Column], dict | None, str] | None:
    """The picture ``cols`` with tree node ``key`` of column ``c`` opened in place (and its
    counterpart in the other column, given a ``pairing``): its name, its columns, what the other
    column opened (the view's ``pair``) and its SVG; None where it has no layout in ``timeout``
    seconds. :func:`block_expansions` says how a node opens."""
    from dataclasses import replace

    from ...layout.dot import columns_drawing, to_drawing
    from ...layout.wrap import OFF
    from ...pictures import build_picture
    from ...views import ViewOptions, draw_module

    heading, s, drawn = cols[c]
    opts = drawn.options
    if opts is None or drawn.cut is None:
        return None
    name = block_name(cols, c, key)
    pair = counterpart(pairing, sides, [(s2, v) for _, s2, v in cols], c, key) if pairing is not None else None

    def redrawn(k: int, options: ViewOptions, keys: Sequence[str]) -> View:
        """Column ``k`` drawn with ``keys`` opened in place (``options``: as the layout asks)."""
        _, sk, old = cols[k]
        heading_title = old.scene.title[0].text if old.scene.title else sides[sk].module.name
        return draw_module(sides[sk].module, marks=marks[sk] if sk < len(marks) else None,
                           options=replace(options, open=(*options.open, *keys)),
                           title=heading_title if len(cols) > 1 else f"{heading_title} · {name}", info=info)

    def build(options: ViewOptions, extra: Sequence[str]):
        view = redrawn(c, options, (key,))
        view.scene.notes[:0] = list(extra)
        new = [*cols[:c], (heading, s, view), *cols[c + 1:]]
        if pair is not None and pair.keys:
            d = 1 - c
            other = cols[d][2].options or options
            new[d] = (cols[d][0], cols[d][1], redrawn(d, replace(other, coarse=options.coarse,
                                                                  budget=min(other.budget, options.budget)),
                                                      pair.keys))
        if len(new) == 1:
            return to_drawing(view.scene), [(heading, view)]
        return (columns_drawing([(h, v.scene) for h, _, v in new], title=f"{title} · {name}" if title else name),
                [(h, v) for h, _, v in new])

    try:
        picture = build_picture(build, opts, "svg", timeout, name, wrap=wrap if wrap is not None else OFF)
    except HlovizError:
        return None
    if picture.svg is None:
        return None
    new = [(h, s2, v) for (h, s2, _), (_, v) in zip(cols, picture.views, strict=True)]
    other_key = sides[cols[1 - c][1]].key if len(cols) == 2 else ""
    return name, new, pair.to_json(other_key) if pair is not None else None, picture.svg.decode("utf-8")


def _size(view: View, key: str) -> int:
    return view.cut.tree.nodes[key].size if view.cut is not None else 0
