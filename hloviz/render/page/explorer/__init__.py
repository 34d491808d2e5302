"""The report as an explorer: search, expand, click and cross-highlight, offline, in one file.

The page is the static report (verdict, picture, tables) plus one inline script
(``script/*.js``, joined by :mod:`.page`) and the data it reads (:mod:`.data`): every
instruction of the drawn modules, the kernels, the folds (strings and scopes in the shared
tables of :mod:`.tables`), and which drawn box holds which instructions (:mod:`.boxes`); the
drawn modules and views are :mod:`.sides`' :class:`Side` and :class:`ViewSpec`. Graphviz lays
out every picture in Python (:mod:`.build` for the first view; :mod:`.block_views`,
:mod:`.scope_views` and :mod:`.fusion_views` for what opens from it): when the page is written
(``ahead``: ``render -o x.html``, ``show --offline``), or when the served page asks for it
(:mod:`.on_demand`: ``show``); the script only swaps SVGs, highlights, and fills a side panel.
:mod:`.page` embeds script and data safely.

Entry points, one per kind of page: :func:`pair_payload` (``show``, ``render --stage both``),
:func:`module_payload` (``render`` of one module) and :func:`diff_payload` (``diff``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from .block_views import block_expansions
from .build import Bounds, Screen, first_view, top_view
from .on_demand import ON_DEMAND_NOTE, OnDemand
from .fusion_views import fusion_expansions
from .scope_views import closed_scopes, scope_expansions
from .data import ExplorerData, Side, ViewSpec, explorer_data, plain_name
from .page import ExplorerPayload, explorer_payload
from .pairs import Pairing
from .steps import PassSteps, pass_steps, step_data, with_steps

if TYPE_CHECKING:
    from ....analysis import Analysis
    from ....analysis.scopes import ScopeTree
    from ....ir import HloModule, Instruction
    from ...pictures import Picture
    from ...views import Mark, View
    from ...layout.wrap import Wrap

__all__ = ["Bounds", "ExplorerData", "Screen", "block_expansions", "first_view", "ExplorerPayload", "PassSteps", "Side", "ViewSpec", "diff_payload",
           "explorer_data", "explorer_payload", "module_payload", "pair_payload", "pass_steps"]

SourceLookup = Callable[[str], "dict | None"]

#: The bounds a caller that names none gets (``Bounds`` is frozen, so one shared value is safe).
DEFAULT_BOUNDS = Bounds()


def _pair_payload(pre: HloModule, post: HloModule, analysis: Analysis, picture: Picture, *,
                  lookup: SourceLookup | None = None, texts: tuple[str | None, str | None] = (None, None),
                  post_marks: Mapping[str, Mark] | None = None, bounds: Bounds = DEFAULT_BOUNDS,
                  steps: PassSteps | None = None, info: Mapping | None = None,
                  color_by: str = "kernel", ahead: bool = True,
                  post_tree: ScopeTree | None = None) -> ExplorerPayload:
    """:func:`pair_payload`'s work."""
    from ...pictures import pair_picture
    from ...layout.sidebyside import pre_marks

    drawn_with = picture.views[0][1].options if picture.views else None

    def redraw(budget: int, wrap: Wrap) -> Picture:
        assert drawn_with is not None
        return pair_picture(pre, post, analysis, options=replace(drawn_with, budget=budget), title=picture.title,
                            timeout=bounds.timeout, info=info, color_by=color_by, wrap=wrap)

    shown = first_view(picture, redraw, bounds.screen, _search_seconds(bounds)) \
        if drawn_with is not None and bounds.seconds > 0 else picture
    picture, whole = shown, picture

    sides = [Side("pre", "before optimization", pre, None, texts[0]),
             Side("post", "after optimization", post, analysis.kernels, texts[1], _tree=post_tree)]
    columns = [(i, view) for i, (_, view) in enumerate(picture.views[:2])]
    views = [top_view(picture.title, columns)]
    walk = pre.instruction_count + post.instruction_count
    candidates: dict[str, int] = {}
    if not ahead or bounds.max_walk // 2 >= walk:  # drawn ahead, the layers' pictures are bounded
        candidates = closed_scopes(sides[0], columns[0][1])
        for path, n in closed_scopes(sides[1], columns[1][1]).items():
            candidates[path] = candidates.get(path, 0) + n

    def draw(path: str):
        from ...pictures import pair_picture
        from ...views import ViewOptions

        tree = sides[0].scope_tree()
        scope = tree.get(path) or sides[1].scope_tree().get(path)
        label = plain_name(scope.display_path if scope is not None else path)
        pic = pair_picture(pre, post, analysis, options=ViewOptions(scope=path, budget=bounds.budget),
                           title=f"{label} (layer)", timeout=bounds.timeout, info=info, color_by=color_by)
        if pic.svg is None:
            return None
        return label, [(i, view) for i, (_, view) in enumerate(pic.views[:2])], pic.svg.decode("utf-8")

    def inner(path: str, drawn: list[tuple[int, View]]) -> dict[str, int]:
        found: dict[str, int] = {}
        for i, view in drawn:
            for sub, n in closed_scopes(sides[i], view, within=path).items():
                found[sub] = found.get(sub, 0) + n
        return found

    top = [(t, i, v) for i, (t, v) in enumerate(picture.views[:2])]
    marks = (pre_marks(analysis, pre, color_by), post_marks)
    demand: OnDemand | None = None
    if ahead:
        layers = scope_expansions(candidates, draw, walk=walk, bounds=bounds, inner=inner)
        views += layers
        blocks = block_expansions(sides, top, marks=marks, bounds=_blocks_share(bounds), title=picture.title,
                                  wrap=picture.wrap, pairing=Pairing.of(analysis.mapping), info=info)
        views += blocks
        drawn = [("top", columns[1][1])] + [(v.key, view) for v in layers + blocks for i, view in v.columns if i == 1]
        walked = len(layers) * walk + _walked(blocks, sides)
        views += fusion_expansions(1, sides[1], drawn, marks=post_marks, bounds=bounds, walked=walked, info=info)
    else:
        demand = OnDemand(sides, layer=draw, inner=inner, marks=marks, budget=bounds.budget, timeout=bounds.timeout,
                          title=picture.title, wrap=picture.wrap, pairing=Pairing.of(analysis.mapping), info=info)
    every_side, every_view = with_steps(sides, views, steps)
    data = explorer_data(every_side, every_view, analysis=analysis, lookup=lookup, title=picture.title)
    step_data(data.main, len(sides), steps)
    return _on_demand(data, demand, top, candidates,
                      lambda: _shown(explorer_payload(data), picture, whole, bounds.screen))


