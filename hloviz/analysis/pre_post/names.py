"""The names a pre-optimization op can carry after optimization.

Ops are linked across optimization by ``metadata.op_name``. When XLA inlines a called
computation (``call``, a ``conditional`` branch), it prefixes the inlined instructions' op names
with the caller's: JAX's ``max`` inside ``jit(relu)`` comes out as ``jit(mlp)/jit(relu)/max``, and
TF's ``cond/Sin`` inside a branch as ``cond/cond/Sin``. :func:`post_names` lists, for each
pre-opt op name, the names it may have afterwards, so lookups need no guessing beyond that rule.
"""

from __future__ import annotations

from ...ir import Computation, HloModule, Instruction
from ...opcodes import INLINING_CALLERS
from ..kernels import SYNTHETIC_OP_NAMES


def post_names(module: HloModule) -> dict[str, frozenset[str]]:
    """Pre-opt op name → every name it may carry after inlining (itself included).

    Ops that only name parameters (JAX names arguments ``x``, ``w1``…) are not listed.
    """
    callers: dict[str, list[Instruction]] = {}
    for inst in module.instructions():
        if inst.opcode in INLINING_CALLERS:
            for c in inst.called_computations:
                callers.setdefault(c.name, []).append(inst)
    memo: dict[str, frozenset[str]] = {}

    def prefixes(comp: Computation | None, depth: int = 0) -> frozenset[str]:
        if comp is None or depth > 64:
            return frozenset()
        if comp.name not in memo:
            memo[comp.name] = frozenset()  # cycle guard
            out: set[str] = set()
            for caller in callers.get(comp.name, ()):
                name = caller.metadata.op_name
                outer = prefixes(caller.parent, depth + 1)
                if name and name not in SYNTHETIC_OP_NAMES:
                    out.add(name)
                    out.update(f"{p}/{name}" for p in outer)
                else:
                    out.update(outer)
            memo[comp.name] = frozenset(out)
        return memo[comp.name]

    names: dict[str, set[str]] = {}
    for comp in module.computations:
        for inst in comp.instructions:
            op = inst.metadata.op_name
            if not op or op in SYNTHETIC_OP_NAMES or inst.opcode == "parameter":
                continue
            bucket = names.setdefault(op, {op})
            bucket.update(f"{p}/{op}" for p in prefixes(comp))
    return {op: frozenset(v) for op, v in names.items()}
