"""The model's own structure in a picture: the drawn units as a :mod:`~hloviz.render.cut` tree.

Each drawn unit is routed from the root by the scope of its instruction (``metadata.op_name``:
``model/block_5_expand/convolution`` lies in ``model`` › ``block_5_expand``), then by the
fusion or body that holds it. A fusion lies in the scope of the op that does its heaviest work
(the convolution of a conv + batch-norm + relu fusion), and an instruction without a scope of its
own — a parameter, a constant, TensorFlow's ``XLA_Args`` — in the scope its users share, so
a layer's weights are drawn with the layer.

:func:`apply_cut` turns a cut into the view's units: a closed scope becomes one node
(``block_5_expand: 3 ops → 1 kernel``), a closed fusion one fusion node, a closed body folds
into its caller; open scopes are recorded as clusters for :mod:`~hloviz.render.assemble`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from ..ir import Instruction
from . import labels
from .cut import Cut, Step, Tree, TreeNode, build_tree
from .model import Place, Unit, ViewGraph
from .scene import Row

__all__ = ["ScopeCluster", "ScopeNaming", "apply_cut", "scope_tree", "unit_routes"]

#: Opcodes whose instructions are the heavy work of a fusion: they decide the fusion's scope.
_HEAVY = {"convolution": 16, "dot": 16, "custom-call": 8, "reduce": 4, "reduce-window": 4, "scatter": 4,
          "gather": 2}
#: Opcodes that never decide a scope (bookkeeping).
_QUIET = frozenset({"parameter", "constant", "get-tuple-element", "tuple", "bitcast"})
#: op_names that name plumbing, not a scope.
_PLUMBING = frozenset({"XLA_Args", "XLA_Retvals"})


@dataclass(frozen=True)
class ScopeNaming:
    """How op names become scope paths and names shown: ``path(op_name)`` → the scope's
    components (outermost first), ``label(component)`` → the name a user knows."""

    path: Callable[[str], tuple[str, ...]]
    label: Callable[[str], str] = lambda name: name


def _plain_path(op_name: str) -> tuple[str, ...]:
    """``a/b/op`` → ``("a", "b")``: every component but the op's own name."""
    if not op_name or op_name in _PLUMBING:
        return ()
    parts = [p for p in op_name.split("/") if p]
    return tuple(parts[:-1])


PLAIN = ScopeNaming(_plain_path)


@dataclass
class ScopeCluster:
    """An open scope drawn as a cluster: ``key`` (a tree key), ``parent`` cluster key (or None)."""

    key: str
    parent: str | None
    rows: list[Row]
    node: TreeNode
    units: list[int] = field(default_factory=list)
    places: list[str] = field(default_factory=list)


def unit_routes(g: ViewGraph, naming: ScopeNaming = PLAIN) -> list[tuple[list[Step], str]]:
    """``(route, "u<index>")`` for every live unit of ``g``, in drawing order."""
    paths: dict[int, tuple[str, ...]] = {}
    cache: dict[str, tuple[str, ...]] = {}

    def op_path(inst: Instruction) -> tuple[str, ...]:
        op = inst.metadata.op_name
        p = cache.get(op)
        if p is None:
            p = cache[op] = naming.path(op)
        return p

    def own_path(inst: Instruction) -> tuple[str, ...]:
        p = paths.get(id(inst))
        if p is None:
            p = paths[id(inst)] = _fusion_path(inst, op_path) if inst.opcode == "fusion" else op_path(inst)
        return p

    top = [c for c in g.computations if g.places[c.name].parent is None]
    for comp in top:
        users = g.users.get(comp.name) or comp.users()
        for inst in comp.instructions:
            own_path(inst)
        # instructions without a scope take the scope their users share (weights → their layer)
        for inst in reversed(comp.instructions):
            if paths[id(inst)] or inst.opcode == "tuple" and inst is comp.root:
                continue
            shared = None
            for u in users.get(inst, ()):
                p = paths.get(id(u), ())
                shared = p if shared is None else _common(shared, p)
                if not shared:
                    break
            if shared:
                paths[id(inst)] = shared

    place_routes: dict[str, list[Step]] = {}

    def route_of_place(place: Place) -> list[Step]:
        r = place_routes.get(place.key)
        if r is None:
            parent = place.parent
            owner = place.owner
            if parent is None or owner is None:
                r = []
            else:
                base = route_of_place(parent) if parent.parent is not None else scope_steps(paths.get(id(owner), ()))
                kind = "fusion" if place.role == "fusion" else "body"
                label = owner.name if kind == "fusion" else f"{place.role} of {owner.name}"
                r = base + [Step(kind, place.key, label=label)]
            place_routes[place.key] = r
        return r

    step_cache: dict[tuple[str, ...], list[Step]] = {}

    def scope_steps(path: tuple[str, ...]) -> list[Step]:
        s = step_cache.get(path)
        if s is None:
            s = step_cache[path] = [Step("scope", name, "/".join(path[:i + 1]), naming.label(name))
                                    for i, name in enumerate(path)]
        return s

    out = []
    for u in sorted((u for u in g.units if u.alive), key=lambda u: u.pos):
        place = g.place_by_key.get(u.scope) if u.scope else None
        if place is None:
            route = scope_steps(paths.get(id(u.members[0]), ()))
        else:
            route = route_of_place(place)
        out.append((route, f"u{u.index}"))
    return out


