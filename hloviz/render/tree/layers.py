"""The model's own structure in a picture: the drawn units as a :mod:`~hloviz.render.tree.tree` tree.

Each drawn unit is routed from the root by the scope of its instruction (``metadata.op_name``:
``model/block_5_expand/convolution`` lies in ``model`` › ``block_5_expand``), then by the
fusion or body that holds it. A fusion lies in the scope of the op that does its heaviest work
(the convolution of a conv + batch-norm + relu fusion), and an instruction without a scope of its
own — a parameter, a constant, TensorFlow's ``XLA_Args`` — in the scope its users share, so
a layer's weights are drawn with the layer.

Routing is stage 1 of a picture (:mod:`~hloviz.render.views`): :func:`scope_tree` gives the
tree its cut is chosen from; what a cut then does to the view's units is
:mod:`~hloviz.render.cut.apply`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from ...analysis.attribution import common_scope
from ...analysis.loops import runs_steps
from ...analysis.opnames import BACKWARD_PREFIXES
from ...ir import Computation, Instruction, called_closure
from ...opcodes import BODY_CALLERS, PRODUCTS, SCOPE_INPUTS, SCOPE_PLUMBING
from .bookkeeping import (
    close_bookkeeping,
    close_losses,
    credit_settings,
    file_folded,
    file_unused,
    lone_relabels,
    place_counters,
    update_target,
    weight_preparation,
)
from .model import Place, Unit, ViewGraph, leaf_edges, leaf_labels
from .phases import by_phase, close_loose_blocks, close_one_kernel_scopes, close_split_layers, forward_leaves
from .tree import Step, Tree, build_tree
from .units import unwrapped

if TYPE_CHECKING:
    from ...analysis.scopes import Scope, ScopeTree

__all__ = ["scope_tree", "unit_routes"]

#: Unnamed instructions that go with their users (a layer's weights), or with their operand.
_INPUTS = SCOPE_INPUTS
_PLUMBING = SCOPE_PLUMBING

def _named(s: Scope | None) -> Scope | None:
    """``s`` if it is a scope from op names (not the root, not a computation's unnamed ops)."""
    return s if s is not None and s.kind == "scope" else None


def unit_routes(g: ViewGraph, scopes: ScopeTree | None, updates: Mapping[Instruction, Scope | None] | None = None,
                *, overview: bool = False) -> list[tuple[list[Step], str]]:
    """``(route, "u<index>")`` for every live unit of ``g``, in drawing order (``scopes`` None:
    a module drawn without its op names' scopes, routed by fusion and body alone).

    ``updates`` (:func:`hloviz.analysis.updates.update_targets`) says which layer each optimizer
    instruction updates: those go into an ``(optimizer)`` scope inside that layer, so a training
    step's layer holds its forward, backward and optimizer work. ``overview``: a layer's lone
    bitcast goes with what it relabels (:func:`~.bookkeeping.lone_relabels`).
    """
    routes = _Routes(g, scopes, updates or {}, relabel=overview)
    for comp in [c for c in g.computations if g.places[c.name].parent is None] if scopes is not None else ():
        routes.place_computation(comp)
    routes.open_step_bodies()
    out = []
    for u in sorted((u for u in g.units if u.alive), key=routes.order):
        place = g.place_by_key.get(u.scope) if u.scope else None
        route = routes.of_place(place) if place is not None else routes.inst_steps(u.members[0])
        if place is not None and place.key in routes.opened:
            route = route + routes.within(place, u.members[0])
        out.append((route, f"u{u.index}"))
    return out


class _Routes:
    """The scope of every instruction of one view, and the routes built from them (memoised:
    thousands of units share a few hundred scopes and places)."""

    def __init__(self, g: ViewGraph, scopes: ScopeTree | None, updates: Mapping[Instruction, Scope | None], *,
                 relabel: bool = False) -> None:
        self.g, self.scopes, self.updates, self.relabel = g, scopes, updates, relabel
        self.of: Mapping[Instruction, Scope] = scopes.filing if scopes is not None else {}
        #: id(instruction) → the named scope it is drawn in (None: outside every scope).
        self.own: dict[int, Scope | None] = {}
        #: id(optimizer instruction) → the layer it updates.
        self.updating: dict[int, Scope] = {}
        self._steps: dict[int, list[Step]] = {}
        self._places: dict[str, list[Step]] = {}
        self._top_pos: dict[str, int] = {}
        #: The op names of the module's ``while`` ops (:meth:`_outside_loops`), once asked.
        self._loops: set[str] | None = None
        #: The keys of the bodies of loops of steps (:meth:`open_step_bodies`).
        self.opened: set[str] = set()

    def open_step_bodies(self) -> None:
        """Place the drawn bodies of the loops that run training steps or micro-batches
        (:func:`~hloviz.analysis.loops.runs_steps`), whose units are routed by their own scopes
        below the body (:meth:`within`): such a body is a step's layers, not one row of anonymous
        boxes."""
        found = [p for p in self.g.places.values() if p.role == "body" and p.owner is not None
                 and p.owner.opcode == "while" and runs_steps(p.owner)] if self.scopes is not None else []
        self.opened = {p.key for p in found}
        for p in found:
            self.place_computation(p.computation, body=True)

    def within(self, body: Place, inst: Instruction) -> list[Step]:
        """``inst``'s scope steps below the loop whose ``body`` holds it (the loop's own name,
        which TensorFlow puts above every op of its body, dropped); where none is left (a JAX
        step's loss, ``jvp()/exp``; a TensorFlow step's counter), the pass it runs in, as a
        step's work outside every layer is grouped (:func:`~.phases.by_phase`): loose, a Flax
        loop of steps' softmax, gradient and counters were a column of boxes beside its model."""
        steps = self.below(body, inst)
        if steps or inst.opcode in SCOPE_INPUTS or inst.opcode == "tuple":
            return steps
        phase = self.g.phases.get(id(inst)) or self.scopes.phase_of(inst)  # type: ignore[union-attr]
        return [Step("scope", f"({phase})", f"{body.key}/({phase})", phase)]

    def below(self, body: Place, inst: Instruction) -> list[Step]:
        name = body.owner.metadata.op_name if body.owner is not None else ""
        steps = self.inst_steps(inst)
        k = 0
        while k < len(steps) and (steps[k].path == name or name.startswith(steps[k].path + "/")):
            k += 1
        return steps[k:]

    def scope_of(self, inst: Instruction) -> Scope | None:
        """``inst``'s own scope (from its op name, or its fusion's), noting the layer it updates."""
        key = id(inst)
        scopes = self.scopes
        if key not in self.own and scopes is None:
            self.own[key] = None
        elif key not in self.own and scopes is not None:
            self.own[key] = _fusion_scope(inst, scopes) if inst.opcode == "fusion" else _named(self.of.get(inst))
            target = update_target(inst, self.updates) if self.updates else None
            if target is not None and (target := self._outside_loops(target, self.own[key])) is not None:
                self.updating[key] = target
        return self.own[key]

    def _outside_loops(self, layer: Scope, own: Scope | None) -> Scope | None:
        """``layer``, or, where ``layer`` lies below the scope of a loop of micro-batches (a
        ``while`` op named as the scope is: :meth:`_loop_names`) that the update, filed in ``own``,
        is not in, the scope holding the outermost such loop (None: the top). A layer run only
        inside such a loop (TF's ``for`` over ``tf.range``: the loop's scope ``while`` above the
        layer's) is updated once, after it: drawn in the layer, Adam's update stood inside a frame
        ``while`` that the loop never ran. A recurrence (a Keras LSTM's ``lstm/while``) is no such
        loop: its update stays in its layer."""
        loops = self._loop_names()  # (the loop itself is filed at the level its op name's scope is in)
        out: Scope | None = layer
        for scope in layer.ancestors():
            if scope.kind == "scope" and scope.path in loops and (own is None or not scope.contains(own)):
                out = _named(scope.parent)
        return out

    def _loop_names(self) -> set[str]:
        """The op names of the module's ``while`` ops whose bodies run a forward and a backward
        pass, their products both (TF names a loop's tuples as the loop): loops of micro-batches.
        Not a recurrence: an RNN's forward loop only stacks what its gradient will read, and a
        hand-written one's ``while/cell`` is its loop's own layer. By the scope tree's phases, not
        :func:`~hloviz.analysis.loops.runs_steps`' op names: a JAX body calling its step counts too."""
        if self._loops is None:
            phase = self.scopes.phase_of if self.scopes is not None else (lambda _i: "forward")
            self._loops = {i.metadata.op_name for c in self.g.module.computations for i in c.instructions
                           if i.opcode == "while" and _passes_run(i, phase) >= {"forward", "backward"}}
        return self._loops

    def place_computation(self, comp: Computation, *, body: bool = False) -> None:
        """Give every instruction of the top-level ``comp`` (or a loop of steps' ``body``) a scope:
        its own; for inputs without one, the scope their users share; for results on their way
        out, their operand's."""
        users = self.g.users.get(comp.name) or comp.users()
        own = self.own
        for inst in comp.instructions:
            self.scope_of(inst)
        entry = self.g.module.entry
        # a loop of steps' carried tuple stays a box of its own: it is no layer's (it was the loss's input)
        carried = {id(i) for i in comp.instructions if i.opcode == "parameter"} if body else set()
        if entry is not None and comp is not entry and comp is unwrapped(entry):
            for inst in comp.instructions:  # what the entry only calls: its parameters are the arguments,
                if inst.opcode == "parameter":  # drawn with their users, not in the call's scope
                    own[id(inst)] = None
        if self.updates:  # a learning rate made ready for one layer's update goes with it (.bookkeeping)
            credit_settings(comp, self.updating, self.updates, users)
        # instructions without a scope take the scope their users share (weights → their layer),
        # and so does a weight's preparation (.bookkeeping); so is the tuple XLA builds, unnamed,
        # to start a loop or a call: it goes with the loop (a Flax dropout's random-bit loops had
        # six such boxes above a remat CNN's optimized column)
        prep = weight_preparation(comp, own, users)
        for inst in reversed(comp.instructions):
            if own[id(inst)] is not None or inst is comp.root or id(inst) in carried or not (
                    inst.opcode in _INPUTS or inst.metadata.op_name == "XLA_Args" or id(inst) in prep
                    or (inst.opcode == "tuple" and not inst.metadata.op_name)):
                continue
            own[id(inst)] = self._users_scope(inst, users.get(inst, ()))
        # what is still unplaced (results on their way out: XLA_Retvals) goes with its operand
        for inst in comp.instructions:
            if own[id(inst)] is None and inst is not comp.root and (
                    inst.metadata.op_name == "XLA_Retvals" or (inst.opcode in _PLUMBING and not inst.metadata.op_name)):
                own[id(inst)] = next((p for p in map(own.get, map(id, inst.operands)) if p is not None), None)
        if self.relabel:  # an overview: a layer's bitcast left alone goes with what it relabels
            own.update(lone_relabels(comp, own, users))
        if self.scopes is not None:  # a step counter goes where its parameter is drawn (.bookkeeping)
            self.g.phases.update(place_counters(comp, own, users, self.g.param_names, self.scopes.get))

    def _users_scope(self, inst: Instruction, users: Iterable[Instruction]) -> Scope | None:
        """The scope an input without one is drawn in: a parameter's first user's (a weight read by
        its layer, its gradient and the optimizer is drawn with its layer), and so, optimized, an
        array constant's (a weight a JAX function closed over: beside the model, structure closed
        twelve of an MLP-Mixer's into a block of their own; before optimization, ``fold_weights``
        names it in its layer's box); else the innermost scope all its users share."""
        users = tuple(users)
        if inst.opcode == "parameter" or (inst.opcode == "constant" and inst.shape.dims and self.g.module.is_scheduled):
            if self.updates and any(self.own.get(id(u)) is None and u.opcode in ("while", "tuple")
                                     and u.metadata.op_name in self._loop_names() for u in users):
                return None  # a weight a loop of micro-batches at the top reads is drawn with it
            first = next((u for u in users if self.own.get(id(u)) is not None), None)
            if first is not None:
                layer = self.updating.get(id(first))
                if layer is not None:
                    # an optimizer's slot (Adam's moments) goes with the update that reads it
                    self.updating[id(inst)] = layer
                return self.own[id(first)]
        shared = None
        for u in users:
            p = self.own.get(id(u))
            shared = p if shared is None else common_scope(shared, p)
            if shared is None:
                break
        return shared

    def scope_steps(self, s: Scope | None) -> list[Step]:
        """The steps from the top down to the named scope ``s``."""
        if s is None:
            return []
        r = self._steps.get(id(s))
        if r is None:
            chain = [s] + [a for a in s.ancestors() if a.kind == "scope"]
            r = self._steps[id(s)] = [Step("scope", a.name, a.path, a.label) for a in reversed(chain)]
        return r

    def inst_steps(self, inst: Instruction) -> list[Step]:
        """``inst``'s route: its scope, or for optimizer work, the ``(optimizer)`` scope of its layer."""
        layer = self.updating.get(id(inst))
        if layer is None:
            return self.scope_steps(self.own.get(id(inst)))
        return self.scope_steps(layer) + [Step("scope", "(optimizer)", f"{layer.path}/(optimizer)", "optimizer")]

    def of_place(self, place: Place) -> list[Step]:
        """The route of a fusion or body place: its caller's route, then one step per nesting.

        Walked with an explicit stack: fusions and bodies may nest a thousand deep."""
        pending: list[Place] = []
        p: Place | None = place
        while p is not None and p.key not in self._places:
            pending.append(p)
            p = p.parent if p.parent is not None and p.parent.parent is not None else None
        for p in reversed(pending):
            parent, owner = p.parent, p.owner
            if parent is None or owner is None:
                r: list[Step] = []
            else:
                base = self._places[parent.key] if parent.parent is not None else self.inst_steps(owner)
                if parent.key in self.opened:
                    base = base + self.within(parent, owner)
                kind = "fusion" if p.role == "fusion" else "body"
                label = owner.name if kind == "fusion" else f"{p.role} of {owner.name}"
                r = base + [Step(kind, p.key, owner.metadata.op_name if p.key in self.opened else "", label)]
            self._places[p.key] = r
        return self._places[place.key]

    def order(self, u: Unit) -> tuple:
        """Text order in the drawn computation; inside a fusion or body, its caller's place."""
        place = self.g.place_by_key.get(u.scope) if u.scope else None
        if place is None:
            return (u.pos[1], 0, 0)
        pos = self._top_pos.get(place.key)
        if pos is None:
            p = place
            while p.parent is not None and p.parent.parent is not None:
                p = p.parent
            pos = self._top_pos[place.key] = self.g.position(p.owner) if p.owner is not None else 0
        return (pos, 1, u.pos)


def _fusion_scope(fusion: Instruction, scopes: ScopeTree) -> Scope | None:
    """The scope a fusion is drawn in: the first layer :meth:`ScopeTree.layers_of` gives (where
    its heaviest work comes from), so the picture, the side panel, the kernel table and ``stats``
    agree."""
    for s in scopes.layers_of(fusion):
        if s.kind == "scope":
            return s
    return _named(scopes.filing.get(fusion))


def _passes_run(loop: Instruction, phase: Callable[[Instruction], str]) -> set[str]:
    """The phases of the products (dots, convolutions) ``loop``'s computations run, nested ones too."""
    return {phase(i) for comp in called_closure(loop.called_computations) for i in comp.instructions
            if i.opcode in PRODUCTS}


def scope_tree(g: ViewGraph, scopes: ScopeTree | None = None, *, named: bool = True, overview: bool = False) -> Tree:
    """The tree of ``g``'s live units (leaves ``u<index>``), scopes as ``scopes`` (default: built
    from ``g.module``) files its instructions; a training step's optimizer updates go to the
    layers they update. ``named=False``: no scopes from op names (a module without them, or
    drawn without them): fusions, bodies and blocks found by structure only (``overview``: :func:`unit_routes`)."""
    labels_, names = leaf_labels(g)
    if not named:
        return build_tree(unit_routes(g, None), edges=leaf_edges(g), label=labels_, names=names)
    if scopes is None:
        from ...analysis.scopes import build_scope_tree

        scopes = build_scope_tree(g.module, stage="pre", ordered=False)  # kernels: the marks
    from ...analysis.updates import update_targets

    updates = update_targets(scopes) if scopes.root.phases.get("optimizer") else None
    edges = leaf_edges(g)  # one list for the phases and the tree: g does not change between
    routes = _one_op(g, file_unused(g, by_phase(g, scopes, unit_routes(g, scopes, updates, overview=overview), edges), edges))
    step = bool(scopes.root.phases.get("backward"))  # a training step
    if step and not g.module.is_scheduled:
        routes = file_folded(g, routes)
    forward = forward_leaves(g, scopes, routes) if step else None
    loops = [f"u{g.unit_of[id(p.owner)]}" for p in g.places.values() if p.parent is not None and p.parent.parent is None
             and p.role == "body" and p.owner is not None and id(p.owner) in g.unit_of and runs_steps(p.owner)]
    tree = build_tree(routes, edges=edges, label=labels_, names=names, forward=forward, apart=loops,
                      output=next((f"u{u.index}" for u in g.units if u.alive and u.root), None))
    close_bookkeeping(tree.root, optimized=g.module.is_scheduled)
    close_losses(tree.root)
    close_one_kernel_scopes(tree.root, g)
    if forward is not None:
        def phases_of(leaf: str, work: bool = False) -> frozenset[str]:  # work: a parameter runs in no pass
            return frozenset(g.phases.get(id(m)) or scopes.phase_of(m) for m in g.units[int(leaf[1:])].members
                             if not work or m.opcode != "parameter")

        close_loose_blocks(tree, g, phases_of)
        close_split_layers(tree.root, phases_of, lambda leaf: phases_of(leaf, work=True))
    return tree


#: Units of one op from which the op is a scope of its own (``_one_op``): as many as a scope holds
#: before it is split (``build_tree``'s ``group_at``); fewer stay loose ops, blocked with their
#: neighbours (a VAE's loss written op by op: five such scopes beside it drew the model closed).
_OP_UNITS = 10


def _one_op(g: ViewGraph, routes: list[tuple[list[Step], str]]) -> list[tuple[list[Step], str]]:
    """Units whose instructions are one TensorFlow op's, outside every scope or loose in a model's
    own scope beside its layers, go into a scope named after that op, drawn closed in an overview
    (``TreeNode.op``): the op's own instructions (``tf.nn.softmax`` after a model is ``Softmax``,
    thirteen of them; opened beside a WaveNet, its boxes took the room the model's blocks
    needed) and its gradient's, which TensorFlow names after it (``gradient_tape/<scope>/<op>/…``:
    a language model's output projection, ``tf.matmul`` with its embedding, was eleven boxes
    beside four layers). Inside a layer its ops stay its own rows. A JAX op name without ``/``
    names a primitive (``mul``), used many times: TensorFlow alone writes ``op_type``."""
    # a model: a top-level scope with two or more layers, scopes holding a parameter each (a
    # loss's scope holds its labels in one at most: a loss's ops stay as they are)
    layers: dict[str, set[str]] = {}
    for route, leaf in routes:
        if len(route) > 1 and route[0].kind == route[1].kind == "scope" and not route[1].name.startswith("(") \
                and any(m.opcode == "parameter" for m in g.units[int(leaf[1:])].members):
            layers.setdefault(route[0].path, set()).add(route[1].path)
    holders = {path for path, held in layers.items() if len(held) >= 2}

    def op_of(route: list[Step], leaf: str) -> str | None:
        if route and (len(route) > 1 or route[0].kind != "scope" or route[0].op or route[0].path not in holders):
            return None
        base = route[-1].path + "/" if route else ""
        found = None
        for m in g.units[int(leaf[1:])].members:
            if m.opcode in BODY_CALLERS:
                return None  # a loop (``tf.map_fn``'s, and its gradient's) is drawn as a loop
            name, typed = m.metadata.op_name, bool(m.metadata.op_type)
            head, _, tail = name.partition("/")
            backward = head in BACKWARD_PREFIXES and bool(tail)  # ``gradient_tape/<scope>/<op>/…``
            rest = tail if backward else name
            while backward and rest.partition("/")[0] in BACKWARD_PREFIXES and "/" in rest:
                rest = rest.partition("/")[2]  # a tape's gradient of another's: ``gradient_tape/gradient_tape/…``
            if not typed or not rest.startswith(base):
                return None
            rest = rest[len(base):]
            op = rest.split("/", 1)[0]
            if not op or op.startswith("XLA_") or (not backward and "/" in rest) or (backward and "/" not in rest):
                return None
            if found is not None and op != found:
                return None
            found = op
        return found

    ops = {leaf: (route[-1].path if route else "", op) for route, leaf in routes if (op := op_of(route, leaf)) is not None}
    counts: dict[tuple[str, str], int] = {}
    for key in ops.values():
        counts[key] = counts.get(key, 0) + 1
    steps = {key: Step("scope", key[1], f"{key[0]}/{key[1]}" if key[0] else key[1], key[1], op=True)
             for key, n in counts.items() if n >= _OP_UNITS}
    return [([*route, steps[ops[leaf]]] if ops.get(leaf) in steps else route, leaf) for route, leaf in routes]
