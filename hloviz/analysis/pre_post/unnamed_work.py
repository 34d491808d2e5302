"""Ops whose work runs in instructions without their op name (the pre→post mapping's data flow).

A pre-optimization op is found in the optimized module by its op name. XLA drops some: it
rebuilds TensorFlow's ``Conv2DBackpropFilter`` as a ``convolution`` without metadata, and the
``transpose`` that kept the name can be folded away (with SGD nothing else carries it). By name
the op is gone; by data flow its work runs in that convolution
(:func:`hloviz.analysis.gradients.forward_partners`: the unnamed convolution reads what the
layer's forward convolution reads). :func:`unnamed_kernels` gives, for each such op, the kernels
that compute it; :func:`may_run_unnamed` says which of the remaining ops cannot be called
eliminated because hloviz cannot tell (they did heavy work, and their result was used).
"""

from __future__ import annotations

from collections.abc import Iterable

from ...ir import Computation, HloModule, Instruction
from ...opcodes import BODY_CALLERS, DOT, HEAVY_WORK, RANDOM
from ..kernels import SYNTHETIC_OP_NAMES
from ..opnames import OpPath, parse_op_name

__all__ = ["may_run_unnamed", "unnamed_kernels"]


def _own_computations(module: HloModule) -> list[Computation]:
    """The entry and the bodies its control flow runs: where kernels sit (not fused
    computations or reducers, whose instructions are their caller's)."""
    inner: set[str] = set()
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.called_computations and inst.opcode not in BODY_CALLERS:
                inner.update(c.name for c in inst.called_computations)
    return [c for c in module.computations if c.name not in inner]


class _Names:
    """Op names read once each."""

    def __init__(self) -> None:
        self.memo: dict[str, OpPath | None] = {}

    def path(self, inst: Instruction) -> OpPath | None:
        name = inst.metadata.op_name
        if not name or name in SYNTHETIC_OP_NAMES:
            return None
        hit = self.memo.get(name, False)
        if hit is False:
            hit = self.memo[name] = parse_op_name(name, inst.metadata.op_type)
        return hit  # type: ignore[return-value]  # False never stays: set above


def _contraction(inst: Instruction) -> bool:
    return inst.opcode == "convolution" or inst.opcode in DOT


def unnamed_kernels(pre: HloModule, post: HloModule, ops_with_kernels: Iterable[str] = ()
                    ) -> dict[str, list[str]]:
    """Pre-optimization op name → the unnamed convolutions and dots of ``post`` (kernels) that
    compute its work: an unnamed contraction paired with a layer's forward contraction (by their
    shared source) is the work of the one op of that layer, of its phase, whose own contraction
    before optimization has as many elements (else of the layer's only such op); ops that one
    already names
    (``ops_with_kernels``: ops whose kernels include a contraction by name) are not candidates."""
    from ..attribution import literal_ids
    from ..gradients import forward_partners

    names = _Names()

    def phase(i: Instruction) -> str | None:
        p = names.path(i)
        return p.phase if p is not None else None

    def layer(f: Instruction) -> tuple[str, ...]:
        p = names.path(f)
        return p.scope if p is not None else ()

    found: list[tuple[Instruction, tuple[str, ...], str]] = []
    for comp in _own_computations(post):
        if not any(_contraction(i) and phase(i) is None for i in comp.instructions):
            continue  # the common case: every convolution and dot kept its name
        for x, (f, ph) in forward_partners(comp, phase, layer, literal_ids(comp)).items():
            found.append((x, layer(f), ph))
    if not found:
        return {}
    taken = set(ops_with_kernels)
    # pre-optimization ops with a contraction of their own: (scope, phase, elements) → ops
    candidates: dict[tuple[str, ...], list[tuple[str, str, int]]] = {}
    for inst in pre.instructions():
        if not _contraction(inst) or inst.metadata.op_name in taken:
            continue
        p = names.path(inst)
        if p is None or inst.shape.is_tuple:
            continue
        candidates.setdefault(p.scope[:1], []).append((inst.metadata.op_name, p.phase, inst.shape.element_count))
    out: dict[str, list[str]] = {}
    for x, scope, ph in found:
        size = x.shape.element_count if not x.shape.is_tuple else -1
        mine = [(op, n) for op, op_phase, n in candidates.get(scope[:1], ())
                if op_phase == ph and _within(names.memo[op], scope)]
        ops = {op for op, n in mine if n == size} or {op for op, _n in mine}  # same size first
        if len(ops) == 1:  # a depthwise filter's gradient: a full convolution, then a mask
            out.setdefault(ops.pop(), []).append(x.name)
    return out


def _within(path: OpPath | None, scope: tuple[str, ...]) -> bool:
    return path is not None and path.scope[:len(scope)] == scope


def may_run_unnamed(pre: HloModule) -> set[str]:
    """Op names of ``pre`` with heavy work (a convolution, dot, reduction or custom call) or a
    random draw (XLA expands ``rng`` into unnamed bit arithmetic) whose value is used (it reaches
    its computation's result): if no instruction of the optimized module carries their name,
    hloviz cannot tell that nothing computes them."""
    from .folded import live_ids

    live = live_ids(pre)
    out: set[str] = set()
    for inst in pre.instructions():
        if (inst.opcode in HEAVY_WORK or inst.opcode in RANDOM) and id(inst) in live:
            name = inst.metadata.op_name
            if name and name not in SYNTHETIC_OP_NAMES:
                out.add(name)
    return out
