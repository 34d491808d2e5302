"""What a picture holds, before it is DOT: nodes with label rows, edges, nested clusters.

A :class:`Scene` knows nothing about HLO: :mod:`hloviz.render.views` builds one from a module,
and other code (the diff picture) may build or edit one directly. :mod:`hloviz.render.layout.dot`
turns scenes into DOT text. Keys (``Scene.nodes`` keys, ``Cluster.key``) are the builder's own
strings; they never reach the DOT text, so they may be anything (instruction names included).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Cluster", "Edge", "Node", "Row", "Scene"]


@dataclass
class Row:
    """One line of a node's or cluster's label.

    ``background`` fills the row (used to highlight a folded constant written into its user's
    label); ``color`` is the text colour.
    """

    text: str
    bold: bool = False
    small: bool = False
    italic: bool = False
    background: str | None = None
    color: str | None = None


@dataclass
class Node:
    """A box in the picture: one instruction, or several collapsed into one.

    ``badge`` is a short tag drawn at the right of the first row (a kernel number), on
    ``badge_fill``. ``tooltip`` shows on hover in SVG viewers.
    """

    rows: list[Row]
    fill: str = "#ffffff"
    border: str = "#757575"
    font: str = "#000000"
    penwidth: float = 1.0
    dashed: bool = False
    rounded: bool = False
    badge: str | None = None
    badge_fill: str = "#ffffff"
    tooltip: str = ""
    small: bool = False


@dataclass
class Edge:
    """``src → dst`` (node keys). ``to_cluster`` ends the arrow at that cluster's border.

    ``label`` sits mid-edge (a tuple index ``[1]``, a count ``×1000``); ``head_label`` next to
    the arrowhead (the operand index, where operand order matters).
    """

    src: str
    dst: str
    label: str = ""
    head_label: str = ""
    dashed: bool = False
    color: str | None = None
    penwidth: float = 1.0
    to_cluster: str | None = None
    constraint: bool = True
    #: An arrow that is not drawn but keeps ``dst`` below ``src`` (a timeline of grouped runs).
    invisible: bool = False


@dataclass
class Cluster:
    """A box around nodes: a fusion, a while body, a column of a side-by-side picture."""

    key: str
    rows: list[Row]
    fill: str = "#f5f5f5"
    border: str = "#9e9e9e"
    penwidth: float = 1.0
    dashed: bool = False
    badge: str | None = None
    badge_fill: str = "#ffffff"
    nodes: list[str] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)


@dataclass
class Scene:
    """A whole picture: ``nodes`` in drawing order, top-level ``top`` node keys and ``clusters``.

    ``title`` rows head the picture; ``notes`` say what the picture leaves out (collapsed
    fusions, repeats, a focus) and are printed under the title.
    """

    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    top: list[str] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    title: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Graphviz graph attributes this picture needs (``{"splines": "line"}`` for a timeline).
    layout: dict[str, str] = field(default_factory=dict)
    #: the point size of small text (a box's kinds and parameters rows, notes, arrow labels): 9 in
    #: the detailed pictures; the overview writes it at 10 so that every label reads at 100% zoom
    small_pt: int = 9

    def add_node(self, key: str, node: Node, cluster: Cluster | None = None) -> Node:
        """Add ``node`` under ``key``, at top level or inside ``cluster``."""
        self.nodes[key] = node
        (cluster.nodes if cluster is not None else self.top).append(key)
        return node

    def all_clusters(self) -> list[Cluster]:
        """Every cluster, depth first."""
        out: list[Cluster] = []
        stack = list(reversed(self.clusters))
        while stack:
            c = stack.pop()
            out.append(c)
            stack.extend(reversed(c.clusters))
        return out
