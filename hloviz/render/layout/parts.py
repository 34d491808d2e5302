"""The records the rounds of a composed picture share: a laid-out part (:class:`Part`), a
column of parts (:class:`Column`), a scene to lay out (:data:`Job`), the gaps and margins
the parts are arranged with, and the runner of many ``dot`` at once with its fallback
(:func:`lay_parts`).

Why a module of their own: :mod:`hloviz.render.layout.compose` arranges and stitches the parts, the
block round (:mod:`hloviz.render.layout.block_round`) and the wrap round
(:mod:`hloviz.render.layout.wrap_round`) make them; all three use these records, which import none of
them, so the rounds import from here and ``compose`` imports the rounds, with no cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ...errors import RenderError
from ..scene import Scene
from .blocklayout import BlockColumn
from .dot import Drawing
from .positions import Box, Layout, read_layout, svg_box
from .runs.graphviz_run import GraphvizTimeout

#: Points between two columns (beyond the margin dot leaves around each), and between two parts
#: of a wrapped column.
COLUMN_GAP = 0.0
PART_GAP = 36.0
#: A column cluster's margin around what it holds, and between its label and its contents (dot's).
MARGIN = 8.0
LABEL_GAP = 4.0
#: How much wider than its share of the whole (``1 / k`` of the column) the widest of ``k``
#: stacked parts comes out laid out alone: dot spreads a piece of a row over the room it has,
#: and ranks a part's boxes again. Measured (picture_bench): jax_gpt_step 2.1 and 2.0 (pre,
#: post), keras_cnn_train 1.6 and 1.7.
SPREAD = 2.0
#: Height of the "part 2 of 3" caption over each part of a wrapped column.
CAPTION = 16.0

Run = Callable[..., bytes]
RunMany = Callable[..., list[list[bytes]]]


@dataclass
class Part:
    """One laid-out part: its scene, its graph's box ``bb`` (points, y up), its own drawing
    (``svg``, for an SVG picture) and its positions (``layout``: where they were asked for)."""

    scene: Scene
    bb: Box
    svg: bytes = b""
    layout: Layout | None = None
    #: a column laid out block by block (:mod:`hloviz.render.layout.blocklayout`): the scene as drawn
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
class Column:
    """A column's parts, top to bottom of the column as it was cut; ``text``, the DOT its whole
    layout came from; ``whole``, that layout's positions once read (wrapping needs them); and
    ``label``, the size (width, height) of the column cluster's label there."""

    index: int
    parts: list[Part]
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



#: A scene to lay out: its column, the scene, whether it is a part of a wrapped column (drawn
#: without the column's cluster), and its blocks (None: laid out whole).
Job = tuple[int, Scene, bool, "BlockColumn | None"]


def column_size(drawing: Drawing, col: Column) -> tuple[float, float]:
    """A column's (width, height) in the composed picture."""
    if not col.wrapped:
        return col.parts[0].bb.width, col.parts[0].bb.height
    if col.stacked:
        width = max(p.bb.width for p in col.parts)
        height = sum(p.bb.height + CAPTION for p in col.parts) + PART_GAP * (len(col.parts) - 1)
    else:
        width = sum(p.bb.width for p in col.parts) + PART_GAP * (len(col.parts) - 1)
        height = max(p.bb.height for p in col.parts) + CAPTION
    if drawing.single:
        return width, height
    lw, lh = col.label
    return max(width, lw + 2 * MARGIN) + 4 * MARGIN, height + 4 * MARGIN + lh + LABEL_GAP


def read_part(scene: Scene, out: dict[str, bytes]) -> Part:
    layout = read_layout(out["json0"]) if "json0" in out else None
    svg = out.get("svg", b"")
    return Part(scene, layout.bb if layout is not None else svg_box(svg), svg, layout)


def lay_parts(run_many: RunMany, texts: list[str], formats: Sequence[str], left: Callable[[], float]) -> list[list[bytes]]:
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
