"""Pictures laid out in parts and composed: each column (and each part of a wrapped column) is
laid out by a ``dot`` of its own, the ``dot`` processes running at once, and the results are put
together into one picture.

Why: pre and post share nothing but the page, yet one ``dot`` run lays them out together, so a
picture costs the sum of two layouts (and their mincross interacts for nothing); apart, on two
cores, it costs the longer one. And a long column can only be wrapped (:mod:`hloviz.render.wrap`)
once it is known where its rows fall.

How: each part's DOT text (:func:`hloviz.render.dot.part_dot`, arrows tagged by index) goes
through one ``dot`` that writes its drawing (``-Tsvg``) and, where they are needed, its
positions (``-Tjson0``: every node's ``pos``, ``width``, ``height``, every cluster's ``bb`` and
``lp``, every arrow's spline; they make ``dot`` take half as long again, so they are asked for
only for a PNG and for a column that is to be wrapped). :func:`_arrange` places the parts:
columns left to right, tops aligned; a wrapped column's parts side by side inside the column's
box (a wide column's stacked top to bottom), whose label size comes from the whole column's layout. For SVG, :func:`stitch_columns`
puts the header (drawn by a ``dot`` of its own, beside the columns') and the columns' drawings
into a root written here; with wrapped columns, :func:`compose_svg` has ``dot -Kneato -n2``
draw a frame (the header, the wrapped columns' clusters, the parts' captions) from given
positions instead. :func:`~hloviz.render.svgjoin.stitch` moves each drawing into place. For PNG, :func:`compose`
writes the whole picture again with every position given, and ``dot -Kneato -n2`` draws it
without laying it out.
Identifiers are the whole picture's (``n7``, ``cluster_3``), so the explorer finds its boxes as
before; the result depends only on the DOT texts, never on which process finished first.

A picture whose columns are tied (the diff's matched kernels on one level) is one layout, as
before: levels across columns only exist inside one ``dot`` run. A column may also be laid out
block by block (``--layout blocks``, and ``auto`` for a large column of many blocks, where it
was measured to pay): its blocks first, then the column with each block as a box of its size,
each block's drawing moved into its box (:mod:`hloviz.render.blocklayout`, :func:`_block_round`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..errors import RenderError
from .blocklayout import BlockColumn, batches, block_group, fix_boxes, pays, split_column
from .dot import Drawing, PlacedColumn, _Ids, frame_dot, header_dot, part_dot, placed_dot
from .graphviz_run import GraphvizTimeout, _cores, run_dot, run_dot_many, run_pinned
from .positions import INCH, Box, Layout, num, parse_box, place_part, read_layout, shift, shift_box, shifted, svg_box
from .scene import Scene
from .svgjoin import retitle_edges, root_svg, split_drawing, stitch
from .wrap import (
    ACROSS,
    MAX_STACKED,
    OFF,
    SLACK,
    Span,
    Wrap,
    band_widths,
    choose_parts,
    cut_limit,
    direction,
    split_scene,
    stacked_heights,
    transposed,
)

__all__ = ["COLUMN_GAP", "PART_GAP", "compose", "compose_svg", "lay_out", "stitch_columns"]

#: Points between two columns (beyond the margin dot leaves around each), and between two parts
#: of a wrapped column.
COLUMN_GAP = 0.0
PART_GAP = 36.0
#: A column cluster's margin around what it holds, and between its label and its contents (dot's).
_MARGIN = 8.0
_LABEL_GAP = 4.0
#: How much wider than its share of the whole (``1 / k`` of the column) the widest of ``k``
#: stacked parts comes out laid out alone: dot spreads a piece of a row over the room it has,
#: and ranks a part's boxes again. Measured (picture_bench): jax_gpt_step 2.1 and 2.0 (pre,
#: post), keras_cnn_train 1.6 and 1.7.
_SPREAD = 2.0
#: Height of the "part 2 of 3" caption over each part of a wrapped column.
_CAPTION = 16.0

Run = Callable[..., bytes]
RunMany = Callable[..., list[list[bytes]]]


@dataclass
class _Part:
    """One laid-out part: its scene, its graph's box ``bb`` (points, y up), its own drawing
    (``svg``, for an SVG picture) and its positions (``layout``: where they were asked for)."""

    scene: Scene
    bb: Box
    svg: bytes = b""
    layout: Layout | None = None
    #: a column laid out block by block (:mod:`hloviz.render.blocklayout`): the scene as drawn
    #: (connectors in the blocks; ``layout`` holds its positions) and the drawings that make
    #: the part's SVG, each with its shift (the column's, then each block's in its box)
    drawn: Scene | None = None
    pieces: list[tuple[bytes, float, float]] = field(default_factory=list)

    def drawings(self, dx: float, dy: float) -> list[tuple[bytes, float, float]]:
        """The part's drawing(s), moved by (dx, dy)."""
        if self.pieces:
            return [(svg, dx + x, dy + y) for svg, x, y in self.pieces]
        return [(self.svg, dx, dy)]


