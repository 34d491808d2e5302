"""What a fold is: :class:`FoldedConstant`, :class:`FoldingReport`, and how a constant's value is shown.

In: constants of the HLO. Out: the frozen records both folders fill (:mod:`.folding` for XLA's
folds, :mod:`.tf_folding` for TensorFlow's bridge) and the helpers they share: a constant's value
as users see it, its identity by value, which op names are real. Its own module because both
folders and every reader of the report (``stats``, the explorer, ``diff``) need the records, not
the searches.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import HloModule, Instruction
from ..kernels import SYNTHETIC_OP_NAMES
from .names import kept_fact

#: Literals up to this many characters are shown as values; longer ones by their shape.
SHORT_LITERAL = 80


@dataclass(frozen=True)
class FoldedConstant:
    """A constant that replaced work: ``value`` (literal or shape), and where it came from.

    ``from_ops`` are the pre-optimization op names (TF ops) whose work is in the value;
    ``from_instructions`` the pre-opt HLO instructions involved; ``into`` the op names of the
    instructions that use the constant now. ``by`` is ``"xla"`` or ``"tensorflow"`` (folded by
    TF's bridge before XLA saw it; the constant is then already in the pre-opt HLO).
    ``constant`` and ``computation`` name the post-opt constant when it exists there, else
    the pre-opt one.
    """

    constant: str
    computation: str
    value: str
    shape: str
    from_ops: tuple[str, ...]
    from_instructions: tuple[str, ...]
    into: tuple[str, ...]
    by: str = "xla"
    #: Why ``from_ops`` is empty, in words (empty when it is not).
    note: str = ""


@dataclass(frozen=True)
class FoldingReport:
    """All constants that replaced work, XLA's folds first."""

    folded: tuple[FoldedConstant, ...]
    #: Pre-opt ops whose instructions all computed on constants only and that left no trace,
    #: but whose value is no new constant of its own (XLA merged it with an equal constant, or
    #: nothing used it): computed at compile time all the same.
    computed: tuple[str, ...] = ()
    #: Constants of the optimized module that no pre-optimization constant has but that hold no
    #: pre-optimization work either (XLA wrote them while rewriting): not folds.
    new_constants: tuple[FoldedConstant, ...] = ()

    @property
    def folded_ops(self) -> frozenset[str]:
        """Every pre-opt op name whose work was done at compile time."""
        return frozenset(op for f in self.folded for op in f.from_ops) | frozenset(self.computed)

    def constants_of(self, op_name: str) -> tuple[FoldedConstant, ...]:
        return tuple(f for f in self.folded if op_name in f.from_ops)


#: What a folded constant's value reads when the HLO text does not hold it: TensorFlow and XLA
#: print a large literal as ``{...}`` unless asked for it in full.
NOT_PRINTED = "value not printed in the HLO text ({...})"


def literal_value(inst: Instruction) -> str:
    """A constant's value as shown to users: the literal if short, else its shape; for a literal
    the HLO text elided (``{...}``) its shape and :data:`NOT_PRINTED`, so that nobody takes the
    shape for the value."""
    lit = (inst.literal or "").strip()
    if lit == "{...}" or inst.is_elided_constant:
        return f"{inst.shape.to_text(layout=False)} ({NOT_PRINTED})"
    if not lit or len(lit) > SHORT_LITERAL:
        return inst.shape.to_text(layout=False)
    return lit


def value_key(inst: Instruction) -> tuple[str, tuple[int, ...], str]:
    """A constant's identity by value: element type, dimensions and its literal with white space
    folded (two constants with equal keys hold the same value)."""
    lit = " ".join((inst.literal or "").split())
    return inst.shape.element_type, inst.shape.dims, lit


def is_real_op(op_name: str) -> bool:
    """Whether ``op_name`` names a framework op (not empty, not one of XLA's synthetic names)."""
    return bool(op_name) and op_name not in SYNTHETIC_OP_NAMES

def live_ids(module: HloModule) -> set[int]:
    """``id()`` of the instructions whose value flows into their computation's root (the rest
    are dead: TensorFlow's bridge leaves unused copies of an op's constants behind). Kept
    inside :func:`~hloviz.analysis.pre_post.names.facts_kept`: read it, do not change it."""
    return kept_fact("live_ids", module, _live_ids)


def _live_ids(module: HloModule) -> set[int]:
    live: set[int] = set()
    for comp in module.computations:
        stack = [comp.root] if comp.root is not None else []
        while stack:
            i = stack.pop()
            if id(i) in live:
                continue
            live.add(id(i))
            stack.extend(i.operands)
    return live
