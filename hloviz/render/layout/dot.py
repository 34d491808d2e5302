"""Scenes → DOT text. Pure: no Graphviz needed, and the output is the golden-file contract.

Every identifier in the DOT text is generated here (``n0``, ``n1`` …, ``cluster_0`` …) in
drawing order, so the same scene always gives the same bytes and no user string ever becomes
DOT syntax; user text only appears inside labels and tooltips, escaped by
:mod:`hloviz.render.quoting`.

Two entry points:

* :func:`to_dot` — one scene, one picture;
* :func:`columns_to_dot` — several scenes side by side, each in a titled column (the pre/post
  picture of ``hloviz show``, the old/new picture of ``hloviz diff``).

:func:`to_drawing` and :func:`columns_drawing` give the same text as a :class:`Drawing`, which
also keeps the scenes and the identifiers it gave them, so that :mod:`hloviz.render.layout.compose` can
lay the columns out apart (:func:`part_dot`) and write the composed picture with every node,
arrow and cluster where its part put it (:func:`placed_dot`) under the same identifiers.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..quoting import colour, dot_html, dot_string
from ..scene import Cluster, Edge, Node, Row, Scene
from ..style import FONT

__all__ = ["Drawing", "Placed", "PlacedColumn", "column_rows", "columns_drawing", "columns_to_dot", "drawn_ids",
           "frame_dot", "header_dot", "label_html", "part_dot", "placed_dot", "to_dot", "to_drawing"]

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


def label_html(rows: Sequence[Row], *, badge: str | None = None, badge_fill: str = "#ffffff", small_pt: int = 9,
               font: str | None = None) -> str:
    """An HTML-like DOT label (with the outer ``<`` ``>``): one table row per :class:`Row`.

    ``badge`` becomes a cell on the right spanning every row (kernel numbers).
    """
    parts = ['<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">']
    for i, row in enumerate(rows or [Row("")]):
        parts.append("<TR>")
        attrs = f' BGCOLOR="{colour(row.background)}"' if row.background else ""
        parts.append(f"<TD{attrs}>{_row_text(row, font, small_pt)}</TD>")
        if badge is not None and i == 0:
            span = max(len(rows), 1)
            parts.append(f'<TD ROWSPAN="{span}" WIDTH="{_badge_gap(rows, small_pt)}"></TD>')
            parts.append(f'<TD ROWSPAN="{span}" BGCOLOR="{colour(badge_fill)}" BORDER="1" COLOR="#424242" '
                         f'CELLPADDING="3" VALIGN="MIDDLE"><B>{dot_html(badge)}</B></TD>')
        parts.append("</TR>")
    parts.append("</TABLE>>")
    return "".join(parts)


def _badge_gap(rows: Sequence[Row], small_pt: int) -> int:
    """Points of room between the rows and the kernel tag. Graphviz sizes a cell by Pango's
    measure of its text; a browser draws the same font a little wider (measured in Chromium with
    Liberation Sans: up to 3% of the width, 14 pt on a 100-character row), which ran the end of
    the longest row under the tag (issue 33: no label hidden under a kernel tag). The room grows
    with the longest row: an estimate of its width (0.55 em a character) times 3.5%, 3 pt at least."""
    widest = max((len(r.text) * (small_pt if r.small else 11) * 0.55 for r in rows), default=0.0)
    return max(3, round(0.035 * widest + 1))


def _row_text(row: Row, font: str | None, small_pt: int = 9) -> str:
    text = dot_html(row.text) if row.text else " "
    if row.bold:
        text = f"<B>{text}</B>"
    if row.italic:
        text = f"<I>{text}</I>"
    fg = row.color or None
    size = f' POINT-SIZE="{small_pt}"' if row.small else ""
    if fg or size:
        text = f'<FONT{size}{f" COLOR={chr(34)}{colour(fg)}{chr(34)}" if fg else ""}>{text}</FONT>'
    return text


class _Writer:
    """Allocates ids and writes statements; one per DOT graph."""

    def __init__(self, ids: _Ids | None = None) -> None:
        self.lines: list[str] = []
        self.node_ids: dict[tuple[int, str], str] = ids.nodes if ids is not None else {}
        self.cluster_ids: dict[tuple[int, str], str] = ids.clusters if ids is not None else {}
        self.compound = False
        self.layout: dict[str, str] = {}
        self.written = 0
        #: a layout part tags each arrow with its index (``comment="e3"``: dot keeps it in its JSON,
        #: and the SVG writes it as a comment, which normalize_svg drops) to find its route again
        self.tag_edges = False
        #: positions of a composed picture: DOT id → attributes (``pos``, ``bb`` …); arrows by index
        self.node_place: Mapping[str, str] = {}
        self.cluster_place: Mapping[str, str] = {}
        self.edge_place: Sequence[str] = ()
        #: the small text's point size of the scene being written (:attr:`Scene.small_pt`)
        self.small_pt = 9

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
            f"label={label_html(node.rows, badge=node.badge, badge_fill=node.badge_fill, small_pt=self.small_pt)}",
            f'fillcolor="{colour(node.fill)}"', f'color="{colour(node.border)}"',
        ]
        if node.font != "#000000":
            attrs.append(f'fontcolor="{colour(node.font)}"')
        if node.penwidth != 1.0:
            attrs.append(f"penwidth={node.penwidth:g}")
        if style != ["filled"]:
            attrs.append(f'style="{",".join(style)}"')
        if node.small:
            attrs.append(f'fontsize={self.small_pt}, height=0.2, margin="0.03,0.01"')
        if node.tooltip:
            attrs.append(f"tooltip={dot_string(node.tooltip)}")
        ident = self.node_id(scope, key)
        if ident in self.node_place:
            attrs.append(self.node_place[ident])
        self.written += 1
        self.lines.append(f"{indent}{ident} [{', '.join(attrs)}];")

    def cluster(self, scope: int, scene: Scene, cluster: Cluster, indent: str) -> None:
        """A cluster and the clusters inside it (an explicit stack: fusions may nest thousands deep)."""
        stack: list[tuple[Cluster, str] | str] = [(cluster, indent)]
        while stack:
            item = stack.pop()
            if isinstance(item, str):  # the closing brace of a cluster whose insides are written
                self.lines.append(item)
                continue
            cluster, indent = item
            ident = self.cluster_id(scope, cluster.key)
            self.lines.append(f"{indent}subgraph {ident} {{")
            inner = indent + "  "
            if ident in self.cluster_place:
                self.lines.append(f"{inner}{self.cluster_place[ident]};")
            style = ["filled", "rounded"]
            if cluster.dashed:
                style.append("dashed")
            self.lines.append(f"{inner}label={label_html(cluster.rows, badge=cluster.badge, badge_fill=cluster.badge_fill, small_pt=self.small_pt)};")
            self.lines.append(f'{inner}style="{",".join(style)}"; fillcolor="{colour(cluster.fill)}"; color="{colour(cluster.border)}";'
                              + (f" penwidth={cluster.penwidth:g};" if cluster.penwidth != 1.0 else ""))
            for key in cluster.nodes:
                self.node(scope, key, scene.nodes[key], inner)
            stack.append(f"{indent}}}")
            stack.extend((sub, inner) for sub in reversed(cluster.clusters))

    def edges(self, scope: int, edges: Iterable[Edge], indent: str) -> None:
        for i, e in enumerate(edges):
            attrs = []
            if e.label:
                attrs.append(f"label={dot_string(e.label)}")
            if (e.label or e.head_label) and self.small_pt != 9:
                attrs.append(f"fontsize={self.small_pt}")
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
            if self.tag_edges:
                attrs.append(f'comment="e{i}"')
            if i < len(self.edge_place) and self.edge_place[i]:
                attrs.append(self.edge_place[i])
            tail = f" [{', '.join(attrs)}]" if attrs else ""
            src, dst = self.node_ids.get((scope, e.src)), self.node_ids.get((scope, e.dst))
            if src is None or dst is None:
                missing = e.src if src is None else e.dst
                raise ValueError(f"edge {e.src!r} -> {e.dst!r}: node {missing!r} is not in the scene")
            self.lines.append(f"{indent}{src} -> {dst}{tail};")

    def scene_body(self, scope: int, scene: Scene, indent: str) -> None:
        self.layout.update(scene.layout)
        self.small_pt = scene.small_pt
        for key in scene.top:
            self.node(scope, key, scene.nodes[key], indent)
        for cluster in scene.clusters:
            self.cluster(scope, scene, cluster, indent)
        self.edges(scope, scene.edges, indent)

    def column(self, scope: int, heading: str, scene: Scene, indent: str = "  ") -> None:
        """``scene`` inside its titled column cluster."""
        ident = self.cluster_id(scope, f"column {scope}")
        self.lines.append(f"{indent}subgraph {ident} {{")
        if ident in self.cluster_place:
            self.lines.append(f"{indent}  {self.cluster_place[ident]};")
        self.lines.append(f"{indent}  label={label_html(column_rows(heading, scene), small_pt=scene.small_pt)};")
        self.lines.append(f'{indent}  style="rounded"; color="{colour(_COLUMN_BORDER)}";')
        self.scene_body(scope, scene, indent + "  ")
        self.lines.append(f"{indent}}}")

    def finish(self, header_rows: Sequence[Row], large: bool | None = None) -> str:
        head = ["digraph hloviz {", _GRAPH_DEFAULTS.rstrip("\n")]
        if (self.written > LARGE) if large is None else large:
            head.append(_LARGE_GRAPH)
        for key, value in sorted(self.layout.items()):
            if not (key.isidentifier() and value.replace(".", "").replace("_", "").isalnum()):
                raise ValueError(f"not a layout attribute hloviz writes: {key}={value!r}")
            head.append(f"  {key}={value};")
        if self.compound:
            head.append("  compound=true;")
        if header_rows:
            head.append(f"  label={label_html(header_rows, small_pt=self.small_pt)};")
        return "\n".join(head + self.lines + ["}"]) + "\n"


def _header(title: Sequence[Row] | str, notes: Sequence[str]) -> list[Row]:
    rows = [Row(title, bold=True)] if isinstance(title, str) and title else list(title or [])
    rows.extend(Row(n, small=True, italic=True) for n in notes)
    return rows


_COLUMN_BORDER = "#bdbdbd"


def column_rows(heading: str, scene: Scene) -> list[Row]:
    """The label of a column: its heading, then the scene's own title and notes."""
    return [Row(heading, bold=True)] + _header(scene.title, scene.notes)


