"""The DOT statement writer every DOT text of hloviz goes through.

In: scenes (:class:`~hloviz.render.scene.Scene`) and the rows of labels. Out: DOT statements,
and the identifiers given to nodes and clusters (:class:`Ids`). :class:`DotWriter` numbers
every node (``n0``, ``n1`` …) and cluster (``cluster_0`` …) in drawing order and writes user
text only inside labels and tooltips, escaped by :mod:`hloviz.render.quoting`; the pictures it
writes (one scene, columns, parts, composed pictures) are assembled by :mod:`.dot` and
:mod:`.dot_parts`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..quoting import colour, dot_html, dot_string
from ..scene import Cluster, Edge, Node, Row, Scene
from ..style import FONT

__all__ = ["COLUMN_BORDER", "DotWriter", "Ids", "LARGE", "column_rows", "header_rows", "label_html"]

GRAPH_DEFAULTS = (
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
LARGE_GRAPH = "  nslimit=3; nslimit1=3; mclimit=0.5; searchsize=20;"


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


class DotWriter:
    """Allocates ids and writes statements; one per DOT graph."""

    def __init__(self, ids: Ids | None = None) -> None:
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
        self.lines.append(f'{indent}  style="rounded"; color="{colour(COLUMN_BORDER)}";')
        self.scene_body(scope, scene, indent + "  ")
        self.lines.append(f"{indent}}}")

    def finish(self, header_rows: Sequence[Row], large: bool | None = None) -> str:
        head = ["digraph hloviz {", GRAPH_DEFAULTS.rstrip("\n")]
        if (self.written > LARGE) if large is None else large:
            head.append(LARGE_GRAPH)
        for key, value in sorted(self.layout.items()):
            if not (key.isidentifier() and value.replace(".", "").replace("_", "").isalnum()):
                raise ValueError(f"not a layout attribute hloviz writes: {key}={value!r}")
            head.append(f"  {key}={value};")
        if self.compound:
            head.append("  compound=true;")
        if header_rows:
            head.append(f"  label={label_html(header_rows, small_pt=self.small_pt)};")
        return "\n".join(head + self.lines + ["}"]) + "\n"


def header_rows(title: Sequence[Row] | str, notes: Sequence[str]) -> list[Row]:
    rows = [Row(title, bold=True)] if isinstance(title, str) and title else list(title or [])
    rows.extend(Row(line, small=True, italic=True) for n in notes for line in note_lines(n))
    return rows


#: The longest line of a note over a picture, and how many lines one note may take.
NOTE_WIDTH, NOTE_LINES = 120, 4


def note_lines(note: str) -> list[str]:
    """``note`` as lines of at most :data:`NOTE_WIDTH` characters, broken at spaces, at most
    :data:`NOTE_LINES` of them (the last then ends in ``…``). Left whole, a note set its
    column's width: a training step's two columns' notes (``… closed into single nodes to stay
    within 8 nodes; --scope PATH draws a scope open``) were 1,429 pt wide together, so the
    explorer found no first view that fit a 1,900 px screen; and one note of 9,179 characters
    (two training steps' signatures) made a diff picture 36,888 pt wide."""
    lines: list[str] = []
    rest = note
    while len(rest) > NOTE_WIDTH and len(lines) < NOTE_LINES:
        cut = rest.rfind(" ", NOTE_WIDTH // 2, NOTE_WIDTH + 1)
        cut = cut if cut > 0 else NOTE_WIDTH
        lines.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if len(lines) == NOTE_LINES and rest:
        lines[-1] = lines[-1][:NOTE_WIDTH - 1] + "…"
    elif rest or not lines:
        lines.append(rest)
    return lines


COLUMN_BORDER = "#bdbdbd"


def column_rows(heading: str, scene: Scene) -> list[Row]:
    """The label of a column: its heading, then the scene's own title and notes."""
    return [Row(heading, bold=True)] + header_rows(scene.title, scene.notes)


@dataclass
class Ids:
    """The DOT identifiers a picture gave: ``(column, key) → id`` for nodes and clusters. The
    writers of a picture's parts share one, so parts and the composed picture agree; keys met
    later (a wrapped column's connectors) get ids after every id of the whole picture."""

    nodes: dict[tuple[int, str], str] = field(default_factory=dict)
    clusters: dict[tuple[int, str], str] = field(default_factory=dict)

    def copy(self) -> Ids:
        return Ids(dict(self.nodes), dict(self.clusters))
