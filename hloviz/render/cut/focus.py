"""``--focus NAME --radius N`` and ``--scope PATH``: which instructions a picture keeps.

A name is what the user knows: an HLO instruction name (``dot.11``), an op name
(``model/block_5_expand_1/Conv2D``), a scope path or Keras layer name (``block_5_expand``), or a
unique substring of one of them; an unknown name gets the closest matches
(:func:`resolve`). ``--focus`` keeps what lies within N steps of the instructions it names;
``--scope`` keeps one scope's instructions (and the fusions holding them).

Steps follow data in both directions (operands and users), into and out of fusions and bodies.
Elided instructions (inlined constants, tuple plumbing, fused parameters, a fusion entered from
its own body) cost no step, so "radius 1" means the neighbours a reader sees in the picture; a
fusion reached as an operand or a user is one step, like the node it is drawn as (else a chain
of fusions would be crossed for free, and every kernel lie within any radius).
"""

from __future__ import annotations

import difflib
from collections import deque
from collections.abc import Iterator

from ...errors import InputError
from ...ir import Instruction
from ..tree.model import ELIDED, FPARAM, FUSION, ViewGraph

__all__ = ["find_instruction", "focus_set", "resolve", "scope_set"]


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


def resolve(g: ViewGraph, name: str, scopes=None) -> tuple[list[Instruction], str]:
    """The drawn instructions ``name`` stands for, and how it matched (for the picture's note).

    Tried in order: an instruction name; an exact op name; a scope (path, Keras layer name,
    op name's scope — :meth:`hloviz.analysis.scopes.ScopeTree.find`); a substring of exactly
    one op name. An :class:`InputError` lists the closest names otherwise.
    """
    bare = name.strip().lstrip("%")
    for comp in g.computations:
        inst = comp.get(bare)
        if inst is not None:
            return [inst], f"instruction {inst.name}"
    drawn = [i for c in g.computations for i in c.instructions]
    by_op = [i for i in drawn if i.metadata.op_name == bare]
    if by_op:
        return by_op, f"op {bare}"
    if scopes is None:
        from ...analysis.scopes import build_scope_tree

        scopes = build_scope_tree(g.module, stage="pre")
    found = [s for s in scopes.find(bare) if s.kind != "root"] if bare else []
    if found:
        inside = {id(i) for s in found for i in s.all_instructions()}
        hits = [i for i in drawn if id(i) in inside]
        if hits:
            return hits, f"scope {_found_text(bare, found)}"
    if bare:
        ops = sorted({i.metadata.op_name for i in drawn if bare in i.metadata.op_name})
        if len(ops) == 1:
            return [i for i in drawn if i.metadata.op_name == ops[0]], f"op {ops[0]}"
        if len(ops) > 1:
            raise InputError(f"{bare!r} is part of {len(ops)} op names in {g.module.name}",
                             hint="say which: " + ", ".join(ops[:5]) + (" …" if len(ops) > 5 else ""))
    for comp in g.module.computations:
        if comp.get(bare) is not None:
            raise InputError(f"instruction {bare!r} is in computation {comp.name}, which this picture does not draw",
                             hint=f"add --computation {comp.name}")
    close = scopes.closest(bare, n=3)
    names = [i.name for i in drawn]
    if len(names) < 200_000:
        close += [c for c in difflib.get_close_matches(bare, names, n=3) if c not in close]
    hint = (f"did you mean {', '.join(close[:5])}?" if close
            else "give an instruction name, an op name, a scope path or a layer name (hloviz stats --by scope lists them)")
    raise InputError(f"module {g.module.name} has no instruction, op or scope named {bare!r}", hint=hint)