@dataclass
class _Column:
    """A column's parts, top to bottom of the column as it was cut; ``text``, the DOT its whole
    layout came from; ``whole``, that layout's positions once read (wrapping needs them); and
    ``label``, the size (width, height) of the column cluster's label there."""

    index: int
    parts: list[_Part]
    text: str = ""
    whole: Layout | None = None
    label: tuple[float, float] = (0.0, 0.0)
    #: a wide column's parts go top to bottom (cut across), a tall one's side by side
    stacked: bool = False
    #: the positions (``-Tjson0``) of its whole layout as dot wrote them, where asked for with
    #: the drawing (read only if the column is cut)
    positions: bytes = b""

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
    #: a wrapped column's captions: ("part 2 of 3", x, y of the caption's centre)
    captions: list[tuple[str, float, float]] = field(default_factory=list)


def _arrange(drawing: Drawing, columns: Sequence[_Column], ids: _Ids) -> list[_Place]:
    """Columns left to right, tops aligned, each in the box its graph had (dot leaves a margin
    around a column's cluster); a wrapped column's parts side by side (stacked, for a column cut
    across) in a box of the same kind."""
    sizes = [_size(drawing, c) for c in columns]
    top = max((h for _, h in sizes), default=0.0)
    framed = not drawing.single
    x = 0.0
    out: list[_Place] = []
    for col, (width, height) in zip(columns, sizes, strict=True):
        box = Box(x, top - height, x + width, top)
        cluster = ""
        captions: list[tuple[str, float, float]] = []
        if not col.wrapped:
            part = col.parts[0]
            shifts = [(x - part.bb.x0, top - part.bb.y1)]
            attrs = (part.layout.clusters.get(ids.clusters.get((col.index, f"column {col.index}"), ""))
                     if part.layout is not None else None)
            if framed and attrs is not None:
                cluster = f'bb="{shift_box(parse_box(attrs["bb"]), *shifts[0])}"'
                if "lp" in attrs:
                    cluster += f'; lp="{shift(attrs["lp"], *shifts[0])}"'
        else:
            lw, lh = col.label
            edge = 2 * _MARGIN if framed else 0.0  # dot's margin around a cluster, then the cluster's own
            inner_top = top - (edge + lh + _LABEL_GAP if framed else 0.0)
            px, py = x + edge, inner_top
            shifts = []
            for k, part in enumerate(col.parts, 1):
                captions.append((f"part {k} of {len(col.parts)}", px + part.bb.width / 2, py - _CAPTION / 2))
                shifts.append((px - part.bb.x0, py - _CAPTION - part.bb.y1))
                if col.stacked:
                    py -= part.bb.height + _CAPTION + PART_GAP
                else:
                    px += part.bb.width + PART_GAP
            if framed:
                frame = Box(box.x0 + _MARGIN, box.y0 + _MARGIN, box.x1 - _MARGIN, box.y1 - _MARGIN)
                cluster = (f'bb="{shift_box(frame, 0, 0)}"; '
                           f'lp="{num(frame.x0 + _MARGIN + lw / 2)},{num(frame.y1 - _LABEL_GAP - lh / 2)}"')
        out.append(_Place(col, box, cluster, shifts, captions))
        x += width + COLUMN_GAP
    return out


