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

from ..ir import Instruction
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
    modules too, where an update may share a kernel with the gradient it reads."""
    tracer = _UpdateTracer(tree)
    out: dict[Instruction, Scope | None] = {}
    # most updates share their set of layers (every op after a global-norm clip reads them
    # all): the common scope is found once per set, not once per instruction
    common: dict[frozenset[int], Scope | None] = {}
    for comp in tree.module.computations:
        for inst in comp.instructions:
            if tree.phase_of(inst) != "optimizer" or inst.opcode in ("parameter", "constant"):
                continue
            ids = tracer.feeds(inst)
            if ids not in common:
                common[ids] = _common_scope([tracer.scopes[i] for i in ids])
            out[inst] = common[ids]
    return out


class _UpdateTracer:
    """Follows optimizer instructions' operands back to the layers they read.

    Kept as an object because the walk shares state across every instruction of the module:
    the fusion that calls each fused computation, the memo of what feeds each instruction, and
    the scopes found so far (by id, so the memo can hold hashable frozensets).
    """

    def __init__(self, tree: ScopeTree) -> None:
        self.tree = tree
        self.callers: dict[str, Instruction] = {}
        for inst in tree.module.instructions():
            if inst.opcode == "fusion":
                for c in inst.called_computations:
                    self.callers.setdefault(c.name, inst)
        self.memo: dict[Instruction, frozenset[int]] = {}
        self.scopes: dict[int, Scope] = {}

    def layers_feeding(self, inst: Instruction) -> list[Scope]:
        """The layer scopes whose gradients or weights reach ``inst``."""
        return [self.scopes[i] for i in self.feeds(inst)]

    def inputs(self, inst: Instruction) -> list[Instruction]:
        """``inst``'s operands, seen through fusions: a fusion's input is its fused root, a
        fused parameter's input is the fusion's matching operand."""
        if inst.opcode == "fusion" and inst.called_computations:
            root = inst.called_computations[0].root
            return [root] if root is not None else []
        if inst.opcode == "parameter" and inst.parent is not None and inst.parent.name in self.callers:
            caller = self.callers[inst.parent.name]
            k = inst.parameter_number or 0
            return [caller.operands[k]] if k < len(caller.operands) else []
        return list(inst.operands)

    def feeds(self, inst: Instruction, depth: int = 0) -> frozenset[int]:
        """Ids of the layer scopes feeding ``inst``, following optimizer instructions only
        (anything else either is a layer's source or ends the walk)."""
        hit = self.memo.get(inst)
        if hit is not None:
            return hit
        self.memo[inst] = frozenset()  # cycle guard (a while body's parameter)
        found: set[int] = set()
        if depth < 400:
            for op in self.inputs(inst):
                found |= self._feeds_through(op, depth)
        self.memo[inst] = frozenset(found)
        return self.memo[inst]

    def _feeds_through(self, op: Instruction, depth: int) -> frozenset[int]:
        """What one operand contributes: a computation's root tuple is looked through element
        by element; an optimizer op is followed further; a layer's op is a source."""
        if op.opcode == "tuple" and op.parent is not None and op is op.parent.root:
            found: set[int] = set()
            for elem in op.operands:
                found |= self.source(elem) or self.feeds(elem, depth + 1)
            return frozenset(found)
        return self.source(op) or (self.feeds(op, depth + 1) if self.is_optimizer(op) else frozenset())

    def is_optimizer(self, inst: Instruction) -> bool:
        """An optimizer-phase instruction, or a fused parameter (which stands for its fusion's
        operand and must be followed)."""
        return self.tree.phase_of(inst) == "optimizer" or (
            inst.opcode == "parameter" and inst.parent is not None and inst.parent.name in self.callers)

    def source(self, op: Instruction) -> frozenset[int]:
        """A layer's gradient or weight: the layer's scope; anything else: nothing."""
        if self.is_optimizer(op):
            return frozenset()
        s = self.tree.scope_of(op)
        if s.kind == "scope" and (self.tree.phase_of(op) == "backward" or op.opcode == "parameter"):
            self.scopes[id(s)] = s
            return frozenset({id(s)})
        return frozenset()


def _common_scope(found: list[Scope]) -> Scope | None:
    """The innermost scope holding all of ``found``; None if that is the root (no layer) or
    nothing was found."""
    if not found:
        return None
    common = found[0]
    for s in found[1:]:
        while common is not None and not common.contains(s):
            common = common.parent
    return common if common is not None and common.kind == "scope" else None
