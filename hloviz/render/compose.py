"""Pictures laid out in parts and composed: each column (and each part of a wrapped column) is
laid out by a ``dot`` of its own, the ``dot`` processes running at once, and the positions they
give are put together into one picture that ``dot -Kneato -n2`` draws as it is.

Why: pre and post share nothing but the page, yet one ``dot`` run lays them out together, so a
picture costs the sum of two layouts (and their mincross interacts for nothing); apart, on two
cores, it costs the longer one. And a long column can only be wrapped (:mod:`hloviz.render.wrap`)
once it is known where its rows fall.

How: each part's DOT text (:func:`hloviz.render.dot.part_dot`, arrows tagged by index) goes
through ``dot -Tjson0``, which gives every node's ``pos``, ``width`` and ``height``, every
cluster's ``bb`` and ``lp`` and every arrow's spline; :func:`compose` moves each part to its
place (columns left to right, tops aligned; a wrapped column's parts side by side inside the
column's box, whose label size comes from the whole column's layout) and writes the picture
again with those positions (:func:`hloviz.render.dot.placed_dot`). Identifiers are the whole
picture's (``n7``, ``cluster_3``), so the explorer finds its boxes as before; the result depends
only on the DOT texts, never on which process finished first.

A picture whose columns are tied (the diff's matched kernels on one level) is one layout, as
before: levels across columns only exist inside one ``dot`` run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import RenderError
from .dot import Drawing, Placed, PlacedColumn, _Ids, part_dot, placed_dot
from .graphviz_run import GraphvizTimeout, run_dot, run_dot_many, run_pinned
from .scene import Scene
from .wrap import OFF, Span, Wrap, band_widths, choose_parts, cut_limit, split_scene

__all__ = ["COLUMN_GAP", "PART_GAP", "Layout", "compose", "lay_out", "read_layout"]

#: Points between two columns, and between two parts of a wrapped column.
COLUMN_GAP = 16.0
PART_GAP = 36.0
#: A column cluster's margin around what it holds, and between its label and its contents (dot's).
_MARGIN = 8.0
_LABEL_GAP = 4.0
_INCH = 72.0

Run = Callable[..., bytes]
RunMany = Callable[..., list[bytes]]


@dataclass(frozen=True)
class Box:
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0


def _box(text: str) -> Box:
    x0, y0, x1, y1 = (float(v) for v in text.split(","))
    return Box(x0, y0, x1, y1)


@dataclass
class Layout:
    """Where one ``dot -Tjson0`` run put a part's things, in points (y grows upwards): the
    graph's ``bb``, and the attributes of each node and cluster (by DOT id) and arrow (by tag)."""

    bb: Box
    nodes: dict[str, dict[str, str]]
    clusters: dict[str, dict[str, str]]
    edges: dict[int, dict[str, str]]

    def node_span(self, ident: str) -> Span | None:
        attrs = self.nodes.get(ident)
        if attrs is None:
            return None
        x, y = (float(v) for v in attrs["pos"].split(",")[:2])
        half_h = float(attrs.get("height", "0")) * _INCH / 2
        half_w = float(attrs.get("width", "0")) * _INCH / 2
        return Span(y + half_h, y - half_h, x - half_w, x + half_w)

    def cluster_span(self, ident: str) -> Span | None:
        attrs = self.clusters.get(ident)
        if attrs is None:
            return None
        box = _box(attrs["bb"])
        return Span(box.y1, box.y0)


def read_layout(data: bytes) -> Layout:
    """A :class:`Layout` from ``dot -Tjson0`` output."""
    try:
        graph = json.loads(data)
        bb = _box(graph["bb"])
    except (ValueError, KeyError) as err:
        raise RenderError(f"Graphviz gave a layout hloviz cannot read ({err})") from None
    nodes: dict[str, dict[str, str]] = {}
    clusters: dict[str, dict[str, str]] = {}
    for obj in graph.get("objects", ()):
        if "pos" in obj:
            nodes[obj["name"]] = {k: obj[k] for k in ("pos", "width", "height") if k in obj}
        elif "bb" in obj:
            clusters[obj["name"]] = {k: obj[k] for k in ("bb", "lp", "lwidth", "lheight") if k in obj}
    edges: dict[int, dict[str, str]] = {}
    for edge in graph.get("edges", ()):
        tag = str(edge.get("id", ""))
        if tag.startswith("e") and tag[1:].isdigit() and "pos" in edge:
            edges[int(tag[1:])] = {k: edge[k] for k in ("pos", "lp", "head_lp", "tail_lp", "xlp") if k in edge}
    return Layout(bb, nodes, clusters, edges)


