"""Ordering the scope tree's children as the program runs them.

In: a scope tree whose instructions are all filed, and the module. Out: the same tree with each
scope's children in the order the program runs them (:func:`order_children`), or in another
tree's order (:func:`order_like`: a post tree listed as its pre tree is).
:mod:`hloviz.analysis.scopes.build` calls them once per tree, after filing every instruction.
The program's order takes one pass over the module's instructions for positions and liveness,
then the data flow between sibling scopes to put a scope after the scopes it takes data from.
"""

from __future__ import annotations

import heapq

from ...ir import HloModule, Instruction
from .scope import Scope
from .tree import ScopeTree


def order_children(root: Scope, of: dict[Instruction, Scope], phase_of: dict[Instruction, str],
                   module: HloModule) -> None:
    """Children in the order the program runs them: by their first forward instruction in the
    entry computation (a scheduled module lists it in execution order) that depends on a
    parameter (constants and their broadcasts are hoisted to the top, whatever layer they serve),
    then by such an instruction anywhere; hloviz's own scopes last. Instructions stay in text
    order."""
    order, text, live, forward_of, source_of = _program_order(module, of, phase_of)
    big = 1 << 62
    first = _first_positions(order, live, forward_of, of, big)
    flows = _sibling_flows(forward_of, source_of)
    at = text.__getitem__
    for s in root.walk():
        s.instructions.sort(key=at)
        kids = s.children
        if kids:
            items = sorted(((c.name, c) for c in kids),
                           key=lambda kv: (kv[1].kind in ("top", "unnamed"), kv[1].kind == "unnamed",
                                           *first.get(id(kv[1]), [big, big])))
            s.reorder_children(c for _name, c in _by_data_flow(items, flows.get(id(s), set())))


def _program_order(module: HloModule, of: dict[Instruction, Scope], phase_of: dict[Instruction, str]
                   ) -> tuple[list[Instruction], dict[Instruction, int], set[int],
                              dict[Instruction, Scope], dict[Instruction, Scope]]:
    """One pass over the module's instructions: the order the program runs them (the entry's
    first, then the rest in text order), each one's text position, the ``id()`` of those that
    depend on a parameter (not only on constants), the filed forward instructions → their scope,
    and those of them that count as data flow's sources (live, not parameters)."""
    entry = module.entry
    order = list(entry.instructions) if entry is not None else []
    text: dict[Instruction, int] = {}
    live: set[int] = set()
    forward_of: dict[Instruction, Scope] = {}
    source_of: dict[Instruction, Scope] = {}
    n = 0
    for comp in module.computations:
        if comp is not entry:
            order += comp.instructions
        for inst in comp.instructions:
            text[inst] = n
            n += 1
            if inst.opcode == "parameter":
                live.add(id(inst))
            else:
                for o in inst.operands:
                    if id(o) in live:
                        live.add(id(inst))
                        break
            s = of.get(inst)
            if s is not None and phase_of.get(inst, "forward") == "forward":
                forward_of[inst] = s
                if id(inst) in live and inst.opcode != "parameter":
                    source_of[inst] = s
    return order, text, live, forward_of, source_of


def _first_positions(order: list[Instruction], live: set[int], forward_of: dict[Instruction, Scope],
                     of: dict[Instruction, Scope], big: int) -> dict[int, list[int]]:
    """``id()`` of each scope → [position of its first forward instruction, of its first
    instruction] in ``order``, counting only instructions that depend on a parameter (``big``:
    none); a scope's ancestors included."""
    first: dict[int, list[int]] = {}
    for n, inst in enumerate(order):
        if inst.opcode == "parameter" or id(inst) not in live:
            continue  # constants and what is made of them alone are hoisted: no sign of order
        s: Scope | None = forward_of.get(inst)
        forward = s is not None
        if s is None:
            s = of.get(inst)
        while s is not None:
            slot = first.get(id(s))
            if slot is None:
                slot = first[id(s)] = [big, big]
            elif slot[1] != big and (slot[0] != big or not forward):
                break  # set by an earlier instruction, and so was every scope above it
            if forward and slot[0] == big:
                slot[0] = n
            if slot[1] == big:
                slot[1] = n
            s = s.parent
    return first