def scope_set(g: ViewGraph, path: str, scopes=None) -> tuple[set[int], str]:
    """``--scope PATH``: the ids of the instructions of that scope, with the bodies holding any
    of them and the fusions that run its work (drawn whole), and a note saying what is drawn.

    A fusion is drawn when :meth:`~hloviz.analysis.scopes.ScopeTree.layers_of` names the scope
    (or one below it) — the rule ``stats --by scope``, the explorer and the kernel table follow —
    not whenever it holds one of the scope's instructions: XLA merges a constant or a broadcast
    across layers and keeps one layer's op name on every copy fused elsewhere."""
    if scopes is None:
        from ...analysis.scopes import build_scope_tree

        scopes = build_scope_tree(g.module, stage="pre")
    found = [s for s in scopes.find(path) if s.kind != "root"] if path.strip() else []
    if not found:
        close = scopes.closest(path, n=5)
        hint = f"did you mean {', '.join(close)}?" if close else "hloviz stats --by scope lists the scopes"
        raise InputError(f"module {g.module.name} has no scope {path!r}", hint=hint)
    inside = {id(i) for s in found for i in s.all_instructions()}
    keep: set[int] = set()
    for comp in g.computations:
        place = g.places[comp.name]
        if place.parent is not None:
            continue
        for inst in comp.instructions:
            inner = _called(g, inst)
            if inst.opcode == "fusion":
                hit = any(f.contains(s) for s in scopes.layers_of(inst) for f in found)
            else:
                hit = id(inst) in inside or any(id(i) in inside for i in inner)
            if hit:
                keep.add(id(inst))
                keep.update(id(i) for i in inner)
        # the scope's weights: parameters (and constants) read only by what is kept
        users = g.users.get(comp.name) or comp.users()
        for inst in comp.instructions:
            if inst.opcode in ("parameter", "constant") and id(inst) not in keep:
                readers = users.get(inst, ())
                if readers and all(id(u) in keep for u in readers):
                    keep.add(id(inst))
    total = sum(1 for c in g.computations for i in c.instructions if g.kind.get(id(i)) not in ELIDED)
    shown = sum(1 for i in keep if g.kind.get(i) not in ELIDED)
    return keep, f"scope {_found_text(path, found)}: {shown} of {total} instructions"


def _found_text(query: str, found: list) -> str:
    """``block_5_expand`` for one scope, ``'block_5': 9 scopes (block_5_expand … block_5_add)``."""
    if len(found) == 1:
        return found[0].plain_path or found[0].path
    labels = [s.label or s.name for s in found]
    ordered = sorted(labels, key=lambda t: (len(t), t))
    return f"{query.strip()!r}: {len(found)} scopes ({ordered[0]} … {ordered[-1]})"


def _called(g: ViewGraph, inst: Instruction) -> list[Instruction]:
    if not inst.called_computations:
        return []
    from ...ir import called_closure

    return [i for c in called_closure(inst.called_computations) if c.name in g.places for i in c.instructions]


def focus_set(g: ViewGraph, name: str | list[Instruction], radius: int, scopes=None,
              label: str | None = None) -> tuple[list[Instruction], set[int], str]:
    """The targets, the ids of the instructions within ``radius`` steps, and a note saying so
    (``name`` may be the targets themselves, ``label`` what the user called them)."""
    if isinstance(name, str):
        targets, what = resolve(g, name, scopes)
    else:
        n = len(name)
        targets, what = name, f"{label} ({n} instruction{'s' if n != 1 else ''} here)" if label else \
            f"{n} instruction{'s' if n != 1 else ''}"
    radius = max(0, radius)
    dist: dict[int, int] = {id(t): 0 for t in targets}
    queue: deque[Instruction] = deque(targets)
    kind = g.kind
    while queue:
        inst = queue.popleft()
        d = dist[id(inst)]
        for nb in _neighbours(g, inst):
            if id(nb) not in kind:
                continue
            k = kind[id(nb)]
            step = 0 if k in ELIDED and (k != FUSION or inst.parent in nb.called_computations) else 1
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
    head = targets[0].name if len(targets) == 1 and what.startswith("instruction") else what
    it = "it" if len(targets) == 1 else "them"
    note = (f"focus: {head} and what lies within {radius} step{'s' if radius != 1 else ''} of {it} "
            f"({shown} of {total} instructions)")
    return targets, set(dist), note
