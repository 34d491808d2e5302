"""The pass history in the explorer: each drawn snapshot as a side and a view of its own.

A pass history (:mod:`hloviz.analysis.passes`) says which of XLA's passes changed the module
and what each made. In the report, the steps that changed the module most get a picture each
(the rules and node budget of the explorer's other pictures, :class:`~.build.Bounds`); every
drawn snapshot is a :class:`~.data.Side` of the page, so search, layers (scopes), the side
panel and the breadcrumb work in it as in the optimized module's picture.

The credits (which pass made a fusion, which wrote a folded constant) are written as
:func:`hloviz.analysis.passes.report.fusion_credit_json` and
:func:`~hloviz.analysis.passes.report.fold_credit_json` give them to ``hloviz passes --json``:
one function decides both.

Bounded like the other expansions: at most ``pictures`` steps (the biggest changes first, by
:func:`steps_to_draw`), no more than :attr:`Bounds.max_views`, instructions walked within
:attr:`Bounds.max_walk`, SVG within :attr:`Bounds.max_bytes`, and none started after
:attr:`Bounds.seconds`; a step without a picture keeps its card, counts and credits.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ....errors import HlovizError
from .build import Bounds
from .sides import Side, ViewSpec, plain_name

if TYPE_CHECKING:
    from ....analysis.passes import HistoryStep, PassHistory
    from ....ir import HloModule
    from ...views import Mark

__all__ = ["PassSteps", "pass_steps", "step_layers", "step_marks", "steps_to_draw"]

#: ``load(index)``: the snapshot's module and the text it was read from, or None (unreadable).
StepLoader = Callable[[int], "tuple[HloModule, str | None] | None"]


def _weight(s: HistoryStep) -> int:
    """How much a step changed: fusions made first, then new constant values, then instructions."""
    c = s.changes
    if c is None:
        return 0
    return 1000 * len(c.fusions_created) + 100 * len(c.constants_new) + len(c.added) + len(c.removed) + len(c.changed)


def steps_to_draw(history: PassHistory, pictures: int) -> list[HistoryStep]:
    """The steps that changed the module, at most ``pictures`` of them (the biggest changes),
    in the order XLA wrote them."""
    changed = [s for s in history.steps if s.changed]
    if len(changed) <= pictures:
        return changed
    keep = {id(s) for s in sorted(changed, key=_weight, reverse=True)[:max(pictures, 0)]}
    return [s for s in changed if id(s) in keep]


def step_marks(module: HloModule, s: HistoryStep) -> dict[str, Mark]:
    """In the picture after step ``s``: the fusions its pass made (badge "new") and the constants
    it wrote (highlighted), each with a row naming the pass."""
    from ...views import Mark

    c = s.changes
    if c is None:
        return {}
    made, added = set(c.fusions_created), set(c.added)
    marks: dict[str, Mark] = {}
    for inst in module.instructions():
        if inst.name in made:
            marks[inst.name] = Mark(badge="new", highlight=True, note=f"made here by {s.step.pass_name}")
        elif inst.opcode == "constant" and inst.name in added:
            marks[inst.name] = Mark(highlight=True, note=f"written here by {s.step.pass_name}")
    return marks


@dataclass
class PassSteps:
    """What the pass history adds to an explorer page: the drawn snapshots as sides and views,
    and the ``passes`` block of its data (every step with its counts, the credits)."""

    sides: list[Side] = field(default_factory=list)
    views: list[ViewSpec] = field(default_factory=list)
    data: dict = field(default_factory=dict)


def view_key(index: int) -> str:
    """The view key of snapshot ``index``'s picture (the page's ``#v=step:16`` opens it)."""
    return f"step:{index}"


def pass_steps(history: PassHistory, load: StepLoader, *, final_side: str = "post", bounds: Bounds | None = None,
               pictures: int = 12, source: str = "") -> PassSteps:
    """The snapshots of ``history`` worth a picture, drawn within ``bounds`` (see the module
    docstring); ``final_side`` is the key of the side holding the optimized module (whose fusions and
    folded constants the credits name)."""
    from ....analysis.passes.report import describe_changes, fold_credit_json, fusion_credit_json
    from ...layout.runs.dotserver import dot_servers
    from ...reuse import drawings_reused

    out = PassSteps()
    bounds = bounds or Bounds()
    started = time.monotonic()
    with drawings_reused(), dot_servers():  # a snapshot and each of its layers' pictures: one scope tree
        drawn = _draw(history, load, bounds, pictures)
        for side, view in drawn:
            out.sides.append(side)
            out.views.append(view)
        left = bounds.seconds - (time.monotonic() - started)
        out.views += step_layers(drawn, Bounds(bounds.max_views, bounds.max_bytes, bounds.budget, bounds.timeout,
                                               bounds.max_walk, left),
                                 used_bytes=sum(len(v.svg or "") for v in out.views))
    keys = {int(v.key.split(":", 1)[1]): v.key for _, v in drawn}  # the steps' own views (not their layers')
    steps = []
    for s in history.steps:
        c = s.changes
        steps.append({"index": s.step.index, "label": s.step.label, "pipeline": s.step.pipeline,
                      "pass": s.step.pass_name, "instructions": s.instructions, "fusions": s.fusions,
                      "changed": s.changed, "problem": s.problem,
                      "what": describe_changes(c) if c is not None and s.changed else "",
                      "made": list(c.fusions_created) if c is not None else [],
                      "view": keys.get(s.step.index), "side": f"s{s.step.index}" if s.step.index in keys else None})
    out.data = {"module": history.module, "source": source, "final": final_side, "steps": steps,
                "fusions": [fusion_credit_json(f) for f in history.fusions],
                "folded": [fold_credit_json(f) for f in history.folded],
                "problems": list(history.problems), "pictures": len(drawn),
                "changed": len(history.changed_steps)}
    return out


