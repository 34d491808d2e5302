"""The model's own structure in a picture: the drawn units as a :mod:`~hloviz.render.tree` tree.

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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..ir import Computation, Instruction
from ..opcodes import SCOPE_INPUTS, SCOPE_NEUTRAL, SCOPE_PLUMBING
from . import labels
from .cut import Cut
from .model import Place, Unit, ViewGraph
from .scene import Row
from .tree import STRUCTURAL, Step, Tree, TreeNode, build_tree

if TYPE_CHECKING:
    from ..analysis.scopes import Scope, ScopeTree

__all__ = ["ScopeCluster", "apply_cut", "scope_tree", "unit_routes"]

#: Opcodes that never decide a scope (bookkeeping).
_QUIET = SCOPE_NEUTRAL
#: Unnamed instructions that go with their users (a layer's weights), or with their operand.
_INPUTS = SCOPE_INPUTS
_PLUMBING = SCOPE_PLUMBING
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


def _named(s: Scope | None) -> Scope | None:
    """``s`` if it is a scope from op names (not the root, not a computation's unnamed ops)."""
    return s if s is not None and s.kind == "scope" else None


def unit_routes(g: ViewGraph, scopes: ScopeTree | None,
                updates: Mapping[Instruction, Scope | None] | None = None) -> list[tuple[list[Step], str]]:
    """``(route, "u<index>")`` for every live unit of ``g``, in drawing order (``scopes`` None:
    a module drawn without its op names' scopes, routed by fusion and body alone).

    ``updates`` (:func:`hloviz.analysis.updates.update_targets`) says which layer each optimizer
    instruction updates: those go into an ``(optimizer)`` scope inside that layer, so a training
    step's layer holds its forward, backward and optimizer work.
    """
    routes = _Routes(g, scopes, updates or {})
    for comp in [c for c in g.computations if g.places[c.name].parent is None] if scopes is not None else ():
        routes.place_computation(comp)
    out = []
    for u in sorted((u for u in g.units if u.alive), key=routes.order):
        place = g.place_by_key.get(u.scope) if u.scope else None
        route = routes.of_place(place) if place is not None else routes.inst_steps(u.members[0])
        out.append((route, f"u{u.index}"))
    return out


class _Routes:
    """The scope of every instruction of one view, and the routes built from them (memoised:
    thousands of units share a few hundred scopes and places)."""

    def __init__(self, g: ViewGraph, scopes: ScopeTree | None, updates: Mapping[Instruction, Scope | None]) -> None:
        self.g, self.scopes, self.updates = g, scopes, updates
        self.of = scopes._of if scopes is not None else {}
        #: id(instruction) → the named scope it is drawn in (None: outside every scope).
        self.own: dict[int, Scope | None] = {}
        #: id(optimizer instruction) → the layer it updates.
        self.updating: dict[int, Scope] = {}
        self._steps: dict[int, list[Step]] = {}
        self._places: dict[str, list[Step]] = {}
        self._top_pos: dict[str, int] = {}

    def scope_of(self, inst: Instruction) -> Scope | None:
        """``inst``'s own scope (from its op name, or its fusion's), noting the layer it updates."""
        key = id(inst)
        scopes = self.scopes
        if key not in self.own and scopes is None:
            self.own[key] = None
        elif key not in self.own and scopes is not None:
            self.own[key] = _fusion_scope(inst, scopes) if inst.opcode == "fusion" else _named(self.of.get(inst))
            target = _update_target(inst, self.updates, scopes) if self.updates else None
            if target is not None:
                self.updating[key] = target
        return self.own[key]

    def place_computation(self, comp: Computation) -> None:
        """Give every instruction of the top-level ``comp`` a scope: its own; for inputs without
        one, the scope their users share; for results on their way out, their operand's."""
        users = self.g.users.get(comp.name) or comp.users()
        own = self.own
        for inst in comp.instructions:
            self.scope_of(inst)
        # instructions without a scope take the scope their users share (weights → their layer)
        for inst in reversed(comp.instructions):
            if own[id(inst)] is not None or inst is comp.root or not (
                    inst.opcode in _INPUTS or inst.metadata.op_name == "XLA_Args"):
                continue
            own[id(inst)] = self._users_scope(inst, users.get(inst, ()))
        # what is still unplaced (results on their way out: XLA_Retvals) goes with its operand
        for inst in comp.instructions:
            if own[id(inst)] is None and inst is not comp.root and (
                    inst.metadata.op_name == "XLA_Retvals" or (inst.opcode in _PLUMBING and not inst.metadata.op_name)):
                own[id(inst)] = next((p for p in map(own.get, map(id, inst.operands)) if p is not None), None)

    def _users_scope(self, inst: Instruction, users: Iterable[Instruction]) -> Scope | None:
        """The scope an input without one is drawn in: a parameter's first user's (a weight read by
        its layer, its gradient and the optimizer is drawn with its layer), else the innermost
        scope all its users share."""
        users = tuple(users)
        if inst.opcode == "parameter":
            first = next((u for u in users if self.own.get(id(u)) is not None), None)
            if first is not None:
                layer = self.updating.get(id(first))
                if layer is not None:
                    # an optimizer's slot (Adam's moments) goes with the update that reads it
                    self.updating[id(inst)] = layer
                return self.own[id(first)]
        shared = None
        for u in users:
            p = self.own.get(id(u))
            shared = p if shared is None else _common(shared, p)
            if shared is None:
                break
        return shared

    def scope_steps(self, s: Scope | None) -> list[Step]:
        """The steps from the top down to the named scope ``s``."""
        if s is None:
            return []
        r = self._steps.get(id(s))
        if r is None:
            chain = [s] + [a for a in s.ancestors() if a.kind == "scope"]
            r = self._steps[id(s)] = [Step("scope", a.name, a.path, a.label) for a in reversed(chain)]
        return r

    def inst_steps(self, inst: Instruction) -> list[Step]:
        """``inst``'s route: its scope, or for optimizer work, the ``(optimizer)`` scope of its layer."""
        layer = self.updating.get(id(inst))
        if layer is None:
            return self.scope_steps(self.own.get(id(inst)))
        return self.scope_steps(layer) + [Step("scope", "(optimizer)", f"{layer.path}/(optimizer)", "optimizer")]

    def of_place(self, place: Place) -> list[Step]:
        """The route of a fusion or body place: its caller's route, then one step per nesting."""
        r = self._places.get(place.key)
        if r is None:
            parent, owner = place.parent, place.owner
            if parent is None or owner is None:
                r = []
            else:
                base = self.of_place(parent) if parent.parent is not None else self.inst_steps(owner)
                kind = "fusion" if place.role == "fusion" else "body"
                label = owner.name if kind == "fusion" else f"{place.role} of {owner.name}"
                r = base + [Step(kind, place.key, label=label)]
            self._places[place.key] = r
        return r

    def order(self, u: Unit) -> tuple:
        """Text order in the drawn computation; inside a fusion or body, its caller's place."""
        place = self.g.place_by_key.get(u.scope) if u.scope else None
        if place is None:
            return (u.pos[1], 0, 0)
        pos = self._top_pos.get(place.key)
        if pos is None:
            p = place
            while p.parent is not None and p.parent.parent is not None:
                p = p.parent
            pos = self._top_pos[place.key] = self.g.position(p.owner) if p.owner is not None else 0
        return (pos, 1, u.pos)


def _update_target(inst: Instruction, updates: Mapping[Instruction, Scope | None],
                   scopes: ScopeTree) -> Scope | None:
    """The layer an optimizer instruction (or a fusion of mostly optimizer work) updates."""
    if inst.opcode != "fusion":
        return updates.get(inst)
    from ..ir import called_closure

    found: dict[int, Scope] = {}
    work = optimizer = 0
    for comp in called_closure(inst.called_computations, follow=lambda i: i.opcode == "fusion"):
        for i in comp.instructions:
            if i.opcode in _QUIET or i.opcode == "fusion":
                continue
            work += 1
            if scopes.phase_of(i) == "optimizer":
                optimizer += 1
                t = updates.get(i)
                if t is not None:
                    found[id(t)] = t
    if optimizer * 2 <= work or len(found) != 1:
        return None
    return next(iter(found.values()))


def _common(a: Scope | None, b: Scope | None) -> Scope | None:
    """The innermost named scope holding both (None when they share none)."""
    if a is None or b is None:
        return None
    if a.contains(b):
        return a
    for s in a.ancestors():
        if s.kind != "scope":
            return None
        if s.contains(b):
            return s
    return None


def _fusion_scope(fusion: Instruction, scopes: ScopeTree) -> Scope | None:
    """The scope a fusion is drawn in: the first layer :meth:`ScopeTree.layers_of` gives (where
    its heaviest work comes from), so the picture, the side panel, the kernel table and ``stats``
    agree."""
    for s in scopes.layers_of(fusion):
        if s.kind == "scope":
            return s
    return _named(scopes._of.get(fusion))


def scope_tree(g: ViewGraph, scopes: ScopeTree | None = None, *, named: bool = True) -> Tree:
    """The tree of ``g``'s live units (leaves ``u<index>``), scopes as ``scopes`` (default: built
    from ``g.module``) files its instructions; a training step's optimizer updates go to the
    layers they update. ``named=False``: no scopes from op names (a module without them, or
    drawn without them): fusions, bodies and blocks found by structure only."""
    labels_, names = leaf_labels(g)
    if not named:
        return build_tree(unit_routes(g, None), edges=leaf_edges(g), label=labels_, names=names)
    if scopes is None:
        from ..analysis.scopes import build_scope_tree

        scopes = build_scope_tree(g.module, stage="pre")  # kernels come from the marks
    updates = None
    if scopes.root.phases.get("optimizer"):
        from ..analysis.updates import update_targets

        updates = update_targets(scopes)
    routes = _by_phase(g, scopes, unit_routes(g, scopes, updates))
    return build_tree(routes, edges=leaf_edges(g), label=labels_, names=names)


#: The scopes a step without user scopes is split into first (``(forward)`` …).
PHASE_SCOPES = ("(forward)", "(backward)", "(optimizer)")


def _by_phase(g: ViewGraph, scopes: ScopeTree, routes: list[tuple[list[Step], str]]) -> list[tuple[list[Step], str]]:
    """A training step whose op names carry no user scope (``jit(train_step)/mul`` only): its
    units go into a ``(forward)``, ``(backward)`` or ``(optimizer)`` scope by phase, so blocks
    are then found on each phase's own graph (the forward pass's residual adds are its cuts;
    the backward pass reads them all, which would hide them)."""
    scoped = sum(1 for route, _ in routes if len(route) > 1)
    if scoped * 10 > len(routes) or not scopes.root.phases.get("backward"):
        return routes  # user scopes carry the structure (a few helper jits do not)
    phase = {leaf: scopes.phase_of(g.units[int(leaf[1:])].members[0]) for route, leaf in routes if len(route) <= 1}
    _after_backward(phase, leaf_edges(g))
    out = []
    for route, leaf in routes:
        if len(route) > 1:
            out.append((route, leaf))
            continue
        base = route[0].path + "/" if route else ""
        p = phase[leaf]
        out.append(([*route, Step("scope", f"({p})", f"{base}({p})", p)], leaf))
    return out


def _after_backward(phase: dict[str, str], edges: list[tuple[str, str]]) -> None:
    """Work the op names call ``forward`` that reads the backward pass's results is the
    optimizer's (JAX names an update ``jit(train_step)/mul``, like the forward pass's
    ``jit(train_step)/jvp()/mul`` without the ``jvp``): gradient clipping and the update of
    every parameter; and what feeds only that work. Units only ``forward`` work reaches stay
    where they are."""
    succ: dict[str, list[str]] = {}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
    stack = [k for k, p in phase.items() if p == "backward"]
    seen = set(stack)
    while stack:
        for nxt in succ.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
                if phase.get(nxt) == "forward":
                    phase[nxt] = "optimizer"
    # what feeds only the optimizer is the optimizer's too (the moments' decay ``b1 · m``)
    pred: dict[str, list[str]] = {}
    for a, b in edges:
        pred.setdefault(b, []).append(a)
    stack = [k for k, p in phase.items() if p == "optimizer"]
    while stack:
        for src in pred.get(stack.pop(), ()):
            if phase.get(src) == "forward" and all(phase.get(u) == "optimizer" for u in succ.get(src, ())):
                phase[src] = "optimizer"
                stack.append(src)


def leaf_edges(g: ViewGraph) -> list[tuple[str, str]]:
    """The arrows between live units as leaf key pairs (what blocks are found on)."""
    find = g.find
    out = []
    for src, dst, *_ in g.edges:
        s, d = find(src), find(dst)
        if s != d and g.units[s].alive and g.units[d].alive:
            out.append((f"u{s}", f"u{d}"))
    return out


def leaf_labels(g: ViewGraph) -> tuple[dict[str, str], dict[str, str]]:
    """What each live unit is, for the structure hash of repeats: its opcode (a fusion also its
    kind, a chain its length); and its instruction's name (a block ending in it is named so)."""
    out, names = {}, {}
    for u in g.units:
        if u.alive:
            rep = u.members[0]
            text = rep.opcode
            if rep.opcode == "fusion":
                text += ":" + rep.attributes.get("kind", "")
            if u.kind == "chain":
                text += f"*{len(u.members)}"
            out[f"u{u.index}"] = text
            names[f"u{u.index}"] = rep.name
    return out, names


def informative(tree: Tree) -> bool:
    """Whether the tree has scopes worth drawing: at least one scope holding several leaves."""
    return any(n.kind in ("scope", "block") and n.size > 1 for n in tree.nodes.values())


# --- a cut → the view's units -------------------------------------------------------------------


def apply_cut(g: ViewGraph, cut: Cut, *, kernels_of: Callable[[Instruction], tuple[int, ...]],
              phase_of: Callable[[Instruction], str] = lambda i: "forward") -> list[ScopeCluster]:
    """Merge ``g``'s units as ``cut`` says; return the open scopes to draw as clusters.

    ``kernels_of(instruction)`` gives the kernel numbers an instruction is marked with (for the
    ``3 ops → 1 kernel`` row of a closed scope), ``phase_of`` its phase (``forward``,
    ``backward``, ``optimizer``: a training step's layer says how many ops of each it holds).
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
            _close_scope(g, node, tree, units, kernels_of, phase_of)
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
    owner.extra_rows.append(Row(f"{place.role}: {place.computation.name} ({n} instructions)", small=True))
    owner.members.extend(m for u in units for m in u.members)
    g.merge([u for u in units if u is not owner], owner)
    for p in places:
        g.collapsed_places.add(p.key)


def _close_scope(g: ViewGraph, node: TreeNode, tree: Tree, units: list[Unit],
                 kernels_of: Callable[[Instruction], tuple[int, ...]], phase_of: Callable[[Instruction], str]) -> None:
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
    unit.rows = scope_rows(node, members, kernels_of, after=g.module.is_scheduled, phase_of=phase_of,
                           names=g.param_names)
    g.merge(units, unit)
    for p in places:
        g.collapsed_places.add(p.key)
        if p.owner is not None:
            g.unit_of.setdefault(id(p.owner), unit.index)


def scope_title(node: TreeNode) -> str:
    """``block_5_expand``; a group: ``block_5_* (9 layers)``; the first copy of a repeat opened
    in place (:func:`hloviz.render.cut.open_in_place`) says so: ``… · copy 1 of 24``."""
    parent = node.parent
    if parent is not None and parent.kind == "repeat" and node.kind != "repeat" and parent.children[0] is node \
            and any(c.kind == "repeat" for c in parent.children):
        copies = sum(len(c.children) if c.kind == "repeat" else 1 for c in parent.children)
        return f"{_title(node)} · copy 1 of {copies}"
    return _title(node)


def _title(node: TreeNode) -> str:
    if node.kind == "group":
        n = sum(1 for c in node.children if c.kind in STRUCTURAL)
        return f"{node.label or node.name} ({n} scopes)"
    if node.kind == "block":
        return f"{node.label or '(ops)'} · block of {len(node.children)}"
    if node.kind == "repeat":
        return f"{node.label} ({node.name})"
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
               *, after: bool, phase_of: Callable[[Instruction], str] = lambda i: "forward",
               names: Mapping[str, str] | None = None) -> list[Row]:
    """The label of a closed scope: name, ``N ops → K kernels``, the most common opcodes."""
    ops = [m for m in members if m.opcode not in ("parameter", "get-tuple-element", "tuple")]
    params = len(members) - len(ops) - sum(1 for m in members if m.opcode in ("get-tuple-element", "tuple"))
    kernels = sorted({k for m in members for k in kernels_of(m)})
    if after:
        fusions = [m for m in ops if m.opcode == "fusion"]
        inner = sum(_fused_ops(f) for f in fusions)
        what = (f"{len(kernels)} kernel{'s' if len(kernels) != 1 else ''}" if kernels
                else f"{len(ops)} instruction{'s' if len(ops) != 1 else ''}")
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
    phases = Counter(phase_of(m) for m in ops)
    if set(phases) - {"forward"}:
        rows.append(Row(" · ".join(f"{p} {phases[p]}" for p in ("forward", "backward", "optimizer") if phases[p]),
                        small=True, italic=True))
    if params:
        named = [names[m.name] for m in members if m.opcode == "parameter" and names and m.name in names]
        text = f"{params} parameter{'s' if params != 1 else ''}"
        if named:
            prefix = (node.label or node.name) + "/"
            short = [n.split(prefix, 1)[1] if prefix in n else n.rsplit("/", 1)[-1] for n in named]
            text += ": " + ", ".join(short[:3]) + (f" +{len(short) - 3}" if len(short) > 3 else "")
        rows.append(Row(labels.shorten(text, 60), small=True))
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
                slots.append((units, child.key in open_keys and child.kind in _CLUSTERED and not child.waist))
        if any(is_cluster for _, is_cluster in slots):
            out.append(slots)
    return out


def _fused_ops(fusion: Instruction) -> int:
    from ..ir import called_closure

    return sum(1 for c in called_closure(fusion.called_computations, follow=lambda i: i.opcode == "fusion")
               for i in c.instructions if i.opcode not in ("parameter", "fusion"))


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
        if node.kind == "scope" and "/" in node.path:
            rows.append(Row(node.path, small=True))
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