def _sibling_flows(forward_of: dict[Instruction, Scope], source_of: dict[Instruction, Scope]
                   ) -> dict[int, set[tuple[str, str]]]:
    """Parent scope → the (child, child) pairs its children's forward instructions pass data
    along: the data flow lifted to the children of the two scopes' common ancestor.
    ``forward_of``: the forward instructions filed (in text order) → their scope; ``source_of``:
    those of them whose results count as data (not a parameter: a fused parameter is its
    fusion's; not made of constants alone)."""
    chains: dict[int, list[Scope]] = {}

    def chain(s: Scope) -> list[Scope]:
        hit = chains.get(id(s))
        if hit is None:
            hit = [*reversed(list(s.ancestors())), s]
            chains[id(s)] = hit
        return hit

    out: dict[int, set[tuple[str, str]]] = {}
    seen: set[tuple[int, int]] = set()  # scope pairs already lifted
    for inst, sv in forward_of.items():
        for op in inst.operands:
            su = source_of.get(op)
            if su is None or su is sv:
                continue
            key = (id(su), id(sv))
            if key in seen:
                continue
            seen.add(key)
            cu, cv = chain(su), chain(sv)
            k = 0
            while k < len(cu) and k < len(cv) and cu[k] is cv[k]:
                k += 1
            if 0 < k < len(cu) and k < len(cv):
                out.setdefault(id(cu[k - 1]), set()).add((cu[k].name, cv[k].name))
    return out


def _by_data_flow(items: list[tuple[str, Scope]], flows: set[tuple[str, str]]) -> list[tuple[str, Scope]]:
    """``items`` (in order of first appearance) reordered so that a scope comes after the scopes
    it takes data from, as far as cycles allow (a cycle keeps its members' order); hloviz's own
    scopes stay last. A functional Keras model lists some layers' weight arithmetic (a batch
    norm's ``rsqrt(variance)``) before the convolution feeding it; the data flow does not.

    The cycles are the strongly connected components of the flow graph, placed in topological
    order, the earliest-listed first wherever the flow leaves a choice (written here: importing
    networkx for it was 80 ms of ``hloviz stats`` on nearly every model)."""
    if not flows or len(items) < 2:
        return items
    rank = {name: n for n, (name, s) in enumerate(items) if s.kind not in ("top", "unnamed")}
    own = [kv for kv in items if kv[1].kind in ("top", "unnamed")]
    succ: dict[str, set[str]] = {name: set() for name in rank}
    for a, b in flows:
        if a in rank and b in rank:
            succ[a].add(b)
    component = _components(list(rank), succ)
    groups: dict[int, list[str]] = {}
    for name in rank:  # in rank order: each group's members stay in their listed order
        groups.setdefault(component[name], []).append(name)
    after: dict[int, set[int]] = {c: set() for c in groups}
    waiting = dict.fromkeys(groups, 0)
    for a, targets in succ.items():
        for b in targets:
            ca, cb = component[a], component[b]
            if ca != cb and cb not in after[ca]:
                after[ca].add(cb)
                waiting[cb] += 1
    ready = [(rank[members[0]], c) for c, members in groups.items() if not waiting[c]]
    heapq.heapify(ready)
    by_name = dict(items)
    out: list[tuple[str, Scope]] = []
    while ready:
        _, c = heapq.heappop(ready)
        out.extend((n, by_name[n]) for n in groups[c])
        for d in after[c]:
            waiting[d] -= 1
            if not waiting[d]:
                heapq.heappush(ready, (rank[groups[d][0]], d))
    return out + own


def _components(nodes: list[str], succ: dict[str, set[str]]) -> dict[str, int]:
    """Node → the number of its strongly connected component (Tarjan's algorithm, without
    recursion: a model's sibling scopes may be thousands)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    component: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(succ[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(succ[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component[member] = found
                        if member == node:
                            break
                    found += 1
    return component


def order_like(root: Scope, like: ScopeTree) -> None:
    """Order every scope's children as ``order_like`` orders the same paths (so a pre and a
    post tree read alike); the top level and unnamed scopes go last."""
    rank = {sc.path: n for n, sc in enumerate(like.walk())}
    for sc in root.walk():
        kids = sc.children
        if kids:
            sc.reorder_children(sorted(kids, key=lambda c: (c.kind in ("top", "unnamed"), c.kind == "unnamed",
                                                            rank.get(c.path, 1 << 62))))
