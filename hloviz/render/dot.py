"""Scenes → DOT text. Pure: no Graphviz needed, and the output is the golden-file contract.

Every identifier in the DOT text is generated here (``n0``, ``n1`` …, ``cluster_0`` …) in
drawing order, so the same scene always gives the same bytes and no user string ever becomes
DOT syntax; user text only appears inside labels and tooltips, escaped by
:mod:`hloviz.render.quoting`.

Two entry points:

* :func:`to_dot` — one scene, one picture;
* :func:`columns_to_dot` — several scenes side by side, each in a titled column (the pre/post
  picture of ``hloviz show``, the old/new picture of ``hloviz diff``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

from .quoting import colour, dot_html, dot_string
from .scene import Cluster, Edge, Node, Row, Scene
from .style import FONT

__all__ = ["columns_to_dot", "to_dot", "label_html", "drawn_ids"]

_GRAPH_DEFAULTS = (
    f'  graph [fontname={dot_string(FONT)}, fontsize=12, rankdir=TB, nodesep=0.25, ranksep=0.3, '
    'labelloc=t, labeljust=l, outputorder=edgesfirst];\n'
    f'  node [shape=box, style=filled, fontname={dot_string(FONT)}, fontsize=11, margin="0.06,0.03", '
    'height=0.3];\n'
    f'  edge [fontname={dot_string(FONT)}, fontsize=9, color="#616161", arrowsize=0.6];\n'
)


#: Above this many nodes, Graphviz is told to spend less effort on a perfect layout.
LARGE = 150
# Network simplex (ranking and placement) dominates dot's time on big graphs; a few iterations
# give nearly the same picture in a fraction of the time.
_LARGE_GRAPH = "  nslimit=3; nslimit1=3; mclimit=0.5; searchsize=20;"


def label_html(rows: Sequence[Row], *, badge: str | None = None, badge_fill: str = "#ffffff",
               font: str | None = None) -> str:
    """An HTML-like DOT label (with the outer ``<`` ``>``): one table row per :class:`Row`.

    ``badge`` becomes a cell on the right spanning every row (kernel numbers).
    """
    parts = ['<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">']
    for i, row in enumerate(rows or [Row("")]):
        parts.append("<TR>")
        attrs = f' BGCOLOR="{colour(row.background)}"' if row.background else ""
        parts.append(f"<TD{attrs}>{_row_text(row, font)}</TD>")
        if badge is not None and i == 0:
            span = max(len(rows), 1)
            parts.append(f'<TD ROWSPAN="{span}" BGCOLOR="{colour(badge_fill)}" BORDER="1" COLOR="#424242" '
                         f'CELLPADDING="3" VALIGN="MIDDLE"><B>{dot_html(badge)}</B></TD>')
        parts.append("</TR>")
    parts.append("</TABLE>>")
    return "".join(parts)


def _row_text(row: Row, font: str | None) -> str:
    text = dot_html(row.text) if row.text else " "
    if row.bold:
        text = f"<B>{text}</B>"
    if row.italic:
        text = f"<I>{text}</I>"
    fg = row.color or None
    size = ' POINT-SIZE="9"' if row.small else ""
    if fg or size:
        text = f'<FONT{size}{f" COLOR={chr(34)}{colour(fg)}{chr(34)}" if fg else ""}>{text}</FONT>'
    return text


class _Writer:
    """Allocates ids and writes statements; one per DOT graph."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.node_ids: dict[tuple[int, str], str] = {}
        self.cluster_ids: dict[tuple[int, str], str] = {}
        self.compound = False
        self.layout: dict[str, str] = {}

    def node_id(self, scope: int, key: str) -> str:
        ident = self.node_ids.get((scope, key))
        if ident is None:
            ident = self.node_ids[(scope, key)] = f"n{len(self.node_ids)}"
        return ident

    def cluster_id(self, scope: int, key: str) -> str:
        ident = self.cluster_ids.get((scope, key))
        if ident is None:
            ident = self.cluster_ids[(scope, key)] = f"cluster_{len(self.cluster_ids)}"
        return ident

    def node(self, scope: int, key: str, node: Node, indent: str) -> None:
        style = ["filled"]
        if node.rounded:
            style.append("rounded")
        if node.dashed:
            style.append("dashed")
        attrs = [
            f"label={label_html(node.rows, badge=node.badge, badge_fill=node.badge_fill)}",
            f'fillcolor="{colour(node.fill)}"', f'color="{colour(node.border)}"',
        ]
        if node.font != "#000000":
            attrs.append(f'fontcolor="{colour(node.font)}"')
        if node.penwidth != 1.0:
            attrs.append(f"penwidth={node.penwidth:g}")
        if style != ["filled"]:
            attrs.append(f'style="{",".join(style)}"')
        if node.small:
            attrs.append('fontsize=9, height=0.2, margin="0.03,0.01"')
        if node.tooltip:
            attrs.append(f"tooltip={dot_string(node.tooltip)}")
        self.lines.append(f"{indent}{self.node_id(scope, key)} [{', '.join(attrs)}];")

    def cluster(self, scope: int, scene: Scene, cluster: Cluster, indent: str) -> None:
        """A cluster and the clusters inside it (an explicit stack: fusions may nest thousands deep)."""
        stack: list[tuple[Cluster, str] | str] = [(cluster, indent)]
        while stack:
            item = stack.pop()
            if isinstance(item, str):  # the closing brace of a cluster whose insides are written
                self.lines.append(item)
                continue
            cluster, indent = item
            self.lines.append(f"{indent}subgraph {self.cluster_id(scope, cluster.key)} {{")
            inner = indent + "  "
            style = ["filled", "rounded"]
            if cluster.dashed:
                style.append("dashed")
            self.lines.append(f"{inner}label={label_html(cluster.rows, badge=cluster.badge, badge_fill=cluster.badge_fill)};")
            self.lines.append(f'{inner}style="{",".join(style)}"; fillcolor="{colour(cluster.fill)}"; color="{colour(cluster.border)}";'
                              + (f" penwidth={cluster.penwidth:g};" if cluster.penwidth != 1.0 else ""))
            for key in cluster.nodes:
                self.node(scope, key, scene.nodes[key], inner)
            stack.append(f"{indent}}}")
            stack.extend((sub, inner) for sub in reversed(cluster.clusters))

    def edges(self, scope: int, edges: Iterable[Edge], indent: str) -> None:
        for e in edges:
            attrs = []
            if e.label:
                attrs.append(f"label={dot_string(e.label)}")
            if e.head_label:
                attrs.append(f"headlabel={dot_string(e.head_label)}, labeldistance=1.4")
            if e.invisible:
                attrs.append("style=invis")
            elif e.dashed:
                attrs.append("style=dashed")
            if e.color:
                attrs.append(f'color="{colour(e.color)}"')
            if e.penwidth != 1.0:
                attrs.append(f"penwidth={e.penwidth:g}")
            if e.to_cluster is not None:
                attrs.append(f"lhead={self.cluster_id(scope, e.to_cluster)}")
                self.compound = True
            if not e.constraint:
                attrs.append("constraint=false")
            tail = f" [{', '.join(attrs)}]" if attrs else ""
            src, dst = self.node_ids.get((scope, e.src)), self.node_ids.get((scope, e.dst))
            if src is None or dst is None:
                missing = e.src if src is None else e.dst
                raise ValueError(f"edge {e.src!r} -> {e.dst!r}: node {missing!r} is not in the scene")
            self.lines.append(f"{indent}{src} -> {dst}{tail};")

    def scene_body(self, scope: int, scene: Scene, indent: str) -> None:
        self.layout.update(scene.layout)
        for key in scene.top:
            self.node(scope, key, scene.nodes[key], indent)
        for cluster in scene.clusters:
            self.cluster(scope, scene, cluster, indent)
        self.edges(scope, scene.edges, indent)

    def finish(self, header_rows: Sequence[Row]) -> str:
        head = ["digraph hloviz {", _GRAPH_DEFAULTS.rstrip("\n")]
        if len(self.node_ids) > LARGE:
            head.append(_LARGE_GRAPH)
        for key, value in sorted(self.layout.items()):
            if not (key.isidentifier() and value.replace(".", "").replace("_", "").isalnum()):
                raise ValueError(f"not a layout attribute hloviz writes: {key}={value!r}")
            head.append(f"  {key}={value};")
        if self.compound:
            head.append("  compound=true;")
        if header_rows:
            head.append(f"  label={label_html(header_rows)};")
        return "\n".join(head + self.lines + ["}"]) + "\n"