def _module_payload(module: HloModule, stage: str, picture: Picture, *, text: str | None = None,
                    lookup: SourceLookup | None = None, marks: Mapping[str, Mark] | None = None,
                    bounds: Bounds = DEFAULT_BOUNDS, steps: PassSteps | None = None,
                    info: Mapping | None = None, ahead: bool = True) -> ExplorerPayload:
    """:func:`module_payload`'s work."""
    from ....analysis.kernels import kernels
    from ...pictures import module_picture

    drawn_with = picture.views[0][1].options if picture.views else None

    def redraw(budget: int, wrap: Wrap) -> Picture:
        assert drawn_with is not None
        return module_picture(module, options=replace(drawn_with, budget=budget), marks=marks, title=picture.title,
                              timeout=bounds.timeout, info=info, wrap=wrap)

    shown = first_view(picture, redraw, bounds.screen, _search_seconds(bounds)) \
        if drawn_with is not None and bounds.seconds > 0 else picture
    picture, whole = shown, picture

    label = "before optimization" if stage == "pre" else "after optimization"
    side = Side(stage, label, module, kernels(module) if module.is_scheduled or stage == "post" else None, text)
    view = picture.views[0][1]
    views = [top_view(picture.title, [(0, view)])]

    def draw(path: str):
        from ...pictures import module_picture
        from ...views import ViewOptions

        scope = side.scope_tree().get(path)
        label = plain_name(scope.display_path if scope is not None else path)
        pic = module_picture(module, options=ViewOptions(scope=path, budget=bounds.budget), marks=marks,
                             title=f"{label} (layer)", timeout=bounds.timeout, info=info)
        if pic.svg is None:
            return None
        return label, [(0, pic.views[0][1])], pic.svg.decode("utf-8")

    walk = module.instruction_count
    top = [(picture.views[0][0], 0, view)]
    demand: OnDemand | None = None
    candidates: dict[str, int] = {}

    def inner(path: str, drawn: list[tuple[int, View]]) -> dict[str, int]:
        return closed_scopes(side, drawn[0][1], within=path)

    if ahead:
        layers = scope_expansions(closed_scopes(side, view) if bounds.max_walk // 2 >= walk else {}, draw, walk=walk,
                                  bounds=bounds, inner=inner)
        views += layers
        blocks = block_expansions([side], top, marks=(marks,), bounds=_blocks_share(bounds), wrap=picture.wrap,
                                  info=info)
        views += blocks
        drawn = [("top", view)] + [(v.key, v.columns[0][1]) for v in layers + blocks]
        views += fusion_expansions(0, side, drawn, marks=marks, bounds=bounds,
                                   walked=len(layers) * walk + _walked(blocks, [side]), info=info)
    else:
        demand = OnDemand([side], layer=draw, inner=inner, marks=(marks,), budget=bounds.budget,
                          timeout=bounds.timeout, wrap=picture.wrap, info=info)
        candidates = closed_scopes(side, view)
    every_side, every_view = with_steps([side], views, steps)
    data = explorer_data(every_side, every_view, lookup=lookup, title=picture.title)
    step_data(data.main, 1, steps)
    return _on_demand(data, demand, top, candidates,
                      lambda: _shown(explorer_payload(data), picture, whole, bounds.screen))


