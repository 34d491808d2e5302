"""A training step's bookkeeping drawn where it belongs, not as rows of its own (issue 33, goal 2).

**Step counters.** Keras's optimizer counts its steps in a variable of its own
(``sgd/iteration``, ``adam/iteration``): the step reads it, adds one (TensorFlow names that op
``Add``, with no scope) and hands it back (``XLA_Retvals``: a reshape and a copy). Nothing in
those ops says where they belong, so each was drawn as a box of its own — ``add``, ``reshape``,
``copy`` (and, for SGD, whose updates never read the count, the parameter too) ahead of the
model in every Keras training step's overview. A counter is found by data flow: an entry
parameter and the unscoped instructions computed from it and constants alone, whose values only
leave the function (followed through unscoped users; one read by a scoped op — a weight's
``bitcast`` read by its layer — or more than :data:`MOST` is work, not bookkeeping, and is left
as it was). It
goes where its parameter is drawn: the scope its users share (Adam's bias corrections read the
count: ``adam``), else the scope the parameter's own name designates, exactly
(``sgd_1/iteration`` → ``sgd_1``; a name, never a guess) — :func:`place_counters`.

**A weight's preparation.** What XLA or JAX made of a layer's inputs alone before their use is
drawn with what reads it: one without a name or scope (a weight's copy, an iota fusion), and a
change of layout (a copy, transpose, bitcast or reshape; a fusion of nothing else) read once,
either named after the weight it reads and read by a layer (JAX:
``params['members']['hidden_1']['kernel']``, a transposed copy of a ``vmap``-ped ensemble's
stacked kernel, stood alone above the optimized column) or in a scope that holds not its reader
(a Flax ``nn.RNN``'s biases, reshaped once outside the loop that reads them, are named
``GRUCell_0.scan_fn/GRUCell_0/iz/reshape`` beside ``_Classifier/gru``: a box of four reshapes
at the top of the step) — :func:`weight_preparation`. One read in several places, or by no
layer, stays where it was: a graph network's ``receivers`` in another shape, read by each
round, and a step's ``x`` reshaped for the loop that accumulates its gradients are the input's.

**Settings made ready for one layer.** SGD and Adagrad broadcast the learning rate to the shape
of each weight (``adagrad/Mul``: ``broadcast(learning_rate)``) before that weight's update reads
it. Such an instruction reads no layer, so it updates none by what it reads, and was left in
the optimizer's own box — opened, a row of ``broadcast`` boxes. What it feeds says which layer
it serves: a setting carried on (broadcast, converted) from parameters and constants alone
whose every user updates one layer updates that layer too (:func:`credit_settings`).

**What is left in the optimizer's scope.** Before optimization, an optimizer's scope that holds
loose ops only once every update went to its layer is drawn closed in an overview; after
optimization, whatever it holds (:func:`close_bookkeeping`). So is a Keras loss's own scope, a step's one line of loss
(:func:`close_losses`).

**What TensorFlow's gradient folds.** The backward pass of a loss written inline starts from
a constant TensorFlow builds op by op (the gradient of ``tf.reduce_mean``: a reshape of 1.0,
tiles to the batch, a divide by its size), and a tape's unconnected gradients are broadcast
zeros: all folded at compile time, outside every layer. Three or more such ops are one
``(folded)`` box of a training step's overview before optimization (:func:`file_folded`);
values nothing reads, one ``(unused)`` box (:func:`file_unused`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING

from ...analysis.opnames import is_loss_scope, is_optimizer_scope
from ...ir import Computation, Instruction
from ...opcodes import LAYOUT_ONLY, SCOPE_INPUTS, SCOPE_NEUTRAL, UNREAD_HOLDERS, VALUE_CARRIERS
from .nodes import FOLDED, UNUSED, Step, TreeNode

if TYPE_CHECKING:
    from ...analysis.scopes import Scope
    from .model import Unit, ViewGraph

__all__ = ["FOLDED_LEAST", "MOST", "close_bookkeeping", "close_losses", "credit_settings", "file_folded", "file_unused", "lone_relabels", "place_counters", "update_target",
           "weight_preparation"]

#: The most instructions a counter holds: a read, an add, its constant, a convert and the
#: results on their way out are six; past a dozen it is work, not bookkeeping.
MOST = 12


def place_counters(comp: Computation, own: MutableMapping[int, Scope | None],
                   users: Mapping[Instruction, Sequence[Instruction]], names: Mapping[str, str],
                   scope_at: Callable[[str], Scope | None]) -> dict[int, str]:
    """File the counters of the top-level ``comp`` in their parameter's scope, in ``own``
    (id(instruction) → its scope, None when it has none). ``names``: an entry parameter's name →
    the name the user knows (``capture.json``); ``scope_at(path)``: the named scope at ``path``.

    Returns id(instruction) → the phase each placed one is drawn in: its scope's (the count
    increment reads no gradient, so its op name and data flow call it forward work; drawn in
    ``adam`` it is the optimizer's, as the parameter's name says)."""
    phases: dict[int, str] = {}
    for param in comp.instructions:
        if param.opcode != "parameter":
            continue
        home = own.get(id(param))
        if home is None:
            known = names.get(param.name, "")
            home = scope_at(known.rsplit("/", 1)[0]) if "/" in known else None
        if home is None:
            continue
        members = _counter(comp, param, own, users)
        if members is None:
            continue
        counts = home.phases
        phase = max(counts, key=lambda p: (counts[p], p)) if counts else None
        for m in members:
            own[id(m)] = home
            if phase is not None:
                phases[id(m)] = phase
    return phases


def _counter(comp: Computation, param: Instruction, own: Mapping[int, object],
             users: Mapping[Instruction, Sequence[Instruction]]) -> list[Instruction] | None:
    """``param`` and the unscoped instructions computed from it and constants alone (with those
    constants), or None when there are none or too many."""
    members = [param]
    inside = {id(param)}
    todo = [param]
    while todo:
        value = todo.pop()
        for user in users.get(value, ()):
            if id(user) in inside or user is comp.root:
                continue  # the root is everyone's
            if own.get(id(user)) is not None:
                if value is param or _copy_of(value, param):
                    continue  # a scoped reader of the counter itself (Adam's bias correction, a schedule)
                return None  # what it computed is read by a layer's work (a weight's bitcast): work
            private = []
            for op in user.operands:
                if id(op) in inside:
                    continue
                if op.opcode not in SCOPE_INPUTS or op.opcode == "parameter" or own.get(id(op)) is not None \
                        or any(u is not user for u in users.get(op, ())):
                    return None  # a second input: not a counter
                private.append(op)
            for op in (*private, user):
                if id(op) not in inside:
                    inside.add(id(op))
                    members.append(op)
            todo.append(user)
            if len(members) > MOST:
                return None
    return members if len(members) > 1 else None


def _copy_of(value: Instruction, param: Instruction) -> bool:
    """Whether ``value`` is ``param`` itself under another buffer: an unnamed ``copy`` XLA made
    of it (the step's count is written back in place, so the updates that read the old count —
    a learning-rate schedule's — read a copy taken first)."""
    return value.opcode == "copy" and not value.metadata.op_name and value.operands == [param]


def weight_preparation(comp: Computation, own: MutableMapping[int, Scope | None],
                       users: Mapping[Instruction, Sequence[Instruction]]) -> set[int]:
    """ids of ``comp``'s instructions computed from inputs alone (parameters, constants, iotas
    and other such instructions) that are drawn where they are read (see the module docstring);
    a named one's scope is taken back in ``own`` (None)."""
    prep: set[int] = set()
    for inst in comp.instructions:
        if inst is comp.root or inst.opcode in SCOPE_INPUTS or not all(
                op.opcode in SCOPE_INPUTS or id(op) in prep for op in inst.operands):
            continue
        scope = own.get(id(inst))
        if scope is None and not inst.metadata.op_name:
            prep.add(id(inst))
        elif _layout_only(inst) and len(readers := users.get(inst, ())) == 1 and (
                _named_after_its_weight(inst) and _in_a_layer(own.get(id(readers[0]))) if scope is None
                else not _within(own.get(id(readers[0])), scope)):
            own[id(inst)] = None
            prep.add(id(inst))
    return prep


def lone_relabels(comp: Computation, own: Mapping[int, Scope | None],
                  users: Mapping[Instruction, Sequence[Instruction]]) -> dict[int, Scope]:
    """The bitcasts of ``comp`` alone in their scope, each with the layer it goes with: the
    layer of the value whose bytes it relabels, else of its one user. After optimization XLA
    fuses a layer's work into another layer's kernel and may leave of it only a bitcast of that
    kernel's output, named after the layer: a box of one ``bitcast`` (a MobileNetV3 step's
    ``re_lu_3``, ``expanded_conv_2_add``, six of them side by side in its optimized column, or
    one ``… · block of 6`` of them), standing apart from the data flow. Drawn with the kernel
    it relabels (or the one reading it), it says nothing false: the layer's work is there."""
    held: dict[int, int] = {}
    for inst in comp.instructions:
        scope = own.get(id(inst))
        while scope is not None:  # each scope counts what it and the scopes below it hold
            held[id(scope)] = held.get(id(scope), 0) + 1
            scope = scope.parent
    out = {}
    for inst in comp.instructions:
        scope = own.get(id(inst))
        if inst.opcode != "bitcast" or scope is None or held[id(scope)] != 1 or not inst.operands or inst is comp.root:
            continue
        readers = users.get(inst, ())
        for to in (own.get(id(inst.operands[0])), own.get(id(readers[0])) if len(readers) == 1 else None):
            if _in_a_layer(to) and to is not scope:
                out[id(inst)] = to
                break
    return out


def _layout_only(inst: Instruction) -> bool:
    if inst.opcode == "fusion" and len(inst.called_computations) == 1:
        return all(i.opcode in LAYOUT_ONLY or i.opcode == "parameter" for i in inst.called_computations[0].instructions)
    return inst.opcode in LAYOUT_ONLY


def _named_after_its_weight(inst: Instruction) -> bool:
    name = inst.metadata.op_name
    return any(op.opcode == "parameter" and op.metadata.op_name == name for op in inst.operands)


def _in_a_layer(scope: Scope | None) -> bool:
    """Whether ``scope`` lies inside another named one: a layer of a model, not the traced
    function's own scope, which holds every op of a Flax NNX model (filed there, the copies of
    its 16 kernels crowded its optimized forward pass, which then stayed closed)."""
    return scope is not None and any(a.kind == "scope" for a in scope.ancestors())


def _within(scope: Scope | None, outer: Scope) -> bool:
    return scope is not None and (scope is outer or outer in scope.ancestors())


def credit_settings(comp: Computation, updating: MutableMapping[int, Scope],
                    updates: Mapping[Instruction, Scope | None],
                    users: Mapping[Instruction, Sequence[Instruction]]) -> None:
    """Credit each setting of the optimizer in ``comp`` made ready for its use — an optimizer
    instruction (``updates``: :func:`hloviz.analysis.updates.update_targets`) that only carries a
    parameter or constant on (a broadcast, a convert: :data:`~hloviz.opcodes.VALUE_CARRIERS`),
    directly or through other such — to the one layer all its users update, in ``updating``
    (id(instruction) → that layer). Read backwards, so a chain of them (a cast, then a
    broadcast) follows its last link. (What computes with the settings, Adam's per-variable bias
    correction, is credited to its variable's layer by
    :func:`hloviz.analysis.updates.update_targets` itself: it reads no layer's values, and its
    users update that layer.)"""
    settings: set[int] = set()
    for inst in comp.instructions:
        if inst in updates and inst.opcode in VALUE_CARRIERS and id(inst) not in updating and all(
                op.opcode in SCOPE_INPUTS or id(op) in settings for op in inst.operands):
            settings.add(id(inst))
    for inst in reversed(comp.instructions):
        if id(inst) not in settings:
            continue
        readers = users.get(inst, ())
        layer = updating.get(id(readers[0])) if readers else None
        if layer is not None and all(updating.get(id(u)) is layer for u in readers):
            updating[id(inst)] = layer


def close_bookkeeping(root: TreeNode, *, optimized: bool) -> None:
    """An optimizer's own scope is drawn closed in an overview. Before optimization, where it
    holds loose ops only — its step count, the bias corrections of its learning rate, constants
    nothing reads; every update went to the layer it updates — as a TensorFlow op's scope is
    (``TreeNode.op``): opened, an unseen text CNN's Nadam was a column of eight scalar boxes
    (issue 33: an optimizer's bias corrections are never laid out as rows of their own). After
    optimization, whatever its kernels, once the cut is fitted (``TreeNode.shut``): closed
    before, the room it left went to opening ``cnn_adam``'s ``logits`` op by op."""
    for top in root.children:
        if top.kind != "scope" or not top.children or not is_optimizer_scope(top.name):
            continue
        if optimized:
            top.shut = True
        elif all(c.is_leaf or (c.kind == "scope" and c.name == UNUSED) for c in top.children):
            top.op = True


def close_losses(root: TreeNode) -> None:
    """A Keras loss's own scope (``sparse_categorical_crossentropy``) beside the model is drawn
    closed in an overview (``TreeNode.shut``): the loss is one line of the user's code and one box
    of a training step (issue 33: forward, loss, backward, optimizer). Opened, an unseen LSTM
    tagger's cross entropy was six ``forward · block of 12`` boxes beside its closed layers, their
    arrows crossing (0.12 a line); a Conv3D classifier's, ten kernels in a column."""
    for top in root.children:
        if top.kind == "scope" and top.children and is_loss_scope(top.name):
            top.shut = True


#: The fewest folded ops outside every layer that :func:`file_folded` draws as one box.
FOLDED_LEAST = 3


def file_folded(g: ViewGraph, routes: list[tuple[list[Step], str]]) -> list[tuple[list[Step], str]]:
    """A training step's units outside every scope whose every instruction was folded at compile
    time (marked so: :class:`~hloviz.render.views.Mark`), :data:`FOLDED_LEAST` or more, go into
    one ``(folded)`` scope, drawn closed in an overview as a TensorFlow op's scope is
    (``Step.op``): an unseen PINN's column held ten dashed boxes of its loss's gradient seed, a
    ResNet step six broadcast zeros in a row, and the room they took kept the model closed.
    ``--budget 100`` and the explorer open it; what each was folded into is said there, and
    the constants holding the values are drawn after optimization. Call it on a training step
    before optimization only: an inference function's folds are what its picture shows."""
    at = [i for i, (route, leaf) in enumerate(routes) if not route and _folded_away(g, g.units[int(leaf[1:])])]
    if len(at) < FOLDED_LEAST:
        return routes
    step = [Step("scope", FOLDED, FOLDED, "folded", op=True)]
    out = list(routes)
    for i in at:
        out[i] = (step, out[i][1])
    return out


def _folded_away(g: ViewGraph, unit: Unit) -> bool:
    """Is every instruction of ``unit`` marked as folded at compile time (not the ROOT)?"""
    if unit.root or not unit.members:
        return False
    for m in unit.members:
        mark = g.marks.get(m.name)
        if mark is None or "folded" not in (getattr(mark, "note", None) or ""):
            return False
    return True


def update_target(inst: Instruction, updates: Mapping[Instruction, Scope | None]) -> Scope | None:
    """The layer an optimizer instruction (or a fusion of mostly optimizer work) updates.

    A fusion's work is every instruction of its fused computations, nested fusions' included
    (each computation once), bookkeeping aside; it updates a layer when most of that work is
    the optimizer's and all of it that updates a layer updates the same one. One pass over
    each fused computation, which stops at a second layer (the answer is then None whatever
    follows): this runs over every fused instruction of the module. Work of a scope holding that
    layer is the layer's in a kernel writing the layer's update: a global-norm clip's factor,
    which XLA computes again inside each update's kernel (an unseen JAX step's updates after
    ``optax.clip_by_global_norm`` were 96 kernels of no layer); elsewhere it is shared (a
    mixed-precision step's loss-scale update, reading every layer's finiteness). ``updates``
    (:func:`hloviz.analysis.updates.update_targets`) holds every optimizer instruction but the
    parameters and constants, which are bookkeeping here: being in it is being the optimizer's,
    one dict read where the phase was a second."""
    if inst.opcode != "fusion":
        return updates.get(inst)
    quiet = SCOPE_NEUTRAL
    target: Scope | None = None
    wider = False  # work of a scope holding ``target`` met beside it (the model's)
    work = optimizer = 0
    pending = list(inst.called_computations)
    seen = {id(c) for c in pending}
    while pending:
        for i in pending.pop().instructions:
            op = i.opcode
            if op == "fusion":
                for c in i.called_computations:
                    if id(c) not in seen:
                        seen.add(id(c))
                        pending.append(c)
                continue
            if op in quiet:
                continue
            work += 1
            if i in updates:
                optimizer += 1
                t = updates[i]
                if t is not None and t is not target:
                    if target is None:
                        target = t
                    elif target.contains(t) or t.contains(target):
                        target, wider = (t if target.contains(t) else target), True
                    else:
                        return None  # two layers: shared work
    if optimizer * 2 > work and not wider:
        return target
    # a fusion whose result is an optimizer's update (SGD's ``w - lr * grad`` fused with the
    # gradient it reads: mostly backward work, but it writes the layer's new weight) updates
    # that layer too: its optimizer phase shows, as Adam's separate update kernel's does
    roots = [c.root for c in inst.called_computations[:1] if c.root is not None]
    if roots and roots[0].opcode == "tuple":
        roots = list(roots[0].operands)
    ends = {updates.get(r) for r in roots} if roots and all(r in updates for r in roots) else {None}
    writes = len(ends) == 1 and target is not None and ends == {target}
    if wider and not writes:
        return None  # the model's work beside one layer's, not writing that layer: shared
    return target if optimizer * 2 > work or writes else None


#: What an unused value's unit may hold to be filed as ``(unused)``: no work, only values.
_UNUSED_KINDS = UNREAD_HOLDERS


def file_unused(g: ViewGraph, routes: list[tuple[list[Step], str]], edges: list[tuple[str, str]]) -> list[tuple[list[Step], str]]:
    """Units outside every scope that hold values nothing reads (constants, a loop result's elements,
    tuples, parameters: an optimizer's unread slots, what TF's gradient of a loop leaves behind…)
    go into one ``(unused)`` scope, closed like any other: a bidirectional GRU's step
    drew eleven such dashed boxes down its model's column. So, within them, do two constants or more
    nothing reads in one scope (not what a fold made or took: :meth:`ViewGraph.shows_a_fold`), and two
    elements or more a loop's condition or body takes unread (JAX's condition takes all: six boxes).
    A loop of steps' body is a step's top (``zeros_like`` were dashed boxes between a GRU's ``embed`` and ``gru``)."""
    read = {a for a, _ in edges}
    unused = [Step("scope", UNUSED, UNUSED, "unused")]
    out = []
    inside: dict[str, list[int]] = {}  # a scope's path → where its unused values are in ``out``
    for route, leaf in routes:
        u = g.units[int(leaf[1:])]
        if leaf not in read and not u.root and all(m.opcode in _UNUSED_KINDS for m in u.members):
            if not route:
                route = unused
            elif (len(route) == 1 and route[0].kind == "body" and route[0].path  # a loop of steps' body: as the top
                  and not any(m is m.parent.root for m in u.members if m.parent is not None)):  # (but its tuple)
                route = [*route, Step("scope", UNUSED, f"{route[0].name}/{UNUSED}", "unused")]
            elif route[-1].kind == "scope" and all(m.opcode == "constant" for m in u.members) and not g.shows_a_fold(u):
                inside.setdefault(route[-1].path, []).append(len(out))
            elif route[-1].kind == "body" and all(m.opcode == "get-tuple-element" for m in u.members):
                inside.setdefault(route[-1].name, []).append(len(out))
        out.append((route, leaf))
    # ... and so do two or more constants in a scope, within it (RMSprop's sparse update of an embedding
    # left six); a loop's unread results stay with its blocks (apart, a scan's counted its 36 kernels)
    for path, at in inside.items():
        if len(at) >= 2:
            step = Step("scope", UNUSED, f"{path}/{UNUSED}", "unused")
            for i in at:
                route, leaf = out[i]
                out[i] = ([*route, step], leaf)
    return out
