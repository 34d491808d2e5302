"""The layer that reads a parameter: a weight is read by the layer that computes with it, found
by following its value forward through the instructions that only pass it on (slices of a
scan's stacked weight, tuples, calls and fusions). Also :func:`common_scope`, the innermost
scope holding several, by which both this module and :mod:`.targets` place what they find."""

from __future__ import annotations

from ...ir import Computation, Instruction
from ...opcodes import WEIGHT_CARRIERS
from ..scopes import Scope, ScopeTree

#: Instructions that pass a value on without computing with it (a slice of a stacked weight
#: is the weight): :func:`reading_layer` follows them to the instructions that do work.
_PLUMBING = WEIGHT_CARRIERS
#: How many instructions :func:`reading_layer` visits before it gives up.
_MAX_READS = 2000


#: A value :func:`reading_layer` follows: an instruction, which element of its tuple (None: all
#: of it), and the call or fusion it was reached through (None outside one).
_Value = tuple[Instruction, "int | None", "Instruction | None"]


def _parameters(comp: Computation, memo: dict[int, list[Instruction]]) -> list[Instruction]:
    """``comp.parameters`` (sorted by number), worked out once per computation in ``memo``: a
    scan's body or a fusion of many operands is reached once per weight it carries."""
    got = memo.get(id(comp))
    if got is None:
        got = memo[id(comp)] = comp.parameters
    return got


def _passed_on(u: Instruction, inst: Instruction, index: int | None, caller: Instruction | None,
               params: dict[int, list[Instruction]] | None = None) -> list[_Value] | None:
    """Where ``u``, a user of the value ``inst`` (element ``index`` of it), hands that value on:
    into a tuple, out of one, into a loop body, a called or fused computation, through a
    remat barrier or plumbing; ``[]`` when ``u`` does not take that element; None when ``u``
    computes with the value (a reader)."""
    opcode = u.opcode
    at = [k for k, o in enumerate(u.operands) if o is inst]
    if opcode == "tuple":
        return [(u, k, None) for k in at] if index is None else []
    if opcode == "get-tuple-element":
        return [(u, None, None)] if index is not None and u.attributes.get("index", "") == str(index) else []
    if opcode in ("opt-barrier", "optimization-barrier"):  # remat's barrier: a tuple in, the same out
        return [(u, index, caller)]
    memo = params if params is not None else {}
    if opcode == "while":
        return [(p, index, None) for body in u.calls_by_attribute.get("body", ())
                for p in _parameters(body, memo) if p.parameter_number == 0]
    if opcode in ("call", "fusion"):
        return [(p, index, u) for comp in u.called_computations[:1]
                for p in _parameters(comp, memo) if p.parameter_number in at]
    if index is not None:
        return []  # a tuple's other users (its root, a loop's condition) read no element of it
    if opcode in _PLUMBING:
        return [(u, None, caller)]
    return None


def users_in_computation(inst: Instruction, users_of: dict[int, dict[Instruction, list[Instruction]]]) -> list[Instruction]:
    """The users of ``inst`` in its own computation; ``users_of`` keeps each computation's users
    (by id) for the next question."""
    comp = inst.parent
    if comp is None:
        return []
    got = users_of.get(id(comp))
    if got is None:
        got = users_of[id(comp)] = comp.users()
    return got.get(inst, [])


def reading_layer(tree: ScopeTree, param: Instruction,
                   users_of: dict[int, dict[Instruction, list[Instruction]]] | None = None,
                   params: dict[int, list[Instruction]] | None = None) -> Scope | None:
    """The innermost layer scope holding every instruction that does work with the entry
    parameter ``param`` in the forward or backward pass, following its value through tuples,
    ``while`` loops (into the body, by tuple index), calls and fusions, and the plumbing of
    :data:`_PLUMBING` (a scan's ``dynamic-slice`` of the stacked weight); None when no layer
    reads it (an optimizer's moment, the step count) or the readers share no layer. ``users_of``:
    each computation's users, shared by the calls on one tree (the entry's are read once, not
    once per weight); ``params``: each computation's parameters, shared the same way (None: not kept)."""
    memo = users_of if users_of is not None else {}

    def users(inst: Instruction) -> list[Instruction]:
        return users_in_computation(inst, memo)

    phase, of = tree.phases, tree.filing
    found: list[Scope] = []
    seen: set[tuple[int, int | None, int]] = set()
    # (a value, its tuple element or None, the call or fusion whose computation it is in: one
    # that only slices the weight, JAX's ``jit(dynamic_index_in_dim)``, a ``dynamic-slice``
    # fusion, hands it on as its result)
    todo: list[_Value] = [(param, None, None)]
    while todo and len(seen) < _MAX_READS:
        inst, index, caller = todo.pop()
        key = (id(inst), index, id(caller))  # a computation two calls share is walked for each
        if key in seen:
            continue
        seen.add(key)
        if index is None and caller is not None and inst.parent is not None and inst is inst.parent.root:
            todo.append((caller, None, None))
        for u in users(inst):
            if index is None and u.opcode in _PLUMBING and phase.get(u) == "optimizer":
                continue  # the optimizer's own reshapes of the weight lead to its update only
            passed = _passed_on(u, inst, index, caller, params)
            if passed is not None:
                todo += passed
            elif index is None and phase.get(u) != "optimizer":
                s = of.get(u)
                if s is None and caller is not None and caller.opcode == "fusion":
                    s = of.get(caller)  # a fused instruction: its fusion's layer
                if s is None or s.kind != "scope":
                    return None  # read by something no layer holds: not a layer's weight
                found.append(s)
    if todo:
        return None  # too far to tell
    common = common_scope(found)
    return None if common is None or common.is_function else common  # JAX's jit(f) is no layer


def common_scope(found: list[Scope]) -> Scope | None:
    """The innermost scope holding all of ``found``; None if that is the root (no layer) or
    nothing was found."""
    if not found:
        return None
    # ``chain``: the root … ``common``; ``at``: id() of each of them → its place in ``chain``.
    # Each scope climbs to the first of them it meets: there the common scope is now (most
    # sets hold hundreds of sibling layers, one step each).
    common = found[0]
    chain = [common, *common.ancestors()][::-1]
    at = {id(c): k for k, c in enumerate(chain)}
    n = len(chain)  # chain[:n] is still the common scope's
    for s in found[1:]:
        x: Scope | None = s
        k = at.get(id(s))
        while k is None or k >= n:
            x = x.parent if x is not None else None
            if x is None:
                return None  # no scope holds both (scopes of two trees)
            k = at.get(id(x))
        n = k + 1
    common = chain[n - 1]
    return common if common.kind == "scope" else None