def compose(drawing: Drawing, columns: Sequence[_Column], ids: _Ids, notes: Sequence[str] = ()) -> str:
    """The whole picture's DOT text with every part in its place, for ``dot -Kneato -n2`` to
    draw (PNG; see the module's docstring)."""
    placed = []
    for place in _arrange(drawing, columns, ids):
        parts = [place_part(part.drawn or part.scene, _positions(part), dx, dy)
                 for part, (dx, dy) in zip(place.column.parts, place.shifts, strict=True)]
        placed.append(PlacedColumn(place.column.index, place.cluster, parts))
    captions = [c for place in _arrange(drawing, columns, ids) for c in place.captions]
    return placed_dot(drawing, placed, ids, notes, _caption_nodes(captions))


def compose_svg(drawing: Drawing, columns: Sequence[_Column], ids: _Ids, notes: Sequence[str],
                pinned: Run, timeout: float) -> bytes:
    """The whole picture as SVG from the parts' own SVG: ``dot -Kneato -n2`` draws only the
    frame (the header, and the cluster of each wrapped column: a few boxes, milliseconds), and
    each part's drawing goes into it, moved to its place. Nothing is laid out or drawn twice."""
    places = _arrange(drawing, columns, ids)
    frames = [(p.column.index, p.cluster) for p in places if p.column.wrapped and p.cluster]
    boxes = [shift_box(p.box, 0, 0) for p in places]
    captions = _caption_nodes([c for p in places for c in p.captions])
    frame = pinned(frame_dot(drawing, frames, boxes, notes, captions), "svg", timeout=timeout)
    parts = [d for p in places for part, (dx, dy) in zip(p.column.parts, p.shifts, strict=True)
             for d in part.drawings(dx, dy)]
    return stitch(frame, parts)


def stitch_columns(drawing: Drawing, columns: Sequence[_Column], ids: _Ids, header: bytes) -> bytes:
    """Columns none of which is wrapped, as SVG with no Graphviz run of its own: the header, drawn
    by a ``dot`` of its own beside the columns' (``header``; empty for none), goes on top, the
    columns' drawings under it, in a root written here as Graphviz writes one."""
    places = _arrange(drawing, columns, ids)
    top = max((p.box.y1 for p in places), default=0.0)
    head = svg_box(header) if header else Box(0, 0, 0, 0)
    width = max([p.box.x1 for p in places] + [head.width])
    height = top + head.height
    parts = [(header, 0.0, top)] if header else []
    parts += [d for p in places for part, (dx, dy) in zip(p.column.parts, p.shifts, strict=True)
              for d in part.drawings(dx, dy)]
    return stitch(root_svg(width, height), parts)


def _positions(part: _Part) -> Layout:
    if part.layout is None:
        raise RenderError("internal: a part drawn without its positions")  # PNG parts are laid out with json0
    return part.layout


def _caption_nodes(captions: Sequence[tuple[str, float, float]]) -> list[str]:
    """DOT statements drawing each part's caption (plain grey text) where it goes."""
    return [f'  part{i} [shape=plaintext, style="", label="{text}", fontsize=9, fontcolor="#616161", '
            f'pos="{num(x)},{num(y)}", width={len(text) * 5.5 / 72:.3f}, height={_CAPTION / 72:.3f}];'
            for i, (text, x, y) in enumerate(captions)]


def _size(drawing: Drawing, col: _Column) -> tuple[float, float]:
    """A column's (width, height) in the composed picture."""
    if not col.wrapped:
        return col.parts[0].bb.width, col.parts[0].bb.height
    if col.stacked:
        width = max(p.bb.width for p in col.parts)
        height = sum(p.bb.height + _CAPTION for p in col.parts) + PART_GAP * (len(col.parts) - 1)
    else:
        width = sum(p.bb.width for p in col.parts) + PART_GAP * (len(col.parts) - 1)
        height = max(p.bb.height for p in col.parts) + _CAPTION
    if drawing.single:
        return width, height
    lw, lh = col.label
    return max(width, lw + 2 * _MARGIN) + 4 * _MARGIN, height + 4 * _MARGIN + lh + _LABEL_GAP


