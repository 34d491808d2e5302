"""The report as an explorer: search, expand, click and cross-highlight, offline, in one file.

The page is the static report (verdict, picture, tables) plus one inline script
(``explorer.js``) and the data it reads (:mod:`.data`): every instruction of the drawn
modules, the kernels, the folds, and which drawn box holds which instructions. Graphviz lays
out every picture at build time (:mod:`.build`); the script only swaps SVGs, highlights, and
fills a side panel. :mod:`.page` embeds script and data safely.

Entry points, one per kind of page: :func:`pair_payload` (``show``, ``render --stage both``),
:func:`module_payload` (``render`` of one module) and :func:`diff_payload` (``diff``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from .build import Bounds, fusion_expansions, top_view
from .data import ExplorerData, Side, ViewSpec, explorer_data
from .page import ExplorerPayload, explorer_payload

if TYPE_CHECKING:
    from ...analysis import Analysis
    from ...ir import HloModule, Instruction
    from ..pictures import Picture
    from ..views import Mark

__all__ = ["Bounds", "ExplorerData", "ExplorerPayload", "Side", "ViewSpec", "diff_payload", "explorer_data",
           "explorer_payload", "module_payload", "pair_payload"]

SourceLookup = Callable[[str], "dict | None"]


def pair_payload(pre: "HloModule", post: "HloModule", analysis: "Analysis", picture: "Picture", *,
                 lookup: SourceLookup | None = None, texts: tuple[str | None, str | None] = (None, None),
                 post_marks: Mapping[str, "Mark"] | None = None, bounds: Bounds = Bounds()) -> ExplorerPayload:
    """The explorer of a pre/post pair drawn side by side in ``picture``."""
    sides = [Side("pre", "before optimization", pre, None, texts[0]),
             Side("post", "after optimization", post, analysis.kernels, texts[1])]
    columns = [(i, view) for i, (_, view) in enumerate(picture.views[:2])]
    views = [top_view(picture.title, columns)]
    views += fusion_expansions(1, sides[1], columns[1][1], marks=post_marks, bounds=bounds)
    return explorer_payload(explorer_data(sides, views, analysis=analysis, lookup=lookup, title=picture.title))


def module_payload(module: "HloModule", stage: str, picture: "Picture", *, text: str | None = None,
                   lookup: SourceLookup | None = None, marks: Mapping[str, "Mark"] | None = None,
                   bounds: Bounds = Bounds()) -> ExplorerPayload:
    """The explorer of one module drawn alone in ``picture``."""
    from ...analysis.kernels import kernels

    label = "before optimization" if stage == "pre" else "after optimization"
    side = Side(stage, label, module, kernels(module) if module.is_scheduled or stage == "post" else None, text)
    view = picture.views[0][1]
    views = [top_view(picture.title, [(0, view)])]
    views += fusion_expansions(0, side, view, marks=marks, bounds=bounds)
    return explorer_payload(explorer_data([side], views, lookup=lookup, title=picture.title))


def diff_payload(before: tuple[str, "HloModule"], after: tuple[str, "HloModule"], picture: "Picture",
                 pairs: Sequence[tuple["Instruction", "Instruction", str]], *,
                 marks: tuple[Mapping[str, "Mark"] | None, Mapping[str, "Mark"] | None] = (None, None),
                 bounds: Bounds = Bounds()) -> ExplorerPayload:
    """The explorer of a diff: two modules in columns, matched kernels paired."""
    from ...analysis.kernels import kernels

    sides = [Side("before", before[0], before[1], kernels(before[1])),
             Side("after", after[0], after[1], kernels(after[1]))]
    columns = [(i, view) for i, (_, view) in enumerate(picture.views[:2])]
    views = [top_view(picture.title, columns)]
    half = Bounds(bounds.max_views // 2, bounds.max_bytes // 2, bounds.budget, bounds.timeout)
    for i in (0, 1):
        views += fusion_expansions(i, sides[i], columns[i][1], marks=marks[i], bounds=half)
    return explorer_payload(explorer_data(sides, views, pairs=pairs, title=picture.title))
