"""The graph of units a picture is drawn from (:class:`~hloviz.render.tree.model.ViewGraph`),
for :func:`hloviz.render.views.draw_module`.

In: a module, the caller's marks and :class:`~hloviz.render.views.ViewOptions`. Out: the drawn
computations placed, their instructions classified, the units (one instruction or a chain) and
the arrows between them (:mod:`hloviz.render.tree.units` holds the rules), with ``--scope`` or
``--focus`` keeping only what they show. The graph of a whole computation is the same for every
budget, opened node and scope, so inside :func:`hloviz.render.reuse.drawings_reused` it is made
once and each picture draws on a copy (a scope's picture hides the rest of it); a focus decides
which instructions are nodes of their own, so a focused graph is always made anew.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from ..analysis.loops import runs_steps
from ..ir import Computation, HloModule, Instruction
from .cut.focus import focus_set, scope_set
from .reuse import kept_graph
from .tree.model import ViewGraph
from .tree.units import (
    classify,
    draw_focus_targets,
    fix_roots,
    hide,
    make_edges,
    make_units,
    place_computations,
    root_computation,
)

if TYPE_CHECKING:
    from .views import Mark, ViewOptions

__all__ = ["build_graph"]


def build_graph(module: HloModule, marks: Mapping[str, Mark], options: ViewOptions) -> ViewGraph:
    """The graph of units of ``options.computation`` (default: the entry) of ``module``."""
    roots = [root_computation(module, options.computation)]
    if not options.focus and not options.focus_names and not options.scope:
        # Cheap first look: the top level alone, every fusion and body as one node. If even that
        # is over budget, no cut that fits could open a fusion or a body, so this is the answer,
        # found without touching the (usually far larger) fused computations.
        g = _graph(module, marks, options, roots, nested=False)
        if (g.alive_count() > options.budget and not _steps_in_loops(roots[0])) or options.coarse:
            g.closed_fusions = True
            return g
    return _graph(module, marks, options, roots, nested=True)


def _steps_in_loops(comp: Computation) -> bool:
    """Does ``comp`` run training steps, or micro-batches of one, in a loop
    (:func:`~hloviz.analysis.loops.runs_steps`)? Then the first look's count says nothing: the
    loop's body is most of the picture, its layers grouped as a step's are (over budget at the
    top, the loop was one closed box holding every layer)."""
    return any(inst.opcode == "while" and runs_steps(inst) for inst in comp.instructions)


def _graph(module: HloModule, marks: Mapping[str, Mark], options: ViewOptions, roots: list[Computation],
           *, nested: bool) -> ViewGraph:
    """The units of ``roots`` (``nested``: with their fusions and bodies placed), made once per
    :func:`~hloviz.render.reuse.drawings_reused` block; ``--scope`` hides all but the scope on
    the copy a picture gets."""
    if options.focus or options.focus_names is not None:
        return _focused(module, marks, options, roots, nested)
    # every unit of the drawn computations, the same for each budget, opened node and scope
    key = (id(module), tuple(c.name for c in roots), replace(options, budget=0, open=(), scope=None), nested)
    g = kept_graph(key, (module,), (dict(marks),), lambda: _units(_placed(module, marks, options, roots, nested),
                                                                  options, []))
    if options.scope:
        visible, note = scope_set(g, options.scope)
        g.notes.append(note)
        hide(g, visible)
    return g


def _placed(module: HloModule, marks: Mapping[str, Mark], options: ViewOptions, roots: list[Computation],
            nested: bool) -> ViewGraph:
    """The drawn computations placed and their instructions classified (no units yet)."""
    g = ViewGraph(module, marks)
    place_computations(g, roots, nested=nested)
    for place in list(g.places.values()):
        classify(g, place, options)
    fix_roots(g)
    return g


def _units(g: ViewGraph, options: ViewOptions, targets: list[Instruction]) -> ViewGraph:
    make_units(g, options, targets)
    make_edges(g)
    return g


def _focused(module: HloModule, marks: Mapping[str, Mark], options: ViewOptions, roots: list[Computation],
             nested: bool) -> ViewGraph:
    """``--focus`` (or the other column's ``focus_names``): the units near the focused
    instructions, within ``--scope`` where one is given; the focused ones drawn as nodes."""
    g = _placed(module, marks, options, roots, nested)
    targets: list[Instruction] = []
    visible: set[int] | None = None
    if options.scope:
        visible, note = scope_set(g, options.scope)
        g.notes.append(note)
    want: str | list[Instruction] = options.focus or ""
    if options.focus_names is not None:
        want = [i for c in g.computations for i in c.instructions if i.name in set(options.focus_names)]
    if isinstance(want, list) and not want:
        visible = set()
        g.notes.append(f"focus: {options.focus or 'the focused instructions'} left no trace in this module")
    else:
        targets, near, note = focus_set(g, want, options.radius, label=options.focus)
        visible = near if visible is None else visible & near
        g.notes.append(note)
        g.focus = {id(t) for t in targets}
        draw_focus_targets(g, targets)
    _units(g, options, targets)
    hide(g, visible)
    return g
