"""Pictures laid out in parts and composed: each column (and each part of a wrapped column) is
laid out by a ``dot`` of its own, the ``dot`` processes running at once, and the results are put
together into one picture.

Why: pre and post share nothing but the page, yet one ``dot`` run lays them out together, so a
picture costs the sum of two layouts (and their mincross interacts for nothing); apart, on two
cores, it costs the longer one. And a long column can only be wrapped (:mod:`hloviz.render.layout.wrap`)
once it is known where its rows fall.

How: each part's DOT text (:func:`hloviz.render.layout.dot_parts.part_dot`, arrows tagged by index) goes
through one ``dot`` that writes its drawing (``-Tsvg``) and, where they are needed, its
positions (``-Tjson0``: every node's ``pos``, ``width``, ``height``, every cluster's ``bb`` and
``lp``, every arrow's spline; they make ``dot`` take half as long again, so they are asked for
only for a PNG and for a column that is to be wrapped). :func:`_arrange` places the parts:
columns left to right, tops aligned; a wrapped column's parts side by side inside the column's
box (a wide column's stacked top to bottom), whose label size comes from the whole column's layout. For SVG, :func:`stitch_columns`
puts the header (drawn by a ``dot`` of its own, beside the columns') and the columns' drawings
into a root written here; with wrapped columns, :func:`compose_svg` has ``dot -Kneato -n2``
draw a frame (the header, the wrapped columns' clusters, the parts' captions) from given
positions instead. :func:`~hloviz.render.layout.svgjoin.stitch` moves each drawing into place. For PNG, :func:`compose`
writes the whole picture again with every position given, and ``dot -Kneato -n2`` draws it
without laying it out.
Identifiers are the whole picture's (``n7``, ``cluster_3``), so the explorer finds its boxes as
before; the result depends only on the DOT texts, never on which process finished first.

A picture whose columns are tied (the diff's matched kernels on one level) is one layout, as
before: levels across columns only exist inside one ``dot`` run. A column may also be laid out
block by block (:mod:`hloviz.render.layout.block_round`), and a long column cut into parts
(:mod:`hloviz.render.layout.wrap_round`); the parts, the columns and the gaps between them are
:mod:`hloviz.render.layout.parts`' records.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ...errors import RenderError
from .block_round import block_splits, lay_blocks, run_block_round
from .dot import Drawing
from .dot_parts import PlacedColumn, frame_dot, header_dot, part_dot, placed_dot
from .dot_writer import Ids
from .parts import (
    CAPTION,
    COLUMN_GAP,
    LABEL_GAP,
    MARGIN,
    PART_GAP,
    Column,
    Part,
    Run,
    RunMany,
    column_size,
    lay_parts,
    read_part,
)
from .positions import Box, Layout, num, parse_box, place_part, shift, shift_box, svg_box
from .runs.graphviz_run import GraphvizTimeout, run_dot, run_dot_many, run_pinned, usable_cores
from .svgjoin import root_svg, stitch
from .wrap import OFF, Wrap, direction
from .wrap_round import read_wholes, wrap_columns

__all__ = ["COLUMN_GAP", "PART_GAP", "compose", "compose_svg", "lay_out", "stitch_columns"]


@dataclass
class _Place:
    """Where a column goes: its box, its cluster's position attributes (a wrapped column's, or
    an unwrapped one's own as laid out), and each part's shift (dx, dy) from its own layout."""

    column: Column
    box: Box
    cluster: str
    shifts: list[tuple[float, float]]
    #: a wrapped column's captions: ("part 2 of 3", x, y of the caption's centre)
    captions: list[tuple[str, float, float]] = field(default_factory=list)


def _arrange(drawing: Drawing, columns: Sequence[Column], ids: Ids) -> list[_Place]:
    """Columns left to right, tops aligned, each in the box its graph had (dot leaves a margin
    around a column's cluster); a wrapped column's parts side by side (stacked, for a column cut
    across) in a box of the same kind."""
    sizes = [column_size(drawing, c) for c in columns]
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
            edge = 2 * MARGIN if framed else 0.0  # dot's margin around a cluster, then the cluster's own
            inner_top = top - (edge + lh + LABEL_GAP if framed else 0.0)
            px, py = x + edge, inner_top
            shifts = []
            for k, part in enumerate(col.parts, 1):
                captions.append((f"part {k} of {len(col.parts)}", px + part.bb.width / 2, py - CAPTION / 2))
                shifts.append((px - part.bb.x0, py - CAPTION - part.bb.y1))
                if col.stacked:
                    py -= part.bb.height + CAPTION + PART_GAP
                else:
                    px += part.bb.width + PART_GAP
            if framed:
                frame = Box(box.x0 + MARGIN, box.y0 + MARGIN, box.x1 - MARGIN, box.y1 - MARGIN)
                cluster = (f'bb="{shift_box(frame, 0, 0)}"; '
                           f'lp="{num(frame.x0 + MARGIN + lw / 2)},{num(frame.y1 - LABEL_GAP - lh / 2)}"')
        out.append(_Place(col, box, cluster, shifts, captions))
        x += width + COLUMN_GAP
    return out


def compose(drawing: Drawing, columns: Sequence[Column], ids: Ids, notes: Sequence[str] = ()) -> str:
    """The whole picture's DOT text with every part in its place, for ``dot -Kneato -n2`` to
    draw (PNG; see the module's docstring)."""
    placed = []
    for place in _arrange(drawing, columns, ids):
        parts = [place_part(part.drawn or part.scene, _positions(part), dx, dy)
                 for part, (dx, dy) in zip(place.column.parts, place.shifts, strict=True)]
        placed.append(PlacedColumn(place.column.index, place.cluster, parts))
    captions = [c for place in _arrange(drawing, columns, ids) for c in place.captions]
    return placed_dot(drawing, placed, ids, notes, _caption_nodes(captions, drawing.small_pt))


def compose_svg(drawing: Drawing, columns: Sequence[Column], ids: Ids, notes: Sequence[str],
                pinned: Run, timeout: float) -> bytes:
    """The whole picture as SVG from the parts' own SVG: ``dot -Kneato -n2`` draws only the
    frame (the header, and the cluster of each wrapped column: a few boxes, milliseconds), and
    each part's drawing goes into it, moved to its place. Nothing is laid out or drawn twice."""
    places = _arrange(drawing, columns, ids)
    frames = [(p.column.index, p.cluster) for p in places if p.column.wrapped and p.cluster]
    boxes = [shift_box(p.box, 0, 0) for p in places]
    captions = _caption_nodes([c for p in places for c in p.captions], drawing.small_pt)
    frame = pinned(frame_dot(drawing, frames, boxes, notes, captions), "svg", timeout=timeout)
    parts = [d for p in places for part, (dx, dy) in zip(p.column.parts, p.shifts, strict=True)
             for d in part.drawings(dx, dy)]
    return stitch(frame, parts)


def stitch_columns(drawing: Drawing, columns: Sequence[Column], ids: Ids, header: bytes) -> bytes:
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


def _positions(part: Part) -> Layout:
    if part.layout is None:
        raise RenderError("internal: a part drawn without its positions")  # PNG parts are laid out with json0
    return part.layout


def _caption_nodes(captions: Sequence[tuple[str, float, float]], pt: int = 9) -> list[str]:
    """DOT statements drawing each part's caption (plain grey text) where it goes, at ``pt``
    points (the picture's small text)."""
    return [f'  part{i} [shape=plaintext, style="", label="{text}", fontsize={pt}, fontcolor="#616161", '
            f'pos="{num(x)},{num(y)}", width={len(text) * 5.5 / 72:.3f}, height={CAPTION / 72:.3f}];'
            for i, (text, x, y) in enumerate(captions)]



def lay_out(drawing: Drawing, fmt: str, timeout: float, wrap: Wrap = OFF, *, run: Run = run_dot,
            run_many: RunMany = run_dot_many, pinned: Run = run_pinned, mode: str = "auto",
            cores: int | None = None) -> tuple[bytes, list[str]]:
    """``drawing`` as ``fmt`` (svg or png) within ``timeout`` seconds, and notes on how it was
    wrapped. One ``dot`` run where there is nothing to compose (one scene, not wrapped, not laid
    out by blocks) or the columns are tied; else the parts laid out at once, wrapped as ``wrap``
    asks, and composed. A one-scene picture that ``wrap`` leaves whole is that one run's
    picture, as before. ``mode`` (``--layout``): ``blocks`` lays each column with clusters out
    block by block (:mod:`hloviz.render.layout.blocklayout`), ``auto`` where :func:`~hloviz.render.
    blocklayout.pays`, ``whole`` never.

    Positions (``-Tjson0``) are asked for where they may be needed: a PNG (drawn whole from
    them), and, with ``wrap`` on, in the same run as each column's SVG (one layout, two outputs:
    the 300k-instruction module's column was laid out a second time only to read them); they
    are read only for a column that is cut (its size, known from its drawing, says so). The
    ``run*`` arguments are the Graphviz runners (tests stand in their own); ``cores``, how many
    ``dot`` a block round may run at once (by default, the cores hloviz may use)."""
    splits = block_splits(drawing, mode)
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
        columns, header = run_block_round(drawing, splits, fmt, ids, run_many, left, cores or usable_cores())
    else:
        columns, header, whole = _whole_round(drawing, fmt, wrap, ids, run_many, left)
    notes: list[str] = []
    if wrap.active and direction([column_size(drawing, col) for col in columns], wrap, PART_GAP):
        read_wholes(drawing, columns, ids, lambda t: lay_parts(run_many, t, ("json0",), left))
        pieces = ("svg",) if fmt == "svg" else ("json0",)
        notes = wrap_columns(drawing, columns, wrap, ids, lambda t: lay_parts(run_many, t, pieces, left), pieces,
                      lambda jobs: lay_blocks(drawing, jobs, fmt, ids, run_many, left, cores or usable_cores())[0], mode)
    if whole is not None and not notes:
        return whole, []
    if fmt == "svg" and not notes:
        return stitch_columns(drawing, columns, ids, header), notes
    if fmt == "svg":
        return compose_svg(drawing, columns, ids, notes, pinned, left()), notes
    return pinned(compose(drawing, columns, ids, notes), fmt, timeout=left()), notes



def _whole_round(drawing: Drawing, fmt: str, wrap: Wrap, ids: Ids, run_many: RunMany,
                 left: Callable[[], float]) -> tuple[list[Column], bytes, bytes | None]:
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
    outs = lay_parts(run_many, texts + [head] if head else texts, spare + formats, left)
    header = outs.pop()[-1] if head else b""
    columns = [Column(c, [read_part(scene, dict(zip(formats, out[len(spare):], strict=True)))], text,
                       positions=out[0] if spare else b"")
               for c, ((_, scene), text, out) in enumerate(zip(drawing.columns, texts, outs, strict=True))]
    return columns, header, outs[0][-1] if drawing.single else None
