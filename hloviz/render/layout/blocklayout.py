"""A column laid out block by block (``render --layout blocks``): each top-level cluster of the
column (a layer, a block found by structure, a ``×N`` repeat, a fusion) is laid out by ``dot`` on
its own, then the column, in which each block is one box of the size its own layout gave, and
each block's drawing is moved into its box (:mod:`hloviz.render.layout.compose` runs ``dot`` and
joins the drawings with :func:`~hloviz.render.layout.svgjoin.stitch`).

When it pays (``auto``). dot's mincross and network simplex grow faster than the graph, so many
small layouts cost less than one big one; but the column cannot be laid out before its blocks
(it needs their sizes): two rounds of ``dot`` where there was one, and the block round costs
what the whole column costs when the column is small. Measured end to end
(``benchmarks/block_layout_bench.py --render``: ``hloviz render CAPTURE --stage both --layout
whole`` against ``--layout blocks``, fresh processes, interleaved, best of 3, this 2-core machine
shared with other jobs, load average 4 to 11; ``benchmarks/results/block_layout_bench.txt``),
blocks / whole:

* at the default budget (300 boxes a column, where every large model is capped): 1.05 to 1.89
  (run 1) and 1.11 to 1.67 (run 3) on 18 of the 24 captures with blocks (ResNet50 1.56 and
  1.42, the JAX GPT step 1.38 and 1.50); 0.57 to 0.96 and 0.71 to 0.89 on the other 6, which
  move as much from run to run as the layout takes (the 300k-instruction module, 148 boxes:
  0.66 in run 1, 1.29 in run 3). In one process, the two rounds alone (the benchmark without
  ``--render``) take 1.04 to 1.59 times one ``dot`` over the whole column;
* with ``--budget 600``, ``900``, ``1200`` (boxes a column): DenseNet121 1.22, 0.52, 0.28
  (16.09 s whole against 4.58 s at 1,200), EfficientNetB0 0.59, 0.61, 0.74, InceptionV3 0.57,
  0.66, 0.49; the JAX GPT step 1.31, 1.37, 1.23: its columns are 3 to 5 blocks, one of them
  over half the boxes, so laying that one out is most of the whole.

So ``auto`` lays a column out by blocks where it has at least :data:`AUTO_MIN_BOXES` boxes
(between 600, where one of the three lost, and 900, where all three won) and
:data:`AUTO_MIN_BLOCKS` blocks (the GPT step's 3 to 5 never won), which no picture at the
default budget has: there every picture is laid out whole, as before, byte for byte.

Arrows that cross a block's border. In the column's layout such an arrow runs from box to
box and ends at the block's frame: dot routes it around the other blocks, as it routes arrows
between boxes. Inside the block, where it starts or ends is a small connector, as between the
parts of a wrapped column (:mod:`hloviz.render.layout.wrap`): ``▴ mixed1: conv2d_12`` over the box
an arrow enters (one connector per box entered, next to it: a shared one, put wherever dot had
room, drew long arrows across the block), ``▾ mixed3: conv2d_30, conv2d_31 +2`` under the box
an arrow leaves, with the count (``×4``) on its arrow. So each end of every arrow that
crosses a border is named where the eye is, and no arrow is drawn through a block it does not
belong to; the arrow in the column keeps its two real ends as its SVG ``<title>``
(``n3->n17``), so the explorer follows it as before.

Pure: scenes in, scenes and DOT text out (no Graphviz here).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ...errors import InputError
from ..scene import Cluster, Edge, Node, Row, Scene
from .wrap import connector_node, far_name

__all__ = ["AUTO_MIN_BLOCKS", "AUTO_MIN_BOXES", "BOX", "LAYOUT_CHOICES", "BlockColumn", "batches", "fix_boxes", "parse_layout", "pays",
           "block_group", "split_column"]

#: What ``--layout`` takes.
LAYOUT_CHOICES = ("auto", "whole", "blocks")
#: ``auto`` lays a column out block by block where it has at least this many boxes and blocks:
#: measured end to end (``benchmarks/block_layout_bench.py --render``), see the module's docstring.
AUTO_MIN_BOXES = 800
AUTO_MIN_BLOCKS = 8
#: The prefix of a block's box in the column's layout (never a key of a scene's own).
BOX = "\x00block "


def parse_layout(value: str | None) -> str:
    """``--layout`` checked: ``auto`` (the default), ``whole`` or ``blocks``."""
    text = "auto" if value is None else str(value).strip().lower()
    if text not in LAYOUT_CHOICES:
        raise InputError(f"--layout must be {', '.join(LAYOUT_CHOICES)}, not {value!r}",
                         hint="--layout blocks lays each block out on its own and puts the column together from them")
    return text


@dataclass
class BlockColumn:
    """A column cut into its blocks: ``blocks`` (one scene per top-level cluster, with the
    connectors of the arrows crossing its border), ``parent`` (the column with each block a box
    keyed ``boxes[i]``) and, for each of the parent's arrows, the index of the column's arrow it
    stands for (``crossing``); ``drawn`` is the column as it is drawn composed: its own nodes
    and clusters with the connectors inside the blocks, its arrows the parent's then each
    block's (the order of the composed layout's arrows)."""

    scene: Scene
    blocks: list[Scene]
    parent: Scene
    boxes: list[str]
    crossing: list[int]
    drawn: Scene = field(default_factory=Scene)


def pays(scene: Scene) -> bool:
    """Whether ``auto`` lays ``scene`` out block by block (:data:`AUTO_MIN_BOXES`,
    :data:`AUTO_MIN_BLOCKS`)."""
    return len(scene.nodes) >= AUTO_MIN_BOXES and len(_outer(scene)[1]) >= AUTO_MIN_BLOCKS


def split_column(scene: Scene) -> BlockColumn | None:
    """``scene`` cut into its top-level clusters and the column around them; None where it has
    no cluster to lay out apart."""
    outer, level = _outer(scene)
    if not level:
        return None
    owner: dict[str, int] = {}
    copies = [_copy(c) for c in level]
    homes: list[dict[str, Cluster]] = []
    for b, c in enumerate(copies):
        home: dict[str, Cluster] = {}
        for sub in _walk(c):
            for k in sub.nodes:
                owner[k] = b
                home[k] = sub
        homes.append(home)
    blocks = [Scene(layout=dict(scene.layout), small_pt=scene.small_pt, nodes={k: scene.nodes[k] for k in homes[b]}, clusters=[c])
              for b, c in enumerate(copies)]
    boxes = [f"{BOX}{b}" for b in range(len(copies))]
    parent = Scene(layout=dict(scene.layout), small_pt=scene.small_pt, title=list(scene.title), notes=list(scene.notes))
    for k in scene.top:
        parent.add_node(k, scene.nodes[k])
    frames = [replace(c, nodes=list(c.nodes), clusters=[]) for c in outer]  # the clusters around the blocks
    for inner, around in zip(frames[1:], frames, strict=False):
        around.clusters = [inner]
    parent.clusters = frames[:1]
    for c in frames:
        for k in c.nodes:
            parent.nodes[k] = scene.nodes[k]
    for box in boxes:
        parent.add_node(box, Node([Row("")]), frames[-1] if frames else None)
    crossing = _arrows(scene, copies, blocks, homes, owner, parent, boxes)
    column = BlockColumn(scene, blocks, parent, boxes, crossing)
    column.drawn = _drawn(scene, column)
    return column


def _arrows(scene: Scene, copies: Sequence[Cluster], blocks: list[Scene], homes: Sequence[Mapping[str, Cluster]],
            owner: Mapping[str, int], parent: Scene, boxes: Sequence[str]) -> list[int]:
    """Each arrow into its block, or into the parent (from box to box) with connectors at its
    ends inside the blocks it leaves and enters; the indices of the parent's arrows."""
    crossing: list[int] = []
    exits: dict[tuple[str, int], list[str]] = {}
    for i, e in enumerate(scene.edges):
        a, b = owner.get(e.src), owner.get(e.dst)
        if a is not None and a == b:
            blocks[a].edges.append(e)
            continue
        crossing.append(i)
        parent.edges.append(replace(e, src=boxes[a] if a is not None else e.src,
                                    dst=boxes[b] if b is not None else e.dst, to_cluster=None))
        if e.invisible:
            continue
        if b is not None:  # enters block b: a connector over the box it enters
            key = f"\x00from {e.src} to {e.dst}"
            if key not in blocks[b].nodes:
                far = _far(scene, copies, owner, e.src)
                blocks[b].add_node(key, connector_node(f"▴ {far}", f"arrow from {far}, outside this block"),
                                   homes[b][e.dst])
                blocks[b].edges.append(Edge(key, e.dst, head_label=e.head_label))
        if a is not None:
            exits.setdefault((e.src, a), []).append(e.dst)
    for (src, a), targets in exits.items():  # leaves block a: one connector under the box it leaves
        names = list(dict.fromkeys(_far(scene, copies, owner, t) for t in targets))
        text = "▾ " + ", ".join(names[:2]) + (f" +{len(names) - 2}" if len(names) > 2 else "")
        key = f"\x00to {src}"
        blocks[a].add_node(key, connector_node(text, "arrows to " + ", ".join(names)), homes[a][src])
        blocks[a].edges.append(Edge(src, key, label=f"×{len(targets)}" if len(targets) > 1 else ""))
    return crossing


