"""Pictures put together from drawings ``dot`` made apart: each drawing's contents moved into
place in one SVG, as :mod:`hloviz.render.layout.compose` arranges them. Text in, text out: Graphviz's
own SVG is kept as it is, only wrapped in a ``<g class="part" transform="translate(dx dy)">``
and its element ids numbered again."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

from ...errors import RenderError
from .positions import num
from .runs.graphviz_run import normalize_svg

__all__ = ["retitle_edges", "root_svg", "split_drawing", "stitch"]


def root_svg(width: float, height: float) -> bytes:
    """An empty picture of ``width`` × ``height`` points, written as ``dot -Tsvg`` writes one
    (4 pt pad, a white background, y up through the graph group's transform)."""
    w, h = width + 8, height + 8
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
            f'<svg width="{math.ceil(w)}pt" height="{math.ceil(h)}pt"\n'
            f' viewBox="0.00 0.00 {w:.2f} {h:.2f}" xmlns="http://www.w3.org/2000/svg" '
            f'xmlns:xlink="http://www.w3.org/1999/xlink">\n'
            f'<g id="graph0" class="graph" transform="scale(1 1) rotate(0) translate(4 {num(h - 4)})">\n'
            f'<title>hloviz</title>\n'
            f'<polygon fill="white" stroke="transparent" points="-4,4 -4,{num(4 - h)} {num(w - 4)},{num(4 - h)} '
            f'{num(w - 4)},4 -4,4"/>\n</g>\n</svg>\n').encode()


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
        pieces.append(f'<g class="part" transform="translate({num(dx)} {num(-dy)})">\n{body}</g>\n')
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


_EDGE_TITLE = re.compile(r'(<g id="edge(\d+)" class="edge">\n<title>)([^<]*)(</title>)')


def retitle_edges(svg: bytes, titles: Sequence[tuple[str, str] | None]) -> bytes:
    """``svg`` with the ``<title>`` of its ``k``-th arrow (``edge{k + 1}``: Graphviz numbers arrows
    in the order the DOT text gives them, drawn or not) naming the ends ``titles[k]`` (DOT ids)
    instead of the ends it was drawn between: an arrow drawn to a block's box keeps, for the
    explorer and for readers of the SVG, the box inside the block it stands for."""
    def sub(m: re.Match[str]) -> str:
        k = int(m.group(2)) - 1
        ends = titles[k] if 0 <= k < len(titles) else None
        if ends is None:
            return m.group(0)
        return f"{m.group(1)}{ends[0]}&#45;&gt;{ends[1]}{m.group(4)}"
    return _EDGE_TITLE.sub(sub, svg.decode("utf-8")).encode("utf-8")


_ELEMENT = re.compile(r'^<g id="(?:node|edge|clust)\d+" class="[a-z]+">\n<title>([^<]*)</title>', re.MULTILINE)


def split_drawing(svg: bytes, owner: dict[str, int]) -> dict[int, bytes]:
    """A drawing of several unconnected pieces (blocks laid out side by side by one ``dot``) cut
    into one drawing per piece, as :func:`stitch` takes them: each node, cluster and arrow goes
    with the piece ``owner`` gives its DOT id (an arrow, its tail's); what has none is left out.
    Coordinates are kept: each piece is moved into its place by :func:`stitch`."""
    text = svg.decode("utf-8")
    m = _GRAPH_START.search(text)
    if m is None:
        raise RenderError("Graphviz drew a part hloviz cannot place (no graph group in its SVG)")
    end = text.rindex("</g>")
    found = list(_ELEMENT.finditer(text, m.end(), end))
    pieces: dict[int, list[str]] = {}
    for k, el in enumerate(found):
        chunk = text[el.start():found[k + 1].start() if k + 1 < len(found) else end]
        ident = el.group(1).split("&#45;&gt;")[0]
        piece = owner.get(ident)
        if piece is not None:
            pieces.setdefault(piece, []).append(chunk)
    head = text[:m.end()]
    return {p: (head + "".join(chunks) + "</g>\n</svg>\n").encode("utf-8") for p, chunks in pieces.items()}
