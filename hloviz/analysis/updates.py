"""Which layer each optimizer op updates: the optimizer phase, per layer.

An optimizer's op names say only that they are the optimizer's (``adam/Mul_103``), not whose
variable they update. The data flow does: Adam's update of a layer's kernel reads that
kernel's gradient (backward ops in the layer's scope) and the kernel itself (a parameter named
after it, :func:`hloviz.analysis.provenance.parameter_names`). :func:`optimizer_targets` follows
each optimizer instruction's operands back through the optimizer's own instructions to those
sources; an op fed by one layer's sources updates that layer. Ops fed by no layer, or by several
(the step count, the learning-rate schedule), are shared and left out.

Read it from a pre-optimization tree: there every op is its own instruction, while after
optimization an optimizer's ops may share a fusion with the backward pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from weakref import WeakKeyDictionary

from ..ir import Computation, Instruction
from ..opcodes import WEIGHT_CARRIERS
from .collector import collector_paused
from .scopes import Scope, ScopeTree


def optimizer_targets(tree: ScopeTree) -> dict[str, str]:
    """Optimizer op name → the path of the innermost layer scope holding the variables its
    instructions update. TF names each op of each variable's update apart; JAX gives all of
    ``sgd``'s subtractions one name, which then maps to the scope holding all the layers —
    :func:`update_targets` tells those instructions apart."""
    per_op: dict[str, list[Scope | None]] = {}
    for inst, layer in update_targets(tree).items():
        name = inst.metadata.op_name
        if name:
            per_op.setdefault(name, []).append(layer)
    out: dict[str, str] = {}
    for name, layers in per_op.items():
        common = _common_scope([layer for layer in layers if layer is not None])
        if common is not None:
            out[name] = common.path
    return out


def update_targets(tree: ScopeTree) -> dict[Instruction, Scope | None]:
    """Every optimizer-phase instruction → the layer scope whose variables it updates, or None
    when it is fed by no layer or by several. Operands are followed through fusions (a fused
    parameter is its fusion's operand, a fusion its fused root), so this works on optimized
    modules too, where an update may share a kernel with the gradient it reads.

    Answered once per tree (the answer is read, never changed): the explorer draws one module
    many times over from one reused tree (:func:`hloviz.analysis.scopes.scope_trees_reused`),
    and each picture of a training step asked for this walk of the whole module again (GPT
    step, 46k instructions: 0.2 s per fusion picture)."""
    hit = _answered.get(tree)
    if hit is None:
        with collector_paused():  # the walk's memo holds a set per instruction it reaches
            hit = _update_targets(tree)
        _answered[tree] = hit
    return dict(hit)  # each caller gets its own copy: the kept answer is never changed


#: :func:`update_targets`' answers, for as long as their trees live.
_answered: WeakKeyDictionary[ScopeTree, dict[Instruction, Scope | None]] = WeakKeyDictionary()


def _update_targets(tree: ScopeTree) -> dict[Instruction, Scope | None]:
    tracer = _UpdateTracer(tree)
    out: dict[Instruction, Scope | None] = {}
    # most updates share their set of layers (every op after a global-norm clip reads them
    # all): the common scope is found once per set, not once per instruction
    common: dict[frozenset[int], Scope | None] = {}
    # a set's innermost common scope is that of its first and last scope in the tree's depth-first
    # order (the scopes between lie below it too): two scopes climbed, not hundreds
    order = {id(s): k for k, s in enumerate(tree.walk())}
    first_last = order.__getitem__
    phase = tree.phases.get
    feeds, scopes, walked = tracer.feeds, tracer.scopes, tracer.memo.get
    narrowed: set[int] = set()  # id() of the common scopes a loop's update was narrowed from
    for comp in tree.module.computations:
        for inst in comp.instructions:
            if phase(inst) != "optimizer" or inst.opcode in ("parameter", "constant"):
                continue
            ids = walked(inst)  # about half were walked already, as inputs of earlier ones
            if ids is None:
                ids = feeds(inst)
            if ids not in common:
                if len(ids) > 2 and all(i in order for i in ids):
                    common[ids] = _common_scope([scopes[min(ids, key=first_last)], scopes[max(ids, key=first_last)]])
                else:
                    common[ids] = _common_scope([scopes[i] for i in ids])
                innermost = _innermost_of_chain([scopes[i] for i in ids], common[ids])
                if innermost is not None:
                    narrowed.add(id(common[ids]))
                    common[ids] = innermost
            out[inst] = common[ids]
    if narrowed:
        _credit_by_what_they_feed(tree, out, narrowed, tracer.callers)
    return out


#: How many instructions :func:`_credit_by_what_they_feed` follows from one update.
_MAX_FED = 200


def _credit_by_what_they_feed(tree: ScopeTree, out: dict[Instruction, Scope | None], narrowed: set[int],
                              callers: Mapping[str, Instruction]) -> None:
    """Narrow the updates a loop's gradient left at the loop's scope by where their values go.

    An optimizer's state update (Adam's ``mu``/``nu`` of an ``nn.scan``'s stacked weight) reads
    the state, which no layer reads, and the gradient, which leaves the scan's ``while`` in the
    scope holding the loop (``ViT``): what it reads says ``ViT``. What it feeds says more: its
    value goes to the update of one parameter (``p + u``), which :func:`_innermost_of_chain`
    placed in the layer reading that parameter. An instruction placed at a scope some update was
    narrowed from (``narrowed``) is followed forward through its optimizer users placed at that
    same scope; when every user it reaches lies in one layer strictly inside that scope, it
    updates that layer. A user placed anywhere else (shared work, another scope) leaves it where
    it was. The users of a fused computation's root are its fusion's users."""
    phase = tree._phase
    users_of: dict[int, dict[Instruction, list[Instruction]]] = {}

    def users(inst: Instruction) -> list[Instruction]:
        comp = inst.parent
        if comp is None:
            return []
        got = users_of.get(id(comp))
        if got is None:
            got = users_of[id(comp)] = comp.users()
        here = got.get(inst, [])
        if inst is comp.root:
            caller = callers.get(comp.name)
            if caller is not None:
                return [*here, *users(caller)]
        return here

    refined: dict[Instruction, Scope] = {}
    for inst, at in out.items():
        if at is not None and id(at) in narrowed:
            fed = _fed_layer(inst, at, users, out, phase)
            if fed is not None:
                refined[inst] = fed
    out.update(refined)


def _fed_layer(inst: Instruction, at: Scope, users: Callable[[Instruction], list[Instruction]], out: dict[Instruction, Scope | None],
               phase: dict[Instruction, str]) -> Scope | None:
    """The layer strictly inside ``at`` that every optimizer user ``inst`` feeds (followed through
    users placed at ``at`` too) lies in; None when one of them lies elsewhere or is shared."""
    reached: list[Scope] = []
    todo, seen = [inst], {inst}
    while todo:
        for u in users(todo.pop()):
            if u in seen:
                continue
            seen.add(u)
            if u.opcode in ("tuple", "get-tuple-element") and u not in out:
                todo.append(u)  # a multi-output fusion's root, its fusion's elements
                continue
            if phase.get(u) != "optimizer":
                continue  # the new state leaves the step (the entry's root tuple)
            there = out.get(u)
            if there is at:
                todo.append(u)
            elif there is not None and at.contains(there):
                reached.append(there)
            else:
                return None  # shared or elsewhere: what it feeds says nothing more
        if len(seen) > _MAX_FED:
            return None
    common = _common_scope(reached)
    return common if common is not None and common is not at and at.contains(common) else None


class _UpdateTracer:
    """Follows optimizer instructions' operands back to the layers they read.

    Kept as an object because the walk shares state across every instruction of the module:
    the fusion that calls each fused computation, the memo of what feeds each instruction, and
    the scopes found so far (by id, so the memo can hold hashable frozensets).
    """

    def __init__(self, tree: ScopeTree) -> None:
        self.tree = tree
        # the fusion calling each fused computation: gathered while the tree was built, or here
        known = tree.fusion_callers
        callers: dict[str, Instruction] = {}
        for comp in tree.module.computations if known is None else ():
            for inst in [i for i in comp.instructions if i.opcode == "fusion"]:
                for c in inst.called_computations:
                    callers.setdefault(c.name, inst)
        self.callers: Mapping[str, Instruction] = known if known is not None else callers
        self.memo: dict[Instruction, frozenset[int]] = {}
        self.scopes: dict[int, Scope] = {}
        self._ids: dict[int, frozenset[int]] = {}
        self._steps: dict[Instruction, tuple[frozenset[int], tuple[Instruction, ...]]] = {}
        self.of = tree.filing
        self.phase = tree.phases
        self._readers: dict[Instruction, Scope | None] = {}
        self._users: dict[int, dict[Instruction, list[Instruction]]] = {}  # per computation, once
        self._params: dict[int, list[Instruction]] = {}  # the same, of their parameters
        self._entry = tree.module.entry

    def _is_entry(self, op: Instruction) -> bool:
        return self._entry is not None and op.parent is self._entry

    def layers_feeding(self, inst: Instruction) -> list[Scope]:
        """The layer scopes whose gradients or weights reach ``inst``."""
        return [self.scopes[i] for i in self.feeds(inst)]

    def inputs(self, inst: Instruction) -> Sequence[Instruction]:
        """``inst``'s operands, seen through fusions: a fusion's input is its fused root, a
        fused parameter's input is the fusion's matching operand."""
        opcode = inst.opcode
        if opcode == "fusion" and inst.called_computations:
            root = inst.called_computations[0].root
            return [root] if root is not None else []
        if opcode == "parameter" and inst.parent is not None:
            caller = self.callers.get(inst.parent.name)
            if caller is not None:
                k = inst.parameter_number or 0
                return [caller.operands[k]] if k < len(caller.operands) else []
        return inst.operands

    def feeds(self, inst: Instruction, depth: int = 0) -> frozenset[int]:
        """Ids of the layer scopes feeding ``inst``, following optimizer instructions only
        (anything else either is a layer's source or ends the walk).

        A depth-first walk on an explicit stack (a chain of updates may be thousands deep):
        an instruction is marked as being walked (an empty answer, the cycle guard for a while
        body's parameter) when first reached, its inputs are walked in order, and its answer is
        the union of theirs; the walk stops :data:`_MAX_DEPTH` steps from where it started."""
        memo = self.memo
        hit = memo.get(inst)
        if hit is not None:
            return hit
        stack = [self._frame(inst, depth)]
        while stack:
            frame = stack[-1]  # [instruction, depth, instructions to walk, next one, found]
            walk, found = frame[2], frame[4]
            k = frame[3]
            while k < len(walk):
                step = walk[k]
                k += 1
                got = memo.get(step)
                if got is None:
                    child = self._frame(step, frame[1] + 1)
                    if child[2]:  # walk it first, then come back to the next one
                        frame[3] = k
                        stack.append(child)
                        break
                    got = memo[step] = child[4]  # nothing to walk: done at once
                if got and got is not found:
                    found = frame[4] = _union(found, got)
            else:
                stack.pop()
                done = memo[frame[0]] = found
                if stack and done:
                    stack[-1][4] = _union(stack[-1][4], done)
        return memo[inst]

    def _frame(self, inst: Instruction, depth: int) -> list:
        """Start walking ``inst``: mark it (the cycle guard), gather the sources among its
        inputs (:meth:`inputs`) and list, in order, the inputs to walk."""
        self.memo[inst] = _NONE
        found = _NONE
        walk: list[Instruction] = []
        if depth < _MAX_DEPTH:
            known = self._steps
            opcode = inst.opcode
            for op in self.inputs(inst) if opcode == "fusion" or opcode == "parameter" else inst.operands:
                got = known.get(op)
                if got is None:
                    got = known[op] = self._steps_of(op)
                src, more = got
                if src:
                    found = _union(found, src)
                if more:
                    walk += more
        return [inst, depth, walk, 0, found]

    def _steps_of(self, op: Instruction) -> tuple[frozenset[int], tuple[Instruction, ...]]:
        """What one operand contributes: the layers it is a source of, and the instructions to
        walk. A computation's root tuple is looked through element by element (each a source,
        else walked whatever its phase); an optimizer op is walked; a layer's op is a source;
        anything else contributes nothing."""
        if op.opcode == "tuple" and op.parent is not None and op is op.parent.root:
            sources: set[int] = set()
            walk: list[Instruction] = []
            for elem in op.operands:
                src = self.source(elem)
                if src:
                    sources |= src
                else:
                    walk.append(elem)
            return frozenset(sources), tuple(walk)
        if self.is_optimizer(op):
            return _NONE, (op,)
        return self._layer_source(op), ()

    def is_optimizer(self, inst: Instruction) -> bool:
        """An optimizer-phase instruction, or a fused parameter (which stands for its fusion's
        operand and must be followed)."""
        return self.phase.get(inst) == "optimizer" or (
            inst.opcode == "parameter" and inst.parent is not None and inst.parent.name in self.callers)

    def source(self, op: Instruction) -> frozenset[int]:
        """A layer's gradient or weight: the layer's scope; anything else: nothing."""
        if self.is_optimizer(op):
            return _NONE
        return self._layer_source(op)

    def _layer_source(self, op: Instruction) -> frozenset[int]:
        """:meth:`source` of an instruction known not to be the optimizer's."""
        s = self.of[op]
        if s.kind != "scope" and op.opcode == "parameter" and self._is_entry(op):
            # a weight its name filed in no layer (nn.scan's ``blocks/attn/key/kernel`` while
            # the ops say ``blocks/attn/attn/key``): the layer that reads it
            if op in self._readers:
                read_by = self._readers[op]
            else:
                read_by = self._readers[op] = _reading_layer(self.tree, op, self._users, self._params)
            if read_by is None:
                return _NONE
            s = read_by
        if s.kind == "scope" and (self.phase.get(op) == "backward" or op.opcode == "parameter"):
            got = self._ids.get(id(s))
            if got is None:
                self.scopes[id(s)] = s
                got = self._ids[id(s)] = frozenset({id(s)})
            return got
        return _NONE


#: Instructions that pass a value on without computing with it (a slice of a stacked weight
#: is the weight): :func:`_reading_layer` follows them to the instructions that do work.
_PLUMBING = WEIGHT_CARRIERS
#: How many instructions :func:`_reading_layer` visits before it gives up.
_MAX_READS = 2000


#: A value :func:`_reading_layer` follows: an instruction, which element of its tuple (None: all
#: of it), and the call or fusion it was reached through (None outside one).
_Value = tuple[Instruction, "int | None", "Instruction | None"]


def _parameters(comp: Computation, memo: dict[int, list[Instruction]]) -> list[Instruction]:
    """``comp.parameters`` (sorted by number), worked out once per computation in ``memo``: a
    scan's body or a fusion of many operands is reached once per weight it carries."""
    got = memo.get(id(comp))
    if got is None:
        got = memo[id(comp)] = comp.parameters
    return got


def _passed_on(u: Instruction, inst: Instruction, index: int | None, caller: Instruction | None,
               params: dict[int, list[Instruction]] | None = None) -> list[_Value] | None:
    """Where ``u``, a user of the value ``inst`` (element ``index`` of it), hands that value on:
    into a tuple, out of one, into a loop body, a called or fused computation, through a
    remat barrier or plumbing; ``[]`` when ``u`` does not take that element; None when ``u``
    computes with the value (a reader)."""
    opcode = u.opcode
    at = [k for k, o in enumerate(u.operands) if o is inst]
    if opcode == "tuple":
        return [(u, k, None) for k in at] if index is None else []
    if opcode == "get-tuple-element":
        return [(u, None, None)] if index is not None and u.attributes.get("index", "") == str(index) else []
    if opcode in ("opt-barrier", "optimization-barrier"):  # remat's barrier: a tuple in, the same out
        return [(u, index, caller)]
    memo = params if params is not None else {}
    if opcode == "while":
        return [(p, index, None) for body in u.calls_by_attribute.get("body", ())
                for p in _parameters(body, memo) if p.parameter_number == 0]
    if opcode in ("call", "fusion"):
        return [(p, index, u) for comp in u.called_computations[:1]
                for p in _parameters(comp, memo) if p.parameter_number in at]
    if index is not None:
        return []  # a tuple's other users (its root, a loop's condition) read no element of it
    if opcode in _PLUMBING:
        return [(u, None, caller)]
    return None


def _reading_layer(tree: ScopeTree, param: Instruction,
                   users_of: dict[int, dict[Instruction, list[Instruction]]] | None = None,
                   params: dict[int, list[Instruction]] | None = None) -> Scope | None:
    """The innermost layer scope holding every instruction that does work with the entry
    parameter ``param`` in the forward or backward pass, following its value through tuples,
    ``while`` loops (into the body, by tuple index), calls and fusions, and the plumbing of
    :data:`_PLUMBING` (a scan's ``dynamic-slice`` of the stacked weight); None when no layer
    reads it (an optimizer's moment, the step count) or the readers share no layer. ``users_of``:
    each computation's users, shared by the calls on one tree (the entry's are read once, not
    once per weight); ``params``: each computation's parameters, shared the same way (None: not kept)."""
    if users_of is None:
        users_of = {}

    def users(inst: Instruction) -> list[Instruction]:
        comp = inst.parent
        if comp is None:
            return []
        got = users_of.get(id(comp))
        if got is None:
            got = users_of[id(comp)] = comp.users()
        return got.get(inst, [])

    phase, of = tree.phases, tree.filing
    found: list[Scope] = []
    seen: set[tuple[int, int | None, int]] = set()
    # (a value, its tuple element or None, the call or fusion whose computation it is in: one
    # that only slices the weight, JAX's ``jit(dynamic_index_in_dim)``, a ``dynamic-slice``
    # fusion, hands it on as its result)
    todo: list[_Value] = [(param, None, None)]
    while todo and len(seen) < _MAX_READS:
        inst, index, caller = todo.pop()
        key = (id(inst), index, id(caller))  # a computation two calls share is walked for each
        if key in seen:
            continue
        seen.add(key)
        if index is None and caller is not None and inst.parent is not None and inst is inst.parent.root:
            todo.append((caller, None, None))
        for u in users(inst):
            if index is None and u.opcode in _PLUMBING and phase.get(u) == "optimizer":
                continue  # the optimizer's own reshapes of the weight lead to its update only
            passed = _passed_on(u, inst, index, caller, params)
            if passed is not None:
                todo += passed
            elif index is None and phase.get(u) != "optimizer":
                s = of.get(u)
                if s is None and caller is not None and caller.opcode == "fusion":
                    s = of.get(caller)  # a fused instruction: its fusion's layer
                if s is None or s.kind != "scope":
                    return None  # read by something no layer holds: not a layer's weight
                found.append(s)
    if todo:
        return None  # too far to tell
    common = _common_scope(found)
    return None if common is None or common.is_function else common  # JAX's jit(f) is no layer


def _union(a: frozenset[int], b: frozenset[int]) -> frozenset[int]:
    """``a | b``, or ``a`` or ``b`` itself when it holds the other. Answers are shared, never
    changed, and most instructions of an update read the very set of layers their inputs read
    (85 or 86 layers for 50k of the 300k-instruction module's 95k optimizer instructions, after
    a global-norm clip). A copy per instruction cost that module 260 MB and made its walk
    1.5-1.9x slower (1.04-1.33 s against 0.70-0.72 s, each first in a fresh process)."""
    if not b or b is a:
        return a
    if not a:
        return b
    if len(b) <= len(a):
        if b <= a:
            return a
    elif a <= b:
        return b
    return a | b


#: How many steps from an optimizer instruction :meth:`_UpdateTracer.feeds` follows.
_MAX_DEPTH = 400
_NONE: frozenset[int] = frozenset()


def _innermost_of_chain(found: list[Scope], common: Scope | None) -> Scope | None:
    """The innermost of ``found`` when the others all hold it and run a loop themselves (a
    scan's stacked weights: the update reads the weight, placed in ``ViT/blocks/mlp/fc1``, and
    its gradient, which leaves the scan's ``while`` in ``ViT``: it updates ``fc1``, not
    ``ViT``); None otherwise. ``common``: their common scope, which is then one of them. Outside
    loops the common scope stands (a Keras Dense's kernel is read in its ``Tensordot`` name
    scope; the layer is what its update updates)."""
    if common is None or len(found) < 2 or not any(s is common for s in found):
        return None
    deepest = max(found, key=lambda s: s.depth)
    if not all(s.contains(deepest) for s in found):
        return None
    if not all(any(i.opcode == "while" for i in s.instructions) for s in found if s is not deepest):
        return None
    return deepest


def _common_scope(found: list[Scope]) -> Scope | None:
    """The innermost scope holding all of ``found``; None if that is the root (no layer) or
    nothing was found."""
    if not found:
        return None
    # ``chain``: the root … ``common``; ``at``: id() of each of them → its place in ``chain``.
    # Each scope climbs to the first of them it meets: there the common scope is now (most
    # sets hold hundreds of sibling layers, one step each).
    common = found[0]
    chain = [common, *common.ancestors()][::-1]
    at = {id(c): k for k, c in enumerate(chain)}
    n = len(chain)  # chain[:n] is still the common scope's
    for s in found[1:]:
        x: Scope | None = s
        k = at.get(id(s))
        while k is None or k >= n:
            x = x.parent if x is not None else None
            if x is None:
                return None  # no scope holds both (scopes of two trees)
            k = at.get(id(x))
        n = k + 1
    common = chain[n - 1]
    return common if common.kind == "scope" else None