def _outer(scene: Scene) -> tuple[list[Cluster], list[Cluster]]:
    """The clusters that wrap the whole column one inside the other (a model's own scope: every
    layer of ``inception_v3`` is inside it), and the clusters inside the innermost of them: the
    blocks. A cluster with nothing but one cluster and a few boxes in it is no block to lay out
    apart: its one cluster's insides are."""
    outer: list[Cluster] = []
    level = scene.clusters
    while len(level) == 1 and level[0].clusters:
        outer.append(level[0])
        level = level[0].clusters
    return outer, list(level)


def _far(scene: Scene, blocks: Sequence[Cluster], owner: Mapping[str, int], key: str) -> str:
    """What a connector calls the far end of its arrow: its block's name and the box's."""
    name = far_name(scene.nodes[key])
    b = owner.get(key)
    if b is None or not blocks[b].rows:
        return name
    block = far_name(Node(list(blocks[b].rows)))
    return name if block == name else f"{block}: {name}"


def _drawn(scene: Scene, column: BlockColumn) -> Scene:
    drawn = Scene(layout=dict(scene.layout), small_pt=scene.small_pt, title=list(scene.title), notes=list(scene.notes))
    drawn.top = list(scene.top)
    drawn.nodes = dict(scene.nodes)
    blocks = [c for block in column.blocks for c in block.clusters]
    for block in column.blocks:
        drawn.nodes.update(block.nodes)
    chain = [replace(c, nodes=[k for k in c.nodes if not k.startswith(BOX)], clusters=[])
             for c in column.parent.all_clusters()]  # the frames around the blocks, without the boxes
    for inner, around in zip(chain[1:], chain, strict=False):
        around.clusters = [inner]
    if chain:
        chain[-1].clusters = blocks
    drawn.clusters = chain[:1] or blocks
    drawn.edges = [scene.edges[i] for i in column.crossing] + [e for b in column.blocks for e in b.edges]
    return drawn


