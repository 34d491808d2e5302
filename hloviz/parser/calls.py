"""Attributes that name other computations or instructions, read while the statement is read.

Most of an instruction's attributes (``dimensions={1}``, ``metadata={...}``) are kept as text
and shared by every instruction written with the same text. A few name what may not exist yet:
the computations an instruction calls (``calls=``, ``to_apply=``, ``body=``, … —
:data:`hloviz.ir.CALLED_COMPUTATION_ATTRIBUTES`, in XLA's order) and its
``control-predecessors``. Those are split out as the statement is read and wait in the
:class:`~hloviz.parser.state.ParseState` until the module is complete
(:class:`~hloviz.parser.state.PendingCall`). This module says which attribute lists hold such
names (:data:`EAGER_SEARCH`, :data:`NEVER_CALLS`), takes the usual one (a fusion's single
``calls=``) apart without a full split (:func:`one_call`), and files them (:func:`eager_attributes`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import MappingProxyType
from typing import cast

from ..ir import CALLED_COMPUTATION_ATTRIBUTES, Instruction
from .state import ParseState, PendingCall

__all__ = ["EAGER_SEARCH", "NEVER_CALLS", "eager_attributes", "new_pending_call", "one_call"]

_CALL_KEYS = frozenset(CALLED_COMPUTATION_ATTRIBUTES)
# Attributes that must be read while parsing: they name computations or instructions. Looked for
# after a comma, as every attribute starts: a search led by one literal character is twice as
# fast as one led by twelve words.
_EAGER_ATTR = re.compile(
    r",\s*+(?:" + "|".join(CALLED_COMPUTATION_ATTRIBUTES) + r"|control-predecessors)\s*="
)
#: ``EAGER_SEARCH(text)``: the first attribute of ``text`` naming a computation or an instruction.
EAGER_SEARCH = _EAGER_ATTR.search
#: Opcodes that never name a computation, so their attributes can wait to be split.
NEVER_CALLS = frozenset({
    "abs", "add", "and", "atan2", "bitcast", "bitcast-convert", "broadcast", "cbrt", "ceil", "clamp",
    "compare", "concatenate", "constant", "convert", "convolution", "copy", "cosine", "divide", "dot",
    "dynamic-slice", "dynamic-update-slice", "erf", "exponential", "exponential-minus-one", "floor", "gather",
    "get-tuple-element", "imag", "iota", "is-finite", "log", "log-plus-one", "logistic", "maximum", "minimum",
    "multiply", "negate", "not", "or", "pad", "parameter", "power", "real", "reduce-precision", "remainder",
    "reshape", "reverse", "round-nearest-afz", "round-nearest-even", "rsqrt", "select", "shift-left",
    "shift-right-arithmetic", "shift-right-logical", "sign", "sine", "slice", "sqrt", "subtract", "tan",
    "tanh", "transpose", "tuple", "xor",
})

#: One attribute naming one computation, ``calls=%f`` or ``to_apply=%f``, up to the next attribute.
_CALL = re.compile(r",[ \t]*+(calls|to_apply)[ \t]*+=[ \t]*+(%?[A-Za-z_][\w.\-]*+)[ \t]*+"
                   r"(?=,[ \t]*+[A-Za-z_][\w.\-]*+[ \t]*+=|\s*+\Z)")

#: A :class:`PendingCall` made as the tuple it is (its generated ``__new__`` is a Python call, once per fusion).
new_pending_call = cast("Callable[[type[PendingCall], tuple[Instruction, str, str, int, str, int, int]], PendingCall]",
                        tuple.__new__)  # pyright: ignore[reportUnknownMemberType]  # typeshed leaves its iterable untyped; the cast says what goes in


def one_call(rest: str) -> tuple[re.Match[str], str] | None:
    """``rest`` (an attribute list) naming one computation in the usual way: the match of that
    attribute and the rest without it, whose split is then what the whole one's is, less that
    attribute. None when anything else there waits to be resolved, or when what comes before
    the attribute could hold it inside brackets or a string (then it is split in full)."""
    call = _CALL.search(rest)
    if call is None:
        return None
    before = rest[: call.start()]
    if '"' in before or before.count("{") != before.count("}") or before.count("(") != before.count(")") \
            or before.count("[") != before.count("]"):
        return None
    key_rest = before + rest[call.end() :]
    if EAGER_SEARCH(key_rest) is not None:
        return None
    return call, key_rest if key_rest.strip() else ""


def eager_attributes(state: ParseState, inst: Instruction, attrs: dict[str, str], text: str, start: int,
                     line_index: int, line_start: int = 0) -> None:
    """File ``inst``'s attributes that name computations or control predecessors in ``state``
    to be resolved, and give it the others. ``text[start:]`` holds the attribute list of the
    statement on line ``line_index``, which starts at ``text[line_start]`` (for an error's
    position, worked out only then)."""
    preds = attrs.pop("control-predecessors", None)
    if preds is not None:
        state.predecessors.append((inst, preds))
    keys = [key for key in attrs if key in _CALL_KEYS]
    if len(keys) > 1:
        keys.sort(key=CALLED_COMPUTATION_ATTRIBUTES.index)  # in XLA's order
    for key in keys:
        state.pending_calls.append(PendingCall(inst, key, attrs.pop(key), line_index, text, line_start, start))
    inst.share_attributes(MappingProxyType(attrs))  # (a dict of its own: no copy needed)
