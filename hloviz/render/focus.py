"""``--focus NAME --radius N``: the instructions within N steps of one instruction.

Steps follow data in both directions (operands and users), into and out of fusions and bodies.
Elided instructions (inlined constants, tuple plumbing, fused parameters, the fusion itself)
cost no step, so "radius 1" means the neighbours a reader sees in the picture.
"""

from __future__ import annotations

import difflib
from collections import deque
from typing import Iterator

from ..errors import InputError
from ..ir import Instruction
from .model import ELIDED, FPARAM, FUSION, ViewGraph

__all__ = ["find_instruction", "focus_set"]


def find_instruction(g: ViewGraph, name: str) -> Instruction:
    """The drawn instruction called ``name`` (``%`` optional), or an :class:`InputError` with advice."""
    bare = name.strip().lstrip("%")
    for comp in g.computations:
        inst = comp.get(bare)
        if inst is not None:
            return inst
    for comp in g.module.computations:
        if comp.get(bare) is not None:
            raise InputError(f"instruction {bare!r} is in computation {comp.name}, which this picture does not draw",
                             hint=f"add --computation {comp.name}")
    names = [i.name for c in g.computations for i in c.instructions]
    close = difflib.get_close_matches(bare, names, n=3) if len(names) < 200_000 else []
    hint = f"did you mean {', '.join(close)}?" if close else "instruction names are as printed in the HLO text"
    raise InputError(f"module {g.module.name} has no instruction named {bare!r}", hint=hint)


def _neighbours(g: ViewGraph, inst: Instruction) -> Iterator[Instruction]:
    yield from inst.operands
    comp = inst.parent
    if comp is None:
        return
    yield from g.users.get(comp.name, {}).get(inst, ())
    kind = g.kind.get(id(inst))
    place = g.places.get(comp.name)
    for called in inst.called_computations:
        callee = g.places.get(called.name)
        if callee is not None and callee.owner is inst:
            if called.root is not None:
                yield called.root
            yield from called.parameters
    if place is not None and place.owner is not None:
        if inst is comp.root:
            yield place.owner
        if inst.opcode == "parameter" and (kind == FPARAM or place.role != "fusion"):
            n = inst.parameter_number
            if place.role == "fusion" and n is not None and 0 <= n < len(place.owner.operands):
                yield place.owner.operands[n]
            else:
                yield place.owner
    if kind == FUSION:
        yield from g.users.get(comp.name, {}).get(inst, ())


def focus_set(g: ViewGraph, name: str, radius: int) -> tuple[Instruction, set[int], str]:
    """The target, the ids of the instructions within ``radius`` steps, and a note saying so."""
    target = find_instruction(g, name)
    radius = max(0, radius)
    dist: dict[int, int] = {id(target): 0}
    queue: deque[Instruction] = deque([target])
    kind = g.kind
    while queue:
        inst = queue.popleft()
        d = dist[id(inst)]
        for nb in _neighbours(g, inst):
            if id(nb) not in kind:
                continue
            step = 0 if kind[id(nb)] in ELIDED else 1
            nd = d + step
            if nd > radius or dist.get(id(nb), radius + 1) <= nd:
                continue
            dist[id(nb)] = nd
            if step == 0:
                queue.appendleft(nb)
            else:
                queue.append(nb)
    shown = sum(1 for i in dist if kind.get(i) not in ELIDED)
    total = sum(1 for c in g.computations for i in c.instructions if kind.get(id(i)) not in ELIDED)
    note = (f"focus: {target.name} and what lies within {radius} step{'s' if radius != 1 else ''} of it "
            f"({shown} of {total} instructions)")
    return target, set(dist), note
