"""Pictures laid out in parts and composed: each column (and each part of a wrapped column) is
laid out by a ``dot`` of its own, the ``dot`` processes running at once, and the results are put
together into one picture.

Why: pre and post share nothing but the page, yet one ``dot`` run lays them out together, so a
picture costs the sum of two layouts (and their mincross interacts for nothing); apart, on two
cores, it costs the longer one. And a long column can only be wrapped (:mod:`hloviz.render.wrap`)
once it is known where its rows fall.

How: each part's DOT text (:func:`hloviz.render.dot.part_dot`, arrows tagged by index) goes
through one ``dot`` that writes both its drawing (``-Tsvg``) and its positions (``-Tjson0``:
every node's ``pos``, ``width``, ``height``, every cluster's ``bb`` and ``lp``, every arrow's
spline). :func:`_arrange` places the parts: columns left to right, tops aligned; a wrapped
column's parts side by side inside the column's box, whose label size comes from the whole
column's layout. For SVG, :func:`compose_svg` has ``dot -Kneato -n2`` draw only the frame (the
header; the cluster of a wrapped column) from given positions, and :func:`stitch` puts each
part's own drawing into it, moved into place. For PNG, :func:`compose` writes the whole picture
again with every position given, and ``dot -Kneato -n2`` draws it without laying it out.
Identifiers are the whole picture's (``n7``, ``cluster_3``), so the explorer finds its boxes as
before; the result depends only on the DOT texts, never on which process finished first.

A picture whose columns are tied (the diff's matched kernels on one level) is one layout, as
before: levels across columns only exist inside one ``dot`` run. Laying out each block alone
and composing it into its parent as a fixed-size box was measured and does not pay on real
models (``benchmarks/block_layout_bench.py``): a column's whole layout takes a tenth of a second.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import RenderError
from .dot import Drawing, Placed, PlacedColumn, _Ids, frame_dot, part_dot, placed_dot
from .graphviz_run import GraphvizTimeout, normalize_svg, run_dot, run_dot_many, run_pinned
from .scene import Scene
from .wrap import OFF, Span, Wrap, band_widths, choose_parts, cut_limit, split_scene

__all__ = ["COLUMN_GAP", "PART_GAP", "Layout", "compose", "compose_svg", "lay_out", "read_layout", "stitch"]

#: Points between two columns, and between two parts of a wrapped column.
COLUMN_GAP = 16.0
PART_GAP = 36.0
#: A column cluster's margin around what it holds, and between its label and its contents (dot's).
_MARGIN = 8.0
_LABEL_GAP = 4.0
_INCH = 72.0

Run = Callable[..., bytes]
RunMany = Callable[..., list[list[bytes]]]


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
        tag = str(edge.get("comment", ""))
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
    """A column's parts (scene, layout, and the part's own SVG when the picture is SVG), top to
    bottom of the column as it was cut, and ``label``: the size (width, height) of the column
    cluster's label in its whole layout."""

    index: int
    parts: list[tuple[Scene, Layout, bytes]]
    label: tuple[float, float] = (0.0, 0.0)

    @property
    def wrapped(self) -> bool:
        return len(self.parts) > 1


@dataclass
class _Place:
    """Where a column goes: its box, its cluster's position attributes (a wrapped column's, or
    an unwrapped one's own as laid out), and each part's shift (dx, dy) from its own layout."""

    column: _Column
    box: Box
    cluster: str
    shifts: list[tuple[float, float]]


def _arrange(drawing: Drawing, columns: Sequence[_Column], ids: _Ids) -> list[_Place]:
    """Columns left to right, tops aligned; a wrapped column's parts side by side in its box."""
    sizes = [_size(drawing, c, ids) for c in columns]
    top = max((h for _, h in sizes), default=0.0)
    framed = not drawing.single
    x = 0.0
    out: list[_Place] = []
    for col, (width, height) in zip(columns, sizes, strict=True):
        box = Box(x, top - height, x + width, top)
        cluster = ""
        if not col.wrapped:
            _, layout, _ = col.parts[0]
            frame = _frame(drawing, col.index, layout, ids)
            shifts = [(x - frame.x0, top - frame.y1)]
            attrs = layout.clusters.get(ids.clusters.get((col.index, f"column {col.index}"), ""))
            if framed and attrs is not None:
                cluster = f'bb="{_shift_box(_box(attrs["bb"]), *shifts[0])}"'
                if "lp" in attrs:
                    cluster += f'; lp="{_shift(attrs["lp"], *shifts[0])}"'
        else:
            lw, lh = col.label
            inner_top = top - (_MARGIN + lh + _LABEL_GAP if framed else 0.0)
            px = x + (_MARGIN if framed else 0.0)
            shifts = []
            for _, layout, _ in col.parts:
                shifts.append((px - layout.bb.x0, inner_top - layout.bb.y1))
                px += layout.bb.width + PART_GAP
            if framed:
                cluster = (f'bb="{_shift_box(box, 0, 0)}"; '
                           f'lp="{_n(x + _MARGIN + lw / 2)},{_n(top - _LABEL_GAP - lh / 2)}"')
        out.append(_Place(col, box, cluster, shifts))
        x += width + COLUMN_GAP
    return out


