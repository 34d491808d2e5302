"""Long columns cut into parts drawn side by side, and wide ones into parts stacked top to
bottom, so that a picture's shape fits a page.

A 155-layer chain laid out top to bottom is a strip 2,000 × 26,000 pt: no page, slide or docs
column shows it readably. ``--wrap`` cuts such a column, where it was laid out, into parts of
about equal height; :mod:`hloviz.render.layout.compose` lays each part out on its own and puts them
side by side. Cuts go between rows of the first layout, never through a box, and where few
arrows cross; a cluster (a block, a fusion) is only cut when it is taller than a part, and its
pieces after the first say "(continued)". An arrow from one part to another ends at a small
connector naming the far end and its part (``▾ part 2: conv_5``), and starts again under one
(``▴ part 1: add_3``), so the chain can still be followed.

A picture can as well be too *wide*: a training step's optimizer updates one parameter after
another, each update independent of the others, and dot puts them all on one row (the JAX GPT
step's pre column: 159 boxes on one row, 73,000 pt across); a gradient's fan-out does the same.
Such a column is cut the other way: between the columns of boxes of its first layout (where a
vertical line crosses no box and few arrows), into parts stacked top to bottom. It is the same
cut with the axes swapped (:func:`transposed`), so everything above holds for it too.

Pure: positions in, scenes out (no Graphviz here).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ...errors import InputError
from ..quoting import shorten
from ..scene import Cluster, Edge, Node, Row, Scene

__all__ = ["ACROSS", "AUTO", "DEFAULT_ASPECT", "DOWN", "MAX_PARTS", "MAX_STACKED", "OFF", "SLACK", "WIDE_FLOOR", "WRAP_CHOICES", "Span", "Wrap",
           "band_widths", "stacked_heights", "choose_parts", "cut_limit", "direction", "parse_wrap", "split_scene",
           "transposed", "connector_node", "far_name"]

#: Height / width a wrapped picture aims at: a page in portrait (A4 is 297 / 210 = 1.41).
DEFAULT_ASPECT = 1.4
#: The most parts one column is cut into (side by side; stacked, twice as many: a part of a wide
#: column is often one row of boxes).
MAX_PARTS = 12
MAX_STACKED = 2 * MAX_PARTS
#: ``--wrap auto`` leaves a picture alone until it is this much taller, or wider, than the aspect
#: asks: the promise is height/width within [aspect / 1.5, aspect × 1.5] where there are places
#: to cut.
SLACK = 1.5
#: ``--wrap auto`` leaves a picture narrower than this (points) alone however flat it is: about
#: two A4 pages across, it reads on a screen as it is.
WIDE_FLOOR = 1200.0
#: Which way a picture is cut: a tall column into parts side by side (``DOWN``: the cuts run
#: across the column, down its length), a wide one into parts stacked (``ACROSS``).
DOWN = "down"
ACROSS = "across"
#: What ``--wrap`` takes, for messages.
WRAP_CHOICES = "auto, off, or a number of parts (2 to 12)"


@dataclass(frozen=True)
class Wrap:
    """How a picture's columns are wrapped: ``off``; ``auto`` (as many parts as bring the picture
    near ``aspect``, height over width, and none when it is already near); or ``parts``
    (each column cut into ``parts``)."""

    mode: str = "off"
    parts: int = 1
    aspect: float = DEFAULT_ASPECT

    @property
    def active(self) -> bool:
        return self.mode != "off"


OFF = Wrap("off")
AUTO = Wrap("auto")


def parse_wrap(value: str | int | None, aspect: float | None = None) -> Wrap:
    """``--wrap`` (and ``--aspect``) as a :class:`Wrap`; :class:`InputError` for anything else."""
    if aspect is not None and not (0.05 <= aspect <= 20 and math.isfinite(aspect)):
        raise InputError(f"--aspect must be a height/width ratio between 0.05 and 20, not {aspect:g}",
                         hint="1.4 is a portrait page, 0.56 a 16:9 slide")
    ratio = aspect if aspect is not None else DEFAULT_ASPECT
    text = "off" if value is None else str(value).strip().lower()
    if text in ("auto", "off"):
        return Wrap(text, aspect=ratio)
    if text.isdigit() and 1 <= int(text) <= MAX_PARTS:
        n = int(text)
        return Wrap("parts", n, ratio) if n > 1 else Wrap("off", aspect=ratio)
    raise InputError(f"--wrap must be {WRAP_CHOICES}, not {value!r}",
                     hint="--wrap auto cuts long columns so the picture's shape fits a page")


def direction(sizes: Sequence[tuple[float, float]], wrap: Wrap, gap: float) -> str | None:
    """Which way ``wrap`` cuts columns of these (width, height), side by side: ``DOWN`` (a tall
    picture: parts side by side), ``ACROSS`` (a wide one: parts stacked), or None (left alone).
    ``--wrap N`` always cuts, across when the picture is flatter than ``aspect / SLACK``;
    ``auto`` only a picture more than ``SLACK`` times taller or flatter than the aspect asks
    (and a flat one only when it is wider than :data:`WIDE_FLOOR`)."""
    if not wrap.active or not sizes:
        return None
    width = sum(w for w, _ in sizes) + gap * (len(sizes) - 1)
    shape = max(h for _, h in sizes) / max(width, 1.0)
    flat = shape < wrap.aspect / SLACK
    if wrap.mode == "parts":
        return ACROSS if flat else DOWN
    if shape > wrap.aspect * SLACK:
        return DOWN
    return ACROSS if flat and width > WIDE_FLOOR else None


def choose_parts(sizes: Sequence[tuple[float, float]], wrap: Wrap, limits: Sequence[int], gap: float,
                 widths: Sequence[Sequence[float]] = (), *, stacked: bool = False) -> list[int]:
    """How many parts to cut each column into: ``sizes`` are the columns' (width, height) laid
    out whole, ``limits`` the most parts each can be cut into, ``gap`` the space between
    columns and parts; ``widths[c][k - 1]``, where known, is what column ``c``'s ``k`` parts
    measure side by side (:func:`band_widths`; else ``k`` times its whole width).

    ``stacked``: the columns are too wide and their parts go top to bottom; then
    ``widths[c][k - 1]`` is how tall column ``c``'s ``k`` parts are stacked
    (:func:`stacked_heights`; else ``k`` times its whole height), each part ``1 / k`` as wide."""
    if not wrap.active or not sizes:
        return [1] * len(sizes)
    if wrap.mode == "parts":
        return [max(1, min(wrap.parts, limit)) for limit in limits]

    def measured(c: int, k: int) -> float:
        if c < len(widths) and k <= len(widths[c]):
            return widths[c][k - 1]
        return k * sizes[c][1 if stacked else 0] + gap * (k - 1)

    def shape(counts: Sequence[int]) -> float:
        if stacked:
            height = max(measured(c, k) for c, k in enumerate(counts))
            width = sum(w / k for (w, _), k in zip(sizes, counts, strict=True))
        else:
            height = max(h / k for (_, h), k in zip(sizes, counts, strict=True))
            width = sum(measured(c, k) for c, k in enumerate(counts))
        return height / max(width + gap * (len(counts) - 1), 1.0)

    ones = [1] * len(sizes)
    if (shape(ones) >= wrap.aspect / SLACK) if stacked else (shape(ones) <= wrap.aspect * SLACK):
        return ones
    long = [w if stacked else h for w, h in sizes]  # the side the cuts shorten
    most = MAX_STACKED if stacked else MAX_PARTS
    best, best_score = ones, math.inf
    for target in sorted({v / j for v in long for j in range(1, most + 1)}, reverse=True):
        counts = [max(1, min(limit, most, math.ceil(v / target - 1e-9))) for v, limit in zip(long, limits, strict=True)]
        score = abs(math.log(shape(counts) / wrap.aspect)) + 0.01 * sum(counts)
        if score < best_score - 1e-12:
            best, best_score = counts, score
    return best


@dataclass(frozen=True)
class Span:
    """A box's extent up the page (Graphviz's y grows upwards: ``top`` > ``bottom``) and across."""

    top: float
    bottom: float
    left: float = 0.0
    right: float = 0.0


def transposed(spans: Mapping[str, Span]) -> dict[str, Span]:
    """``spans`` with the axes swapped (x becomes the way down: the leftmost box is the "top"),
    so that the cuts of a tall column cut a wide one between its columns of boxes."""
    return {k: Span(-s.left, -s.right, s.bottom, s.top) for k, s in spans.items()}


#: Space dot leaves between two rows (``ranksep``, points), for :func:`stacked_heights`.
_RANKSEP = 0.3 * 72


def stacked_heights(nodes: Mapping[str, Span], gap: float, most: int = MAX_STACKED) -> list[float]:
    """For ``k`` = 1 … ``most``: how tall a wide column is when cut into ``k`` bands of equal
    width and the bands are stacked. A band laid out alone keeps the rows its boxes are on and
    drops the others (a row of independent updates is one row, however far below the first
    row it sat), so its height is its rows' heights and the space between them."""
    spans = list(nodes.values())
    if not spans:
        return []
    left, right = min(s.left for s in spans), max(s.right for s in spans)
    out = []
    for k in range(1, most + 1):
        band = (right - left) / k or 1.0
        rows: dict[int, dict[int, float]] = {}
        for s in spans:
            b = min(k - 1, int(((s.left + s.right) / 2 - left) / band))
            y = round(_centre(s))
            rows.setdefault(b, {})[y] = max(rows.get(b, {}).get(y, 0.0), s.top - s.bottom)
        out.append(sum(sum(r.values()) + _RANKSEP * (len(r) - 1) for r in rows.values()) + gap * (k - 1))
    return out