def pair_payload(pre: HloModule, post: HloModule, analysis: Analysis, picture: Picture, *,
                 lookup: SourceLookup | None = None, texts: tuple[str | None, str | None] = (None, None),
                 post_marks: Mapping[str, Mark] | None = None, bounds: Bounds = DEFAULT_BOUNDS,
                 steps: PassSteps | None = None, info: Mapping | None = None,
                 color_by: str = "kernel", ahead: bool = True,
                 post_tree: ScopeTree | None = None) -> ExplorerPayload:
    """The explorer of a pre/post pair drawn side by side in ``picture`` (``steps``: the pass
    history's snapshots, drawn by :func:`pass_steps`, follow as sides and views of their own).
    The page shows first the finest cut that fits a screen (:func:`first_view`; ``info`` and
    ``color_by`` as ``picture`` was drawn: the capture's parameter names, the kernels' colours).
    ``ahead``: lay out what opens from it now, within ``bounds``; else the payload's
    :attr:`~.page.ExplorerPayload.on_demand` draws each when the page asks (:mod:`.on_demand`).
    ``post_tree``: ``post``'s scope tree with ``analysis``' kernels, where the caller has built it.

    Every picture of the page redraws ``pre`` or ``post`` whole; their scope trees and trees of
    units are built once for all of them (:func:`~hloviz.render.reuse.drawings_reused`)."""
    from ...reuse import drawings_reused
    from ...layout.runs.dotserver import dot_servers

    with drawings_reused(), dot_servers():
        return _pair_payload(pre, post, analysis, picture, lookup=lookup, texts=texts, post_marks=post_marks,
                             bounds=bounds, steps=steps, info=info, color_by=color_by, ahead=ahead,
                             post_tree=post_tree)


def module_payload(module: HloModule, stage: str, picture: Picture, *, text: str | None = None,
                   lookup: SourceLookup | None = None, marks: Mapping[str, Mark] | None = None,
                   bounds: Bounds = DEFAULT_BOUNDS, steps: PassSteps | None = None,
                   info: Mapping | None = None, ahead: bool = True) -> ExplorerPayload:
    """The explorer of one module drawn alone in ``picture`` (``steps``, ``info``, the first
    view and ``ahead`` as :func:`pair_payload`; the module's scope trees built once for all its
    pictures)."""
    from ...reuse import drawings_reused
    from ...layout.runs.dotserver import dot_servers

    with drawings_reused(), dot_servers():
        return _module_payload(module, stage, picture, text=text, lookup=lookup, marks=marks, bounds=bounds,
                               steps=steps, info=info, ahead=ahead)