@dataclass
class _Ids:
    """The DOT identifiers a picture gave: ``(column, key) → id`` for nodes and clusters. The
    writers of a picture's parts share one, so parts and the composed picture agree; keys met
    later (a wrapped column's connectors) get ids after every id of the whole picture."""

    nodes: dict[tuple[int, str], str] = field(default_factory=dict)
    clusters: dict[tuple[int, str], str] = field(default_factory=dict)

    def copy(self) -> _Ids:
        return _Ids(dict(self.nodes), dict(self.clusters))


@dataclass
class Drawing:
    """A picture's DOT ``text`` (what ``-o x.dot`` writes and one ``dot`` run lays out), with
    what it was written from: the ``columns`` (heading, scene), the ``header`` rows over them,
    and whether the columns are ``tied`` (levels aligned across them: one layout only).
    ``single`` is a one-scene picture (no column cluster)."""

    text: str
    columns: list[tuple[str, Scene]]
    header: list[Row]
    single: bool = False
    tied: bool = False
    ids: _Ids = field(default_factory=_Ids, repr=False)

    def fresh_ids(self) -> _Ids:
        """A copy of the picture's identifiers, for writing its parts."""
        return self.ids.copy()

    @property
    def small_pt(self) -> int:
        """The point size of the picture's small text (header notes, part captions): its
        columns' (:attr:`Scene.small_pt`)."""
        return max((scene.small_pt for _, scene in self.columns), default=9)


