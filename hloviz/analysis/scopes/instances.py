"""Equinox layers told apart by the weights they read.

JAX writes an Equinox layer's ops under its class, not under the attribute that holds it: both
convolutions of a CNN are ``…/eqx.nn.Conv/conv_general_dilated``, the five layers of an
``eqx.nn.MLP`` all ``…/eqx.nn.MLP/eqx.nn.Linear/dot_general``, and called from one loop they
share every stack frame too. The scope tree then had one ``eqx.nn.Linear`` holding five layers'
work. What tells the calls apart is data: each reads its own weights, which JAX names by the
user's path (the entry parameter ``model.layers[2].weight``).

:func:`split_instances` cuts such a scope's instructions into the groups that data flow joins —
an instruction with its operands in the scope, and instructions reading one value from outside
it (a layer's forward ``dot`` and its weight gradient read the same activation, or argument; its
input gradient and its weight gradient the same incoming gradient) — and names each group that reads
the weights of one holder alone after that holder: inside the one layer holding them by its last
attribute (``eqx.nn.MLP/layers[2]``), else by its whole path (``conv1``; two blocks' attention
output projections ``blocks[0]/attn/output_proj``, beside ``blocks[0]/norm1``). A group reading
two holders' weights, or none, stays in the class's scope: q, k and v projections reading one
input stay together, and the gradient sums JAX names after a layer (``add_any``) join nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ...ir import Computation, HloModule, Instruction
from ...opcodes import FLIPPED_WEIGHT_CARRIERS
from ..opnames import OpPath

__all__ = ["split_instances"]

#: How JAX begins the scope segment of an Equinox layer: its class (``eqx.nn.Linear``).
_CLASS = "eqx.nn."
#: The op JAX names a sum of gradients by (``…/add_any``).
_SUM = "add_any"
#: The last attribute or index of a weight's path (``.weight``, ``['kernel']``, ``[0]``).
_LEAF = re.compile(r"(?:\.\w+|\[[^\]]*\])$")


def split_instances(module: HloModule, named: list[tuple[Instruction, OpPath]],
                    callers: Mapping[str, Instruction], forward_scopes: set[tuple[str, ...]]
                    ) -> list[tuple[Instruction, OpPath]]:
    """``named`` with the op paths of Equinox layers' instructions renamed after the holder of the
    weights they read, where one class scope holds the work of two or more holders
    (``callers``: computation name → an instruction calling it, to follow a fused parameter out
    to the entry parameter it is); the new scopes of forward work are added to ``forward_scopes``."""
    by_scope: dict[tuple[str, ...], list[int]] = {}
    layer: dict[int, bool] = {}  # id(OpPath) → an Equinox layer's (instructions of one op share one)
    for k, (_inst, op) in enumerate(named):
        hit = layer.get(id(op))
        if hit is None:
            hit = layer[id(op)] = len(op.scope) > 1 and op.scope[-1].startswith(_CLASS)
        if hit:
            by_scope.setdefault(op.scope, []).append(k)
    # a layer holding layers (``eqx.nn.MLP`` of ``eqx.nn.Linear``s) reads none of its own weights: its
    # sub-layers' scopes are split, not it (its activations, fused with their bias adds, would be)
    for scope in [s for s in by_scope if any(len(t) > len(s) and t[:len(s)] == s for t in by_scope)]:
        del by_scope[scope]
    if not by_scope:
        return named
    holder_of = _holders(module)
    out = list(named)
    for scope, ks in by_scope.items():
        groups = _groups([named[k][0] for k in ks], holder_of, callers,
                         {j for j, k in enumerate(ks) if named[k][1].op == _SUM})
        forward = {h for members, h in groups if h is not None and any(named[ks[j]][1].phase == "forward" for j in members)}
        if len(forward) < 2:
            continue  # one layer of this class, or a layer of no weights (a pool called twice): as JAX wrote it
        # inside one layer holding them (an ``eqx.nn.MLP``): named in it; inside several (the two
        # blocks' ``eqx.nn.MultiheadAttention``): by the whole path, ``blocks[0]/attn/output_proj``
        containers = {_segments(h)[:-1] for _m, h in groups if h is not None}
        for members, holder in groups:
            if holder is None:
                continue
            renamed = _renamed(scope, holder, whole=len(containers) > 1)
            for j in members:
                op = named[ks[j]][1]
                out[ks[j]] = (named[ks[j]][0], OpPath(renamed, op.op, op.phase, op.raw))
                if op.phase == "forward":
                    forward_scopes.update(renamed[:n] for n in range(1, len(renamed) + 1))
    return out


def _renamed(scope: tuple[str, ...], holder: str, *, whole: bool) -> tuple[str, ...]:
    """``scope`` with its Equinox layer (``eqx.nn.Linear``) named as the holder of its weights:
    below the layers holding it by the holder's last attribute (``eqx.nn.MLP/layers[2]``), or,
    ``whole``, with every Equinox class in the path given as the attributes the user wrote
    (``blocks[0].attn.output_proj`` → ``blocks[0]/attn/output_proj``), which JAX's names leave out."""
    parts = _segments(holder)
    if not whole:
        return scope[:-1] + parts[-1:]
    first = next(k for k, part in enumerate(scope) if part.startswith(_CLASS))
    return scope[:first] + parts


