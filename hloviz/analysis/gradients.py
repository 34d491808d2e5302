"""Weight gradients without an op name: placed by what they compute.

XLA rebuilds a layer's weight gradient (TensorFlow's ``Conv2DBackpropFilter``, a ``dot`` of a
1×1 convolution) while canonicalizing convolutions: the new ``convolution`` carries no op name,
and the ``transpose`` that kept the name may be folded away later. Its *consumers* then say
nothing true: with SGD the gradient is read only by the update (``sgd/AssignSubVariableOp``),
so a placement by consumers files a layer's backward work under the optimizer — and swapping
Adam for SGD moves it there.

What the convolution computes says where it belongs. A weight gradient is ``conv(activation,
incoming gradient)``, and the activation is exactly what the layer's forward convolution reads:
:func:`gradient_layers` follows both convolutions' operands back to their sources, through
layout changes (:data:`~hloviz.opcodes.LAYOUT_ONLY`) and through unnamed or forward
fusions that do no heavy work (XLA recomputes a bias add and ReLU while transposing), and stops
at anything of the backward pass. An unnamed convolution (or ``dot``) that shares a source with
a named forward convolution is that layer's work, ``backward`` when one of its operands comes
from the backward pass. Where several layers read the same activation (an Inception block's
branches), the one whose weight has as many elements as the gradient is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING

from ..ir import Computation, Instruction, called_closure
from ..opcodes import DATA_MOVEMENT, DOT, ELEMENTWISE, HEAVY_WORK, INDEXED_MOVEMENT, LAYOUT_ONLY

if TYPE_CHECKING:
    from .scopes import Scope

__all__ = ["forward_partners", "gradient_layers"]

#: How many steps back a source is looked for.
_DEPTH = 8
#: Forward work a source is looked for through: elementwise and data movement (no reduction,
#: gather or scatter: those read many elements for one).
_LIGHT = (ELEMENTWISE | DATA_MOVEMENT) - INDEXED_MOVEMENT


def _is_contraction(inst: Instruction) -> bool:
    return inst.opcode == "convolution" or inst.opcode in DOT


class _Sources:
    """An instruction's sources (see the module docstring), memoised per instruction, and
    whether the walk met the backward pass on the way."""

    def __init__(self, phase: Callable[[Instruction], str | None], literals: set[int]) -> None:
        self.phase = phase
        self.literals = literals
        self.memo: dict[int, tuple[frozenset[int], bool]] = {}
        self._light: dict[int, bool] = {}

    def of(self, inst: Instruction, depth: int = 0) -> tuple[frozenset[int], bool]:
        """``(ids of the sources, met the backward pass)`` of the value ``inst`` computes."""
        key = id(inst)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        self.memo[key] = (frozenset({key}), False)  # the cycle guard: a source of its own
        phase = self.phase(inst)
        if phase in ("backward", "optimizer"):
            got: tuple[frozenset[int], bool] = (frozenset({key}), phase == "backward")
        elif depth < _DEPTH and self._passes_through(inst, phase is None):
            found: set[int] = set()
            backward = False
            for o in inst.operands:
                if id(o) in self.literals:
                    continue
                src, back = self.of(o, depth + 1)
                found |= src
                backward = backward or back
            got = (frozenset(found) or frozenset({key}), backward)
        else:
            got = (frozenset({key}), False)
        self.memo[key] = got
        return got

    def _passes_through(self, inst: Instruction, unnamed: bool) -> bool:
        """Is ``inst`` a step on the way to a value's source rather than a source itself?"""
        op = inst.opcode
        if op in LAYOUT_ONLY:
            return True
        if op == "fusion":
            return self._light_fusion(inst)
        # a forward pass's light work (a Keras padding layer's ``pad``, an activation) is seen
        # through as XLA's transposing fusions see through it, so both sides meet one source
        return (unnamed and op in ELEMENTWISE) or (op in _LIGHT and not unnamed)

    def _light_fusion(self, fusion: Instruction) -> bool:
        """A fusion doing no heavy work (no convolution, dot, reduce or call of its own)."""
        key = id(fusion)
        hit = self._light.get(key)
        if hit is None:
            hit = self._light[key] = not any(
                i.opcode in HEAVY_WORK for c in called_closure(fusion.called_computations) for i in c.instructions)
        return hit


def gradient_layers(comp: Computation, named: Mapping[Instruction, tuple[Scope, str]],
                    literals: set[int]) -> dict[Instruction, tuple[Scope, str]]:
    """The unnamed convolutions and dots of ``comp`` that share a source with a named forward
    convolution or dot, each with that layer's scope and its phase (``backward`` when an operand
    comes from the backward pass). ``named``: the instructions filed by their op names → (scope,
    phase); ``literals``: the ``id()`` of ``comp``'s literal instructions."""
    from .kernels import SYNTHETIC_OP_NAMES
    from .opnames import parse_op_name

    read: dict[str, str] = {}

    def phase(i: Instruction) -> str | None:
        hit = named.get(i)
        if hit is not None:
            return hit[1]
        name = i.metadata.op_name  # named, but filed by data flow (the tape's top-level AddN sums)
        if not name or name in SYNTHETIC_OP_NAMES:
            return None
        got = read.get(name)
        if got is None:
            got = read[name] = parse_op_name(name, i.metadata.op_type).phase
        return got

    found = forward_partners(comp, phase, lambda f: id(named[f][0]), literals)
    out = {x: (named[f][0], p) for x, (f, p) in found.items() if x not in named and f in named}
    out.update(_of_gradients(comp, named, phase, literals, out))
    return out


