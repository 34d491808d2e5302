"""The explorer's pictures: the page's first view plus pre-rendered expansions, bounded.

Every picture is laid out by Graphviz's ``dot`` in Python — when the page is written, or, for
what opens from the first view in ``show``'s report, when the served page asks (:mod:`.on_demand`);
the browser only shows and swaps SVGs (see docs/explorer.md and benchmarks/results/explorer.md
for why: a WebAssembly Graphviz would have to be fetched at install time and lays out big graphs
no faster than ``dot``).

The first view (:func:`first_view`) is the finest cut of the module's tree that fits a
:class:`Screen`. An expansion is something it draws as one box: a block, ``×N`` repeat, group
of layers or phase opens in place (:func:`~.block_views.block_expansions`: the same picture with that node
of the cut opened), a layer of the model is drawn open as a picture of its own
(``ViewOptions(scope=…)``: its ops before optimization, the kernels holding them after;
:mod:`.scope_views`), a fusion down to single instructions (:mod:`.fusion_views`). This module
holds the first view and the :class:`Bounds` every kind of expansion keeps to. A real model has hundreds of layers and fusions, so
expansions are bounded: the biggest first, at most ``max_views`` of each kind, ``max_bytes``
of SVG and ``max_walk`` instructions walked in all; one without a picture still has its panel
(the layer's kernels and instructions, the fusion's body as text) and its highlights.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ....errors import HlovizError
from ...views import OVERVIEW_BUDGET
from .sides import ViewSpec

if TYPE_CHECKING:
    from ...layout.wrap import Wrap
    from ...pictures import Picture
    from ...views import View

__all__ = ["Bounds", "Screen", "first_view", "top_view"]


@dataclass(frozen=True)
class Screen:
    """What "fits a screen" means for the explorer's first view.

    The whole picture, shown in a ``width`` × ``height`` pixel viewport (a 1920×1080 display
    less the browser's and the page's bars), keeps its text at ``scale`` of its size or more
    (1: at full size, its smallest labels at 10 pt, as the explorer opens it; an SVG point is
    4/3 pixel), and no column holds more than ``nodes`` boxes: the overview's (more are not read
    at a glance, however small they are drawn; issue 33). It may be ``pages`` screens tall: the
    explorer opens it at its top, where the input is, and it reads downwards in program order
    (at full size a whole overview rarely fits one screen; cut to fit, it is a handful of boxes).
    """

    width: int = 1900
    height: int = 950
    scale: float = 1.0
    nodes: int = OVERVIEW_BUDGET
    pages: float = 3.0
    #: the fewest boxes a first view is cut down to (a long chain of blocks stays a chain)
    least: int = 8
    #: the most pictures :func:`first_view` lays out looking for the biggest that fits
    tries: int = 4

    def wrap(self, drawn: Wrap) -> Wrap:
        """How the first view is wrapped: as ``drawn`` when the user chose a wrap, else tall
        columns cut into parts side by side to the screen's shape (height over width)."""
        from ...layout.wrap import Wrap

        return drawn if drawn.active else Wrap("auto", aspect=self.height * self.pages / self.width)

    def shrink(self, svg: str) -> float:
        """How much smaller the laid-out ``svg`` must be to fit (1.0: it fits as it is)."""
        m = re.search(r'<svg[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"', svg)
        if m is None:
            return 1.0
        px = 4 / 3 * self.scale
        width, height = float(m.group(1)) * px, float(m.group(2)) * px
        return min(1.0, self.width / max(width, 1.0), self.height * self.pages / max(height, 1.0))


