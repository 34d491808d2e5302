"""Which instructions each drawn box of a view holds, for the explorer's clicks and highlights.

In: a :class:`~.sides.ViewSpec` (its columns' :class:`~hloviz.render.views.View`), the sides and
each instruction's global id. Out: the view as JSON: DOT id (:func:`hloviz.render.layout.dot.drawn_ids`,
which Graphviz writes as each SVG group's ``<title>``) → the instructions drawn in it, the
scope a closed layer stands for, the fusion or body a cluster draws, and the tree node a box
opens in place (:func:`view_boxes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ....ir import Instruction
from ...layout.dot import drawn_ids
from .sides import Side, ViewSpec, opens_in_place, plain_name
from .tables import ScopeTable

if TYPE_CHECKING:
    from ...views import View

__all__ = ["view_boxes"]


def view_boxes(v: ViewSpec, sides: Sequence[Side], ids: list[dict[str, int]], insts: list[list[Instruction]],
          offsets: list[int], out_sides: list[dict], scopes: ScopeTable) -> dict:
    """A view's boxes: DOT id → ``[column, global ids of the instructions drawn in it, scope,
    tree]`` where ``scope`` (an index into the scope table, or -1) is set for a box that stands
    for a group of ops (a closed layer): the innermost scope holding them all; and ``tree`` (or
    None) is ``<side>:<key>`` of the closed block or repeat of the picture's cut the box draws
    (a view whose ``opens`` is ``t:<side>:<key>`` opens it in place: :func:`opens_in_place`)."""
    node_ids, cluster_ids = drawn_ids([view.scene for _, view in v.columns])
    nodes: dict[str, list] = {}
    clusters: dict[str, list] = {}
    for col, (s, view) in enumerate(v.columns):
        by_name = ids[s]
        members: dict[str, list[int]] = {}
        for name, key in view.node_of.items():
            g = by_name.get(name)
            if g is not None:
                members.setdefault(key, []).append(g)
        side = out_sides[s]
        tree_of = _closed_blocks(view, sides[s])
        for key, gids in members.items():
            dot_id = node_ids.get((col, key))
            if dot_id is not None:
                gids.sort()
                nodes[dot_id] = [col, gids, _group_scope(gids, side, offsets[s], scopes), tree_of.get(key)]
        for cluster in view.scene.all_clusters():
            dot_id = cluster_ids.get((col, cluster.key))
            inside = [g for key in cluster.nodes for g in members.get(key, ())]
            if dot_id is None or not inside:
                continue
            callers = sides[s].callers()
            first = insts[s][inside[0] - offsets[s]]
            owner = None
            if first.parent is not None:
                owner = next(iter(callers.get(first.parent.name, ())), None)
            owner_id = by_name.get(owner.name, -1) if owner is not None else -1
            scope = -1
            if owner_id < 0:  # an open layer, not a fusion or body
                every = [g for k in _keys_below(cluster) for g in members.get(k, ())]
                scope = _common_scope(every, side, offsets[s], scopes)
            clusters[dot_id] = [col, owner_id, scope]
    return {"key": v.key, "title": plain_name(v.title), "parent": v.parent, "opens": v.opens, "pair": v.pair,
            "sides": [s for s, _ in v.columns], "svg": v.svg, "nodes": nodes, "clusters": clusters}




def _closed_blocks(view: View, side: Side) -> dict[str, str]:
    """Scene node key → ``<side>:<tree key>`` for the boxes that draw a node the explorer opens
    in place (:func:`opens_in_place`)."""
    if view.cut is None:
        return {}
    nodes = {n.key: n for n in view.cut.nodes}
    return {drawn: f"{side.key}:{key}" for key, drawn in view.drawn_as.items()
            if key in nodes and opens_in_place(nodes[key], side)}


def _keys_below(cluster) -> list[str]:
    out = list(cluster.nodes)
    for sub in cluster.clusters:
        out += _keys_below(sub)
    return out


def _common_scope(gids: list[int], side: dict, offset: int, scopes: ScopeTable) -> int:
    """The innermost scope holding every one of ``gids`` (-1: only the whole module does)."""
    common: list[int] | None = None
    seen: set[int] = set()
    for g in gids:
        si = side["sc"][g - offset]
        if si in seen:
            continue
        seen.add(si)
        chain = []
        while si >= 0:
            chain.append(si)
            si = scopes.parent[si]
        chain.reverse()
        if common is None:
            common = chain
        else:
            n = 0
            while n < len(common) and n < len(chain) and common[n] == chain[n]:
                n += 1
            common = common[:n]
        if not common:
            return -1
    return common[-1] if common else -1


def _group_scope(gids: list[int], side: dict, offset: int, scopes: ScopeTable) -> int:
    """For a box of several ops (a closed layer, a run), the scope they share; -1 for a box
    that is one instruction, or one kernel with what it holds."""
    if len(gids) < 2:
        return -1
    kernel = side["kernel"]
    first = kernel[gids[0] - offset]
    if first >= 0 and all(kernel[g - offset] == first for g in gids):
        return -1  # a fusion drawn as one box: the kernel, not a group
    ops = {side["opn"][g - offset] for g in gids}
    if len(ops) < 2:
        return -1
    return _common_scope(gids, side, offset, scopes)