def lay_out(drawing: Drawing, fmt: str, timeout: float, wrap: Wrap = OFF, *, run: Run = run_dot,
            run_many: RunMany = run_dot_many, pinned: Run = run_pinned, mode: str = "auto",
            cores: int | None = None) -> tuple[bytes, list[str]]:
    """``drawing`` as ``fmt`` (svg or png) within ``timeout`` seconds, and notes on how it was
    wrapped. One ``dot`` run where there is nothing to compose (one scene, not wrapped, not laid
    out by blocks) or the columns are tied; else the parts laid out at once, wrapped as ``wrap``
    asks, and composed. A one-scene picture that ``wrap`` leaves whole is that one run's
    picture, as before. ``mode`` (``--layout``): ``blocks`` lays each column with clusters out
    block by block (:mod:`hloviz.render.blocklayout`), ``auto`` where :func:`~hloviz.render.
    blocklayout.pays`, ``whole`` never.

    Positions (``-Tjson0``) are asked for where they may be needed: a PNG (drawn whole from
    them), and, with ``wrap`` on, in the same run as each column's SVG (one layout, two outputs:
    the 300k-instruction module's column was laid out a second time only to read them); they
    are read only for a column that is cut (its size, known from its drawing, says so). The
    ``run*`` arguments are the Graphviz runners (tests stand in their own); ``cores``, how many
    ``dot`` a block round may run at once (by default, the cores hloviz may use)."""
    splits = _splits(drawing, mode)
    if drawing.tied or (drawing.single and not wrap.active and not any(splits)):
        return run(drawing.text, fmt, timeout=timeout), []
    deadline = time.monotonic() + timeout

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise GraphvizTimeout(f"Graphviz did not finish the layout within {timeout:g} s", seconds=timeout)
        return remaining

    ids = drawing.fresh_ids()
    whole: bytes | None = None
    if any(splits):
        columns, header = _block_round(drawing, splits, fmt, ids, run_many, left, cores or _cores())
    else:
        columns, header, whole = _whole_round(drawing, fmt, wrap, ids, run_many, left)
    notes: list[str] = []
    if wrap.active and direction([_size(drawing, col) for col in columns], wrap, PART_GAP):
        _read_wholes(drawing, columns, ids, lambda t: _many(run_many, t, ("json0",), left))
        pieces = ("svg",) if fmt == "svg" else ("json0",)
        notes = _wrap(drawing, columns, wrap, ids, lambda t: _many(run_many, t, pieces, left), pieces,
                      lambda jobs: _lay_blocks(drawing, jobs, fmt, ids, run_many, left, cores or _cores())[0], mode)
    if whole is not None and not notes:
        return whole, []
    if fmt == "svg" and not notes:
        return stitch_columns(drawing, columns, ids, header), notes
    if fmt == "svg":
        return compose_svg(drawing, columns, ids, notes, pinned, left()), notes
    return pinned(compose(drawing, columns, ids, notes), fmt, timeout=left()), notes


def _splits(drawing: Drawing, mode: str) -> list[BlockColumn | None]:
    """Each column cut into its blocks where ``mode`` lays it out block by block (none for a
    picture whose columns are tied: their levels exist only in one layout)."""
    if mode == "whole" or drawing.tied:
        return []
    out = [split_column(scene) if mode == "blocks" or pays(scene) else None for _, scene in drawing.columns]
    return out if any(out) else []


