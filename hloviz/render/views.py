"""A module → a :class:`~hloviz.render.scene.Scene`: which instructions become which nodes.

The drawing rules, familiar from XLA's own graph dumps:

* each fusion is a grey cluster labelled with its name, kind and op count; its fused
  parameters are not drawn — the arrow comes straight from the fusion's operand;
* constants of at most 8 elements are written into their users' labels (``operand 1 = 1000``),
  and so is a ``broadcast`` of one inside a fusion or before optimization;
* ``get-tuple-element`` of a ``tuple`` is an arrow from the tuple's operand; other
  ``get-tuple-element`` are arrows labelled ``[k]``; a tuple read only that way is not drawn;
* while/conditional/call bodies are clusters, linked to their caller by a dashed arrow;
  ``to_apply`` reducers are named in the caller's header (``reduce (add)``);
* parameters are orange, the root says ``ROOT``; operand indices label arrows into ops whose
  operand order matters;
* chains of one elementwise op become one node (:func:`hloviz.render.tree.units.find_chains`).

:mod:`~hloviz.render.tree.units` applies these rules: the module becomes a graph of units
(:mod:`~hloviz.render.view_graph`, made once for many pictures of one module inside
:func:`~hloviz.render.reuse.drawings_reused`).

Then one path fits every picture to its node budget, with op names or without, before or after
optimization, whole or focused (:func:`_draw_tree`):

1. **tree** (:mod:`~hloviz.render.tree.layers`, :mod:`~hloviz.render.tree.tree`) — the drawn units under
   the scopes of their op names where names carry them, under the fusion or body that holds
   them, and in blocks found by structure where names give nothing
   (:mod:`~hloviz.render.tree.structure`, :mod:`~hloviz.render.tree.blocks`); neighbouring blocks of
   the same structure folded into ``×N`` repeats;
2. **cut** — the deepest cut of that tree that fits the budget (``--depth`` counted from the
   user's function, not JAX's ``jit(f)`` around it; ``coarse`` keeps fusions and bodies closed;
   ``open`` opens a closed block, repeat or scope in place, as the explorer does);
3. **apply** — each node of the cut becomes one unit (:func:`hloviz.render.cut.apply.apply_cut`),
   each open node above it a cluster, and the notes say what was closed and why
   (:mod:`~hloviz.render.cut.notes`);
4. **scene** — :mod:`~hloviz.render.cut.assemble` turns the units into a
   :class:`~hloviz.render.scene.Scene` (arrows that would span many rows become stubs).

:func:`draw_module` is the entry point. Callers colour and annotate instructions through
:class:`Mark` (kernel numbers, "folded → …" notes, diff colours).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..analysis.loops import runs_steps
from ..collector import collector_paused
from ..ir import Computation, HloModule, Instruction, called_closure
from .cut import apply
from .cut.assemble import BODY_CALLERS, build_scene
from .cut.cut import UNUSED_OPENS, Cut, coarsen, fit, open_in_place, overview_closed
from .cut.notes import note_cut
from .cut.overview import fold_plumbing, name_blocks, unframe_phases
from .cut.weights import fold_weights
from .reuse import kept_tree
from .scene import Scene
from .tree import layers
from .tree.model import ViewGraph
from .tree.units import place_computations, root_computation, wrapping_call
from .view_graph import build_graph

__all__ = ["DETAIL_BUDGET", "OVERVIEW_BUDGET", "Mark", "View", "ViewOptions", "default_budget", "draw_module",
           "focus_targets"]

#: The node budget of a detailed picture (``--budget``'s value for ``show``, ``--scope``,
#: ``--focus``, ``--depth``, ``--computation`` and the explorer's opened blocks).
DETAIL_BUDGET = 300
#: The node budget of the overview: what ``render`` and ``diff -o`` draw of a whole module when
#: no ``--budget`` is given (issue 33). The same cut machinery as every picture, fitted to fewer
#: nodes: the model's top-level blocks, repeats folded ``×N``. Measured on the saved captures
#: (benchmarks/overview_bench.py): 40 nodes made InceptionV3 2,175 × 3,732 pt, 25 made it
#: 1,388 × 2,256 pt — a page's longer side of at most 2,500 pt needs about 24.
OVERVIEW_BUDGET = 24


def default_budget(budget: int | None, *, whole: bool) -> int:
    """``budget`` where one was given; otherwise the overview's for a picture of the ``whole``
    module, the detailed one for a part of it (a scope, a focus, a computation, a depth)."""
    if budget is not None:
        return budget
    return OVERVIEW_BUDGET if whole else DETAIL_BUDGET


@dataclass(frozen=True)
class Mark:
    """How a caller wants one instruction drawn (all optional).

    ``fill``/``border``/``font`` override the category colours; ``badge`` is a short tag (a
    kernel number) on ``badge_fill``; ``note`` adds a label row ("folded → constant.9 = 10");
    ``highlight`` draws a thick border (or a highlighted row, for a constant written into its
    user's label); ``dashed`` a dashed border; ``kernels`` the kernel numbers the instruction's
    work went into (a closed scope counts and badges them). Chains only join instructions with
    equal marks. ``heat`` is the value a heat overlay coloured it by (a closed scope takes the
    colour of its hottest kernel). ``into``: for a value XLA folded into a constant, the op names
    whose work reads that constant now; a user outside them still reads the value as it was
    (``round(x * 8) / 8``: the division reads 0.125, folded from the 8, the multiplication
    the 8 itself) and is not told of the fold (None: every user is).
    """

    fill: str | None = None
    border: str | None = None
    font: str | None = None
    badge: str | None = None
    badge_fill: str = "#ffffff"
    note: str | None = None
    highlight: bool = False
    dashed: bool = False
    kernels: tuple[int, ...] = ()
    heat: int | None = None
    into: frozenset[str] | None = None


@dataclass(frozen=True)
class ViewOptions:
    """What to draw. ``budget`` is the most nodes a picture gets.

    ``computation`` draws one computation (and what it calls) instead of the entry; ``focus``
    draws the instructions within ``radius`` steps of one instruction; ``coarse`` keeps every
    fusion and body closed and draws no clusters (used when Graphviz timed out on the full
    view). Every picture is a cut of the module's tree fitted to the budget (see the module
    docstring): scopes from ``metadata.op_name`` when ``layers`` (no scope deeper than
    ``depth`` open, counted from the user's function), blocks found by structure where names
    give nothing; ``open`` lists tree keys (:attr:`View.cut`) to open in place after the fit.
    ``scope`` draws one scope (a path, a Keras layer name) and the kernels holding it. ``focus``
    may be an instruction, an op name, a scope or a unique substring (:func:`hloviz.render.cut.focus.resolve`);
    ``focus_names`` gives the focused instructions by name instead (the other column of a
    side-by-side picture: the kernels of the focused ops, or the ops of the focused kernels).
    """

    computation: str | None = None
    focus: str | None = None
    radius: int = 2
    expand_chains: bool = False
    min_chain: int = 3
    budget: int = DETAIL_BUDGET
    inline_elements: int = 8
    coarse: bool = False
    depth: int | None = None
    layers: bool = True
    scope: str | None = None
    focus_names: tuple[str, ...] | None = None
    open: tuple[str, ...] = ()


@dataclass(init=False)
class View:
    """A drawn module: the ``scene``, its ``notes``, and which node each instruction went into.

    ``node_of`` maps instruction names to scene node keys (instructions inside a closed
    scope, block or fusion map to its node; inlined constants and elided plumbing are absent).
    It is made on first read (``node_of_from``): a picture written to a file never reads it,
    and for a 300k-instruction module it is a dict of every instruction's name.
    ``cut`` and ``drawn_as`` (cut node key → scene node key) let an explorer move the cut
    (``ViewOptions(open=…)``, :func:`hloviz.render.cut.cut.open_in_place`) and redraw.
    A column drawn in a forked copy (:mod:`hloviz.render.beside`) comes back as its scene;
    its ``cut``, ``drawn_as`` and ``node_of`` come from ``drawn_here`` (the same view drawn in
    this process) on first read.
    """

    scene: Scene
    notes: list[str]
    instructions: int = 0
    levels: tuple[str, ...] = ()
    #: the options it was drawn with (the same options with ``open`` extended redraw it with a
    #: node of its cut opened in place)
    options: ViewOptions | None = None

    def __init__(self, scene: Scene, notes: list[str], node_of: dict[str, str] | None = None,
                 instructions: int = 0, levels: tuple[str, ...] = (), cut: Cut | None = None,
                 drawn_as: dict[str, str] | None = None, options: ViewOptions | None = None, *,
                 node_of_from: Callable[[], dict[str, str]] | None = None,
                 drawn_here: Callable[[], View] | None = None) -> None:
        self.scene, self.notes, self.instructions, self.levels = scene, notes, instructions, levels
        self._cut, self._drawn_as, self.options = cut, drawn_as if drawn_as is not None else {}, options
        self._node_of = node_of if node_of is not None or node_of_from is not None else {}
        self._node_of_from = node_of_from
        self._drawn_here = drawn_here

    def _here(self) -> None:
        """Take ``cut``, ``drawn_as`` and ``node_of`` from the view drawn here, once."""
        if self._drawn_here is not None:
            here, self._drawn_here = self._drawn_here(), None
            self._cut, self._drawn_as = here.cut, here.drawn_as
            self._node_of, self._node_of_from = here._node_of, here._node_of_from

    @property
    def cut(self) -> Cut | None:
        """The cut through the module's tree this picture draws (:mod:`hloviz.render.cut.cut`)."""
        self._here()
        return self._cut

    @cut.setter
    def cut(self, value: Cut | None) -> None:
        self._here()
        self._cut = value

    @property
    def drawn_as(self) -> dict[str, str]:
        """Which scene node draws each node of :attr:`cut`."""
        self._here()
        return self._drawn_as

    @drawn_as.setter
    def drawn_as(self, value: dict[str, str]) -> None:
        self._here()
        self._drawn_as = value

    @property
    def node_of(self) -> dict[str, str]:
        """Instruction name → scene node key (made on first read, then kept)."""
        self._here()
        if self._node_of is None:
            assert self._node_of_from is not None
            self._node_of, self._node_of_from = self._node_of_from(), None
        return self._node_of

    @node_of.setter
    def node_of(self, value: dict[str, str]) -> None:
        self._here()
        self._node_of, self._node_of_from = value, None

    @property
    def nodes(self) -> int:
        return len(self.scene.nodes)


def draw_module(module: HloModule, *, marks: Mapping[str, Mark] | None = None,
                options: ViewOptions = ViewOptions(), title: str | None = None,
                info: Mapping[str, Any] | None = None) -> View:
    """Decide what to draw of ``module`` and build its scene (pure; no Graphviz).

    ``info`` is a capture's ``capture.json``: its parameter names label the parameters
    (``block_5_expand/kernel``) and its source map puts the user's ``file:line`` in tooltips.
    """
    # Building allocates many small objects next to a big module; Python's cyclic GC would walk
    # the whole module again and again meanwhile (:mod:`hloviz.collector`).
    with collector_paused():
        return _draw(module, marks, options, title, info)


def _draw(module: HloModule, marks: Mapping[str, Mark] | None, options: ViewOptions, title: str | None,
          info: Mapping[str, Any] | None = None) -> View:
    from ..analysis.provenance import parameter_names

    alike = (dict(marks or {}), dict(info or {}))  # what the tree of units depends on, beside the options
    marks = marks or {}
    g = build_graph(module, marks, options)
    g.param_names = {p.name: name for p, name in parameter_names(module, info).items()}
    g.source_map = (info or {}).get("source_map") or {}
    notes = list(g.notes)
    top = g.computations[0] if g.computations else None
    if options.computation is None and top is not None and top is not module.entry:
        _name_through_the_call(g, module, top)
        notes.append(f"the entry computation only calls {top.name}: drawn is what it calls")
    levels = list(g.levels)
    _draw_tree(g, marks, options, notes, levels, alike)
    scene = build_scene(g, title if title is not None else _default_title(module, options), notes)
    if options.budget <= OVERVIEW_BUDGET:
        scene.small_pt = 10  # a picture this small has room for every label at 10 pt (issue 33)
    notes = scene.notes
    drawn_as: dict[str, str] = {}
    if g.cut is not None:
        for node in g.cut.nodes:
            leaf = next(g.cut.tree.leaves(node), None)
            if leaf is not None:
                index = g.find(int(leaf.name[1:]))
                if g.units[index].alive:
                    drawn_as[node.key] = f"u{index}"
    return View(scene, notes, None, sum(len(c.instructions) for c in g.computations), tuple(levels),
                g.cut, drawn_as, options, node_of_from=_node_of_later(g))


def _name_through_the_call(g: ViewGraph, module: HloModule, top: Computation) -> None:
    """``top``'s parameters named as the entry's arguments the wrapping call passes them
    (:func:`~.tree.units.unwrapped`): ``x``, ``y``, a weight's path, not ``Arg_14.17``."""
    call = wrapping_call(module, top)
    if call is None:
        return
    params = {p.parameter_number: p for p in top.instructions if p.opcode == "parameter"}
    for k, op in enumerate(call.operands):
        name = g.param_names.get(op.name)
        if name is not None and k in params:
            g.param_names.setdefault(params[k].name, name)


def _node_of_later(g: ViewGraph) -> Callable[[], dict[str, str]]:
    """How to make :attr:`View.node_of` when it is first read: what it needs of ``g`` is taken
    now (each live unit's key and members, the callers whose undrawn callees map to them, the
    drawn computations' names), so a view kept unread (the explorer holds a page's pictures)
    does not keep the whole graph of units alive."""
    units = [(f"u{u.index}", u.members) for u in g.units if u.alive]
    # and those folded into another unit's box (a weight, an optimizer's setting: weights.fold_weights)
    units += [(f"u{g.find(u.index)}", u.members) for u in g.units
              if not u.alive and g.find(u.index) != u.index and g.units[g.find(u.index)].alive]
    kind = g.kind
    callers = {id(m) for _key, members in units for m in members
               if m.called_computations and m.opcode in _DRAWN_CALLERS and id(m) in kind}
    drawn = set(g.places)

    def node_of() -> dict[str, str]:
        out: dict[str, str] = {}
        setdefault = out.setdefault
        for key, members in units:
            for m in members:
                out[m.name] = key
                if id(m) in callers:  # its undrawn callees' instructions (every fused one of a big module)
                    for comp in called_closure(m.called_computations, keep=lambda c: c.name not in drawn):
                        for inner in comp.instructions:
                            setdefault(inner.name, key)
        return out

    return node_of


_DRAWN_CALLERS = BODY_CALLERS | {"fusion"}


def focus_targets(module: HloModule, options: ViewOptions) -> list[str]:
    """The names of the instructions ``options.focus`` stands for in ``module`` (an
    :class:`~hloviz.errors.InputError` with the closest names when none)."""
    from .cut.focus import resolve

    g = ViewGraph(module, {})
    place_computations(g, [root_computation(module, options.computation)])
    return [i.name for i in resolve(g, options.focus or "")[0]]


def _default_title(module: HloModule, options: ViewOptions) -> str:
    return f"{module.name} · {options.computation}" if options.computation else module.name


# --- the tree and its cut ---------------------------------------------------------------

def _has_scopes(g: ViewGraph, options: ViewOptions) -> bool:
    """Whether the drawn computation's op names carry scopes to draw (checked on a sample:
    metadata is parsed on first use)."""
    if not options.layers:
        return False
    top = g.computations[0].instructions if g.computations else []
    if any("/" in i.metadata.op_name for i in top[:: max(1, len(top) // 2000)]):
        return True
    # (or the body of a loop running the steps, below a top level that only starts it)
    bodies = [i for p in g.places.values() if p.role == "body" and p.owner is not None and runs_steps(p.owner)
              for i in p.computation.instructions]
    return any("/" in i.metadata.op_name for i in bodies[:: max(1, len(bodies) // 2000)])


def _draw_tree(g: ViewGraph, marks: Mapping[str, Mark], options: ViewOptions, notes: list[str],
               levels: list[str], alike: tuple[Any, ...]) -> None:
    """The one way a picture is made: ``g``'s units as a tree (scopes where op names carry
    them, fusions and bodies, blocks by structure where names give nothing, repeats folded),
    the deepest cut of it that fits the budget, and that cut applied to ``g``. ``alike``: the
    marks and capture info ``g`` was made of, by which (with the module and the options) the
    tree is kept for the next picture of the same units (:mod:`hloviz.render.reuse`)."""
    scopes = None
    if _has_scopes(g, options):
        from ..analysis.scopes import build_scope_tree

        # kernels come from the marks; parameters are placed with their users (layers.unit_routes)
        scopes = build_scope_tree(g.module, stage="pre", ordered=False)
    # the same units whatever the budget and the nodes opened (but for the first look's choice),
    # an overview's or a detailed picture's (a layer's lone bitcast: .tree.bookkeeping.lone_relabels)
    overview = options.budget < UNUSED_OPENS
    key = (id(g.module), replace(options, budget=0, open=()), g.closed_fusions, scopes is not None, overview)
    tree = kept_tree(key, (g.module,), alike, g.phases,
                     lambda: layers.scope_tree(g, scopes, named=scopes is not None, overview=overview))
    depth = options.depth + scopes.model_depth if options.depth is not None and scopes is not None else options.depth
    tree = coarsen(tree, options.budget, max_depth=depth)
    closed = _KEPT_CLOSED if options.coarse else overview_closed(tree) if options.budget <= OVERVIEW_BUDGET else frozenset()
    cut = fit(tree, options.budget, max_depth=depth, closed=closed)
    for key in options.open:
        tree, cut = open_in_place(cut, key, options.budget)

    def kernels_of(inst: Instruction) -> tuple[int, ...]:
        mark = marks.get(inst.name)
        return mark.kernels if mark is not None else ()

    phase_of = scopes.phase_of if scopes is not None else (lambda i: "forward")
    if g.phases:  # a step counter is drawn as its optimizer's work (:mod:`.tree.bookkeeping`)
        drawn_phase, named_phase = g.phases.get, phase_of
        phase_of = lambda i: drawn_phase(id(i)) or named_phase(i)  # noqa: E731
    g.scope_clusters = apply.apply_cut(g, cut, kernels_of=kernels_of, phase_of=phase_of,
                                       brief=options.budget <= OVERVIEW_BUDGET)
    if options.coarse:  # after a Graphviz timeout: no clusters, which are most of dot's time
        g.scope_clusters, g.stacking = [], []
    g.cut = cut
    if options.budget <= OVERVIEW_BUDGET:
        g.program_order = phase_of
        name_blocks(g, cut, phase_of)  # before folding: a block folded away must not title the box it joined
        fold_weights(g)
        fold_plumbing(g)
        unframe_phases(g, cut, phase_of)
    note_cut(g, cut, options, notes, levels)


#: What ``coarse`` (the view after a Graphviz timeout) keeps closed.
_KEPT_CLOSED = frozenset({"fusion", "body"})