def _segments(holder: str) -> tuple[str, ...]:
    """A holder's attributes (``blocks[0].attn`` → ``blocks[0]``, ``attn``; dots inside brackets kept)."""
    return tuple(p for p in re.split(r"\.(?![^\[]*\])", holder) if p)


def _holders(module: HloModule) -> dict[int, str]:
    """Entry parameter id → the holder of the weight it is, from the path JAX names it by
    (``model.layers[2].weight`` → ``layers[2]``; the argument's own name taken off); nothing
    for a parameter that is a whole argument (``x``)."""
    out: dict[int, str] = {}
    if module.entry is None:
        return out
    for p in module.entry.parameters:
        path = p.metadata.op_name
        holder = _LEAF.sub("", path)
        if holder == path or not holder:
            continue
        head = re.match(r"^\w+\.?", holder)  # the argument (``model.``): every layer's, no layer's name
        short = holder[head.end():] if head is not None and head.end() < len(holder) else holder
        out[id(p)] = short
    return out


def _groups(insts: list[Instruction], holder_of: Mapping[int, str], callers: Mapping[str, Instruction],
            apart: set[int]) -> list[tuple[list[int], str | None]]:
    """``insts`` (one scope's) joined by data flow, each group with the one holder whose weights
    it reads (None: none, or two). ``apart``: the indexes of sums of gradients, which join nothing
    (JAX names the sum of the gradients two layers send back to one value after the first of
    them: a pre-norm block's residual gradient, ``…/eqx.nn.LayerNorm/add_any``, joined its two norms)."""
    joins = _Joins(len(insts))
    reads = _join(insts, holder_of, callers, apart, joins)
    members: dict[int, list[int]] = {}
    for j in range(len(insts)):
        members.setdefault(joins.find(j), []).append(j)
    # a group reading no weight, in a kernel that reads one layer's weights, is that layer's: after
    # optimization a bias gradient's ``reduce`` shares its fusion with the update of that bias
    by_kernel: dict[int, set[str]] = {}
    out = []
    for group in members.values():
        holders = set().union(*(reads[j] for j in group))
        if not holders:
            near: set[str] = set()
            for comp in {id(insts[j].parent): insts[j].parent for j in group}.values():
                if comp is not None and comp.name in callers:
                    if id(comp) not in by_kernel:
                        by_kernel[id(comp)] = _weights_read(comp, holder_of, callers)
                    near |= by_kernel[id(comp)]
            holders = near if len(near) == 1 else holders
        out.append((group, next(iter(holders)) if len(holders) == 1 else None))
    return _with_call_sites(insts, out, apart)