def _n(v: float) -> str:
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _shift(value: str, dx: float, dy: float) -> str:
    """A ``pos`` (``x,y``) or spline (``e,x,y s,x,y x,y …``, ``;`` between pieces) moved by (dx, dy)."""
    pieces = []
    for piece in value.split(";"):
        points = []
        for token in piece.split():
            *prefix, x, y = token.split(",")
            points.append(",".join([*prefix, _n(float(x) + dx), _n(float(y) + dy)]))
        pieces.append(" ".join(points))
    return ";".join(pieces)


def _shift_box(box: Box, dx: float, dy: float) -> str:
    return f"{_n(box.x0 + dx)},{_n(box.y0 + dy)},{_n(box.x1 + dx)},{_n(box.y1 + dy)}"


def _placed(scene: Scene, layout: Layout, dx: float, dy: float) -> Placed:
    """A part's positions moved by (dx, dy), as DOT attributes."""
    nodes = {ident: f'pos="{_shift(a["pos"], dx, dy)}", width={a.get("width", "0.3")}, '
                    f'height={a.get("height", "0.3")}'
             for ident, a in layout.nodes.items()}
    clusters = {}
    for ident, a in layout.clusters.items():
        text = f'bb="{_shift_box(_box(a["bb"]), dx, dy)}"'
        if "lp" in a:
            text += f'; lp="{_shift(a["lp"], dx, dy)}"'
        clusters[ident] = text
    edges = []
    for i in range(len(scene.edges)):
        a = layout.edges.get(i, {})
        edges.append(", ".join(f'{k}="{_shift(v, dx, dy)}"' for k, v in a.items()))
    return Placed(scene, nodes, clusters, edges)


@dataclass
class _Column:
    """A column's parts (scene, layout), top to bottom of the column as it was cut, and
    ``label``: the size (width, height) of the column cluster's label in its whole layout."""

    index: int
    parts: list[tuple[Scene, Layout]]
    label: tuple[float, float] = (0.0, 0.0)

    @property
    def wrapped(self) -> bool:
        return len(self.parts) > 1


def compose(drawing: Drawing, columns: Sequence[_Column], ids: _Ids, notes: Sequence[str] = ()) -> str:
    """The picture's DOT text with every part in its place (see the module's docstring)."""
    sizes = [_size(drawing, c, ids) for c in columns]
    top = max((h for _, h in sizes), default=0.0)
    framed = not drawing.single
    x = 0.0
    placed: list[PlacedColumn] = []
    for col, (width, height) in zip(columns, sizes, strict=True):
        cluster = ""
        if not col.wrapped:
            scene, layout = col.parts[0]
            frame = _frame(drawing, col.index, layout, ids)
            part = _placed(scene, layout, x - frame.x0, top - frame.y1)
            if framed:
                cluster = part.clusters.get(ids.clusters[(col.index, f"column {col.index}")], "")
            parts = [part]
        else:
            lw, lh = col.label
            inner_top = top - (_MARGIN + lh + _LABEL_GAP if framed else 0.0)
            px = x + (_MARGIN if framed else 0.0)
            parts = []
            for scene, layout in col.parts:
                parts.append(_placed(scene, layout, px - layout.bb.x0, inner_top - layout.bb.y1))
                px += layout.bb.width + PART_GAP
            if framed:
                frame = Box(x, top - height, x + width, top)
                cluster = (f'bb="{_shift_box(frame, 0, 0)}"; '
                           f'lp="{_n(x + _MARGIN + lw / 2)},{_n(top - _LABEL_GAP - lh / 2)}"')
        placed.append(PlacedColumn(col.index, cluster, parts))
        x += width + COLUMN_GAP
    return placed_dot(drawing, placed, ids, notes)


def _frame(drawing: Drawing, column: int, layout: Layout, ids: _Ids) -> Box:
    """The box a column's whole layout occupies: its column cluster, or the graph for one scene."""
    if not drawing.single:
        attrs = layout.clusters.get(ids.clusters[(column, f"column {column}")])
        if attrs is not None:
            return _box(attrs["bb"])
    return layout.bb


def _size(drawing: Drawing, col: _Column, ids: _Ids) -> tuple[float, float]:
    """A column's (width, height) in the composed picture."""
    if not col.wrapped:
        frame = _frame(drawing, col.index, col.parts[0][1], ids)
        return frame.width, frame.height
    width = sum(layout.bb.width for _, layout in col.parts) + PART_GAP * (len(col.parts) - 1)
    height = max(layout.bb.height for _, layout in col.parts)
    if drawing.single:
        return width, height
    lw, lh = col.label
    return max(width, lw) + 2 * _MARGIN, height + 2 * _MARGIN + lh + _LABEL_GAP