def compose(drawing: Drawing, columns: Sequence[_Column], ids: _Ids, notes: Sequence[str] = ()) -> str:
    """The whole picture's DOT text with every part in its place, for ``dot -Kneato -n2`` to
    draw (PNG; see the module's docstring)."""
    placed = []
    for place in _arrange(drawing, columns, ids):
        parts = [_placed(scene, layout, dx, dy)
                 for (scene, layout, _), (dx, dy) in zip(place.column.parts, place.shifts, strict=True)]
        placed.append(PlacedColumn(place.column.index, place.cluster, parts))
    return placed_dot(drawing, placed, ids, notes)


def compose_svg(drawing: Drawing, columns: Sequence[_Column], ids: _Ids, notes: Sequence[str],
                pinned: Run, timeout: float) -> bytes:
    """The whole picture as SVG from the parts' own SVG: ``dot -Kneato -n2`` draws only the
    frame (the header, and the cluster of each wrapped column: a few boxes, milliseconds), and
    each part's drawing goes into it, moved to its place. Nothing is laid out or drawn twice."""
    places = _arrange(drawing, columns, ids)
    frames = [(p.column.index, p.cluster) for p in places if p.column.wrapped and p.cluster]
    boxes = [_shift_box(p.box, 0, 0) for p in places]
    frame = pinned(frame_dot(drawing, frames, boxes, notes), "svg", timeout=timeout)
    parts = [(svg, dx, dy) for p in places for (_, _, svg), (dx, dy) in zip(p.column.parts, p.shifts, strict=True)]
    return stitch(frame, parts)


_GRAPH_START = re.compile(r'<g id="graph0" class="graph"[^>]*>\n<title>[^<]*</title>\n(?:<polygon fill="white"[^>]*/>\n)?')
_ID = re.compile(r'id="(a_)?(node|edge|clust)(\d+)')


def stitch(frame: bytes, parts: Sequence[tuple[bytes, float, float]]) -> bytes:
    """``frame``'s SVG with each part's drawing (its graph's contents, without its title and white
    background) put in, moved by (dx, dy) in layout points (SVG's y runs down: ``-dy``). Element
    ids (``node3``, ``edge7``, ``clust2``) are numbered again so they stay unique."""
    text = frame.decode("utf-8")
    end = text.rindex("</g>")
    counters = _highest(text)
    pieces = [text[:end]]
    for svg, dx, dy in parts:
        part = svg.decode("utf-8")
        m = _GRAPH_START.search(part)
        if m is None:
            raise RenderError("Graphviz drew a part hloviz cannot place (no graph group in its SVG)")
        body = part[m.end():part.rindex("</g>")]
        body = _ID.sub(_renumber(dict(counters)), body)
        for kind, highest in _highest(body).items():
            counters[kind] = max(counters[kind], highest)
        pieces.append(f'<g class="part" transform="translate({_n(dx)} {_n(-dy)})">\n{body}</g>\n')
    pieces.append(text[end:])
    return normalize_svg("".join(pieces).encode("utf-8"))


def _renumber(offsets: dict[str, int]) -> Callable[[re.Match[str]], str]:
    def sub(m: re.Match[str]) -> str:
        return f'id="{m.group(1) or ""}{m.group(2)}{int(m.group(3)) + offsets[m.group(2)]}'
    return sub


def _highest(text: str) -> dict[str, int]:
    out = {"node": 0, "edge": 0, "clust": 0}
    for m in _ID.finditer(text):
        out[m.group(2)] = max(out[m.group(2)], int(m.group(3)))
    return out


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
    width = sum(layout.bb.width for _, layout, _ in col.parts) + PART_GAP * (len(col.parts) - 1)
    height = max(layout.bb.height for _, layout, _ in col.parts)
    if drawing.single:
        return width, height
    lw, lh = col.label
    return max(width, lw) + 2 * _MARGIN, height + 2 * _MARGIN + lh + _LABEL_GAP