def _common(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return a[:n]


def _fusion_path(fusion: Instruction, op_path: Callable[[Instruction], tuple[str, ...]]) -> tuple[str, ...]:
    """The scope of a fusion: where its heaviest work comes from (by op weight, then count)."""
    from ..ir import called_closure

    votes: Counter[tuple[str, ...]] = Counter()
    for comp in called_closure(fusion.called_computations, follow=lambda i: i.opcode == "fusion"):
        for inst in comp.instructions:
            if inst.opcode in _QUIET or inst.opcode == "fusion":
                continue
            p = op_path(inst)
            if p:
                votes[p] += _HEAVY.get(inst.opcode, 1)
    if votes:
        return max(votes.items(), key=lambda kv: (kv[1], -len(kv[0])))[0]
    return op_path(fusion)


def scope_tree(g: ViewGraph, naming: ScopeNaming = PLAIN) -> Tree:
    """The tree of ``g``'s live units (leaves ``u<index>``)."""
    return build_tree(unit_routes(g, naming))


def informative(tree: Tree) -> bool:
    """Whether the tree has scopes worth drawing: at least one scope holding several leaves."""
    return any(n.kind == "scope" and n.size > 1 for n in tree.nodes.values())


# --- a cut → the view's units -------------------------------------------------------------------


def apply_cut(g: ViewGraph, cut: Cut, *, kernels_of: Callable[[Instruction], tuple[int, ...]]) -> list[ScopeCluster]:
    """Merge ``g``'s units as ``cut`` says; return the open scopes to draw as clusters.

    ``kernels_of(instruction)`` gives the kernel numbers an instruction is marked with (for the
    ``3 ops → 1 kernel`` row of a closed scope).
    """
    from .collapse import collapse_fusion

    tree = cut.tree
    for node in cut.nodes:
        if node.is_leaf:
            continue
        units = [g.units[int(leaf.name[1:])] for leaf in tree.leaves(node)]
        if node.kind == "fusion":
            place = g.place_by_key[node.name]
            collapse_fusion(g, place, _places_below(g, node, tree) or [place], units)
        elif node.kind == "body":
            _fold_body(g, node, tree, units)
        else:
            _close_scope(g, node, tree, units, kernels_of)
    g.stacking = stacking(g, cut)
    return _open_clusters(g, cut)


def _places_below(g: ViewGraph, node: TreeNode, tree: Tree) -> list[Place]:
    return [g.place_by_key[n.name] for n in tree.subtree_root(node).nodes.values() if n.kind in ("fusion", "body")]


def _fold_body(g: ViewGraph, node: TreeNode, tree: Tree, units: list[Unit]) -> None:
    place = g.place_by_key[node.name]
    owner_index = g.unit_of.get(id(place.owner)) if place.owner is not None else None
    if owner_index is None:
        return
    owner = g.units[g.find(owner_index)]
    places = _places_below(g, node, tree)
    n = sum(len(p.computation.instructions) for p in places)
    owner.extra_rows.append(Row(f"{place.role}: {place.computation.name} ({n} instructions)", small=True))
    owner.members.extend(m for u in units for m in u.members)
    g.merge([u for u in units if u is not owner], owner)
    for p in places:
        g.collapsed_places.add(p.key)


def _close_scope(g: ViewGraph, node: TreeNode, tree: Tree, units: list[Unit],
                 kernels_of: Callable[[Instruction], tuple[int, ...]]) -> None:
    places = _places_below(g, node, tree)
    members: list[Instruction] = []
    for u in units:
        members.extend(u.members)
    # the fusion and caller instructions themselves: they carry the kernel marks
    members.extend(p.owner for p in places if p.owner is not None and id(p.owner) not in g.unit_of)
    first = min(units, key=lambda u: u.pos)
    unit = g.new_unit("scope", None, 0, members)
    unit.scope, unit.pos = first.scope, first.pos
    unit.root = any(u.root for u in units)
    unit.rows = scope_rows(node, members, kernels_of, after=g.module.is_scheduled)
    g.merge(units, unit)
    for p in places:
        g.collapsed_places.add(p.key)
        if p.owner is not None:
            g.unit_of.setdefault(id(p.owner), unit.index)


def scope_title(node: TreeNode) -> str:
    """``block_5_expand``; a group: ``block_5_* (9 layers)``."""
    if node.kind == "group":
        n = sum(1 for c in node.children if c.kind in ("scope", "group"))
        return f"{node.label or node.name} ({n} scopes)"
    if node.kind == "root":
        return "(no scope)"
    names = [node.label or node.name]
    parent = node.parent
    # an open scope holding only this one is not drawn: its name goes into this one's
    while parent is not None and parent.kind == "scope" and len(parent.children) == 1:
        names.append(parent.label or parent.name)
        parent = parent.parent
    return "/".join(reversed(names))


def scope_rows(node: TreeNode, members: list[Instruction], kernels_of: Callable[[Instruction], tuple[int, ...]],
               *, after: bool) -> list[Row]:
    """The label of a closed scope: name, ``N ops → K kernels``, the most common opcodes."""
    ops = [m for m in members if m.opcode not in ("parameter", "get-tuple-element", "tuple")]
    params = len(members) - len(ops) - sum(1 for m in members if m.opcode in ("get-tuple-element", "tuple"))
    kernels = sorted({k for m in members for k in kernels_of(m)})
    if after:
        fusions = [m for m in ops if m.opcode == "fusion"]
        inner = sum(_fused_ops(f) for f in fusions)
        what = f"{len(kernels)} kernel{'s' if len(kernels) != 1 else ''}" if kernels else f"{len(ops)} instructions"
        if fusions:
            what += f" · {len(fusions)} fusion{'s' if len(fusions) != 1 else ''} of {inner} ops"
    else:
        what = f"{len(ops)} op{'s' if len(ops) != 1 else ''}"
        if kernels:
            what += f" → {len(kernels)} kernel{'s' if len(kernels) != 1 else ''}"
    rows = [Row(scope_title(node), bold=True), Row(what)]
    shown = [m.opcode for m in ops if m.opcode != "fusion" or not after]
    if shown:
        rows.append(Row(labels.histogram_text(shown), small=True))
    if params:
        rows.append(Row(f"{params} parameter{'s' if params != 1 else ''}", small=True))
    return rows


def stacking(g: ViewGraph, cut: Cut) -> list[list[tuple[list[int], bool]]]:
    """For every open node, its children in text order as ``(unit indices, drawn as a cluster)``.

    Dot places clusters whose ranks overlap side by side; a layer's weight preparation (a batch
    norm's ``rsqrt(var + ε) · γ``) floats up beside the layer before it, and a deep model turns
    into a diagonal. :mod:`~hloviz.render.assemble` keeps each open child below the one before
    it with invisible arrows, so the picture reads top-down in execution order.
    """
    tree = cut.tree
    open_nodes = [tree.root] + cut.open()
    open_keys = {n.key for n in open_nodes}
    out = []
    for node in open_nodes:
        slots = []
        for child in node.children:
            units: list[int] = []
            seen: set[int] = set()
            for leaf in tree.leaves(child) if not child.is_leaf else [child]:
                i = g.find(int(leaf.name[1:]))
                if i not in seen and g.units[i].alive:
                    seen.add(i)
                    units.append(i)
            if units:
                slots.append((units, child.key in open_keys))
        if any(is_cluster for _, is_cluster in slots):
            out.append(slots)
    return out


def _fused_ops(fusion: Instruction) -> int:
    from ..ir import called_closure

    return sum(1 for c in called_closure(fusion.called_computations, follow=lambda i: i.opcode == "fusion")
               for i in c.instructions if i.opcode not in ("parameter", "fusion"))


def _open_clusters(g: ViewGraph, cut: Cut) -> list[ScopeCluster]:
    """Open scopes and groups that do not hold everything: the clusters to draw."""
    tree = cut.tree
    total = tree.root.size
    clusters: dict[str, ScopeCluster] = {}
    for node in cut.open():
        if node.kind not in ("scope", "group") or node.size >= total or len(node.children) == 1:
            continue
        parent = next((a.key for a in node.ancestors() if a.key in clusters), None)
        rows = [Row(scope_title(node), bold=True)]
        if node.kind == "scope" and "/" in node.path:
            rows.append(Row(node.path, small=True))
        clusters[node.key] = ScopeCluster(node.key, parent, rows, node)
    for cnode in cut.nodes:
        home = next((a.key for a in cnode.ancestors() if a.key in clusters), None)
        if home is None:
            continue
        if cnode.is_leaf:
            unit = g.units[g.find(int(cnode.name[1:]))]
            if unit.alive and unit.scope is None:
                clusters[home].units.append(unit.index)
            continue
        if cnode.kind in ("fusion", "body"):
            place = g.place_by_key[cnode.name]
            if place.owner is not None and id(place.owner) in g.unit_of:
                unit = g.units[g.find(g.unit_of[id(place.owner)])]
                if unit.alive and unit.scope is None:
                    clusters[home].units.append(unit.index)
            if place.parent is not None and place.parent.parent is None and place.key not in g.collapsed_places:
                clusters[home].places.append(place.key)
            continue
        # a closed scope: its merged unit
        leaf = next(tree.leaves(cnode), None)
        if leaf is not None:
            unit = g.units[g.find(int(leaf.name[1:]))]
            if unit.alive and unit.scope is None:
                clusters[home].units.append(unit.index)
    # open fusions and bodies below an open scope: their clusters nest in the scope's cluster
    for node in cut.open():
        if node.kind in ("fusion", "body"):
            home = next((a.key for a in node.ancestors() if a.key in clusters), None)
            place = g.place_by_key[node.name]
            if home is not None and place.parent is not None and place.parent.parent is None:
                clusters[home].places.append(place.key)
    return list(clusters.values())