def band_widths(nodes: Mapping[str, Span], gap: float, most: int = MAX_PARTS) -> list[float]:
    """For ``k`` = 1 … ``most``: how wide a column is when cut into ``k`` bands of equal height
    and the bands are put side by side (each band as wide as the boxes centred in it)."""
    spans = list(nodes.values())
    if not spans:
        return []
    top, bottom = max(s.top for s in spans), min(s.bottom for s in spans)
    out = []
    for k in range(1, most + 1):
        band = (top - bottom) / k or 1.0
        lo: dict[int, float] = {}
        hi: dict[int, float] = {}
        for s in spans:
            b = min(k - 1, int((top - _centre(s)) / band))
            lo[b] = min(lo.get(b, s.left), s.left)
            hi[b] = max(hi.get(b, s.right), s.right)
        out.append(sum(hi[b] - lo[b] for b in lo) + gap * (k - 1))
    return out


def split_scene(scene: Scene, nodes: Mapping[str, Span], clusters: Mapping[str, Span], parts: int) -> list[Scene]:
    """``scene`` cut into at most ``parts`` scenes, top to bottom, at the heights of its first
    layout (``nodes`` and ``clusters``: each key's extent there). Fewer come back when there are
    fewer places to cut; one when there are none."""
    placed = [k for k in scene.nodes if k in nodes]
    if parts < 2 or len(placed) < 2:
        return [scene]
    top = max(nodes[k].top for k in placed)
    bottom = min(nodes[k].bottom for k in placed)
    band = (top - bottom) / parts
    cuts = _cuts(scene, nodes, clusters, band, parts, top)
    if not cuts:
        return [scene]
    part_of = {k: sum(1 for c in cuts if _centre(nodes[k]) < c) for k in placed}
    for k in scene.nodes:  # a node the layout did not place (none should be) goes with the first part
        part_of.setdefault(k, 0)
    first = _first_parts(scene, part_of)
    return [_piece(scene, i, part_of, first) for i in range(len(cuts) + 1)]


