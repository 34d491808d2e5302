"""Names → instructions and computations, once what they name can exist: the parser's links.

In: what waits in the :class:`~hloviz.parser.state.ParseState` — operand names, ``control-
predecessors`` texts and shapes left out of the text, for the computation just read
(:func:`finish`); called computations (``calls=%f``), for the whole module
(:func:`resolve_calls`). Out: those instructions linked to the instructions and computations
they name, the computation's ROOT when no line is marked ``ROOT``, and the state emptied for the
next computation; an :class:`~hloviz.errors.HloParseError` where the text names what is not
defined.

XLA's text may use a name before the line that defines it, and call a computation printed
further down; so the readers only record names, and they are resolved here once their
computation (operands, control predecessors) or the module (called computations) is complete.
The fast path resolves most operands as it reads them (XLA prints definitions before uses);
what is left is resolved here, including ``%tuple#N`` operands
(:mod:`~hloviz.parser.tuple_index`). It is a module of its own because it runs after the reading
and needs none of it: only the state and the IR.
"""

from __future__ import annotations

from ..errors import HloParseError
from ..ir import Computation, Instruction
from .attributes import names_in
from .shapes import infer_shapes
from .state import ParseState
from .tuple_index import SEPARATOR, elided_get_tuple_element

__all__ = ["finish", "resolve_calls"]


def finish(state: ParseState, computation: Computation, start: int) -> None:
    """Resolve the operand and control-predecessor names left open inside one computation
    (whose header is line ``start``), and take its last instruction as the ROOT if none is marked.

    The fast path resolves operands as it goes (XLA prints definitions before uses); only
    forward references, the general path's instructions and control predecessors wait
    until here, in the state.
    """
    if state.unresolved or state.predecessors or state.inferred:
        _resolve_names(state, computation)
    if computation.root is None:
        if not computation.instructions:
            raise state.error(f"computation '{computation.name}' has no instructions", start, 0)
        computation.root = computation.instructions[-1]


def _resolve_names(state: ParseState, computation: Computation) -> None:
    """What :func:`finish` resolves, when anything waits (most computations: nothing)."""
    by_name = computation.by_name
    for inst, names in state.unresolved:
        try:
            inst.operands = [by_name[n] for n in names]
        except KeyError:
            inst.operands = [_tuple_element(state, computation, inst, n) for n in names]
    for inst, preds in state.predecessors:
        found: list[Instruction] = []
        for n in names_in(preds):
            pred = by_name.get(n)
            if pred is None:
                raise _name_error(state, inst, n, f"control predecessor '{n}' is not defined in "
                                  f"computation '{computation.name}'")
            found.append(pred)
        inst.control_predecessors = found
    infer_shapes(state.inferred)
    state.unresolved, state.predecessors, state.inferred = [], [], []


def _tuple_element(state: ParseState, computation: Computation, inst: Instruction, name: str) -> Instruction:
    """Operand ``name`` of ``inst``: defined, or ``%tuple#N``, an element of a tuple
    (:mod:`~hloviz.parser.tuple_index`); else the error, where the text names it."""
    found = computation.by_name.get(name)
    if found is not None:
        return found
    element = elided_get_tuple_element(computation, name, inst, state.inferred) \
        if SEPARATOR in name else f"instruction '{name}' is not defined in computation '{computation.name}'"
    if isinstance(element, str):
        raise _name_error(state, inst, name, element)
    return element


def _name_error(state: ParseState, inst: Instruction, name: str, message: str) -> HloParseError:
    line_index = inst.line - 1
    line = state.source.line(line_index)
    eq = line.find("=")
    col = line.find(name, eq + 1 if eq >= 0 else 0)
    if col > 0 and line[col - 1] == "%":
        col -= 1
    return state.error(message, line_index, max(col, 0))


def resolve_calls(state: ParseState) -> None:
    """Link every instruction that names computations (``calls=``, ``to_apply=``, …) to them,
    once the whole module is read."""
    module = state.module
    get = module.get_computation
    named = module.by_name.get
    for call in state.pending_calls:
        inst, attr, value = call.instruction, call.attribute, call.value
        # the usual "%name" (every computation's name is one a single "%name" may hold)
        one = named(value[1:]) if value[:1] == "%" else None
        called: list[Computation] = [one] if one is not None else []
        for n in names_in(value) if one is None else ():
            c = get(n)
            if c is None:
                raise state.error(f"computation '{n}' (named by {attr}=) is not defined", *call.position())
            called.append(c)
        if inst.calls_by_attribute:
            inst.calls_by_attribute = {**inst.calls_by_attribute, attr: called}
            inst.called_computations = [*inst.called_computations, *called]
        else:  # the usual case: one attribute names the called computations
            inst.calls_by_attribute = {attr: called}
            inst.called_computations = list(called)
