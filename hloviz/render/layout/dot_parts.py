"""DOT texts of a picture laid out in parts and composed again.

In: a :class:`~.dot.Drawing` (the whole picture's columns and identifiers) and, after the
parts were laid out, where each part's nodes, clusters and arrows went (:class:`Placed`,
:class:`PlacedColumn`). Out: the DOT text of one part for a ``dot`` run of its own
(:func:`part_dot`), of the header alone (:func:`header_dot`), of the composed picture with every
position given (:func:`placed_dot`) and of the frame around parts drawn apart (:func:`frame_dot`),
all under the picture's own identifiers (:mod:`hloviz.render.layout.compose` uses them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..quoting import colour
from ..scene import Scene
from .dot import Drawing
from .dot_writer import COLUMN_BORDER, LARGE, DotWriter, Ids, column_rows, header_rows, label_html

__all__ = ["Placed", "PlacedColumn", "frame_dot", "header_dot", "part_dot", "placed_dot"]


def part_dot(drawing: Drawing, column: int, scene: Scene, ids: Ids, *, wrapped: bool) -> str:
    """The DOT text of one part of ``drawing`` for a layout of its own: ``scene`` (a column's
    whole scene, or one piece of a wrapped column) under the picture's identifiers ``ids``, each
    arrow tagged with its index. ``wrapped`` leaves out the column's cluster (the composed
    picture draws it around all the pieces) and a one-scene picture's title (likewise)."""
    w = DotWriter(ids)
    w.tag_edges = True
    if drawing.single or wrapped:
        w.scene_body(column, scene, "  ")
    else:
        w.column(column, drawing.columns[column][0], scene)
    # a part of a large picture is laid out with the effort the whole picture would get
    return w.finish((), large=len(drawing.ids.nodes) > LARGE or None)


@dataclass
class Placed:
    """One laid-out part moved into its place: its ``scene``, and the position attributes of
    its nodes and clusters (by DOT id) and of its arrows (by index)."""

    scene: Scene
    nodes: dict[str, str]
    clusters: dict[str, str]
    edges: list[str]


@dataclass
class PlacedColumn:
    """A column of the composed picture: its index, the position attributes of its cluster
    (``bb``, ``lp``; empty for a one-scene picture) and its parts, left to right."""

    index: int
    cluster: str
    parts: list[Placed]


def placed_dot(drawing: Drawing, columns: Sequence[PlacedColumn], ids: Ids, notes: Sequence[str] = (),
               extra: Sequence[str] = ()) -> str:
    """The composed picture: every part's nodes, arrows and clusters with their positions, for
    ``dot -Kneato -n2`` to draw as they are. Identifiers are ``ids`` (those of ``drawing``'s own
    text for everything it holds); ``notes`` are added under the header, ``extra`` statements
    (placed captions) at the end."""
    w = DotWriter(ids)
    for col in columns:
        indent = "  "
        if not drawing.single:
            ident = w.cluster_id(col.index, f"column {col.index}")
            heading, scene = drawing.columns[col.index]
            w.lines.append(f"  subgraph {ident} {{")
            if col.cluster:  # an empty column has no box (dot drops an empty cluster)
                w.lines.append(f"    {col.cluster};")
            w.lines.append(f"    label={label_html(column_rows(heading, scene), small_pt=scene.small_pt)};")
            w.lines.append(f'    style="rounded"; color="{colour(COLUMN_BORDER)}";')
            indent = "    "
        for part in col.parts:
            w.node_place, w.cluster_place, w.edge_place = part.nodes, part.clusters, part.edges
            w.scene_body(col.index, part.scene, indent)
            w.layout.clear()  # positions are given: no layout attribute applies
        if not drawing.single:
            w.lines.append("  }")
    w.lines.extend(extra)
    w.written = 0
    w.small_pt = drawing.small_pt
    return w.finish(list(drawing.header) + header_rows((), notes))


def frame_dot(drawing: Drawing, clusters: Sequence[tuple[int, str]], boxes: Sequence[str],
              notes: Sequence[str] = (), extra: Sequence[str] = ()) -> str:
    """The frame of a picture composed from parts' own SVG: the header, the cluster (label,
    border) of each wrapped column at its place (``clusters``: column, ``bb``/``lp``
    attributes), and an invisible box over each column (``boxes``: ``x0,y0,x1,y1``), so that
    the frame's bounds hold the whole picture; ``extra`` statements (placed captions) after
    them. Cluster ids are the picture's own."""
    w = DotWriter(drawing.fresh_ids())
    for column, place in clusters:
        heading, scene = drawing.columns[column]
        w.lines.append(f"  subgraph {w.cluster_id(column, f'column {column}')} {{")
        w.lines.append(f"    {place};")
        w.lines.append(f"    label={label_html(column_rows(heading, scene), small_pt=scene.small_pt)};")
        w.lines.append(f'    style="rounded"; color="{colour(COLUMN_BORDER)}";')
        w.lines.append("  }")
    for i, box in enumerate(boxes):
        x0, y0, x1, y1 = (float(v) for v in box.split(","))
        w.lines.append(f'  frame{i} [style=invis, label="", pos="{(x0 + x1) / 2:g},{(y0 + y1) / 2:g}", '
                       f"width={(x1 - x0) / 72:.4f}, height={(y1 - y0) / 72:.4f}];")
    w.lines.extend(extra)
    w.small_pt = drawing.small_pt
    return w.finish(list(drawing.header) + header_rows((), notes))


def header_dot(drawing: Drawing) -> str:
    """The picture's header (title and notes over the columns) alone, for ``dot`` to draw as a
    part of its own while the columns are laid out (None-like empty text when there is none)."""
    if not drawing.header:
        return ""
    w = DotWriter()
    w.small_pt = drawing.small_pt
    return w.finish(drawing.header)