def _header(title: Sequence[Row] | str, notes: Sequence[str]) -> list[Row]:
    rows = [Row(title, bold=True)] if isinstance(title, str) and title else list(title or [])
    rows.extend(Row(n, small=True, italic=True) for n in notes)
    return rows


def to_dot(scene: Scene) -> str:
    """The DOT text of one scene; its title and notes label the picture."""
    w = _Writer()
    w.scene_body(0, scene, "  ")
    return w.finish(_header(scene.title, scene.notes))


def columns_to_dot(columns: Sequence[tuple[str, Scene]], *, title: Sequence[Row] | str = (),
                   notes: Sequence[str] = (), align: Sequence[tuple[str, str]] = ()) -> str:
    """Several scenes side by side, left to right, each in a cluster headed by its title.

    Each scene keeps its own title and notes inside its column; ``title`` and ``notes`` head
    the whole picture. Node keys only need to be unique within their own scene. ``align``
    pairs a node key of the first column with one of the second: each pair is drawn on the
    same level (the diff lines matched kernels up this way); pairs that would contradict the
    arrows' order are left out, since Graphviz cannot honour them.
    """
    w = _Writer()
    for scope, (heading, scene) in enumerate(columns):
        rows = [Row(heading, bold=True)] + _header(scene.title, scene.notes)
        col = Cluster(key=f"column {scope}", rows=rows, fill="#ffffff", border="#bdbdbd")
        w.lines.append(f"  subgraph {w.cluster_id(scope, col.key)} {{")
        w.lines.append(f"    label={label_html(col.rows)};")
        w.lines.append(f'    style="rounded"; color="{colour(col.border)}";')
        w.scene_body(scope, scene, "    ")
        w.lines.append("  }")
    pairs = [(a, b) for a, b in _monotone(columns, align) if (0, a) in w.node_ids and (1, b) in w.node_ids]
    if pairs:
        w.layout["newrank"] = "true"
        for a, b in pairs:
            w.lines.append(f"  {{ rank=same; {w.node_id(0, a)}; {w.node_id(1, b)}; }}")
    return w.finish(_header(title, notes))