@dataclass(frozen=True)
class Bounds:
    """How much the page may hold beyond its main picture."""

    max_views: int = 48
    max_bytes: int = 8 * 1024 * 1024
    budget: int = 200
    timeout: float = 10.0
    #: Drawing a layer walks the whole module (once per side), so expansions are also bounded
    #: by instructions walked in all: layers up to half, blocks opened in place an eighth,
    #: fusions the rest: one a view draws as a box of its own charged its own fused
    #: instructions (its picture walks its fused computation; the module's scope tree is built
    #: once for the page), one drawn only inside a bigger box the module's size.
    max_walk: int = 400_000
    #: And by time: no expansion starts after this many seconds (the page says which have none).
    seconds: float = 30.0
    #: What the first view must fit (:func:`first_view`).
    screen: Screen = field(default_factory=Screen)
    #: Fusions' pictures are small (one fused computation each) and every fusion a picture of the
    #: page draws as a box of its own should open from it (ResNet50: 90 such fusions, 47 layer
    #: pictures), so they have a bound of their own instead of ``max_views``.
    max_fusions: int = 160


def first_view(picture: Picture, redraw: Callable[[int, Wrap], Picture], screen: Screen = Screen(),
               seconds: float = 8.0) -> Picture:
    """The picture the explorer shows first: ``picture`` itself when it fits ``screen`` or is
    drawn at the overview's budget or less (its boxes are the model's blocks, legible at full
    size; the page opens at its top, the input, and pans), else the finest cut of the same tree
    that does: the biggest node budget whose picture, laid out,
    fits (``redraw(budget, wrap)`` draws it, the same options otherwise).

    The explorer draws its pictures unwrapped (it pans and zooms), but a first view is meant to
    be seen whole: a tall column is wrapped into parts side by side, to the screen's shape
    (:meth:`Screen.wrap`), so a chain of blocks uses the screen's width instead of a third of
    it (DenseNet121: 26 boxes a column where 15 fitted unwrapped). The picture's size grows
    with its budget, but not in proportion, so the budget is searched for: down by the factor
    the picture is too big until one fits, then by bisection between the biggest that fits and
    the smallest that does not, until they are within a quarter of each other, ``screen.tries``
    pictures were drawn (twice as many while none fits), or ``seconds`` passed once one fits; never below
    ``screen.least`` (where even that does not fit, the smallest drawn). What the cut closes opens in place
    (:func:`~.block_views.block_expansions`, laid out with the first view's wrap; the layer and fusion
    pictures)."""
    if picture.svg is None:
        return picture
    nodes = max((v.nodes for _, v in picture.views), default=0)
    if nodes <= screen.nodes and screen.shrink(picture.svg.decode("utf-8")) >= 1.0:
        return picture
    budgets = [v.options.budget for _, v in picture.views if v.options is not None]
    if budgets and max(budgets) <= screen.nodes:
        return picture  # the overview (render's and show's default) is its own first view: a coarser cut says less
    wrap = screen.wrap(picture.wrap)
    deadline = time.monotonic() + seconds
    low, high = screen.least, max(screen.least, min(screen.nodes, nodes))  # the answer lies in [low, high]
    fitting: Picture | None = None  # the picture at ``low`` once one fitted
    smallest = picture  # the smallest budget drawn, for when nothing fits
    budget = high
    for tried in range(1, 2 * screen.tries + 1):  # past ``tries`` only while none fitted
        try:
            drawn = redraw(budget, wrap)
        except HlovizError:
            break
        if drawn.svg is None:
            break
        factor = screen.shrink(drawn.svg.decode("utf-8"))
        if factor >= 1.0:
            fitting, low = drawn, budget
        else:
            smallest, high = drawn, budget - 1
        if fitting is None and budget <= screen.least:
            break
        # ``seconds`` only ends the refining: a search that has found no fit yet goes on (up to
        # twice ``tries`` pictures), so a slow or loaded machine gets a slower page, not one
        # whose first view does not fit the screen
        if fitting is not None and (high - low <= max(1, low // 4) or tried >= screen.tries
                                    or time.monotonic() >= deadline):
            break
        # no fit yet: down by the factor, and a tenth more (a picture grows faster than its
        # budget); once one fits, bisect
        budget = (max(low, min(high, int(budget * factor * 0.9))) if fitting is None
                  else (low + high + 1) // 2)
    return fitting if fitting is not None else smallest


def top_view(title: str, columns: Sequence[tuple[int, View]]) -> ViewSpec:
    """The page's own picture (already in the HTML)."""
    return ViewSpec(key="top", title=title, columns=list(columns))