def _on_demand(data: ExplorerData, demand: OnDemand | None, top: list, layers: Mapping[str, int],
               payload: Callable[[], ExplorerPayload]) -> ExplorerPayload:
    """The page's payload (``payload()``), its detail drawn when asked for where ``demand`` is
    given: the placeholders of what the first picture opens follow the page's views, and the
    page says how they open."""
    offered = demand.start(data.boxes, top, layers) if demand is not None and data.boxes is not None else []
    if not offered:  # nothing opens from the first picture: the page is whole as it is
        return payload()
    data.main["views"] += offered
    return replace(payload(), notes=(ON_DEMAND_NOTE,), on_demand=demand)


def _search_seconds(bounds: Bounds) -> float:
    """How long the first view's search may lay out pictures: a third of the explorer's seconds
    (a safety net for a module whose pictures take seconds each: the search's own bound is
    ``Screen.tries`` layouts, which keeps the page the same from run to run; one stopped early
    shows the finest cut it found to fit)."""
    return bounds.seconds / 3


def _blocks_share(bounds: Bounds) -> Bounds:
    """The part of ``bounds`` the blocks and repeats opened in place may walk: an eighth (layers
    take up to half, fusions the rest; a first view fitted to a screen closes few blocks)."""
    return replace(bounds, max_walk=bounds.max_walk // 8)


def _walked(views: Sequence[ViewSpec], sides: Sequence[Side]) -> int:
    """Instructions the block views walked: each drew one side's module (``t:<side>:…``)."""
    count = {s.key: s.module.instruction_count for s in sides}
    return sum(count.get(v.key.split(":", 2)[1], 0) for v in views)


def _shown(payload: ExplorerPayload, shown: Picture, whole: Picture, screen: Screen) -> ExplorerPayload:
    """``payload`` with the picture the page shows first, when it is not the one drawn for it."""
    if shown is whole or shown.svg is None:
        return payload
    most = max((v.options.budget for _, v in shown.views if v.options is not None), default=screen.nodes)
    budget = max((v.options.budget for _, v in whole.views if v.options is not None), default=most)
    wrapped = " (long columns wrapped into parts side by side)" if shown.wrap.active and not whole.wrap.active else ""
    note = (f"the explorer's first view: the finest cut that fits a {screen.width}×{screen.height} screen "
            f"(at most {most} boxes a column, text at {screen.scale:g}× or more){wrapped}; double-click a closed "
            f"box, or Tab to it and press Enter, to open it in place (with its counterpart in the other column); "
            f"the whole picture ({budget} boxes a column) is what hloviz render --budget {budget} -o picture.svg "
            f"draws")
    from ..page import for_page

    svg = for_page(shown.svg.decode("utf-8"), title=shown.title)
    return replace(payload, picture_svg=svg, picture_notes=(note, *shown.notes))


def diff_payload(before: tuple[str, HloModule], after: tuple[str, HloModule], picture: Picture,
                 pairs: Sequence[tuple[Instruction, Instruction, str]], *,
                 marks: tuple[Mapping[str, Mark] | None, Mapping[str, Mark] | None] = (None, None),
                 bounds: Bounds = DEFAULT_BOUNDS) -> ExplorerPayload:
    """The explorer of a diff: two modules in columns, matched kernels paired (each module's
    scope trees built once for all its fusions' pictures)."""
    from ....analysis.kernels import kernels
    from ...reuse import drawings_reused
    from ...layout.runs.dotserver import dot_servers

    sides = [Side("before", before[0], before[1], kernels(before[1])),
             Side("after", after[0], after[1], kernels(after[1]))]
    columns = [(i, view) for i, (_, view) in enumerate(picture.views[:2])]
    views = [top_view(picture.title, columns)]
    half = Bounds(bounds.max_views // 2, bounds.max_bytes // 2, bounds.budget, bounds.timeout, bounds.max_walk // 2,
                  bounds.seconds / 2, max_fusions=bounds.max_fusions // 2)
    with drawings_reused(), dot_servers():
        for i in (0, 1):
            views += fusion_expansions(i, sides[i], columns[i][1], marks=marks[i], bounds=half)
    return explorer_payload(explorer_data(sides, views, pairs=pairs, title=picture.title))