def drawn_ids(scenes: Sequence[Scene]) -> tuple[dict[tuple[int, str], str], dict[tuple[int, str], str]]:
    """The DOT identifiers :func:`to_dot` (one scene) or :func:`columns_to_dot` (scenes in
    columns) give: ``(column, node key) → "n7"`` and ``(column, cluster key) → "cluster_3"``.

    Graphviz writes them as the ``<title>`` of each node's and cluster's SVG group, which is how
    the HTML explorer finds the instructions behind a drawn box without any HLO text in the ids.
    """
    w = _Writer()
    for scope, scene in enumerate(scenes):
        if len(scenes) > 1:
            w.cluster_id(scope, f"column {scope}")
        w.scene_body(scope, scene, "")
    return dict(w.node_ids), dict(w.cluster_ids)


def _order(scene: Scene) -> dict[str, int]:
    """Each node's position in a topological order of the scene's arrows (text order breaks ties)."""
    keys = list(scene.nodes)
    index = {k: i for i, k in enumerate(keys)}
    succ: dict[str, list[str]] = {k: [] for k in keys}
    indeg = dict.fromkeys(keys, 0)
    for e in scene.edges:
        if e.constraint and e.src in succ and e.dst in indeg and e.src != e.dst:
            succ[e.src].append(e.dst)
            indeg[e.dst] += 1
    ready = sorted((k for k in keys if indeg[k] == 0), key=index.__getitem__, reverse=True)
    order: dict[str, int] = {}
    while ready:
        k = ready.pop()
        order[k] = len(order)
        for h in succ[k]:
            indeg[h] -= 1
            if indeg[h] == 0:
                ready.append(h)
    for k in keys:  # nodes on a cycle (never in HLO) go last
        order.setdefault(k, len(order))
    return order


def _monotone(columns: Sequence[tuple[str, Scene]], align: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The longest run of ``align`` pairs whose order agrees in both columns.

    Two pairs whose nodes come in opposite orders on the two sides cannot both sit on one level
    without bending arrows upwards, so only a consistent subset is kept (longest increasing
    subsequence, O(n log n))."""
    if len(columns) < 2 or not align:
        return []
    if any(scene.layout.get("splines") == "line" for _, scene in columns[:2]):
        return []  # a timeline of grouped runs keeps its own order; levels across columns would tear it
    oa, ob = _order(columns[0][1]), _order(columns[1][1])
    pairs = sorted(((oa[a], ob[b], a, b) for a, b in dict.fromkeys(align) if a in oa and b in ob))
    tails: list[int] = []
    tail_at: list[int] = []
    prev = [-1] * len(pairs)
    for i, (_, y, _, _) in enumerate(pairs):
        k = bisect.bisect_left(tails, y)
        if k == len(tails):
            tails.append(y)
            tail_at.append(i)
        else:
            tails[k] = y
            tail_at[k] = i
        prev[i] = tail_at[k - 1] if k else -1
    out = []
    i = tail_at[-1] if tail_at else -1
    while i >= 0:
        out.append((pairs[i][2], pairs[i][3]))
        i = prev[i]
    return out[::-1]