def _centre(span: Span) -> float:
    return (span.top + span.bottom) / 2


def cut_limit(scene: Scene, nodes: Mapping[str, Span], clusters: Mapping[str, Span], most: int = MAX_PARTS) -> int:
    """The most parts ``scene`` can be cut into (one more than its places to cut), capped at ``most``."""
    placed = [k for k in scene.nodes if k in nodes]
    if len(placed) < 2:
        return 1
    height = max(nodes[k].top for k in placed) - min(nodes[k].bottom for k in placed)
    gaps = _gaps(_items(scene, nodes, clusters, height / most))
    return min(most, len(gaps) + 1)


def _items(scene: Scene, nodes: Mapping[str, Span], clusters: Mapping[str, Span], band: float) -> list[Span]:
    """The extents a cut must not pass through: top-level boxes, and the insides of clusters
    taller than ``band`` (those may be cut between their own boxes)."""
    out = [nodes[k] for k in scene.top if k in nodes]
    stack = list(scene.clusters)
    while stack:
        c = stack.pop()
        span = clusters.get(c.key)
        if span is not None and span.top - span.bottom <= band * 0.8:
            out.append(span)
            continue
        out.extend(nodes[k] for k in c.nodes if k in nodes)
        stack.extend(c.clusters)
    return out


def _gaps(items: list[Span]) -> list[float]:
    """Heights between items where a horizontal line crosses no item, top to bottom."""
    gaps = []
    items = sorted(items, key=lambda s: -s.top)
    low = math.inf
    for s in items:
        if s.top < low and low != math.inf:
            gaps.append((s.top + low) / 2)
        low = min(low, s.bottom)
    return gaps


def _cuts(scene: Scene, nodes: Mapping[str, Span], clusters: Mapping[str, Span], band: float, parts: int,
          top: float) -> list[float]:
    gaps = _gaps(_items(scene, nodes, clusters, band))
    spans = []
    for e in scene.edges:
        if e.src in nodes and e.dst in nodes and not e.invisible:
            a, b = _centre(nodes[e.src]), _centre(nodes[e.dst])
            spans.append((min(a, b), max(a, b)))

    def crossing(y: float) -> int:
        return sum(1 for lo, hi in spans if lo < y < hi)

    cuts: list[float] = []
    for i in range(1, parts):
        ideal = top - i * band
        below = [g for g in gaps if not cuts or g < cuts[-1]]
        if not below:
            break
        cost = {g: abs(g - ideal) / band + 0.05 * crossing(g) for g in below}
        best = min(below, key=lambda g: (cost[g], -g))
        if cuts and cuts[-1] - best < band * 0.25:  # a sliver of a part: stop here
            break
        cuts.append(best)
    return cuts


