"""Which computations of a module run when its entry runs, how, and how many times.

The entry runs once; a ``while``'s condition and body, a ``conditional``'s branches, a
``call``'s callee and an ``async-start``'s wrapped computation run when their caller does. A
computation two call sites share runs once a site: before optimization a jitted function a
JAX model calls six times is one computation with six ``call``s (XLA inlines them later), and
its work runs six times — as XLA's cost analysis counts it. A loop body counts once a run of
its loop: the trip count is not the HLO's to say. Used by :mod:`.kernels`, which lists each
executed computation's kernels once and weights the totals by the runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ..ir import Computation, Instruction
from ..opcodes import BODY_CALLERS

__all__ = ["ExecutedComputation", "counted_runs", "executed", "runs_of", "totals"]


@dataclass(frozen=True)
class ExecutedComputation:
    """A computation whose instructions run: the entry, or a body reached through control flow.

    ``caller`` is the instruction that runs it (None for the entry) and ``role`` says how:
    ``entry``, ``while body``, ``while condition``, ``branch 0``…, ``call``, ``async``.
    """

    name: str
    caller: str | None
    role: str


def executed(comp: Computation, caller: Instruction | None, role: str, seen: set[str],
             out: list[ExecutedComputation]) -> Iterator[Computation]:
    """Executed computations, depth first, each once (a body right after its caller's computation).

    An explicit stack, not recursion: a module may nest calls or whiles thousands deep."""
    stack: list[Iterator[tuple[Computation, Instruction | None, str]]] = [iter([(comp, caller, role)])]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        comp, caller, role = item
        if comp.name in seen:
            continue
        seen.add(comp.name)
        out.append(ExecutedComputation(comp.name, caller.name if caller else None, role))
        yield comp
        stack.append(iter([(callee, inst, _role_of(inst, attr, index, callee))
                           for inst in comp.instructions if inst.opcode in BODY_CALLERS
                           for attr, called in inst.calls_by_attribute.items()
                           for index, callee in enumerate(called)]))


def _role(opcode: str, attribute: str, index: int) -> str:
    if opcode == "while":
        return "while condition" if attribute == "condition" else "while body"
    if opcode == "conditional":
        if attribute == "true_computation":
            return "true branch"
        if attribute == "false_computation":
            return "false branch"
        return f"branch {index}"
    return "async" if opcode == "async-start" else opcode


def _role_of(caller: Instruction, attribute: str, index: int, callee: Computation) -> str:
    if caller.opcode == "call" and callee.name.startswith("command_buffer"):
        return "command buffer"  # XLA's GPU backend records these kernels as one CUDA graph
    return _role(caller.opcode, attribute, index)


def _callees(comp: Computation) -> list[Computation]:
    """What ``comp``'s calls, loops, branches and async starts run, once a call site."""
    return [callee for inst in comp.instructions if inst.opcode in BODY_CALLERS
            for called in inst.calls_by_attribute.values() for callee in called]


def runs_of(entry: Computation) -> dict[str, int]:
    """How many times each computation runs when ``entry`` runs once: the sum over its call
    sites of their computation's runs (callers summed before their callees: the reverse of a
    depth-first post-order, with an explicit stack as calls may nest thousands deep)."""
    runs = {entry.name: 1}
    for comp in reversed(_callees_first(entry)):
        n = runs.get(comp.name, 0)
        for callee in _callees(comp):
            runs[callee.name] = runs.get(callee.name, 0) + n
    return runs


def totals(entry: Computation, own: Mapping[str, tuple[int, ...]], width: int) -> tuple[int, ...]:
    """What runs when ``entry`` runs once, summed as XLA's cost analysis sums it: each executed
    computation's own numbers (``own``: name → ``width`` of them, its kernels' sums), its callees'
    once a call site — but of a ``conditional``'s branches, one runs: the largest of them, number
    by number (summed, a ``lax.switch`` of three branches in a scan came out 5% over XLA's FLOPs).
    The FLOPs are one number, transcendentals included: XLA's cost analysis takes the largest plain
    FLOPs and the largest transcendentals apart, maybe from two branches no run takes together
    (``tanh``/``relu``/``sin`` layers: 576 a switch in XLA's total, 544 in the branch that does most)."""
    return _costs(_callees_first(entry), own, width).get(entry.name, (0,) * width)


def _costs(order: list[Computation], own: Mapping[str, tuple[int, ...]], width: int) -> dict[str, tuple[int, ...]]:
    """Computation → its :func:`totals` (``order``: callees first)."""
    zero = (0,) * width
    cost: dict[str, tuple[int, ...]] = {}
    for comp in order:
        total = list(own.get(comp.name, zero))
        for inst in comp.instructions:
            if inst.opcode not in BODY_CALLERS:
                continue
            parts = [cost.get(c.name, zero) for called in inst.calls_by_attribute.values() for c in called]
            for i in range(width):
                values = [p[i] for p in parts]
                total[i] += max(values, default=0) if inst.opcode == "conditional" else sum(values)
        cost[comp.name] = tuple(total)
    return cost


def counted_runs(entry: Computation, own: Mapping[str, tuple[int, ...]], width: int) -> tuple[dict[str, int], ...]:
    """For each of the ``width`` numbers :func:`totals` sums, how many times it counts each
    computation's own numbers: its runs (:func:`runs_of`), but of a ``conditional``'s branches
    only the one it takes (the first of the largest), and nothing of what runs inside the
    others. What ``stats --by scope`` weights each kernel by, so that its rows add up to the
    totals: an L-BFGS step's line search re-evaluates the loss in either branch of a ``cond``,
    and both counted made the module's row 34M FLOPs against a total of 22.7M."""
    order = _callees_first(entry)
    cost = _costs(order, own, width)
    zero = (0,) * width
    out: list[dict[str, int]] = []
    for i in range(width):
        runs = {entry.name: 1}
        for comp in reversed(order):  # callers before their callees
            n = runs.get(comp.name, 0)
            if not n:
                continue
            for inst in comp.instructions:
                if inst.opcode not in BODY_CALLERS:
                    continue
                called = [c for group in inst.calls_by_attribute.values() for c in group]
                if inst.opcode == "conditional" and called:
                    called = [max(called, key=lambda c: cost.get(c.name, zero)[i])]
                for callee in called:
                    runs[callee.name] = runs.get(callee.name, 0) + n
        out.append(runs)
    return tuple(out)


def _callees_first(entry: Computation) -> list[Computation]:
    """``entry`` and what it runs, each once, every computation after those it calls (a
    depth-first post-order)."""
    order: list[Computation] = []
    seen = {entry.name}
    stack = [(entry, iter(_callees(entry)))]
    while stack:
        comp, callees = stack[-1]
        callee = next(callees, None)
        if callee is None:
            order.append(comp)
            stack.pop()
        elif callee.name not in seen:
            seen.add(callee.name)
            stack.append((callee, iter(_callees(callee))))
    return order