def _copy(cluster: Cluster) -> Cluster:
    """``cluster`` and every cluster inside it copied (their node lists get the connectors);
    an explicit stack: fusions may nest thousands deep."""
    top = replace(cluster, nodes=list(cluster.nodes), clusters=list(cluster.clusters))
    stack = [top]
    while stack:
        c = stack.pop()
        c.clusters = [replace(s, nodes=list(s.nodes), clusters=list(s.clusters)) for s in c.clusters]
        stack.extend(c.clusters)
    return top


def _walk(cluster: Cluster) -> list[Cluster]:
    out, stack = [], [cluster]
    while stack:
        c = stack.pop()
        out.append(c)
        stack.extend(reversed(c.clusters))
    return out


def batches(blocks: Sequence[Scene], count: int) -> list[list[int]]:
    """The blocks (their indices) shared out into at most ``count`` groups of about the same
    size (boxes and arrows), each laid out by one ``dot``: the largest first, each to the
    lightest group so far; each group in the blocks' order."""
    count = max(1, min(count, len(blocks)))
    groups: list[list[int]] = [[] for _ in range(count)]
    load = [0] * count
    for b in sorted(range(len(blocks)), key=lambda b: (-(len(blocks[b].nodes) + len(blocks[b].edges)), b)):
        g = min(range(count), key=lambda g: (load[g], g))
        groups[g].append(b)
        load[g] += len(blocks[b].nodes) + len(blocks[b].edges)
    return [sorted(g) for g in groups if g]


def block_group(column: BlockColumn, group: Sequence[int]) -> Scene:
    """The blocks of ``group`` in one scene, unconnected: ``dot`` lays out each on its own, side
    by side, in one run. Their arrows come in the group's order, each block's in its own."""
    scene = Scene(layout=dict(column.scene.layout), small_pt=column.scene.small_pt)
    for b in group:
        block = column.blocks[b]
        scene.nodes.update(block.nodes)
        scene.clusters.extend(block.clusters)
        scene.edges.extend(block.edges)
    return scene


def fix_boxes(text: str, sizes: Mapping[str, tuple[float, float]]) -> str:
    """The column's DOT text with each block's box (DOT id → (width, height), points) made an
    invisible box of exactly that size: dot routes the arrows to its border, and the block's
    own drawing goes over it."""
    if not sizes:
        return text
    pattern = re.compile(r"^(\s*)(" + "|".join(map(re.escape, sizes)) + r") \[.*\];$", re.MULTILINE)

    def sub(m: re.Match[str]) -> str:
        w, h = sizes[m.group(2)]
        return (f'{m.group(1)}{m.group(2)} [shape=box, fixedsize=true, label="", style=invis, '
                f"width={w / 72:.4f}, height={h / 72:.4f}];")
    return pattern.sub(sub, text)