class _Joins:
    """Which instructions data flow joins (union-find over their indexes)."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, j: int) -> int:
        parent = self.parent
        while parent[j] != j:
            parent[j] = parent[parent[j]]
            j = parent[j]
        return j

    def join(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def _join(insts: list[Instruction], holder_of: Mapping[int, str], callers: Mapping[str, Instruction],
          apart: set[int], joins: _Joins) -> list[set[str]]:
    """Join ``insts`` by their operands in the scope, their reducer's caller, and the values from
    outside they read alike; return the holders whose weights each reads."""
    index = {id(i): j for j, i in enumerate(insts)}
    readers: dict[int, int] = {}  # id(value from outside the scope) → the first instruction reading it
    reads: list[set[str]] = [set() for _ in insts]
    for j, inst in enumerate(insts):
        if j in apart or inst.opcode == "fusion":
            continue  # (a kernel's call site: its fused instructions join by what they read, one
            # layer's each where XLA put several layers' bias gradients in one multi-output fusion)
        caller = callers.get(inst.parent.name) if inst.parent is not None else None
        if caller is not None and caller.opcode != "fusion" and index.get(id(caller), -1) not in apart | {-1}:
            joins.join(j, index[id(caller)])  # a reducer's ``add``: its reduce's
        for o in inst.operands:
            if id(o) in index:
                if index[id(o)] not in apart:
                    joins.join(j, index[id(o)])
                continue
            source = _source(o, callers)
            if id(source) in holder_of:
                reads[j].add(holder_of[id(source)])
            elif not _literal(source):  # (a literal XLA shares between layers joins none)
                # the same value read (a whole argument, ``x``; an activation, transposed or not): joined
                joins.join(j, readers.setdefault(id(source), j))
    return reads


def _literal(inst: Instruction) -> bool:
    return inst.opcode in ("constant", "iota") or (inst.opcode == "broadcast" and bool(inst.operands)
                                                   and inst.operands[0].opcode == "constant")


def _with_call_sites(insts: list[Instruction], groups: list[tuple[list[int], str | None]],
                     apart: set[int]) -> list[tuple[list[int], str | None]]:
    """``groups`` with each kernel's call site (a ``fusion`` of the scope) given the holder of its
    fused work, where that is one layer's."""
    inside: dict[int, set[str]] = {}
    for group, holder in groups:
        for j in group:
            if insts[j].parent is not None:
                inside.setdefault(id(insts[j].parent), set()).add(holder or "")
    out = list(groups)
    for j, inst in enumerate(insts):
        if inst.opcode == "fusion" and j not in apart:
            found = set().union(*(inside.get(id(c), set()) for c in inst.called_computations))
            one = next(iter(found)) if len(found) == 1 else ""
            out = [(g, h) for g, h in out if g != [j]] + [([j], one or None)]
    return out


def _weights_read(comp: Computation, holder_of: Mapping[int, str], callers: Mapping[str, Instruction]) -> set[str]:
    """The holders of the weights ``comp``'s parameters are (a fused computation's)."""
    out: set[str] = set()
    for inst in comp.instructions:
        if inst.opcode == "parameter":
            source = _source(inst, callers)
            if id(source) in holder_of:
                out.add(holder_of[id(source)])
    return out


def _source(value: Instruction, callers: Mapping[str, Instruction]) -> Instruction:
    """The value ``value`` hands on: a fused or called computation's parameter followed out through
    the operand its caller passes; a layout change or flip (:data:`~hloviz.opcodes.FLIPPED_WEIGHT_CARRIERS`,
    or a fusion of nothing else: XLA's ``transpose_copy_fusion`` of a convolution's kernel or of
    an activation its weight gradient reads) followed back to what it reads; else ``value``."""
    for _ in range(32):
        if value.opcode == "parameter":
            comp = value.parent
            caller = callers.get(comp.name) if comp is not None else None
            number = value.parameter_number
            if caller is None or number is None or caller.opcode not in ("fusion", "call") \
                    or number >= len(caller.operands):
                return value
            value = caller.operands[number]
        elif len(value.operands) == 1 and _carries(value):
            value = value.operands[0]
        else:
            return value
    return value


def _carries(inst: Instruction) -> bool:
    """Whether ``inst`` only hands its one operand on: a carrier, or a fusion of carriers alone."""
    if inst.opcode in FLIPPED_WEIGHT_CARRIERS:
        return True
    return inst.opcode == "fusion" and all(i.opcode in FLIPPED_WEIGHT_CARRIERS or i.opcode == "parameter"
                                           for c in inst.called_computations for i in c.instructions)
