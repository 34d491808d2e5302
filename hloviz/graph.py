"""The graph view of a module: :func:`to_networkx` and the self-check :func:`check`.

Node and edge attributes are documented here, once: they are the contract with users who run
their own graph algorithms on a module. (hloviz's analyses and pictures walk the IR directly,
without building this graph.)

Nodes — one per instruction, id ``"<computation>/<instruction>"``:

=============== ==============================================================================
``name``        instruction name (no ``%``)
``opcode``      opcode as printed (``get-tuple-element``)
``shape``       shape as HLO text (``f32[8,8]{1,0}``)
``category``    :func:`hloviz.opcodes.category` — drives colours
``computation`` name of the computation holding it
``fusion``      node id of the fusion instruction whose fused computation holds it, or None
``is_root``     True for its computation's root
``op_name``     ``metadata.op_name`` ("" when absent)
``line``        1-based line in the source text (0 when built in code)
``instruction`` the :class:`hloviz.ir.Instruction` itself
=============== ==============================================================================

Edges — ``u → v`` means "u's value flows into v":

* ``kind="operand"``, ``index=k``: u is operand k of v (same computation).
* ``kind="call-parameter"``, ``index=k``: u is operand k of a calling instruction, v is the
  called computation's parameter k (fusion, call, while body/condition, …; ``attribute`` says
  which attribute named the computation).
* ``kind="call-root"``: u is a called computation's root, v the calling instruction.
* ``kind="control"``: u is a control predecessor of v.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .ir import Computation, HloModule, Instruction
from .opcodes import category

if TYPE_CHECKING:
    import networkx as nx


def node_id(instruction: Instruction) -> str:
    """The stable graph id of an instruction: ``computation/instruction``."""
    parent = instruction.parent.name if instruction.parent is not None else "?"
    return f"{parent}/{instruction.name}"


def fusion_owners(module: HloModule) -> dict[str, Instruction]:
    """Fused computation name → the fusion instruction that calls it (the first, if several)."""
    owners: dict[str, Instruction] = {}
    for inst in module.instructions():
        if inst.opcode == "fusion":
            for c in inst.calls_by_attribute.get("calls", inst.called_computations):
                owners.setdefault(c.name, inst)
    return owners


def _enclosing_fusions(module: HloModule) -> dict[str, str]:
    """Computation name → node id of the outermost fusion it runs inside (nested fusions too)."""
    owners = fusion_owners(module)
    callers: dict[str, Instruction] = {}
    for inst in module.instructions():
        for c in inst.called_computations:
            callers.setdefault(c.name, inst)
    out: dict[str, str] = {}
    for comp in module.computations:
        seen = set()
        outer = None
        name = comp.name
        while name in callers and name not in seen:
            seen.add(name)
            caller = callers[name]
            if name in owners and owners[name] is caller:
                outer = caller
            if caller.parent is None:
                break
            name = caller.parent.name
        if outer is not None:
            out[comp.name] = node_id(outer)
    return out


def to_networkx(module: HloModule) -> nx.MultiDiGraph:
    """Build the graph described in this module's docstring."""
    import networkx as nx  # here, not at the top: it is most of `import hloviz`'s cost

    g = nx.MultiDiGraph(name=module.name, entry=module.entry.name if module.entry else None)
    enclosing = _enclosing_fusions(module)
    for comp in module.computations:
        fusion = enclosing.get(comp.name)
        root = comp.root
        for inst in comp.instructions:
            md = inst.metadata
            g.add_node(
                node_id(inst), name=inst.name, opcode=inst.opcode, shape=str(inst.shape),
                category=category(inst.opcode), computation=comp.name, fusion=fusion,
                is_root=inst is root, op_name=md.op_name, line=inst.line, instruction=inst,
            )
    for comp in module.computations:
        for inst in comp.instructions:
            v = node_id(inst)
            for k, op in enumerate(inst.operands):
                g.add_edge(node_id(op), v, kind="operand", index=k)
            for pred in inst.control_predecessors:
                g.add_edge(node_id(pred), v, kind="control")
            for attr, called in inst.calls_by_attribute.items():
                for c in called:
                    _add_call_edges(g, inst, c, attr)
    return g