def _first_parts(scene: Scene, part_of: Mapping[str, int]) -> dict[str, int]:
    """Each cluster's first part (where it keeps its own key and label)."""
    first: dict[str, int] = {}
    for c in reversed(scene.all_clusters()):  # inner clusters before the clusters holding them
        parts = [part_of[k] for k in c.nodes] + [first[s.key] for s in c.clusters if s.key in first]
        if parts:
            first[c.key] = min(parts)
    return first


def _continued(key: str, part: int) -> str:
    return f"{key}\x00part {part}"


def _piece(scene: Scene, index: int, part_of: Mapping[str, int], first: Mapping[str, int]) -> Scene:
    piece = Scene(layout=dict(scene.layout), small_pt=scene.small_pt)
    renamed: dict[str, str] = {}

    def keep(c: Cluster) -> Cluster | None:
        subs = [s for s in (keep(s) for s in c.clusters) if s is not None]
        held = [k for k in c.nodes if part_of[k] == index]
        if not subs and not held:
            return None
        if first.get(c.key, index) == index:
            return replace(c, nodes=held, clusters=subs)
        key = renamed[c.key] = _continued(c.key, index)
        rows = list(c.rows)
        if rows:
            rows[0] = replace(rows[0], text=f"{rows[0].text} (continued)")
        return replace(c, key=key, rows=rows, nodes=held, clusters=subs)

    for k in scene.top:
        if part_of[k] == index:
            piece.add_node(k, scene.nodes[k])
    piece.clusters = [c for c in (keep(c) for c in scene.clusters) if c is not None]
    home: dict[str, Cluster] = {}
    for c in piece.all_clusters():
        for k in c.nodes:
            piece.nodes[k] = scene.nodes[k]
            home[k] = c
    _arrows(scene, piece, index, part_of, renamed, home)
    return piece


def _arrows(scene: Scene, piece: Scene, index: int, part_of: Mapping[str, int], renamed: Mapping[str, str],
            home: Mapping[str, Cluster]) -> None:
    """The arrows of part ``index``: those inside it, and connectors for those leaving or entering.

    A connector is a stub at the box it belongs to, never a hub that arrows run to from across
    the part: it goes into the innermost cluster of that box (dot keeps a cluster's boxes
    together), and an entering arrow gets a connector of its own for each box it enters (a
    shared one was put wherever dot had room, and the arrows to it, thousands of points long,
    crossed everything: the 12-layer GPT step's picture had 4 crossings per arrow)."""
    exits: dict[tuple[str, int], list[str]] = {}
    for e in scene.edges:
        src, dst = part_of.get(e.src), part_of.get(e.dst)
        if src == index and dst == index:
            to = renamed.get(e.to_cluster, e.to_cluster) if e.to_cluster is not None else None
            piece.edges.append(replace(e, to_cluster=to))
        elif e.invisible or src is None or dst is None:
            continue
        elif src == index:
            exits.setdefault((e.src, dst), []).append(e.dst)
        elif dst == index:
            entry = f"\x00from part {src} {e.src} to {e.dst}"
            if entry not in piece.nodes:
                piece.add_node(entry, connector_node(f"▴ part {src + 1}: {far_name(scene.nodes[e.src])}",
                                                 f"continued from part {src + 1}"), home.get(e.dst))
            piece.edges.append(replace(e, src=entry, to_cluster=None, constraint=True))
    for (src_key, dst), targets in exits.items():
        names = ", ".join(dict.fromkeys(far_name(scene.nodes[t]) for t in targets[:2]))
        more = len(dict.fromkeys(targets)) - 2
        text = f"▾ part {dst + 1}: {names}" + (f" +{more}" if more > 0 else "")
        key = f"\x00to part {dst} {src_key}"
        piece.add_node(key, connector_node(text, f"continues in part {dst + 1}"), home.get(src_key))
        piece.edges.append(Edge(src_key, key, label=f"×{len(targets)}" if len(targets) > 1 else ""))


def connector_node(text: str, tooltip: str) -> Node:
    return Node([Row(text, small=True, italic=True)], fill="#ffffff", border="#9e9e9e", font="#424242",
                dashed=True, rounded=True, small=True, tooltip=tooltip)


def far_name(node: Node) -> str:
    """What a connector calls the node at the far end: the instruction's name where the node is
    one instruction (its tooltip starts ``name = …``), else its first row (a layer, a block)."""
    head = node.tooltip.split("\n", 1)[0]
    name, eq, _ = head.partition(" = ")
    if eq and name and " " not in name:
        return shorten(name, 32)
    return shorten(node.rows[0].text if node.rows else "?", 32)