def lay_out(drawing: Drawing, fmt: str, timeout: float, wrap: Wrap = OFF, *, run: Run = run_dot,
            run_many: RunMany = run_dot_many, pinned: Run = run_pinned) -> tuple[bytes, list[str]]:
    """``drawing`` as ``fmt`` (svg or png) within ``timeout`` seconds, and notes on how it was
    wrapped. One ``dot`` run where there is nothing to compose (one scene, not wrapped) or the
    columns are tied; else the parts laid out at once, wrapped as ``wrap`` asks, and composed.
    A one-scene picture that ``wrap`` leaves whole is that one run's picture, as before.
    The ``run*`` arguments are the Graphviz runners (tests stand in their own)."""
    if drawing.tied or (drawing.single and not wrap.active):
        return run(drawing.text, fmt, timeout=timeout), []
    deadline = time.monotonic() + timeout

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise GraphvizTimeout(f"Graphviz did not finish the layout within {timeout:g} s", seconds=timeout)
        return remaining

    formats = ("json0", "svg") if fmt == "svg" else ("json0",)
    ids = drawing.fresh_ids()
    if drawing.single:  # the picture itself, header and all: kept as it is when not cut
        texts = [drawing.text]
        outs = _many(run_many, texts, ("json0", fmt), left)
    else:
        texts = [part_dot(drawing, c, scene, ids, wrapped=False) for c, (_, scene) in enumerate(drawing.columns)]
        outs = _many(run_many, texts, formats, left)
    columns = []
    for c, ((_, scene), out) in enumerate(zip(drawing.columns, outs, strict=True)):
        whole = read_layout(out[0])
        columns.append(_Column(c, [(scene, whole, out[-1])], _label(drawing, c, whole, ids)))
    notes: list[str] = []
    if wrap.active:
        notes = _wrap(drawing, columns, wrap, ids, lambda t: _many(run_many, t, formats, left))
    if drawing.single and not notes:
        return outs[0][1], []
    if fmt == "svg":
        return compose_svg(drawing, columns, ids, notes, pinned, left()), notes
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


def _wrap(drawing: Drawing, columns: list[_Column], wrap: Wrap, ids: _Ids,
          lay: Callable[[list[str]], list[list[bytes]]]) -> list[str]:
    """Cut the columns ``wrap`` asks to cut, lay their parts out (``lay``), and put them in
    ``columns``; the note saying so."""
    spans = [_spans(col.parts[0][0], col.index, col.parts[0][1], ids) for col in columns]
    limits = [cut_limit(col.parts[0][0], *span) for col, span in zip(columns, spans, strict=True)]
    sizes = [_size(drawing, col, ids) for col in columns]
    widths = [band_widths(nodes, PART_GAP) for nodes, _ in spans]
    counts = choose_parts(sizes, wrap, limits, PART_GAP, widths)
    jobs: list[tuple[int, Scene]] = []
    for col, span, count in zip(columns, spans, counts, strict=True):
        if count > 1:
            pieces = split_scene(col.parts[0][0], *span, count)
            if len(pieces) > 1:
                jobs.extend((col.index, piece) for piece in pieces)
    if not jobs:
        return []
    outs = lay([part_dot(drawing, c, piece, ids, wrapped=True) for c, piece in jobs])
    cut = {c for c, _ in jobs}
    for col in columns:
        if col.index in cut:
            col.parts = [(piece, read_layout(out[0]), out[-1])
                         for (c, piece), out in zip(jobs, outs, strict=True) if c == col.index]
    where = " and ".join(str(len(col.parts)) for col in columns)
    asked = wrap.mode if wrap.mode == "auto" else str(wrap.parts)
    return [(f"wrapped into {where} parts side by side (--wrap {asked}); an arrow between parts ends at ▾ and "
            "starts again at ▴, naming the far end and its part")]


def _many(run_many: RunMany, texts: list[str], formats: Sequence[str], left: Callable[[], float]) -> list[list[bytes]]:
    """Lay the parts out; where dot's ranking fails on the invisible arrows that stack scopes
    (a dot bug with clusters), lay them out without those arrows."""
    try:
        return run_many(texts, formats, timeout=left())
    except RenderError as err:
        if isinstance(err, GraphvizTimeout) or not any("style=invis" in t for t in texts):
            raise
        plain = ["\n".join(line for line in t.split("\n") if not ("->" in line and "style=invis" in line))
                 for t in texts]
        return run_many(plain, formats, timeout=left())