def _add_call_edges(g: nx.MultiDiGraph, caller: Instruction, callee: Computation, attr: str) -> None:
    v = node_id(caller)
    params = {p.parameter_number: p for p in callee.parameters}
    # Operands feed parameters one to one for fusion/call/async; a while passes its one tuple to
    # both body and condition; a conditional passes operand k+1 to branch k.
    if caller.opcode == "conditional":
        branches = caller.calls_by_attribute.get(attr, [])
        k = branches.index(callee) if callee in branches else 0
        if attr == "false_computation":
            k = 1
        sources = caller.operands[k + 1 : k + 2]
    elif caller.opcode in ("reduce", "reduce-window", "scatter", "select-and-scatter", "sort", "map",
                           "all-reduce", "reduce-scatter", "all-reduce-start"):
        sources = []  # to_apply is a scalar function applied inside the op, not a data edge
    else:
        sources = caller.operands
    for k, src in enumerate(sources):
        p = params.get(k)
        if p is not None:
            g.add_edge(node_id(src), node_id(p), kind="call-parameter", index=k, attribute=attr)
    if callee.root is not None:
        g.add_edge(node_id(callee.root), v, kind="call-root", attribute=attr)


@dataclass(frozen=True)
class GraphProblem:
    """One thing :func:`check` (or :func:`hloviz.verify.verify`) found wrong, with where it is."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def check(module: HloModule) -> list[GraphProblem]:
    """Report undefined operands, missing called computations, wrong parents and cycles.

    A module from :func:`hloviz.parse` is already resolved, so this mostly guards modules built
    or edited in code. Returns an empty list when all is well.
    """
    problems: list[GraphProblem] = []
    names = {id(c) for c in module.computations}
    for comp in module.computations:
        members = {id(i) for i in comp.instructions}
        for inst in comp.instructions:
            where = f"{comp.name}/{inst.name} (line {inst.line})"
            if inst.parent is not comp:
                problems.append(GraphProblem(where, "its parent is not the computation that lists it"))
            for k, op in enumerate(inst.operands):
                if not isinstance(op, Instruction) or id(op) not in members:
                    problems.append(GraphProblem(where, f"operand {k} ({getattr(op, 'name', op)!r}) is not "
                                                        f"defined in computation {comp.name}"))
            for c in inst.called_computations:
                if id(c) not in names:
                    problems.append(GraphProblem(where, f"calls computation {c.name!r}, which is not in the module"))
        if comp.root is not None and id(comp.root) not in members:
            problems.append(GraphProblem(comp.name, "its root is not one of its instructions"))
        cycle = _find_cycle(comp)
        if cycle:
            problems.append(GraphProblem(comp.name, "operands form a cycle: " + " -> ".join(cycle)))
    import networkx as nx

    calls = nx.DiGraph()
    for comp in module.computations:
        calls.add_node(comp.name)
        for inst in comp.instructions:
            for c in inst.called_computations:
                calls.add_edge(comp.name, c.name)
    try:
        cyc = nx.find_cycle(calls)
        problems.append(GraphProblem(cyc[0][0], "computations call each other in a cycle: "
                                     + " -> ".join(u for u, _ in cyc) + f" -> {cyc[0][0]}"))
    except nx.NetworkXNoCycle:
        pass
    return problems


def _find_cycle(comp: Computation) -> list[str] | None:
    """An operand cycle inside one computation, as instruction names, or None (iterative DFS)."""
    state: dict[int, int] = {}
    for start in comp.instructions:
        if id(start) in state:
            continue
        stack = [(start, iter([*start.operands, *start.control_predecessors]))]
        path = [start]
        state[id(start)] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[id(node)] = 2
                stack.pop()
                path.pop()
                continue
            s = state.get(id(nxt))
            if s == 1:
                i = next(k for k, p in enumerate(path) if p is nxt)
                return [p.name for p in path[i:]] + [nxt.name]
            if s is None and isinstance(nxt, Instruction):
                state[id(nxt)] = 1
                stack.append((nxt, iter([*nxt.operands, *nxt.control_predecessors])))
                path.append(nxt)
    return None
