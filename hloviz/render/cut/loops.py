"""The overview hangs a while loop's condition and body under the loop, and its results under them.

A ``while`` is drawn as its node, then the cluster of its condition, then the cluster of its
body, one below the other, then the loop's users: the order the program runs them in (the
condition is tested, the body runs, the loop's results are read). Left to itself, dot ranks a
body by its own arrows only — its parameters have no operand — and puts it at the top of the
column beside the loop: the JAX Newton solver's overview was 2,763 pt wide, its loops' bodies
and conditions on one row. A call's computation and a conditional's branches stay where dot
puts them, beside their caller (hanging them made small pictures taller, nothing narrower).

Done with invisible arrows: the loop's node to every node of its condition that nothing inside
the condition feeds, the condition's bottom nodes (those nothing inside it reads) to the
body's sources, the body's bottom nodes to each user of the loop (each skipped where it would
close a cycle). Inner loops hang first, so an outer body's bottom is found below them.
:func:`hloviz.render.cut.order.order_keys` places the units of a body in the same order.
"""

from __future__ import annotations

from ..scene import Cluster, Edge, Scene
from . import arrows

__all__ = ["ROLES", "hang_bodies"]

#: The computations hung under their caller: a while loop's.
ROLES = frozenset({"condition", "body"})


def _nodes(cluster: Cluster) -> list[str]:
    out: list[str] = []
    stack = [cluster]
    while stack:
        c = stack.pop()
        out.extend(c.nodes)
        stack.extend(c.clusters)
    return out


def _stages(hung: list[tuple[str, Cluster]]) -> list[list[Cluster]]:
    """The condition first, then the body (or a call's computation); branches side by side."""
    first = [c for role, c in hung if role == "condition"]
    rest = [c for role, c in hung if role != "condition"]
    return [s for s in (first, rest) if s]


def hang_bodies(scene: Scene, hung: dict[str, list[tuple[str, Cluster]]]) -> None:
    """``hung``: a caller's node key → the (role, cluster) of each computation it runs."""
    if not hung:
        return
    ranked = [(e.src, e.dst) for e in scene.edges if e.constraint and not e.dashed]
    users: dict[str, list[str]] = {}
    for a, b in ranked:
        users.setdefault(a, []).append(b)
    held = {owner: {k for _, c in bodies for k in _nodes(c)} for owner, bodies in hung.items()}
    # inner loops first: an outer body's lowest node is found once its inner bodies hang
    depth = {owner: sum(owner in inside for inside in held.values()) for owner in hung}
    for owner in sorted(hung, key=lambda o: -depth[o]):
        inside_all = held[owner]
        if owner in inside_all:
            continue
        above = [owner]
        for stage in _stages(hung[owner]):
            below = []
            for cluster in stage:
                inside = [k for k in _nodes(cluster) if k in scene.nodes]
                if not inside:
                    continue
                members = set(inside)
                fed = {b for a, b in ranked if a in members and b in members}
                for key in inside:
                    if key not in fed:
                        for top in above:
                            _add(scene, users, ranked, top, key)
                below.append(cluster)
            above = [k for c in below for k in _bottoms(scene, c, ranked)] or above
        for user in list(users.get(owner, ())):
            if user in inside_all:
                continue
            for bottom in above:
                if bottom != owner:
                    _add(scene, users, ranked, bottom, user)


def _bottoms(scene: Scene, cluster: Cluster, ranked: list[tuple[str, str]]) -> list[str]:
    """The nodes of ``cluster`` nothing inside it reads (its root, a result left unused); the
    lowest of them alone where there are many."""
    inside = {k for k in _nodes(cluster) if k in scene.nodes}
    read = {a for a, b in ranked if a in inside and b in inside}
    sinks = [k for k in _nodes(cluster) if k in inside and k not in read]
    if len(sinks) <= _SINKS:
        return sinks
    row = arrows.rows_of(scene.nodes, ranked)
    return [max(sinks, key=lambda k: row.get(k, 0))]


#: Up to this many bottom nodes of a body hold what comes after it down (more: the lowest).
_SINKS = 8


def _add(scene: Scene, users: dict[str, list[str]], ranked: list[tuple[str, str]], src: str, dst: str) -> None:
    if src == dst or dst in users.get(src, ()) or reaches({dst}, src, users):
        return
    scene.edges.append(Edge(src, dst, invisible=True))
    users.setdefault(src, []).append(dst)
    ranked.append((src, dst))


def reaches(starts: set[str], target: str, users: dict[str, list[str]]) -> bool:
    """Whether an arrow path leads from one of ``starts`` to ``target`` (``users``: each node's
    arrows' ends); an invisible ordering arrow that closed a cycle would undo the layout."""
    seen = set(starts)
    stack = list(starts)
    while stack:
        for nxt in users.get(stack.pop(), ()):
            if nxt == target:
                return True
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False
