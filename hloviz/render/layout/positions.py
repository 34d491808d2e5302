"""Where ``dot`` put things, read from its ``-Tjson0`` output, and moved: the geometry that
:mod:`hloviz.render.layout.compose` composes pictures with. Points, y growing upwards (Graphviz's).
Pure: no Graphviz here."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ...errors import RenderError
from ..scene import Scene
from .dot_parts import Placed
from .wrap import Span

__all__ = ["INCH", "Box", "Layout", "num", "parse_box", "place_part", "read_layout", "shift", "shift_box", "shifted", "svg_box"]

#: Points per inch (Graphviz gives sizes in inches, positions in points).
INCH = 72.0


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


def parse_box(text: str) -> Box:
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
        half_h = float(attrs.get("height", "0")) * INCH / 2
        half_w = float(attrs.get("width", "0")) * INCH / 2
        return Span(y + half_h, y - half_h, x - half_w, x + half_w)

    def cluster_span(self, ident: str) -> Span | None:
        attrs = self.clusters.get(ident)
        if attrs is None:
            return None
        box = parse_box(attrs["bb"])
        return Span(box.y1, box.y0, box.x0, box.x1)


def read_layout(data: bytes) -> Layout:
    """A :class:`Layout` from ``dot -Tjson0`` output."""
    try:
        graph = json.loads(data)
        bb = parse_box(graph["bb"])
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


def num(v: float) -> str:
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def shift(value: str, dx: float, dy: float) -> str:
    """A ``pos`` (``x,y``) or spline (``e,x,y s,x,y x,y …``, ``;`` between pieces) moved by (dx, dy)."""
    pieces = []
    for piece in value.split(";"):
        points = []
        for token in piece.split():
            *prefix, x, y = token.split(",")
            points.append(",".join([*prefix, num(float(x) + dx), num(float(y) + dy)]))
        pieces.append(" ".join(points))
    return ";".join(pieces)


def shift_box(box: Box, dx: float, dy: float) -> str:
    return f"{num(box.x0 + dx)},{num(box.y0 + dy)},{num(box.x1 + dx)},{num(box.y1 + dy)}"


def place_part(scene: Scene, layout: Layout, dx: float, dy: float) -> Placed:
    """A part's positions moved by (dx, dy), as DOT attributes."""
    nodes = {ident: f'pos="{shift(a["pos"], dx, dy)}", width={a.get("width", "0.3")}, '
                    f'height={a.get("height", "0.3")}'
             for ident, a in layout.nodes.items()}
    clusters = {}
    for ident, a in layout.clusters.items():
        text = f'bb="{shift_box(parse_box(a["bb"]), dx, dy)}"'
        if "lp" in a:
            text += f'; lp="{shift(a["lp"], dx, dy)}"'
        clusters[ident] = text
    edges = []
    for i in range(len(scene.edges)):
        a = layout.edges.get(i, {})
        edges.append(", ".join(f'{k}="{shift(v, dx, dy)}"' for k, v in a.items()))
    return Placed(scene, nodes, clusters, edges)


def shifted(layout: Layout, dx: float, dy: float) -> Layout:
    """``layout``'s positions moved by (dx, dy), as a layout (a block's, moved into its box)."""
    def moved(attrs: dict[str, str], keys: tuple[str, ...]) -> dict[str, str]:
        return {k: (shift(v, dx, dy) if k in keys else v) for k, v in attrs.items()}

    clusters = {}
    for ident, a in layout.clusters.items():
        c = moved(a, ("lp",))
        if "bb" in a:
            c["bb"] = shift_box(parse_box(a["bb"]), dx, dy)
        clusters[ident] = c
    b = layout.bb
    return Layout(Box(b.x0 + dx, b.y0 + dy, b.x1 + dx, b.y1 + dy),
                  {ident: moved(a, ("pos",)) for ident, a in layout.nodes.items()}, clusters,
                  {i: moved(a, ("pos", "lp", "head_lp", "tail_lp", "xlp")) for i, a in layout.edges.items()})


def svg_box(svg: bytes) -> Box:
    """A drawn graph's box from its SVG: the ``viewBox`` less dot's 4 pt pad on each side."""
    m = _VIEWBOX.search(svg[:4000].decode("utf-8", "replace"))
    if m is None:
        raise RenderError("Graphviz drew a part hloviz cannot place (no viewBox in its SVG)")
    return Box(0.0, 0.0, float(m.group(1)) - 8, float(m.group(2)) - 8)


_VIEWBOX = re.compile(r'viewBox="[-\d.]+ [-\d.]+ ([-\d.]+) ([-\d.]+)"')