def _of_gradients(comp: Computation, named: Mapping[Instruction, tuple[Scope, str]],
                  phase: Callable[[Instruction], str | None], literals: set[int],
                  placed: Mapping[Instruction, object]) -> dict[Instruction, tuple[Scope, str]]:
    """The unnamed convolutions and dots no forward partner places whose operands all come from
    the backward pass — a gradient penalty's second-order filter gradient, the convolution of an
    input gradient and an activation's gradient — in the innermost scope holding those backward
    values, ``backward``. Placed by its readers it was the optimizer's, which alone reads it."""
    sources = _Sources(phase, literals)
    by_id = {id(i): i for i in comp.instructions}
    out: dict[Instruction, tuple[Scope, str]] = {}
    for x in comp.instructions:
        if not _is_contraction(x) or x in placed or x in named or phase(x) is not None:
            continue
        found = [sources.of(o) for o in x.operands if id(o) not in literals]
        made_of = [by_id[s] for ids, _back in found for s in ids if s in by_id]
        if not found or len(made_of) < sum(len(ids) for ids, _back in found) or not all(
                phase(i) == "backward" for i in made_of):
            continue  # (a backward source may be named outside every scope: the tape's ``SqrtGrad``)
        scopes = [hit[0] for i in made_of if (hit := named.get(i)) is not None and hit[0].kind == "scope"]
        shared: Scope | None = scopes[0] if scopes else None
        for s in scopes[1:]:  # the innermost holding them all
            while shared is not None and not shared.contains(s):
                shared = shared.parent
        if shared is not None and shared.kind == "scope":
            out[x] = (shared, "backward")
    return out


def forward_partners(comp: Computation, phase: Callable[[Instruction], str | None],
                     layer: Callable[[Instruction], Hashable], literals: set[int]
                     ) -> dict[Instruction, tuple[Instruction, str]]:
    """Each unnamed convolution or dot of ``comp`` that shares a source with named forward ones
    of one layer → one of those forward instructions, and its own phase (``backward`` when an
    operand comes from the backward pass). ``phase``: an instruction's phase by its op name (None:
    it has none); ``layer``: the key of a forward instruction's layer; ``literals``: the ``id()``
    of ``comp``'s literal instructions."""
    unnamed = [i for i in comp.instructions if _is_contraction(i) and phase(i) is None]
    if not unnamed:
        return {}
    sources = _Sources(phase, literals)
    by_source: dict[int, list[Instruction]] = {}
    for f in comp.instructions:
        if not (_is_contraction(f) or _wraps_contraction(f)) or phase(f) != "forward":
            continue
        for o in f.operands:
            if id(o) not in literals:
                for s in sources.of(o)[0]:
                    by_source.setdefault(s, []).append(f)
    out: dict[Instruction, tuple[Instruction, str]] = {}
    for x in unnamed:
        mine: set[int] = set()
        backward = False
        for o in x.operands:
            if id(o) in literals:
                continue
            src, back = sources.of(o)
            mine |= src
            backward = backward or back
        forward = list(dict.fromkeys(f for s in mine for f in by_source.get(s, ())))
        partner = _one_layer(x, forward, mine, sources, layer)
        if partner is not None:
            out[x] = (partner, "backward" if backward else "forward")
    return out


def _wraps_contraction(f: Instruction) -> bool:
    """A fusion whose computation convolves or multiplies matrices: its operands are the
    contraction's (XLA:CPU fuses a 1×1 convolution with its bias; alone in the entry, a U-Net
    skip convolution's weight gradient found only another layer reading the same residual)."""
    return f.opcode == "fusion" and any(_is_contraction(i) for c in called_closure(f.called_computations)
                                        for i in c.instructions)


def _one_layer(x: Instruction, forward: list[Instruction], mine: set[int], sources: _Sources,
               layer: Callable[[Instruction], Hashable]) -> Instruction | None:
    """The forward contraction of the one layer ``x`` is the work of: the first of ``forward``
    when they are all one layer's; else, of those whose other operand (the weight) has as many
    elements as ``x``, the one whose input comes from the very sources ``x``'s does (a residual
    block's output feeds the next block, and shares batch-norm statistics with the blocks
    before: the closest match of source sets tells them apart), if one layer's is closest."""
    if not forward:
        return None
    if len({layer(f) for f in forward}) == 1:
        return forward[0]
    size = x.shape.element_count if not x.shape.is_tuple else -1
    fitting = [f for f in forward
               if any(not o.shape.is_tuple and o.shape.element_count == size
                      for o in f.operands if not (sources.of(o)[0] & mine))] or forward
    if len({layer(f) for f in fitting}) == 1:
        return fitting[0]
    theirs = [sources.of(o)[0] for o in x.operands if id(o) not in sources.literals]
    scored: dict[Hashable, float] = {}
    for f in fitting:
        best = max((len(a & b) / len(a | b) for a in theirs for o in f.operands if id(o) not in sources.literals
                    for b in (sources.of(o)[0],) if a | b), default=0.0)
        key = layer(f)
        scored[key] = max(scored.get(key, 0.0), best)
    top = max(scored.values())
    winners = [f for f in fitting if scored[layer(f)] == top]
    return winners[0] if top > 0 and len({layer(f) for f in winners}) == 1 else None
