"""The wrap round: a long (or wide) column cut into parts once it is known where its rows fall
(:mod:`hloviz.render.layout.wrap` chooses the cuts), each part laid out on its own (whole, or block
by block: :mod:`hloviz.render.layout.block_round`), and the parts put in the column for
:mod:`hloviz.render.layout.compose` to arrange side by side (stacked top to bottom, for a column cut
across).

Why a module of its own: a column can only be cut after its whole layout is read (its rows'
and clusters' spans, its label's size), and with ``--wrap auto`` the cut is checked against
the parts as laid out and made once more where the estimate missed; that reading and
re-cutting is a round of its own, apart from how the parts are then arranged and stitched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..scene import Scene
from .blocklayout import pays, split_column
from .dot import Drawing
from .dot_parts import part_dot
from .dot_writer import Ids
from .parts import CAPTION, PART_GAP, SPREAD, Column, Job, Part, column_size, read_part
from .positions import INCH, Layout, read_layout
from .wrap import (
    ACROSS,
    MAX_STACKED,
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


def read_wholes(drawing: Drawing, columns: list[Column], ids: Ids,
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


def _label(drawing: Drawing, column: int, layout: Layout | None, ids: Ids) -> tuple[float, float]:
    if drawing.single or layout is None:
        return 0.0, 0.0
    attrs = layout.clusters.get(ids.clusters[(column, f"column {column}")], {})
    return float(attrs.get("lwidth", "0")) * INCH, float(attrs.get("lheight", "0")) * INCH


def _spans(scene: Scene, column: int, layout: Layout, ids: Ids) -> tuple[dict[str, Span], dict[str, Span]]:
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


def wrap_columns(drawing: Drawing, columns: list[Column], wrap: Wrap, ids: Ids,
          lay: Callable[[list[str]], list[list[bytes]]], formats: Sequence[str],
          by_blocks: Callable[[Sequence[Job]], list[Part]] | None = None, mode: str = "whole") -> list[str]:
    """Cut the columns ``wrap`` asks to cut (their whole layouts read), lay their parts out
    (``lay``, in ``formats``; block by block with ``by_blocks`` where ``mode`` says so, as
    columns are), and put them in ``columns``; the note saying so."""
    wholes = [col.whole for col in columns]
    if any(w is None for w in wholes):
        return []
    sizes = [column_size(drawing, col) for col in columns]
    way = direction(sizes, wrap, PART_GAP)
    spans = [_spans(col.parts[0].scene, col.index, w, ids) for col, w in zip(columns, wholes, strict=True) if w]
    heights: list[list[float]] = []
    widths: list[list[float]] = []
    if way == ACROSS:  # a wide picture cut between its columns of boxes: the tall case, transposed
        heights = [stacked_heights(nodes, PART_GAP + CAPTION) for nodes, _ in spans]
        spans = [(transposed(nodes), transposed(clusters)) for nodes, clusters in spans]
        limits = [cut_limit(col.parts[0].scene, *span, MAX_STACKED) for col, span in zip(columns, spans, strict=True)]
        counts = choose_parts([(w * SPREAD, h) for w, h in sizes], wrap, limits, PART_GAP, heights, stacked=True)
    else:
        limits = [cut_limit(col.parts[0].scene, *span) for col, span in zip(columns, spans, strict=True)]
        widths = [band_widths(nodes, PART_GAP) for nodes, _ in spans]
        counts = choose_parts(sizes, wrap, limits, PART_GAP, widths)
    scenes = [col.parts[0].scene for col in columns]

    def cut(counts: Sequence[int]) -> dict[int, list[Part]]:
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
        trial = [Column(col.index, parts.get(col.index, col.parts), stacked=stacked and col.index in parts)
                 for col in columns]
        drawn = [column_size(drawing, col) for col in trial]
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


def _lay_pieces(drawing: Drawing, jobs: Sequence[tuple[int, Scene]], ids: Ids,
                lay: Callable[[list[str]], list[list[bytes]]], formats: Sequence[str],
                by_blocks: Callable[[Sequence[Job]], list[Part]] | None, mode: str) -> dict[int, list[Part]]:
    """The parts of wrapped columns (column, scene) laid out, each column's in order: whole, or
    block by block where ``mode`` says so for any of them."""
    parts: dict[int, list[Part]] = {}
    splits = [split_column(piece) if mode == "blocks" or (mode == "auto" and pays(piece)) else None
              for _, piece in jobs]
    if by_blocks is not None and any(splits):
        laid = by_blocks([(c, piece, True, split) for (c, piece), split in zip(jobs, splits, strict=True)])
        for (c, _), part in zip(jobs, laid, strict=True):
            parts.setdefault(c, []).append(part)
        return parts
    outs = lay([part_dot(drawing, c, piece, ids, wrapped=True) for c, piece in jobs]) if jobs else []
    for (c, piece), out in zip(jobs, outs, strict=True):
        parts.setdefault(c, []).append(read_part(piece, dict(zip(formats, out, strict=True))))
    return parts


def _rescale(estimates: Sequence[float], k: int, measured: float) -> list[float]:
    """``estimates`` (a column's extent across its ``k`` parts, for each ``k``) scaled so that the
    one for the ``k`` that was laid out is what it measured."""
    if k < 2 or k > len(estimates) or estimates[k - 1] <= 0:
        return list(estimates)
    return [e * measured / estimates[k - 1] for e in estimates]
