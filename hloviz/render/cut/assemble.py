"""Units → a :class:`~hloviz.render.scene.Scene`: labels, colours, clusters and arrows.

The second half of :func:`hloviz.render.views.draw_module`: what to draw is decided (units,
their members, the edges between them); this module decides how each looks — rows of the
label, category or mark colours, the cluster of each fusion and body, operand numbers on
arrows, merged parallel arrows, and the arrows of hubs left out of overloaded pictures.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

from ...analysis.loops import known_trip_count
from ...ir import Instruction
from ...opcodes import BODY_CALLERS, NO_OPERAND_INDEX, category
from ..scene import Cluster, Edge, Node, Row, Scene
from ..style import BODY_CLUSTER, FOCUS, FUSION_CLUSTER, HIGHLIGHT, SCOPE, SCOPE_CLUSTER, category_style, tint
from ..tree.model import Place, Unit, ViewGraph
from . import arrows, labels, loops, order, ranks

__all__ = ["build_scene"]


def build_scene(g: ViewGraph, title: str, notes: list[str]) -> Scene:
    """The scene of ``g``: every live unit a node, in its cluster; ``notes`` head the picture."""
    scene = Scene(title=[Row(title, bold=True)] if title else [], notes=list(notes))
    clusters: dict[str, Cluster] = {}
    live_places = {g.units[i].scope for i in range(len(g.units)) if g.units[i].alive}
    needed = set()
    for key in live_places:
        p = g.place_by_key.get(key) if key else None
        while p is not None and p.key not in needed:
            needed.add(p.key)
            p = p.parent
    # open scopes (a layer drawn open) hold their units and top-level fusion/body clusters
    home_of_unit: dict[int, Cluster] = {}
    home_of_place: dict[str, Cluster] = {}
    scope_clusters: dict[str, Cluster] = {}
    if g.scope_clusters:
        # dot ranks nested clusters badly without it (layers side by side, "lost edge" failures)
        scene.layout["newrank"] = "true"
    for sc in g.scope_clusters:
        cluster = Cluster(key=f"s{len(scope_clusters)}", rows=list(sc.rows), fill=SCOPE_CLUSTER.fill,
                          border=SCOPE_CLUSTER.border)
        scope_clusters[sc.key] = cluster
        parent = scope_clusters.get(sc.parent) if sc.parent is not None else None
        (parent.clusters if parent is not None else scene.clusters).append(cluster)
        for index in sc.units:
            home_of_unit[index] = cluster
        for key in sc.places:
            home_of_place[key] = cluster
    for place in g.places.values():
        if place.key not in needed or place.parent is None or place.key in g.collapsed_places:
            continue
        cluster = _cluster(g, place)
        clusters[place.key] = cluster
        parent = clusters.get(place.parent.key) if place.parent is not None else home_of_place.get(place.key)
        if parent is None:
            parent = home_of_place.get(place.key)
        (parent.clusters if parent is not None else scene.clusters).append(cluster)
    for u in g.units:
        if not u.alive:
            continue
        home = clusters.get(u.scope) if u.scope else home_of_unit.get(u.index)
        scene.add_node(f"u{u.index}", _node(g, u), home)
    _scene_edges(g, scene, clusters, scene.notes)
    return scene


def _cluster(g: ViewGraph, place: Place) -> Cluster:
    owner = place.owner
    mark = g.marks.get(owner.name) if owner is not None else None
    if place.role == "fusion" and owner is not None:
        rows = [Row(labels.fusion_title(owner), bold=True), Row(owner.name),
                Row(f"{labels.instruction_count(owner)} · {labels.shape_text(owner)}", small=True)]
        fill, border = FUSION_CLUSTER.fill, FUSION_CLUSTER.border
    else:
        trips = known_trip_count(owner) if owner is not None and place.role == "body" else None
        runs = f" · runs ×{trips}" if trips is not None else ""  # drawn once, run this many times
        rows = [Row(f"{place.role} of {owner.name if owner else '?'}", bold=True),
                Row(place.computation.name + runs, small=True)]
        fill, border = BODY_CLUSTER.fill, BODY_CLUSTER.border
    cluster = Cluster(key=place.key, rows=rows, fill=fill, border=border, dashed=place.role != "fusion")
    if mark is not None:
        cluster.fill = tint(mark.fill, 0.55) if mark.fill else fill
        cluster.border = mark.border or border
        cluster.badge, cluster.badge_fill = mark.badge, mark.badge_fill
        if mark.note:
            rows.append(Row(mark.note, small=True, italic=True))
        if mark.highlight:
            cluster.penwidth = 2.5
    return cluster


def _node(g: ViewGraph, u: Unit) -> Node:
    rep = u.members[0]
    rows = list(u.rows) if u.rows is not None else _unit_rows(g, u)
    if g.program_order is not None:  # the overview
        rows.extend(_fold_row(g, u))
    rows.extend(u.extra_rows)
    if u.caption:
        rows.insert(0, Row(u.caption, bold=True, color="#0d47a1"))
    cat = "fusion" if u.kind == "fusion" else category(rep.opcode)
    style = SCOPE if u.kind == "scope" else category_style(cat)
    node = Node(rows=rows, fill=style.fill, border=style.border, font=style.font,
                tooltip=_scope_tooltip(u) if u.kind == "scope" else _tooltip(g, rep),
                rounded=u.kind in ("chain", "fusion", "scope"))
    groups = u.kind == "scope"
    marks = [g.marks.get(m.name) for m in (u.members if groups else u.members[:1])]
    distinct = {m for m in marks if m is not None}
    if u.kind == "scope":
        if not u.unread:  # (values nothing reads: no kernel's colour or number)
            _scope_marks(node, [m for m in marks if m is not None])
    elif len(distinct) == 1:
        mark = next(iter(distinct))
        if mark.fill:
            node.fill, node.font = mark.fill, mark.font or "#000000"
        node.border = mark.border or node.border
        node.badge, node.badge_fill = mark.badge, mark.badge_fill
        node.dashed = mark.dashed
        if mark.highlight:
            node.penwidth = 2.5
        if mark.note:
            rows.append(Row(mark.note, small=True, italic=True))
    elif len(distinct) > 1:
        numbers = sorted({k for m in distinct for k in m.kernels})
        if numbers:
            rows.append(Row(labels.kernel_list(numbers), small=True))
    if u.root:
        node.penwidth = max(node.penwidth, 2.0)
    if g.focus and any(id(m) in g.focus for m in u.members):
        node.border, node.penwidth = FOCUS, 3.0
    if u.hidden_operands or u.hidden_users:
        parts = [f"{n} {w} not shown" for n, w in ((u.hidden_operands, "operands"), (u.hidden_users, "users")) if n]
        rows.append(Row(" · ".join(parts), small=True, italic=True, color="#616161"))
    return node


def _scope_marks(node: Node, marks: list) -> None:
    """A closed scope: the colour of the kernel holding most of its ops, and all its kernels."""
    per_kernel: dict[int, int] = {}
    fill: dict[int, tuple[str | None, str]] = {}
    for m in marks:
        for k in m.kernels[:1]:
            per_kernel[k] = per_kernel.get(k, 0) + 1
            fill.setdefault(k, (m.fill, m.badge_fill))
    if not per_kernel:
        return
    hot = {k: m.heat for m in marks if m.heat is not None for k in m.kernels[:1]}
    if hot:  # a heat overlay: the layer shows its hottest kernel
        main = max(hot, key=lambda k: (hot[k], -k))
    else:
        main = max(per_kernel, key=lambda k: (per_kernel[k], -k))
    colour, badge_fill = fill[main]
    if colour:
        node.fill, node.font = colour, "#000000"
    numbers = sorted(set().union(*(m.kernels for m in marks)))
    node.badge, node.badge_fill = labels.kernel_badge(numbers), badge_fill


def _tooltip(g: ViewGraph, inst) -> str:
    from ...analysis.provenance import instruction_user_source

    source = instruction_user_source(inst, g.module, g.source_map)
    return labels.tooltip(inst, source=source, name=g.param_names.get(inst.name))


def _scope_tooltip(u: Unit) -> str:
    ops = [m for m in u.members if m.opcode not in ("parameter", "get-tuple-element", "tuple")]
    names = sorted({m.metadata.op_name for m in ops if m.metadata.op_name})
    text = f"{len(u.members)} instructions ({u.members[0].name} …)"
    if names:
        text += " · op_name: " + ", ".join(names[:6]) + (f" … +{len(names) - 6}" if len(names) > 6 else "")
    return labels.shorten(text, 300)


def _unit_rows(g: ViewGraph, u: Unit) -> list[Row]:
    rep = u.members[0]
    if u.kind == "chain":
        chain = u.chain
        first, last = chain.members[0], chain.members[-1]
        rows = [Row(("ROOT " if u.root else "") + f"{labels.header(first)} ×{len(chain.members)}", bold=True),
                Row(f"{first.name} … {last.name}"), Row(labels.shape_text(first), small=True)]
        if chain.absorbed:
            rows.append(Row("+ " + labels.histogram_text(a.opcode for a in chain.absorbed) + " (one per op)",
                            small=True))
    elif rep.opcode == "fusion":
        rows = labels.fusion_rows(rep, root=u.root)
    else:
        rows = labels.instruction_rows(rep, root=u.root)
        if rep.name in g.param_names:  # the variable or argument it is: "block_5_expand/kernel"
            rows.insert(1, Row(labels.shorten(g.param_names[rep.name], 48), italic=True))
        if rep.opcode in BODY_CALLERS:
            rows.extend(labels.body_rows(rep, [c for c in rep.called_computations if c.name not in g.places]))
    rows.extend(_inline_rows(g, u))
    return rows


def _fold_row(g: ViewGraph, u: Unit) -> list[Row]:
    """The overview's row saying what a fold did in this box (issue 33: each box says what was
    folded), where it made one constant: after optimization that constant, in the box or inside
    its closed fusions (a Flax MLP's mean, ``constant.8 = 0.00390625 · folded by XLA``),
    highlighted as it is where drawn open; before it, the ops folded into it (``4 ops folded →
    constant.3 = 0.00390625``): a layer's mean, a loss's scale. A box where folds made several
    (a training step's backward pass: hundreds) gets none: counted on a row of their own, the
    rows took EfficientNetB0's and DenseNet121's steps over a page, drawn again with fewer
    boxes; ``--scope`` shows them, the verdict counts them. None for a single instruction
    either: its own rows say it (:func:`_inline_rows`)."""
    if len(u.members) == 1 and u.members[0].opcode != "fusion":
        return []
    made: dict[str, tuple[Instruction, str]] = {}
    taken: dict[str, str] = {}
    for m in u.members:
        inner = m.called_computations[0].instructions if m.opcode == "fusion" and m.called_computations else ()
        for i in (m, *inner):
            mark = g.marks.get(i.name)
            note = (mark.note or "") if mark is not None else ""
            if mark is not None and mark.highlight and i.opcode == "constant":
                made[i.name] = (i, note.split(" (")[0] or "folded")
                if len(made) > 1:  # several: no row (a backward pass's box holds hundreds)
                    return []
            elif note.startswith("folded → "):
                taken[i.name] = note.split(" → ", 1)[1]
    if len(made) == 1:
        [(i, note)] = made.values()
        text = f"{labels.shorten(i.name, 24)} = {labels.literal_text(i, 20)} · {note}"
    elif not made and len(set(taken.values())) == 1:
        text = f"{len(taken)} op{'s' if len(taken) != 1 else ''} folded → {next(iter(taken.values()))}"
    else:
        return []
    return [Row(labels.shorten(text, 60), small=True, background=HIGHLIGHT)]


def _inline_rows(g: ViewGraph, u: Unit, limit: int = 3) -> list[Row]:
    """Rows for the small constants written into this unit's label, identical rows merged."""
    merged: dict[tuple[str, bool], int] = {}
    own = g.marks.get(u.members[0].name)
    own_note = own.note if own is not None else None
    for user, k, op in u.inline:
        const, via = (op.operands[0], op) if op.opcode == "broadcast" else (op, None)
        mark = g.marks.get(const.name) or (g.marks.get(via.name) if via is not None else None)
        if mark is not None and mark.into and user.metadata.op_name and user.metadata.op_name not in mark.into:
            mark = None  # folded for another of its users: this one reads the value as it was
        telling = mark is not None and (mark.highlight or (mark.note and mark.note != own_note))
        text = labels.inline_text(k, const, via, named=bool(telling) and u.kind != "chain")
        if telling and mark is not None and mark.note and mark.note != own_note:
            text += f" · {mark.note}"
        key = (text, bool(mark is not None and mark.highlight))
        merged[key] = merged.get(key, 0) + 1
    rows = []
    for (text, highlight), count in list(merged.items())[:limit]:
        rows.append(Row(text + (f" (×{count})" if count > 1 else ""), small=True,
                        background=HIGHLIGHT if highlight else None))
    if len(merged) > limit:
        rows.append(Row(f"… {len(merged) - limit} more constants", small=True, italic=True))
    return rows


def _scene_edges(g: ViewGraph, scene: Scene, clusters: dict[str, Cluster], notes: list[str]) -> None:
    find, owner, units = g.find, g.owners(), g.units
    counts: dict[tuple, int] = {}
    for src, dst, label, user, k in g.edges:
        s, d = owner[src], owner[dst]
        if s == d or not units[s].alive or not units[d].alive:
            continue
        du = units[d]
        unmerged = s == src and d == dst
        head = ""
        if unmerged and du.kind == "inst" and user.opcode not in NO_OPERAND_INDEX and len(user.operands) - len(du.inline) >= 2:
            head = str(k)
        key = (s, d, label if unmerged else "", head)
        counts[key] = counts.get(key, 0) + 1
    for (s, d, label, head), n in counts.items():
        text = " ".join(x for x in (label, f"×{n}" if n > 1 else "") if x)
        scene.edges.append(Edge(f"u{s}", f"u{d}", label=text, head_label=head))
    if g.program_order is not None:  # the overview: ranked in program order (hloviz.render.cut.order, .ranks)
        loose: set[str] = set()
        keys = order.order_keys(g, g.program_order, loose)
        training = order.trains(keys, g)
        boxes = frozenset(f"u{u.index}" for u in units if u.alive and u.kind == "scope")  # closed blocks, layers
        back = ranks.program_order(scene, keys, frozenset(loose), training, boxes)
        if back:
            against = sum(1 for s in back if s.why == "back")
            # (a gradient only where the view holds a backward pass: in an inference model such an
            # arrow leaves a block found by structure that also holds later work)
            why = ": a gradient flowing back" if training else ""
            parts = [f"{n} {w}" for n, w in ((against, f"against program order{why}"),
                                             (len(back) - against, f"reaching more than {ranks.REACH} boxes down"))
                     if n]
            notes.append(f"{len(back)} arrow{'s' if len(back) != 1 else ''} drawn as ← / → rows at their ends "
                         f"({', '.join(parts)})")
    stacked = _stack(g, scene)
    # after the stacking: its invisible arrows push rows apart as in dot
    _stubs(scene, notes, settle=lambda: _hold_down(scene, stacked), hub_rows=g.program_order is None)
    visible = sum(1 for e in scene.edges if not e.invisible)
    if visible > SPLINE_EDGES and visible > 1.5 * len(scene.nodes):
        # curved routing around clusters is most of dot's time on a densely linked picture (a
        # training step's backward pass: 7 s of 9); straight arrows take a fraction of it
        scene.layout["splines"] = "line"
    hung: dict[str, list[tuple[str, Cluster]]] = {}
    for owner, body, role, place_key in g.body_edges:
        s, d = find(owner), find(body)
        if s == d or not g.units[s].alive or not g.units[d].alive:
            continue
        scene.edges.append(Edge(f"u{s}", f"u{d}", label=role, dashed=True, color="#1b5e20",
                                to_cluster=place_key if place_key in clusters else None))
        if place_key in clusters and role in loops.ROLES:
            hung.setdefault(f"u{s}", []).append((role, clusters[place_key]))
    if g.program_order is not None:  # the overview: a loop's bodies under it (hloviz.render.cut.loops)
        loops.hang_bodies(scene, hung)


def _stack(g: ViewGraph, scene: Scene) -> list[tuple[list[str], list[str]]]:
    """Keep each open scope's children one below the other (see :func:`hloviz.render.cut.apply.stacking`):
    an invisible arrow from the last node of one child to every node of the next cluster that
    has no arrow coming in. Returns the copies of open repeats stacked so: the nodes of a copy
    and those of the copy after it (for :func:`_hold_down`)."""
    stacked: list[tuple[list[str], list[str]]] = []
    if not g.stacking:
        return stacked
    fed = {e.dst for e in scene.edges}
    users: dict[str, list[str]] = {}
    for e in scene.edges:
        users.setdefault(e.src, []).append(e.dst)
    for slots in g.stacking:
        for (prev, _, _), (nxt, is_cluster, copy) in pairwise(slots):
            if not is_cluster:
                continue
            last = f"u{max(prev, key=lambda i: g.units[i].pos)}"
            inside = {f"u{i}" for i in nxt}
            if loops.reaches(inside, last, users):
                continue  # the earlier scope reads from the later one: its order is the data's
            ordered = [f"u{i}" for i in sorted(nxt, key=lambda i: g.units[i].pos)]
            if copy:
                stacked.append(([f"u{i}" for i in sorted(prev, key=lambda i: g.units[i].pos)], ordered))
            for key in ordered:
                # the first source that feeds nothing outside its own scope: no arrow can turn back
                if (key not in fed and key in scene.nodes and key != last
                        and all(d in inside for d in users.get(key, ()))):
                    scene.edges.append(Edge(last, key, invisible=True))
                    break  # one is enough to order the scopes; more make dot's ranking crawl
    return stacked


def _hold_down(scene: Scene, stacked: list[tuple[list[str], list[str]]]) -> None:
    """Put every stacked cluster wholly below the child before it, once stubs have replaced the
    long arrows: an invisible arrow from the child's lowest node (rows as dot ranks them) to
    each node of the cluster that nothing inside the cluster feeds.

    :func:`_stack`'s one arrow into the cluster's first source is not enough after the stubs: a
    layer's weights and their preparation (``transpose`` of a weight), whose arrows to the
    optimizer became ``→`` rows, have no arrow in, and dot ranks them at the top of the picture,
    pulling their layer's cluster up to row 0; a layer's inputs from the layer before sit beside
    that layer's last rows. Either way the two clusters' rows overlap and dot stands them side
    by side, each a few rows lower than the one before: the 12-layer GPT step unwrapped was a
    staircase 48,527 pt wide. Inner clusters are stacked first, so an outer cluster sees its
    parts' final rows. A cluster from which an arrow path leads to that lowest node is left as
    it is: the arrow would close a cycle."""
    if not stacked:
        return
    preds: dict[str, set[str]] = {}
    for e in scene.edges:
        if e.constraint and not e.dashed:
            preds.setdefault(e.dst, set()).add(e.src)
    for before, ordered in reversed(stacked):
        ranked = [(e.src, e.dst) for e in scene.edges if e.constraint and not e.dashed]
        row = arrows.rows_of(scene.nodes, ranked)
        bottom = max(enumerate(before), key=lambda ik: (row.get(ik[1], -1), ik[0]))[1]
        inside = set(ordered)
        users: dict[str, list[str]] = {}
        for a, b in ranked:
            users.setdefault(a, []).append(b)
        if loops.reaches(inside, bottom, users):
            continue  # the cluster feeds its lowest node (through arrows outside both): leave it
        for key in ordered:
            got = preds.get(key, set())
            if (key in scene.nodes and key != bottom and row.get(key, 0) <= row.get(bottom, 0)
                    and bottom not in got and not (got & inside)):
                scene.edges.append(Edge(bottom, key, invisible=True))
                preds.setdefault(key, set()).add(bottom)


#: Above this many arrows (and 1.5 per node), arrows are drawn straight.
SPLINE_EDGES = 150


def _stubs(scene: Scene, notes: list[str], settle: Callable[[], object] | None = None, *, hub_rows: bool = True) -> None:
    """Long and hub arrows become stub rows at their ends (:mod:`hloviz.render.cut.arrows`)."""
    stubs = arrows.shorten(scene, settle=settle, hub_rows=hub_rows)
    if stubs:
        hub = sum(1 for s in stubs if s.why == "hub")
        across = sum(1 for s in stubs if s.why == "across")
        parts = [f"{n} {w}" for n, w in ((len(stubs) - hub - across, f"spanning more than {arrows.SPAN} rows"),
                                         (across, "running across to a block beside their own"),
                                         (hub, "of nodes with far more arrows than the rest")) if n]
        notes.append(f"{len(stubs)} arrow{'s' if len(stubs) != 1 else ''} drawn as ← / → rows at their ends "
                     f"({', '.join(parts)})")
