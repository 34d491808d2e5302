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
    """Optimizer op name → the path of the layer scope whose variables it updates."""
    feeds: dict[Instruction, frozenset[int]] = {}
    scopes: dict[int, Scope] = {}
    per_op: dict[str, set[int]] = {}
    for comp in tree.module.computations:
        for inst in comp.instructions:  # operands come before their users in HLO text
            if tree.phase_of(inst) != "optimizer":
                continue
            found: set[int] = set()
            for op in inst.operands:
                if tree.phase_of(op) == "optimizer":
                    found |= feeds.get(op, frozenset())
                    continue
                s = tree.scope_of(op)
                if s.kind == "scope" and (tree.phase_of(op) == "backward" or op.opcode == "parameter"):
                    scopes[id(s)] = s
                    found.add(id(s))
            feeds[inst] = frozenset(found)
            name = inst.metadata.op_name
            if name:
                per_op.setdefault(name, set()).update(found)
    out: dict[str, str] = {}
    for name, ids in per_op.items():
        layer = _common_scope([scopes[i] for i in ids])
        if layer is not None:
            out[name] = layer.path
    return out


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
