"""The block round: a column laid out block by block (``--layout blocks``, and ``auto`` for a
large column of many blocks, where it was measured to pay; :mod:`hloviz.render.layout.blocklayout`
cuts it). Its blocks are laid out first, then the column with each block as a box of its size,
and each block's layout and drawing are moved into its box; the result is one
:class:`~hloviz.render.layout.parts.Part`, as a column laid out whole would be.

Why a module of its own: the round is a layout of its own (several ``dot`` runs, the blocks'
positions read and moved, their drawings cut apart and put back), used both for the columns
of a picture and for the parts of wrapped columns (:mod:`hloviz.render.layout.wrap_round`), and
apart from how :mod:`hloviz.render.layout.compose` arranges the parts it returns. A picture whose
columns are tied (the diff's matched kernels on one level) is never laid out by blocks: levels
across columns only exist inside one ``dot`` run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...errors import RenderError
from ..scene import Scene
from .blocklayout import BlockColumn, batches, block_group, fix_boxes, pays, split_column
from .dot import Drawing
from .dot_parts import header_dot, part_dot
from .dot_writer import Ids
from .parts import Column, Job, Part, RunMany, lay_parts, read_part
from .positions import Box, Layout, parse_box, read_layout, shifted
from .svgjoin import retitle_edges, split_drawing


def block_splits(drawing: Drawing, mode: str) -> list[BlockColumn | None]:
    """Each column cut into its blocks where ``mode`` lays it out block by block (none for a
    picture whose columns are tied: their levels exist only in one layout)."""
    if mode == "whole" or drawing.tied:
        return []
    out = [split_column(scene) if mode == "blocks" or pays(scene) else None for _, scene in drawing.columns]
    return out if any(out) else []



def run_block_round(drawing: Drawing, splits: Sequence[BlockColumn | None], fmt: str, ids: Ids,
                 run_many: RunMany, left: Callable[[], float], cores: int) -> tuple[list[Column], bytes]:
    """The columns laid out block by block (:func:`lay_blocks`), and the header."""
    jobs = [(c, scene, False, split) for c, ((_, scene), split) in enumerate(zip(drawing.columns, splits, strict=True))]
    parts, header = lay_blocks(drawing, jobs, fmt, ids, run_many, left, cores, header=True)
    return [Column(c, [part]) for c, part in enumerate(parts)], header



def lay_blocks(drawing: Drawing, jobs: Sequence[Job], fmt: str, ids: Ids, run_many: RunMany,
                left: Callable[[], float], cores: int, *, header: bool = False) -> tuple[list[Part], bytes]:
    """Scenes (columns, or the parts of wrapped columns) laid out block by block
    (:mod:`hloviz.render.layout.blocklayout`): first the blocks, each scene's in as many graphs as there
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
    outs = lay_parts(run_many, texts + [head] if head else texts, formats, left)
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
    parent_outs = iter(lay_parts(run_many, parents, formats, left) if parents else [])
    parts = []
    for j, (c, scene, _, split) in enumerate(jobs):
        if split is None:
            parts.append(read_part(scene, dict(zip(formats, laid[j][0], strict=True))))
            continue
        out = next(parent_outs)
        drawings = [_cut(o[1], c, split, group, ids) for o, group in zip(laid[j], groups[j], strict=True)] if svg else []
        parts.append(_composed(c, split, groups[j], read_layout(out[0]), out[1] if svg else b"", blocks[j],
                               drawings, ids))
    return parts, drawn_header


def _frame(layout: Layout, column: int, block: Scene, ids: Ids) -> Box:
    """Where a block is in its group's layout: its top-level cluster's box."""
    attrs = layout.clusters.get(ids.clusters.get((column, block.clusters[0].key), ""), {})
    if "bb" not in attrs:
        raise RenderError("internal: a block laid out without its cluster")
    return parse_box(attrs["bb"])


def _cut(svg: bytes, column: int, split: BlockColumn, group: Sequence[int], ids: Ids) -> dict[int, bytes]:
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
              blocks: Sequence[tuple[Layout, Box, int]], drawings: Sequence[dict[int, bytes]], ids: Ids) -> Part:
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
    return Part(split.scene, parent.bb, b"", Layout(parent.bb, nodes, clusters, edges), split.drawn, pieces)