def to_drawing(scene: Scene) -> Drawing:
    """:func:`to_dot` as a :class:`Drawing`."""
    w = _Writer()
    w.scene_body(0, scene, "  ")
    header = _header(scene.title, scene.notes)
    return Drawing(w.finish(header), [("", scene)], header, single=True, ids=_Ids(w.node_ids, w.cluster_ids))


def to_dot(scene: Scene) -> str:
    """The DOT text of one scene; its title and notes label the picture."""
    return to_drawing(scene).text


def columns_drawing(columns: Sequence[tuple[str, Scene]], *, title: Sequence[Row] | str = (),
                    notes: Sequence[str] = (), align: Sequence[tuple[str, str]] = ()) -> Drawing:
    """:func:`columns_to_dot` as a :class:`Drawing`."""
    w = _Writer()
    for scope, (heading, scene) in enumerate(columns):
        w.column(scope, heading, scene)
    pairs = [(a, b) for a, b in _monotone(columns, align) if (0, a) in w.node_ids and (1, b) in w.node_ids]
    if pairs:
        w.layout["newrank"] = "true"
        for a, b in pairs:
            w.lines.append(f"  {{ rank=same; {w.node_id(0, a)}; {w.node_id(1, b)}; }}")
    header = _header(title, notes)
    return Drawing(w.finish(header), list(columns), header, tied=bool(pairs), ids=_Ids(w.node_ids, w.cluster_ids))


def columns_to_dot(columns: Sequence[tuple[str, Scene]], *, title: Sequence[Row] | str = (),
                   notes: Sequence[str] = (), align: Sequence[tuple[str, str]] = ()) -> str:
    """Several scenes side by side, left to right, each in a cluster headed by its title.

    Each scene keeps its own title and notes inside its column; ``title`` and ``notes`` head
    the whole picture. Node keys only need to be unique within their own scene. ``align``
    pairs a node key of the first column with one of the second: each pair is drawn on the
    same level (the diff lines matched kernels up this way); pairs that would contradict the
    arrows' order are left out, since Graphviz cannot honour them.
    """
    return columns_drawing(columns, title=title, notes=notes, align=align).text