def _whole_round(drawing: Drawing, fmt: str, wrap: Wrap, ids: _Ids, run_many: RunMany,
                 left: Callable[[], float]) -> tuple[list[_Column], bytes, bytes | None]:
    """Each column laid out whole (one ``dot`` each, at once), and the header; for a one-scene
    picture, its own drawing, header and all (kept as it is when not cut)."""
    if drawing.single:
        texts = [drawing.text]
        formats: tuple[str, ...] = ("json0", "png") if fmt == "png" else ("svg",)
    else:
        texts = [part_dot(drawing, c, scene, ids, wrapped=False) for c, (_, scene) in enumerate(drawing.columns)]
        formats = ("svg",) if fmt == "svg" else ("json0",)
    # An SVG that may be wrapped asks for the positions too, in the same run (dot lays out once
    # for both; writing them costs next to nothing): a column then cut is not laid out again
    # only to read them. They are read only if it is cut.
    spare = ("json0",) if fmt == "svg" and wrap.active else ()
    head = header_dot(drawing) if fmt == "svg" and not drawing.single else ""
    outs = _many(run_many, texts + [head] if head else texts, spare + formats, left)
    header = outs.pop()[-1] if head else b""
    columns = [_Column(c, [_part(scene, dict(zip(formats, out[len(spare):], strict=True)))], text,
                       positions=out[0] if spare else b"")
               for c, ((_, scene), text, out) in enumerate(zip(drawing.columns, texts, outs, strict=True))]
    return columns, header, outs[0][-1] if drawing.single else None


def _block_round(drawing: Drawing, splits: Sequence[BlockColumn | None], fmt: str, ids: _Ids,
                 run_many: RunMany, left: Callable[[], float], cores: int) -> tuple[list[_Column], bytes]:
    """The columns laid out block by block (:func:`_lay_blocks`), and the header."""
    jobs = [(c, scene, False, split) for c, ((_, scene), split) in enumerate(zip(drawing.columns, splits, strict=True))]
    parts, header = _lay_blocks(drawing, jobs, fmt, ids, run_many, left, cores, header=True)
    return [_Column(c, [part]) for c, part in enumerate(parts)], header


#: A scene to lay out: its column, the scene, whether it is a part of a wrapped column (drawn
#: without the column's cluster), and its blocks (None: laid out whole).
_Job = tuple[int, Scene, bool, "BlockColumn | None"]