def _draw(history: PassHistory, load: StepLoader, bounds: Bounds, pictures: int) -> list[tuple[Side, ViewSpec]]:
    """Lay out the chosen snapshots, as many at once as the fusion expansions do (``dot`` runs
    are processes of their own); none starts after the deadline."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    from ...pictures import module_picture
    from ...views import ViewOptions

    deadline = time.monotonic() + bounds.seconds
    walked = 0
    chosen: list[tuple[HistoryStep, HloModule, str | None]] = []
    for s in steps_to_draw(history, min(pictures, bounds.max_views)):
        n = s.instructions or 0
        if walked + n > bounds.max_walk:
            break
        loaded = load(s.step.index)
        if loaded is not None:
            walked += n
            chosen.append((s, *loaded))

    def draw(choice: tuple[HistoryStep, HloModule, str | None]):
        s, module, _ = choice
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        try:
            return module_picture(module, options=ViewOptions(budget=bounds.budget), marks=step_marks(module, s),
                                  title=f"after #{s.step.index} {s.step.label}",
                                  timeout=max(0.05, min(bounds.timeout, left)))
        except HlovizError:
            return None  # no layout in time: the step keeps its card and counts

    with ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1))) as pool:
        pictures_drawn = list(pool.map(draw, chosen))
    out: list[tuple[Side, ViewSpec]] = []
    total = 0
    for (s, module, text), pic in zip(chosen, pictures_drawn):
        if pic is None or pic.svg is None:
            continue
        svg = pic.svg.decode("utf-8")
        if total + len(svg) > bounds.max_bytes:
            continue
        total += len(svg)
        title = f"after #{s.step.index} {s.step.label}"
        side = Side(f"s{s.step.index}", title, module, None, text)
        view = ViewSpec(key=view_key(s.step.index), title=title, columns=[(len(out), pic.views[0][1])], svg=svg,
                        parent="top")
        out.append((side, view))
    return out


def step_layers(drawn: Sequence[tuple[Side, ViewSpec]], bounds: Bounds, used_bytes: int = 0) -> list[ViewSpec]:
    """The layers each snapshot's picture draws closed, drawn open (as the optimized module's
    layers are, :func:`~.scope_views.scope_expansions`), so a layer opens in place at every step.

    Bounded together: :attr:`Bounds.max_views` layer pictures shared evenly by the steps, the SVG
    bytes the step pictures left, and the deadline. A layer's view key is the step's key and the
    layer's (``step:16|s:model/conv``); it opens ``s:PATH`` like any layer view (the page's script
    opens the one drawn from the picture on screen)."""
    from .scope_views import closed_scopes, scope_expansions

    if not drawn:
        return []
    each = bounds.max_views // len(drawn)
    out: list[ViewSpec] = []
    deadline = time.monotonic() + bounds.seconds
    left_bytes = bounds.max_bytes - used_bytes
    for k, (side, view) in enumerate(drawn):
        seconds = deadline - time.monotonic()
        walk = side.module.instruction_count
        if each <= 0 or seconds <= 0 or left_bytes <= 0 or bounds.max_walk // 2 < walk:
            break
        picture = view.columns[0][1]

        def draw(path: str, side: Side = side, k: int = k):
            from ...pictures import module_picture
            from ...views import ViewOptions

            scope = side.scope_tree().get(path)
            label = plain_name(scope.display_path if scope is not None else path)
            pic = module_picture(side.module, options=ViewOptions(scope=path, budget=bounds.budget),
                                 title=f"{label} (layer, {side.label})", timeout=bounds.timeout)
            if pic.svg is None:
                return None
            return label, [(k, pic.views[0][1])], pic.svg.decode("utf-8")

        def inner(path: str, columns, side: Side = side) -> dict[str, int]:
            return closed_scopes(side, columns[0][1], within=path)

        mine = Bounds(each, left_bytes, bounds.budget, bounds.timeout, bounds.max_walk, seconds)
        layers = scope_expansions(closed_scopes(side, picture), draw, walk=walk, bounds=mine, parent=view.key,
                                  inner=inner)
        for v in layers:
            left_bytes -= len(v.svg or "")
            v.parent = view.key if v.parent == view.key else f"{view.key}|{v.parent}"
            v.key = f"{view.key}|{v.key}"
        out += layers
    return out


def with_steps(sides: Sequence[Side], views: Sequence[ViewSpec], steps: PassSteps | None
               ) -> tuple[list[Side], list[ViewSpec]]:
    """The page's own sides and views followed by the drawn snapshots' (when there are any): a
    snapshot's view draws the side after the page's own ones (its column is re-numbered)."""
    if steps is None:
        return list(sides), list(views)
    own = len(sides)
    moved = [ViewSpec(v.key, v.title, [(own + k, view) for k, view in v.columns], v.svg, v.parent, v.opens)
             for v in steps.views]
    return list(sides) + steps.sides, list(views) + moved


def step_data(main: dict, own_sides: int, steps: PassSteps | None) -> None:
    """Add the ``passes`` block and ``base`` (how many sides are the page's own, before the
    snapshots) to the explorer's data ``main``."""
    main["base"] = own_sides
    if steps is not None:
        main["passes"] = steps.data