def part_dot(drawing: Drawing, column: int, scene: Scene, ids: _Ids, *, wrapped: bool) -> str:
    """The DOT text of one part of ``drawing`` for a layout of its own: ``scene`` (a column's
    whole scene, or one piece of a wrapped column) under the picture's identifiers ``ids``, each
    arrow tagged with its index. ``wrapped`` leaves out the column's cluster (the composed
    picture draws it around all the pieces) and a one-scene picture's title (likewise)."""
    w = _Writer(ids)
    w.tag_edges = True
    if drawing.single or wrapped:
        w.scene_body(column, scene, "  ")
    else:
        w.column(column, drawing.columns[column][0], scene)
    # a part of a large picture is laid out with the effort the whole picture would get
    return w.finish((), large=len(drawing.ids.nodes) > LARGE or None)


@dataclass
class Placed:
    """One laid-out part moved into its place: its ``scene``, and the position attributes of
    its nodes and clusters (by DOT id) and of its arrows (by index)."""

    scene: Scene
    nodes: dict[str, str]
    clusters: dict[str, str]
    edges: list[str]


@dataclass
class PlacedColumn:
    """A column of the composed picture: its index, the position attributes of its cluster
    (``bb``, ``lp``; empty for a one-scene picture) and its parts, left to right."""

    index: int
    cluster: str
    parts: list[Placed]


def placed_dot(drawing: Drawing, columns: Sequence[PlacedColumn], ids: _Ids, notes: Sequence[str] = (),
               extra: Sequence[str] = ()) -> str:
    """The composed picture: every part's nodes, arrows and clusters with their positions, for
    ``dot -Kneato -n2`` to draw as they are. Identifiers are ``ids`` (those of ``drawing``'s own
    text for everything it holds); ``notes`` are added under the header, ``extra`` statements
    (placed captions) at the end."""
    w = _Writer(ids)
    for col in columns:
        indent = "  "
        if not drawing.single:
            ident = w.cluster_id(col.index, f"column {col.index}")
            heading, scene = drawing.columns[col.index]
            w.lines.append(f"  subgraph {ident} {{")
            if col.cluster:  # an empty column has no box (dot drops an empty cluster)
                w.lines.append(f"    {col.cluster};")
            w.lines.append(f"    label={label_html(column_rows(heading, scene), small_pt=scene.small_pt)};")
            w.lines.append(f'    style="rounded"; color="{colour(_COLUMN_BORDER)}";')
            indent = "    "
        for part in col.parts:
            w.node_place, w.cluster_place, w.edge_place = part.nodes, part.clusters, part.edges
            w.scene_body(col.index, part.scene, indent)
            w.layout.clear()  # positions are given: no layout attribute applies
        if not drawing.single:
            w.lines.append("  }")
    w.lines.extend(extra)
    w.written = 0
    w.small_pt = drawing.small_pt
    return w.finish(list(drawing.header) + [Row(n, small=True, italic=True) for n in notes])


def frame_dot(drawing: Drawing, clusters: Sequence[tuple[int, str]], boxes: Sequence[str],
              notes: Sequence[str] = (), extra: Sequence[str] = ()) -> str:
    """The frame of a picture composed from parts' own SVG: the header, the cluster (label,
    border) of each wrapped column at its place (``clusters``: column, ``bb``/``lp``
    attributes), and an invisible box over each column (``boxes``: ``x0,y0,x1,y1``), so that
    the frame's bounds hold the whole picture; ``extra`` statements (placed captions) after
    them. Cluster ids are the picture's own."""
    w = _Writer(drawing.fresh_ids())
    for column, place in clusters:
        heading, scene = drawing.columns[column]
        w.lines.append(f"  subgraph {w.cluster_id(column, f'column {column}')} {{")
        w.lines.append(f"    {place};")
        w.lines.append(f"    label={label_html(column_rows(heading, scene), small_pt=scene.small_pt)};")
        w.lines.append(f'    style="rounded"; color="{colour(_COLUMN_BORDER)}";')
        w.lines.append("  }")
    for i, box in enumerate(boxes):
        x0, y0, x1, y1 = (float(v) for v in box.split(","))
        w.lines.append(f'  frame{i} [style=invis, label="", pos="{(x0 + x1) / 2:g},{(y0 + y1) / 2:g}", '
                       f"width={(x1 - x0) / 72:.4f}, height={(y1 - y0) / 72:.4f}];")
    w.lines.extend(extra)
    w.small_pt = drawing.small_pt
    return w.finish(list(drawing.header) + [Row(n, small=True, italic=True) for n in notes])


def header_dot(drawing: Drawing) -> str:
    """The picture's header (title and notes over the columns) alone, for ``dot`` to draw as a
    part of its own while the columns are laid out (None-like empty text when there is none)."""
    if not drawing.header:
        return ""
    w = _Writer()
    w.small_pt = drawing.small_pt
    return w.finish(drawing.header)


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
