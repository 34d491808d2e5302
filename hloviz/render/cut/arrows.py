"""No long arrows: arrows that would span many rows become stubs at their ends.

An arrow from a weight read by the forward and the backward pass, or from every layer into the
ROOT tuple, crosses the whole picture: Graphviz routes it through a virtual node on every row
it passes (most of its layout time on a big model) and it crosses everything on the way. As
TensorBoard does for high-degree nodes and Netron for weights, such an arrow is not drawn; its
ends say where it goes instead:

* the user gets a row ``← conv1 · bias_add`` (one combined row for several: ``← 3 inputs:
  a, b, c``), the producer a row ``→ 12 users: …``; counts and the far end's name stay readable,
  and each stub's tooltip keeps the full list;
* an arrow is long when its ends' rows differ by more than :data:`SPAN` (rows by longest path
  from the inputs, an input pulled down next to its first user, as dot places it), or when it
  runs across: from one cluster to a sibling cluster whose rows overlap its own, which dot
  puts beside it (:func:`_beside`);
* a *hub* — in-degree above ``Q3 + (Q3 − Q1)`` or out-degree above ``Q3 + 4·(Q3 − Q1)`` over
  the picture's nodes (TensorBoard's rule), and at least :data:`HUB_FLOOR` — loses its arrows
  but those that alone hold a part of the picture on (a dense block's shared buffer);
* arrows that hold the picture together stay (a spanning forest, short ordinary arrows
  preferred: the floor that keeps a picture from falling apart into pieces dot would lay out
  side by side; only fragments of fewer than :data:`FRAGMENT` nodes may float), and pictures
  of at most :data:`SMALL` nodes keep their long arrows.

:func:`shorten` is pure: a scene in, the same scene with stubs (and the list of stubbed arrows)
out. :func:`rows_of` is the row numbering, for tests and benchmarks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..scene import Cluster, Edge, Row, Scene

__all__ = ["HUB_FLOOR", "SPAN", "Stub", "rows_of", "shorten", "write_rows"]

#: The most rows an arrow may span before it becomes a stub.
SPAN = 6
#: Pictures of at most this many nodes keep their long arrows (they stay readable).
SMALL = 80
#: A hub has at least this many arrows on the side that makes it one.
HUB_FLOOR = 8
#: A part of the picture smaller than this may lose its last far arrow (it floats beside).
FRAGMENT = 4
#: Rounds of :func:`shorten` (rows counted again after each).
_ROUNDS = 3
#: A stub row names at most this many far ends.
_NAMES = 3


@dataclass(frozen=True)
class Stub:
    """An arrow drawn as stubs: ``src`` → ``dst`` (scene node keys), ``label`` its count text,
    ``why`` ``long``, ``across`` (to a cluster dot puts beside its own) or ``hub``."""

    src: str
    dst: str
    label: str
    why: str


def rows_of(nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> dict[str, int]:
    """Each node's row as dot would rank it: longest path from the inputs; a node without
    operands sits right above its first user."""
    keys = list(nodes)
    succ: dict[str, list[str]] = {k: [] for k in keys}
    indeg = dict.fromkeys(keys, 0)
    for a, b in edges:
        if a in succ and b in indeg and a != b:
            succ[a].append(b)
            indeg[b] += 1
    ready = [k for k in keys if indeg[k] == 0]
    sources = set(ready)
    row = dict.fromkeys(keys, 0)
    left = dict(indeg)
    done: set[str] = set()
    waiting = iter(keys)  # the picture's order, for breaking cycles
    while len(done) < len(keys):
        if not ready:
            # a cycle (blocks of a quotient graph that read each other): dot reverses one of
            # its arrows; its first node in the picture's order goes on as if it were ready
            ready.append(next(k for k in waiting if k not in done))
        k = ready.pop()
        if k in done:
            continue
        done.add(k)
        for n in succ[k]:
            if n in done:
                continue
            row[n] = max(row[n], row[k] + 1)
            left[n] -= 1
            if left[n] == 0:
                ready.append(n)
    for k in sources:
        if succ[k]:
            row[k] = max(0, min(row[n] for n in succ[k]) - 1)
    return row


def _quartiles(values: list[int]) -> tuple[float, float]:
    s = sorted(values)
    if not s:
        return 0.0, 0.0
    return s[len(s) // 4], s[(3 * len(s)) // 4]


def hubs(scene: Scene, edges: list[Edge]) -> set[str]:
    """The nodes whose far arrows are stubs (TensorBoard's rule with a floor)."""
    ins = dict.fromkeys(scene.nodes, 0)
    outs = dict.fromkeys(scene.nodes, 0)
    for e in edges:
        outs[e.src] = outs.get(e.src, 0) + 1
        ins[e.dst] = ins.get(e.dst, 0) + 1
    q1, q3 = _quartiles(list(ins.values()))
    in_limit = max(q3 + (q3 - q1), HUB_FLOOR - 1)
    q1, q3 = _quartiles(list(outs.values()))
    out_limit = max(q3 + 4 * (q3 - q1), HUB_FLOOR - 1)
    return {k for k in scene.nodes if ins[k] > in_limit or outs[k] > out_limit}


def shorten(scene: Scene, *, span: int = SPAN, settle: Callable[[], object] | None = None,
            hub_rows: bool = True) -> list[Stub]:
    """Replace the scene's long and hub arrows by stub rows at their ends; returns the stubs.
    ``hub_rows=False`` (an overview, ranked in program order): a hub's arrows stay arrows — a
    loop's init tuple read from twelve parameters and its results read by thirteen users are the
    spine of a greedy decoder's picture, which without them stood in one row.

    Rows are counted again after each round of stubs (at most :data:`_ROUNDS`): a node whose
    far inputs became stubs moves down next to its users, which can stretch another of its
    arrows. ``settle`` runs after each round that removed arrows, before rows are counted
    again (the picture's stacking holding down what the stubs set loose: its invisible arrows
    move rows, and an arrow that was short may now be long)."""
    drawn = [e for e in scene.edges if not e.invisible and not e.dashed and e.constraint]
    if not drawn:
        return []
    hub = hubs(scene, drawn) if hub_rows else set()
    long_ok = len(scene.nodes) <= SMALL
    stubs: list[Stub] = []
    for _ in range(_ROUNDS):
        # rows as dot ranks them: the invisible arrows that stack an open scope's parts count too
        row = rows_of(scene.nodes, ((e.src, e.dst) for e in scene.edges if e.constraint and not e.dashed))

        beside = _beside(scene, row)

        def far(e: Edge, row: dict[str, int] = row, beside: Callable[[str, str], bool] = beside) -> str | None:
            if e.src in hub or e.dst in hub:
                return "hub"
            if long_ok:
                return None
            if row[e.dst] - row[e.src] > span:
                return "long"
            return "across" if beside(e.src, e.dst) else None

        keep = _spine(drawn, row, far)
        gone: set[int] = set()
        for e in drawn:
            why = far(e)
            if why is None or id(e) in keep:
                continue
            stubs.append(Stub(e.src, e.dst, e.label, why))
            gone.add(id(e))
        if not gone:
            break
        scene.edges[:] = [e for e in scene.edges if id(e) not in gone]
        drawn = [e for e in drawn if id(e) not in gone]
        if settle is not None:
            settle()
    if stubs:
        write_rows(scene, stubs)
    return stubs


def _spine(drawn: list[Edge], row: dict[str, int], far) -> set[int]:
    """The arrows that keep the picture's parts connected (a spanning forest, Kruskal's rule):
    short ordinary arrows first, then the shortest far ones only where a part of
    :data:`FRAGMENT` nodes or more would otherwise fall off — dot would lay each fallen part
    out beside the others; a few nodes hanging on by a far arrow float beside the picture
    instead (as TensorBoard sets hubs aside), their stub rows saying where they belong."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:
            parent[x], x = root, parent[x]
        return root

    order = sorted(range(len(drawn)), key=lambda i: (far(drawn[i]) is not None,
                                                     abs(row[drawn[i].dst] - row[drawn[i].src]), i))
    size: dict[str, int] = {}
    keep: set[int] = set()
    for i in order:
        e = drawn[i]
        a, b = find(e.src), find(e.dst)
        if a == b:
            continue
        if far(e) is not None and min(size.get(a, 1), size.get(b, 1)) < FRAGMENT:
            continue  # a few nodes hanging on by a far arrow float beside the picture instead
        parent[a] = b
        size[b] = size.get(a, 1) + size.get(b, 1)
        keep.add(id(e))
    return keep


def _name(scene: Scene, key: str) -> str:
    rows = scene.nodes[key].rows
    text = next((r.text for r in rows if r.bold and r.text), rows[0].text if rows else key)
    return text if len(text) <= 32 else text[:31] + "…"


def write_rows(scene: Scene, stubs: list[Stub], *, quiet: frozenset[str] = frozenset()) -> None:
    """Each stubbed arrow as a ``←`` row on its user and a ``→`` row on its producer (none
    for an arrow into one of ``quiet``: the ROOT's row lists its inputs once, where a row
    ``→ ROOT tuple`` on every layer of a training step made each box a row taller)."""
    into: dict[str, list[Stub]] = {}
    out_of: dict[str, list[Stub]] = {}
    for s in stubs:
        into.setdefault(s.dst, []).append(s)
        if s.dst not in quiet:
            out_of.setdefault(s.src, []).append(s)
    for key, group in into.items():
        names = [_name(scene, s.src) + (f" ({s.label})" if s.label else "") for s in group]
        _add(scene, key, "←", names, "input")
    for key, group in out_of.items():
        _add(scene, key, "→", [_name(scene, s.dst) for s in group], "user")


def _add(scene: Scene, key: str, arrow: str, names: list[str], what: str) -> None:
    node = scene.nodes[key]
    node.rows.append(_stub_row(arrow, names, what))
    unique = list(dict.fromkeys(names))
    listing = f"{what}s not drawn as arrows: " + ", ".join(unique[:40]) + (" …" if len(unique) > 40 else "")
    node.tooltip = f"{node.tooltip}\n{listing}" if node.tooltip else listing


def _stub_row(arrow: str, names: list[str], what: str) -> Row:
    unique = list(dict.fromkeys(names))
    if len(names) == 1:
        text = f"{arrow} {unique[0]}"
    else:
        shown = ", ".join(unique[:_NAMES]) + (" …" if len(unique) > _NAMES else "")
        text = f"{arrow} {len(names)} {what}s: {shown}"
    return Row(text, small=True, italic=True, color="#455a64")


def _beside(scene: Scene, row: dict[str, int]) -> Callable[[str, str], bool]:
    """Whether an arrow between two nodes runs *across*: its ends sit in two sibling clusters
    (under the same parent, or both at the top) whose rows overlap. Dot never overlaps two
    clusters, so it puts such clusters side by side, and an arrow from one to the other runs
    sideways over everything between — however few rows apart its ends are. A training step's
    backward pass, once the hubs that held it below the forward pass are stubs, floats up
    beside it: each forward layer's arrows to its backward ops ran 10,000 pt across the
    12-layer GPT step's picture (0.92 crossings per arrow unwrapped)."""
    parent: dict[str, str] = {}
    span: dict[str, tuple[int, int]] = {}

    def walk(c: Cluster, up: str) -> tuple[int, int]:
        parent[c.key] = up
        lo, hi = 10**9, -1
        for k in c.nodes:
            parent[k] = c.key
            if k in row:
                lo, hi = min(lo, row[k]), max(hi, row[k])
        for sub in c.clusters:
            a, b = walk(sub, c.key)
            lo, hi = min(lo, a), max(hi, b)
        span[c.key] = (lo, hi)
        return lo, hi

    for c in scene.clusters:
        walk(c, "")

    def chain(k: str) -> list[str]:
        out = []
        while parent.get(k):
            k = parent[k]
            out.append(k)
        return out

    def across(a: str, b: str) -> bool:
        ca, cb = [a, *chain(a)], [b, *chain(b)]
        common = set(ca) & set(cb)
        xa = next((i for i, k in enumerate(ca) if k in common), len(ca))
        xb = next((i for i, k in enumerate(cb) if k in common), len(cb))
        if xa < 1 or xb < 1:
            return False
        sa, sb = ca[xa - 1], cb[xb - 1]
        if sa not in span or sb not in span:
            return False
        (a0, a1), (b0, b1) = span[sa], span[sb]
        return a0 <= b1 and b0 <= a1

    return across
