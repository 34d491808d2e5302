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
lay the columns out apart and write the composed picture with every node, arrow and cluster
where its part put it, under the same identifiers (:mod:`.dot_parts`). The statements
themselves are written by :mod:`.dot_writer`.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..scene import Row, Scene
from .dot_writer import DotWriter, Ids, header_rows

__all__ = ["Drawing", "columns_drawing", "columns_to_dot", "drawn_ids", "to_dot", "to_drawing"]


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
    ids: Ids = field(default_factory=Ids, repr=False)

    def fresh_ids(self) -> Ids:
        """A copy of the picture's identifiers, for writing its parts."""
        return self.ids.copy()

    @property
    def small_pt(self) -> int:
        """The point size of the picture's small text (header notes, part captions): its
        columns' (:attr:`Scene.small_pt`)."""
        return max((scene.small_pt for _, scene in self.columns), default=9)


def to_drawing(scene: Scene) -> Drawing:
    """:func:`to_dot` as a :class:`Drawing`."""
    w = DotWriter()
    w.scene_body(0, scene, "  ")
    header = header_rows(scene.title, scene.notes)
    return Drawing(w.finish(header), [("", scene)], header, single=True, ids=Ids(w.node_ids, w.cluster_ids))


def to_dot(scene: Scene) -> str:
    """The DOT text of one scene; its title and notes label the picture."""
    return to_drawing(scene).text


def columns_drawing(columns: Sequence[tuple[str, Scene]], *, title: Sequence[Row] | str = (),
                    notes: Sequence[str] = (), align: Sequence[tuple[str, str]] = ()) -> Drawing:
    """:func:`columns_to_dot` as a :class:`Drawing`."""
    w = DotWriter()
    for scope, (heading, scene) in enumerate(columns):
        w.column(scope, heading, scene)
    pairs = [(a, b) for a, b in _monotone(columns, align) if (0, a) in w.node_ids and (1, b) in w.node_ids]
    if pairs:
        w.layout["newrank"] = "true"
        for a, b in pairs:
            w.lines.append(f"  {{ rank=same; {w.node_id(0, a)}; {w.node_id(1, b)}; }}")
    header = header_rows(title, notes)
    return Drawing(w.finish(header), list(columns), header, tied=bool(pairs), ids=Ids(w.node_ids, w.cluster_ids))


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


def drawn_ids(scenes: Sequence[Scene]) -> tuple[dict[tuple[int, str], str], dict[tuple[int, str], str]]:
    """The DOT identifiers :func:`to_dot` (one scene) or :func:`columns_to_dot` (scenes in
    columns) give: ``(column, node key) → "n7"`` and ``(column, cluster key) → "cluster_3"``.

    Graphviz writes them as the ``<title>`` of each node's and cluster's SVG group, which is how
    the HTML explorer finds the instructions behind a drawn box without any HLO text in the ids.
    """
    w = DotWriter()
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