def lay_out(drawing: Drawing, fmt: str, timeout: float, wrap: Wrap = OFF, *, run: Run = run_dot,
            run_many: RunMany = run_dot_many, pinned: Run = run_pinned) -> tuple[bytes, list[str]]:
    """``drawing`` as ``fmt`` (svg or png) within ``timeout`` seconds, and notes on how it was
    wrapped. One ``dot`` run where there is nothing to compose (one scene, not wrapped) or the
    columns are tied; else the parts laid out at once, wrapped as ``wrap`` asks, and composed.
    The ``run*`` arguments are the Graphviz runners (tests stand in their own)."""
    if drawing.tied or (drawing.single and not wrap.active):
        return run(drawing.text, fmt, timeout=timeout), []
    deadline = time.monotonic() + timeout

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise GraphvizTimeout(f"Graphviz did not finish the layout within {timeout:g} s", seconds=timeout)
        return remaining

    ids = drawing.fresh_ids()
    texts = [part_dot(drawing, c, scene, ids, wrapped=False) for c, (_, scene) in enumerate(drawing.columns)]
    wholes = [read_layout(d) for d in _many(run_many, texts, left)]
    columns = [_Column(c, [(scene, whole)], _label(drawing, c, whole, ids))
               for c, ((_, scene), whole) in enumerate(zip(drawing.columns, wholes, strict=True))]
    notes: list[str] = []
    if wrap.active:
        notes = _wrap(drawing, columns, wrap, ids, run_many, left)
    return pinned(compose(drawing, columns, ids, notes), fmt, timeout=left()), notes


def _label(drawing: Drawing, column: int, layout: Layout, ids: _Ids) -> tuple[float, float]:
    if drawing.single:
        return 0.0, 0.0
    attrs = layout.clusters.get(ids.clusters[(column, f"column {column}")], {})
    return float(attrs.get("lwidth", "0")) * _INCH, float(attrs.get("lheight", "0")) * _INCH


def _spans(scene: Scene, column: int, layout: Layout, ids: _Ids) -> tuple[dict[str, Span], dict[str, Span]]:
    nodes = {}
    for key in scene.nodes:
        span = layout.node_span(ids.nodes.get((column, key), ""))
        if span is not None:
            nodes[key] = span
    clusters = {}
    for c in scene.all_clusters():
        span = layout.cluster_span(ids.clusters.get((column, c.key), ""))
        if span is not None:
            clusters[c.key] = span
    return nodes, clusters


def _wrap(drawing: Drawing, columns: list[_Column], wrap: Wrap, ids: _Ids, run_many: RunMany,
          left: Callable[[], float]) -> list[str]:
    """Cut the columns ``wrap`` asks to cut, lay their parts out, and put them in ``columns``."""
    spans = [_spans(col.parts[0][0], col.index, col.parts[0][1], ids) for col in columns]
    limits = [cut_limit(col.parts[0][0], *span) for col, span in zip(columns, spans, strict=True)]
    sizes = [_size(drawing, col, ids) for col in columns]
    widths = [band_widths(nodes, PART_GAP) for nodes, _ in spans]
    counts = choose_parts(sizes, wrap, limits, PART_GAP, widths)
    jobs: list[tuple[int, Scene]] = []
    for col, span, count in zip(columns, spans, counts, strict=True):
        if count > 1:
            jobs.extend((col.index, piece) for piece in split_scene(col.parts[0][0], *span, count))
    cut = {c for c, _ in jobs if sum(1 for d, _ in jobs if d == c) > 1}
    jobs = [(c, piece) for c, piece in jobs if c in cut]
    if not jobs:
        return []
    texts = [part_dot(drawing, c, piece, ids, wrapped=True) for c, piece in jobs]
    layouts = [read_layout(d) for d in _many(run_many, texts, left)]
    for col in columns:
        if col.index in cut:
            col.parts = [(piece, layout) for (c, piece), layout in zip(jobs, layouts, strict=True) if c == col.index]
    parts = [len(col.parts) for col in columns]
    where = " and ".join(str(n) for n in parts)
    asked = wrap.mode if wrap.mode == "auto" else str(wrap.parts)
    return [(f"wrapped into {where} parts side by side (--wrap {asked}); an arrow between parts ends at ▾ and "
            "starts again at ▴, naming the far end and its part")]


def _many(run_many: RunMany, texts: list[str], left: Callable[[], float]) -> list[bytes]:
    """Lay the parts out; where dot's ranking fails on the invisible arrows that stack scopes
    (a dot bug with clusters), lay them out without those arrows."""
    try:
        return run_many(texts, "json0", timeout=left())
    except RenderError as err:
        if isinstance(err, GraphvizTimeout) or not any("style=invis" in t for t in texts):
            raise
        plain = ["\n".join(line for line in t.split("\n") if not ("->" in line and "style=invis" in line))
                 for t in texts]
        return run_many(plain, "json0", timeout=left())
