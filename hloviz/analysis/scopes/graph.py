"""The data flow between scopes: the instruction graph's quotient by a set of scopes.

In: a :class:`~hloviz.analysis.scopes.tree.ScopeTree` and a cut through it (a depth, or scopes
that cover the tree without overlap). Out: a networkx ``DiGraph`` with a node per scope (how many
instructions it stands for) and an edge per pair of scopes that an operand use crosses (how many
uses, how many bytes), what :meth:`ScopeTree.graph <hloviz.analysis.scopes.tree.ScopeTree.graph>`
answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ...ir import HloModule, Instruction

if TYPE_CHECKING:
    import networkx as nx

    from .scope import Scope
    from .tree import ScopeTree

__all__ = ["scope_graph"]


def scope_graph(tree: ScopeTree, depth: int | None = None, *,
                scopes: Iterable[Scope] | None = None) -> nx.DiGraph:
    """:meth:`ScopeTree.graph <hloviz.analysis.scopes.tree.ScopeTree.graph>`: the quotient of the
    instruction graph by the cut at ``depth`` or by ``scopes`` (see there)."""
    import networkx as nx

    chosen = list(scopes) if scopes is not None else tree.cut(tree.max_depth if depth is None else depth)
    g = nx.DiGraph()
    for s in chosen:
        g.add_node(s.path, scope=s, instructions=0)
    where = _owner_paths(tree, chosen)
    for path in where.values():
        g.nodes[path]["instructions"] += 1
    _add_operand_edges(g, tree.module, where)
    return g


def _owner_paths(tree: ScopeTree, chosen: list[Scope]) -> dict[Instruction, str]:
    """Instruction → the path of the innermost scope of ``chosen`` holding it (instructions
    outside every chosen scope are left out)."""
    chosen_ids = {id(s) for s in chosen}
    memo: dict[int, Scope | None] = {}

    def owner(s: Scope) -> Scope | None:
        key = id(s)
        if key not in memo:
            cur: Scope | None = s
            while cur is not None and id(cur) not in chosen_ids:
                cur = cur.parent
            memo[key] = cur
        return memo[key]

    where: dict[Instruction, str] = {}
    for inst, s in tree.filed():
        o = owner(s)
        if o is not None:
            where[inst] = o.path
    return where


def _add_operand_edges(g: nx.DiGraph, module: HloModule, where: Mapping[Instruction, str]) -> None:
    """Add to ``g`` an edge per operand use that crosses scopes (``count`` uses, ``bytes``
    carried); a called computation's parameters count as uses of the caller's operands."""
    def link(src: Instruction, dst: Instruction) -> None:
        a, b = where.get(src), where.get(dst)
        if a is None or b is None or a == b:
            return
        if g.has_edge(a, b):
            g[a][b]["count"] += 1
            g[a][b]["bytes"] += src.shape.byte_size
        else:
            g.add_edge(a, b, count=1, bytes=src.shape.byte_size)

    for comp in module.computations:
        for inst in comp.instructions:
            for op in inst.operands:
                link(op, inst)
            for called in inst.called_computations:
                params = called.parameters
                for k, op in enumerate(inst.operands):
                    if k < len(params):
                        link(op, params[k])
