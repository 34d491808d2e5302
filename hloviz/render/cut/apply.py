"""A cut applied to a view: closed tree nodes become single units, open ones clusters.

Stage 3 of a picture (*apply*, :mod:`~hloviz.render.views`): :func:`apply_cut` turns a cut
through the view's tree (:mod:`~hloviz.render.cut.cut`, the tree routed by
:mod:`~hloviz.render.tree.layers`) into the view's units: a closed scope becomes one node
(``block_5_expand: 3 ops → 1 kernel``), a closed fusion one fusion node, a closed body folds
into its caller; open scopes are recorded as clusters (:class:`ScopeCluster`) for
:mod:`~hloviz.render.cut.assemble`, with how their children stack (:func:`stacking`). Apart from
the routing because it reads the cut, not the scopes: each side reads alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...analysis.loops import known_trip_count
from ...ir import Instruction
from ..scene import Row
from ..tree.model import Place, Unit, ViewGraph
from ..tree.nodes import UNUSED
from ..tree.tree import STRUCTURAL, Tree, TreeNode, parents_first
from . import labels
from .cut import Cut
from .titles import block_title, display_path, scope_rows, scope_title

__all__ = ["ScopeCluster", "apply_cut", "block_title", "scope_title", "stacking"]

#: Open tree nodes drawn as a titled cluster.
_CLUSTERED = STRUCTURAL


@dataclass
class ScopeCluster:
    """An open scope drawn as a cluster: ``key`` (a tree key), ``parent`` cluster key (or None)."""

    key: str
    parent: str | None
    rows: list[Row]
    node: TreeNode
    units: list[int] = field(default_factory=list)
    places: list[str] = field(default_factory=list)


def apply_cut(g: ViewGraph, cut: Cut, *, kernels_of: Callable[[Instruction], tuple[int, ...]],
              phase_of: Callable[[Instruction], str] = lambda i: "forward", brief: bool = False) -> list[ScopeCluster]:
    """Merge ``g``'s units as ``cut`` says; return the open scopes to draw as clusters.

    ``kernels_of(instruction)`` gives the kernel numbers an instruction is marked with (for the
    ``3 ops → 1 kernel`` row of a closed scope), ``phase_of`` its phase (``forward``,
    ``backward``, ``optimizer``: a training step's layer says how many ops of each it holds).
    ``brief``: the overview's labels (two opcodes, two parameter names: narrower boxes).
    """
    tree = cut.tree
    for node in cut.nodes:
        if node.is_leaf:
            _caption(g, node)
            continue
        units = [g.units[int(leaf.name[1:])] for leaf in tree.leaves(node)]
        if node.kind == "fusion":
            place = g.place_by_key[node.name]
            close_fusion(g, place, _places_below(g, node, tree) or [place], units)
        elif node.kind == "body":
            _fold_body(g, node, tree, units)
        else:
            _close_scope(g, node, tree, units, kernels_of, phase_of, brief)
    g.stacking = stacking(g, cut)
    return _open_clusters(g, cut)


def _caption(g: ViewGraph, leaf: TreeNode) -> None:
    """A leaf that is all of its scope (``block_1_expand_relu``: one clamp) carries the scope's name."""
    parent = leaf.parent
    if parent is not None and parent.kind == "scope" and len(parent.children) == 1:
        unit = g.units[int(leaf.name[1:])]
        if unit.alive and unit.scope is None:
            unit.caption = scope_title(parent)


def _places_below(g: ViewGraph, node: TreeNode, tree: Tree) -> list[Place]:
    return [g.place_by_key[n.name] for n in tree.subtree_root(node).nodes.values() if n.kind in ("fusion", "body")]


def close_fusion(g: ViewGraph, place: Place, tree: list[Place], units: list[Unit]) -> Unit:
    """Draw fusion ``place`` (and the places ``tree`` below it) as one node holding ``units``:
    the fusion's header and what it holds (``fusion kLoop · 14 instructions: …``)."""
    owner = place.owner
    assert owner is not None and place.parent is not None
    members = [owner] + [m for u in units for m in u.members]
    unit = g.new_unit("fusion", place.parent, g.position(owner), members)
    unit.root = place.key in g.root_places
    unit.rows = labels.fusion_rows(owner, root=unit.root)
    g.unit_of[id(owner)] = unit.index
    g.merge(units, unit)
    for t in tree:
        g.collapsed_places.add(t.key)
    return unit


def _fold_body(g: ViewGraph, node: TreeNode, tree: Tree, units: list[Unit]) -> None:
    place = g.place_by_key[node.name]
    owner_index = g.unit_of.get(id(place.owner)) if place.owner is not None else None
    if owner_index is None:
        return
    owner = g.units[g.find(owner_index)]
    places = _places_below(g, node, tree)
    n = sum(len(p.computation.instructions) for p in places)
    trips = known_trip_count(place.owner) if place.owner is not None and place.role == "body" else None
    runs = f", runs ×{trips}" if trips is not None else ""  # XLA's known trip count of the loop
    owner.extra_rows.append(Row(f"{place.role}: {place.computation.name} ({n} instructions{runs})", small=True))
    owner.members.extend(m for u in units for m in u.members)
    g.merge([u for u in units if u is not owner], owner)
    for p in places:
        g.collapsed_places.add(p.key)


def _close_scope(g: ViewGraph, node: TreeNode, tree: Tree, units: list[Unit],
                 kernels_of: Callable[[Instruction], tuple[int, ...]], phase_of: Callable[[Instruction], str],
                 brief: bool = False) -> None:
    places = _places_below(g, node, tree)
    members: list[Instruction] = []
    for u in units:
        members.extend(u.members)
    # the fusion and caller instructions themselves: they carry the kernel marks
    members.extend(p.owner for p in places if p.owner is not None and id(p.owner) not in g.unit_of)
    if not units:  # nothing of it is drawn here (its work was folded into a caller): no node
        for p in places:
            g.collapsed_places.add(p.key)
        return
    first = min(units, key=lambda u: u.pos)
    unit = g.new_unit("scope", None, 0, members)
    # drawn in the body of a loop of steps it lies in (its first unit may be in a fusion there)
    body = next((a for a in node.ancestors() if a.kind == "body"), None)
    unit.scope, unit.pos = body.name if body is not None else first.scope, first.pos
    unit.root = any(u.root for u in units)
    # values nothing reads are in no kernel, though their op's other instructions are: an unseen
    # LSTM step's seven unread constants said "7 ops → 8 kernels"
    unit.unread = node.kind == "scope" and node.name == UNUSED
    unit.rows = scope_rows(node, members, (lambda _i: ()) if unit.unread else kernels_of, after=g.module.is_scheduled,
                           phase_of=phase_of, names=g.param_names, listed=2 if brief else 3)
    g.merge(units, unit)
    for p in places:
        g.collapsed_places.add(p.key)
        if p.owner is not None:
            g.unit_of.setdefault(id(p.owner), unit.index)


def stacking(g: ViewGraph, cut: Cut) -> list[list[tuple[list[int], bool, bool]]]:
    """For every open node, its children in text order as ``(unit indices, drawn as a cluster, a
    copy of an open repeat)``.

    Dot places clusters whose ranks overlap side by side; a layer's weight preparation (a batch
    norm's ``rsqrt(var + ε) · γ``) floats up beside the layer before it, and a deep model turns
    into a diagonal. :mod:`~hloviz.render.cut.assemble` keeps each open child below the one before
    it with invisible arrows, so the picture reads top-down in execution order.
    """
    tree = cut.tree
    open_nodes = [tree.root] + cut.open()
    open_keys = {n.key for n in open_nodes}
    units_below = _units_below(g, tree.root)
    out = []
    for node in open_nodes:
        slots = []
        for child in node.children:
            units = units_below[id(child)]
            if units:
                slots.append((units, child.key in open_keys and child.kind in _CLUSTERED and not child.waist,
                              node.kind == "repeat"))
        if any(is_cluster for _, is_cluster, _copy in slots):
            out.append(slots)
    return out


def _units_below(g: ViewGraph, root: TreeNode) -> dict[int, list[int]]:
    """``id()`` of every node below ``root`` (and of ``root``) → the live units its leaves are
    drawn as, in leaf order, each once: worked out children first, so each leaf is read once
    (a closed scope's thousands of leaves are one unit), not once per open node above it."""
    out: dict[int, list[int]] = {}
    find, units = g.find, g.units
    for n in reversed(parents_first(root)):
        if n.kind == "leaf":
            i = find(int(n.name[1:]))
            out[id(n)] = [i] if units[i].alive else []
            continue
        got: list[int] = []
        seen: set[int] = set()
        for c in n.children:
            for i in out[id(c)]:
                if i not in seen:
                    seen.add(i)
                    got.append(i)
        out[id(n)] = got
    return out


def _open_clusters(g: ViewGraph, cut: Cut) -> list[ScopeCluster]:
    """Open scopes and groups that do not hold everything: the clusters to draw."""
    clusters = _empty_clusters(cut)
    for cnode in cut.nodes:
        home = next((a.key for a in cnode.ancestors() if a.key in clusters), None)
        if home is not None:
            _add_member(g, cut.tree, cnode, clusters[home])
    # open fusions and bodies below an open scope: their clusters nest in the scope's cluster
    for node in cut.open():
        if node.kind in ("fusion", "body"):
            home = next((a.key for a in node.ancestors() if a.key in clusters), None)
            place = g.place_by_key[node.name]
            if home is not None and place.parent is not None and place.parent.parent is None:
                clusters[home].places.append(place.key)
    return list(clusters.values())


def _empty_clusters(cut: Cut) -> dict[str, ScopeCluster]:
    """A titled, still empty cluster for every open scope or group that splits and does not
    hold everything (one holding everything, or a single child, would only frame it), by key."""
    total = cut.tree.root.size
    drawn = [n for n in cut.open() if n.kind in _CLUSTERED and not n.waist and n.size < total and len(n.children) > 1]
    keys = {n.key for n in drawn}
    # cut.open() lists a layer that ends before its group ends ahead of the group: the parent
    # is looked up among all of them, and the clusters are listed parents first (assemble nests
    # each in the one listed before it), siblings in the order the cut gives
    parent_of = {n.key: next((a.key for a in n.ancestors() if a.key in keys), None) for n in drawn}
    children: dict[str | None, list] = {}
    for n in drawn:
        children.setdefault(parent_of[n.key], []).append(n)
    clusters: dict[str, ScopeCluster] = {}
    stack = list(reversed(children.get(None, [])))
    while stack:
        node = stack.pop()
        rows = [Row(scope_title(node), bold=True)]
        where = node.path if node.kind == "scope" and "/" in node.path else ""
        if where.startswith(("jit(", "pjit(")):  # JAX's: by the names users know, below jit(f)
            where = display_path(node)
            where = where if "/" in where else ""
        if where:
            rows.append(Row(where, small=True))
        clusters[node.key] = ScopeCluster(node.key, parent_of[node.key], rows, node)
        stack.extend(reversed(children.get(node.key, [])))
    return clusters


def _add_member(g: ViewGraph, tree: Tree, cnode: TreeNode, cluster: ScopeCluster) -> None:
    """Put what the cut node ``cnode`` draws into ``cluster``: a leaf's unit, a fusion's or
    body's caller unit (and a top-level place, unless collapsed), or a closed scope's merged unit.
    Units already drawn inside a fusion or body (their ``scope`` is set) stay there."""
    if cnode.is_leaf:
        _add_free_unit(g, g.find(int(cnode.name[1:])), cluster)
        return
    if cnode.kind in ("fusion", "body"):
        place = g.place_by_key[cnode.name]
        if place.owner is not None and id(place.owner) in g.unit_of:
            _add_free_unit(g, g.find(g.unit_of[id(place.owner)]), cluster)
        if place.parent is not None and place.parent.parent is None and place.key not in g.collapsed_places:
            cluster.places.append(place.key)
        return
    # a closed scope: its merged unit
    leaf = next(tree.leaves(cnode), None)
    if leaf is not None:
        _add_free_unit(g, g.find(int(leaf.name[1:])), cluster)


def _add_free_unit(g: ViewGraph, index: int, cluster: ScopeCluster) -> None:
    """Add unit ``index`` to ``cluster`` when it is alive and not inside a fusion or body."""
    unit = g.units[index]
    if unit.alive and unit.scope is None:
        cluster.units.append(unit.index)
