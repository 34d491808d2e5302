"""Following an optimizer instruction's operands back, through the optimizer's own instructions
and through fusions, to the layers whose values it reads (:class:`UpdateTracer`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...ir import Instruction
from ..scopes import Scope, ScopeTree
from .reads import reading_layer


class UpdateTracer:
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
                if got and got is not found and not _shared_coefficient(step, got, frame[0]):
                    found = frame[4] = _union(found, got)
            else:
                stack.pop()
                done = memo[frame[0]] = found
                if stack and done and not _shared_coefficient(frame[0], done, stack[-1][0]):
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
        if self.is_optimizer(op) or _tape_sum(op):
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
                read_by = self._readers[op] = reading_layer(self.tree, op, self._users, self._params)
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


def _tape_sum(op: Instruction) -> bool:
    """A gradient tape's sum of two gradients (TensorFlow's top-level ``AddN``): backward work of
    no layer, followed to the gradients it adds. XLA fuses it into the update it feeds, where it
    is filed with the update's kernel, in the optimizer's scope: as a source there, it named
    the optimizer as the layer the update updates."""
    md = op.metadata
    return md.op_type == "AddN" and "/" not in md.op_name


def _shared_coefficient(step: Instruction, layers: frozenset[int], reader: Instruction) -> bool:
    """Whether ``reader``, an array, reads through ``step`` a scalar the optimizer
    computed from several layers' values — a global-norm clip's factor ``clip_norm /
    max(global_norm, clip_norm)`` — which scales every update alike, as a learning rate does:
    what an update reads through it says nothing of the layer it updates. Followed, it named the
    model for every update after ``clip_by_global_norm`` (a two-input Keras step: Adam's moments
    of all ten weights in one ``optimizer`` box of the model, their weight decays in the
    layers). The numbers computing the factor read it on: the norm stays where it was."""
    return len(layers) > 1 and _scalar(step) and not _scalar(reader)


def _scalar(inst: Instruction) -> bool:
    """A rank-0 array: a factor, not a weight's value (a ``Dense(1)``'s bias is an ``f32[1]``)."""
    return inst.shape.is_array and not inst.shape.dims


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