def _lay_blocks(drawing: Drawing, jobs: Sequence[_Job], fmt: str, ids: _Ids, run_many: RunMany,
                left: Callable[[], float], cores: int, *, header: bool = False) -> tuple[list[_Part], bytes]:
    """Scenes (columns, or the parts of wrapped columns) laid out block by block
    (:mod:`hloviz.render.blocklayout`): first the blocks, each scene's in as many graphs as there
    are cores to spare (its blocks side by side in one graph: dot lays out each unconnected piece
    on its own), with the scenes without blocks and the header, all at once; then each scene with
    its blocks as boxes of their size, at once; then each block's layout moved into its box.

    Why not several graphs in one ``dot`` run: Graphviz 2.43 lays out the second and
    later graphs of a run differently from one run to the next (state left by the first), and a
    picture must be the same bytes every time; nor one ``dot`` per block: starting a process
    costs about as much as laying out a block of a few dozen boxes."""
    svg = fmt == "svg"
    formats = ("json0", "svg") if svg else ("json0",)
    split_count = max(1, sum(1 for *_, s in jobs if s is not None))
    texts: list[str] = []
    groups: dict[int, list[list[int]]] = {}
    for j, (c, scene, wrapped, split) in enumerate(jobs):
        if split is None:
            texts.append(part_dot(drawing, c, scene, ids, wrapped=wrapped))
            continue
        groups[j] = batches(split.blocks, max(1, cores // split_count))
        texts.extend(part_dot(drawing, c, block_group(split, group), ids, wrapped=True) for group in groups[j])
    head = header_dot(drawing) if svg and header else ""
    outs = _many(run_many, texts + [head] if head else texts, formats, left)
    drawn_header = outs.pop()[-1] if head else b""
    parents: list[str] = []
    laid: dict[int, list[list[bytes]]] = {}
    blocks: dict[int, list[tuple[Layout, Box, int]]] = {}  # each block's layout (its group's), frame, group
    at = 0
    for j, (c, _, wrapped, split) in enumerate(jobs):
        count = len(groups[j]) if split is not None else 1
        laid[j], at = outs[at:at + count], at + count
        if split is None:
            continue
        layouts = [read_layout(out[0]) for out in laid[j]]
        where = {b: (layouts[g], g) for g, group in enumerate(groups[j]) for b in group}
        blocks[j] = [(where[b][0], _frame(where[b][0], c, split.blocks[b], ids), where[b][1])
                     for b in range(len(split.blocks))]
        # the boxes get their ids as the scene's text is written: their sizes go in after
        text = part_dot(drawing, c, split.parent, ids, wrapped=wrapped)
        parents.append(fix_boxes(text, {ids.nodes[(c, box)]: (f.width, f.height)
                                        for box, (_, f, _) in zip(split.boxes, blocks[j], strict=True)}))
    parent_outs = iter(_many(run_many, parents, formats, left) if parents else [])
    parts = []
    for j, (c, scene, _, split) in enumerate(jobs):
        if split is None:
            parts.append(_part(scene, dict(zip(formats, laid[j][0], strict=True))))
            continue
        out = next(parent_outs)
        drawings = [_cut(o[1], c, split, group, ids) for o, group in zip(laid[j], groups[j], strict=True)] if svg else []
        parts.append(_composed(c, split, groups[j], read_layout(out[0]), out[1] if svg else b"", blocks[j],
                               drawings, ids))
    return parts, drawn_header


def _frame(layout: Layout, column: int, block: Scene, ids: _Ids) -> Box:
    """Where a block is in its group's layout: its top-level cluster's box."""
    attrs = layout.clusters.get(ids.clusters.get((column, block.clusters[0].key), ""), {})
    if "bb" not in attrs:
        raise RenderError("internal: a block laid out without its cluster")
    return parse_box(attrs["bb"])


def _cut(svg: bytes, column: int, split: BlockColumn, group: Sequence[int], ids: _Ids) -> dict[int, bytes]:
    """A group's drawing cut into its blocks' (by the DOT id in each element's title)."""
    owner: dict[str, int] = {}
    for b in group:
        block = split.blocks[b]
        for key in block.nodes:
            owner[ids.nodes[(column, key)]] = b
        for cl in block.all_clusters():
            owner[ids.clusters[(column, cl.key)]] = b
    return split_drawing(svg, owner)


def _composed(column: int, split: BlockColumn, groups: Sequence[Sequence[int]], parent: Layout, parent_svg: bytes,
              blocks: Sequence[tuple[Layout, Box, int]], drawings: Sequence[dict[int, bytes]], ids: _Ids) -> _Part:
    """A column laid out block by block, put together: the column's layout with each block's
    moved into its box (positions of :attr:`BlockColumn.drawn`), and the drawings to stitch."""
    boxes = {ids.nodes[(column, box)] for box in split.boxes}
    nodes = {ident: a for ident, a in parent.nodes.items() if ident not in boxes}
    clusters = dict(parent.clusters)
    edges = dict(parent.edges)
    titles: list[tuple[str, str] | None] = []
    for i in split.crossing:
        e = split.scene.edges[i]
        titles.append((ids.nodes[(column, e.src)], ids.nodes[(column, e.dst)]))
    pieces = [(retitle_edges(parent_svg, titles), 0.0, 0.0)] if parent_svg else []
    # each block's arrows: where they are in its group's graph (groups list their blocks' arrows
    # in order), and where in the composed column (the parent's, then each block's in turn)
    first = {}
    for group in groups:
        at = 0
        for b in group:
            first[b] = at
            at += len(split.blocks[b].edges)
    offset = len(split.parent.edges)
    for b, (box, (layout, frame, g)) in enumerate(zip(split.boxes, blocks, strict=True)):
        x, y = (float(v) for v in parent.nodes[ids.nodes[(column, box)]]["pos"].split(",")[:2])
        dx, dy = x - frame.width / 2 - frame.x0, y - frame.height / 2 - frame.y0
        block = split.blocks[b]
        mine = {ids.nodes[(column, k)] for k in block.nodes}
        mine_c = {ids.clusters[(column, cl.key)] for cl in block.all_clusters()}
        moved = shifted(Layout(layout.bb, {i: a for i, a in layout.nodes.items() if i in mine},
                               {i: a for i, a in layout.clusters.items() if i in mine_c},
                               {i - first[b]: layout.edges[i] for i in range(first[b], first[b] + len(block.edges))
                                if i in layout.edges}), dx, dy)
        nodes.update(moved.nodes)
        clusters.update(moved.clusters)
        edges.update({offset + i: a for i, a in moved.edges.items()})
        offset += len(block.edges)
        if drawings:
            pieces.append((drawings[g][b], dx, dy))
    return _Part(split.scene, parent.bb, b"", Layout(parent.bb, nodes, clusters, edges), split.drawn, pieces)


def _part(scene: Scene, out: dict[str, bytes]) -> _Part:
    layout = read_layout(out["json0"]) if "json0" in out else None
    svg = out.get("svg", b"")
    return _Part(scene, layout.bb if layout is not None else svg_box(svg), svg, layout)


def _read_wholes(drawing: Drawing, columns: list[_Column], ids: _Ids,
                 lay: Callable[[list[str]], list[list[bytes]]]) -> None:
    """Every column's whole layout and label size, laying out again (positions only) the
    columns first drawn without them."""
    for col in columns:
        col.whole = col.parts[0].layout
        if col.whole is None and col.positions:
            col.whole = read_layout(col.positions)
    missing = [col for col in columns if col.whole is None]
    if missing:
        for col, out in zip(missing, lay([col.text for col in missing]), strict=True):
            col.whole = read_layout(out[0])
    for col in columns:
        col.label = _label(drawing, col.index, col.whole, ids)


def _label(drawing: Drawing, column: int, layout: Layout | None, ids: _Ids) -> tuple[float, float]:
    if drawing.single or layout is None:
        return 0.0, 0.0
    attrs = layout.clusters.get(ids.clusters[(column, f"column {column}")], {})
    return float(attrs.get("lwidth", "0")) * INCH, float(attrs.get("lheight", "0")) * INCH


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
          lay: Callable[[list[str]], list[list[bytes]]], formats: Sequence[str],
          by_blocks: Callable[[Sequence[_Job]], list[_Part]] | None = None, mode: str = "whole") -> list[str]:
    """Cut the columns ``wrap`` asks to cut (their whole layouts read), lay their parts out
    (``lay``, in ``formats``; block by block with ``by_blocks`` where ``mode`` says so, as
    columns are), and put them in ``columns``; the note saying so."""
    wholes = [col.whole for col in columns]
    if any(w is None for w in wholes):
        return []
    sizes = [_size(drawing, col) for col in columns]
    way = direction(sizes, wrap, PART_GAP)
    spans = [_spans(col.parts[0].scene, col.index, w, ids) for col, w in zip(columns, wholes, strict=True) if w]
    heights: list[list[float]] = []
    widths: list[list[float]] = []
    if way == ACROSS:  # a wide picture cut between its columns of boxes: the tall case, transposed
        heights = [stacked_heights(nodes, PART_GAP + _CAPTION) for nodes, _ in spans]
        spans = [(transposed(nodes), transposed(clusters)) for nodes, clusters in spans]
        limits = [cut_limit(col.parts[0].scene, *span, MAX_STACKED) for col, span in zip(columns, spans, strict=True)]
        counts = choose_parts([(w * _SPREAD, h) for w, h in sizes], wrap, limits, PART_GAP, heights, stacked=True)
    else:
        limits = [cut_limit(col.parts[0].scene, *span) for col, span in zip(columns, spans, strict=True)]
        widths = [band_widths(nodes, PART_GAP) for nodes, _ in spans]
        counts = choose_parts(sizes, wrap, limits, PART_GAP, widths)
    scenes = [col.parts[0].scene for col in columns]

    def cut(counts: Sequence[int]) -> dict[int, list[_Part]]:
        jobs: list[tuple[int, Scene]] = []
        for col, scene, span, count in zip(columns, scenes, spans, counts, strict=True):
            pieces = split_scene(scene, *span, count) if count > 1 else [scene]
            if len(pieces) > 1:
                jobs.extend((col.index, piece) for piece in pieces)
        return _lay_pieces(drawing, jobs, ids, lay, formats, by_blocks, mode)

    parts = cut(counts)
    if wrap.mode == "auto" and parts:
        # Where the estimate missed (the parts, laid out, make a picture outside the aspect's
        # slack), cut once more with each column's length along the cut (width across, height
        # down) scaled by how much longer its longest part came out than its share of the whole.
        stacked = way == ACROSS
        trial = [_Column(col.index, parts.get(col.index, col.parts), stacked=stacked and col.index in parts)
                 for col in columns]
        drawn = [_size(drawing, col) for col in trial]
        width = sum(w for w, _ in drawn) + PART_GAP * (len(drawn) - 1)
        shape = max(h for _, h in drawn) / max(width, 1.0)
        if not wrap.aspect / SLACK <= shape <= wrap.aspect * SLACK:
            # and the other side's estimates by how they compare with what the parts measured
            across = [_rescale(est, len(t.parts), d[1 if stacked else 0])
                      for est, d, t in zip(heights if stacked else widths, drawn, trial, strict=True)]
            if stacked:
                scaled = [(w * d[0] / max(w / len(t.parts), 1.0), h) for (w, h), d, t in zip(sizes, drawn, trial,
                                                                                               strict=True)]
            else:
                scaled = [(w, h * d[1] / max(h / len(t.parts), 1.0)) for (w, h), d, t in zip(sizes, drawn, trial,
                                                                                               strict=True)]
            again = choose_parts(scaled, wrap, limits, PART_GAP, across, stacked=stacked)
            if again != counts:
                parts = cut(again)
    if not parts:
        return []
    for col in columns:
        if col.index in parts:
            col.parts = parts[col.index]
            col.stacked = way == ACROSS
    where = " and ".join(str(len(col.parts)) for col in columns)
    asked = wrap.mode if wrap.mode == "auto" else str(wrap.parts)
    how = "stacked top to bottom, the picture being too wide for its aspect" if way == ACROSS else "side by side"
    return [(f"wrapped into {where} parts {how} (--wrap {asked}); an arrow between parts ends at ▾ and "
             "starts again at ▴, naming the far end and its part")]


def _lay_pieces(drawing: Drawing, jobs: Sequence[tuple[int, Scene]], ids: _Ids,
                lay: Callable[[list[str]], list[list[bytes]]], formats: Sequence[str],
                by_blocks: Callable[[Sequence[_Job]], list[_Part]] | None, mode: str) -> dict[int, list[_Part]]:
    """The parts of wrapped columns (column, scene) laid out, each column's in order: whole, or
    block by block where ``mode`` says so for any of them."""
    parts: dict[int, list[_Part]] = {}
    splits = [split_column(piece) if mode == "blocks" or (mode == "auto" and pays(piece)) else None
              for _, piece in jobs]
    if by_blocks is not None and any(splits):
        laid = by_blocks([(c, piece, True, split) for (c, piece), split in zip(jobs, splits, strict=True)])
        for (c, _), part in zip(jobs, laid, strict=True):
            parts.setdefault(c, []).append(part)
        return parts
    outs = lay([part_dot(drawing, c, piece, ids, wrapped=True) for c, piece in jobs]) if jobs else []
    for (c, piece), out in zip(jobs, outs, strict=True):
        parts.setdefault(c, []).append(_part(piece, dict(zip(formats, out, strict=True))))
    return parts


def _rescale(estimates: Sequence[float], k: int, measured: float) -> list[float]:
    """``estimates`` (a column's extent across its ``k`` parts, for each ``k``) scaled so that the
    one for the ``k`` that was laid out is what it measured."""
    if k < 2 or k > len(estimates) or estimates[k - 1] <= 0:
        return list(estimates)
    return [e * measured / estimates[k - 1] for e in estimates]


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
