"""The explorer's pictures: the page's first view plus pre-rendered expansions, bounded.

Every picture is laid out by Graphviz's ``dot`` here, at build time; the browser only shows
and swaps SVGs (see docs/explorer.md and benchmarks/results/explorer.md for why: a WebAssembly Graphviz
would have to be fetched at install time and lays out big graphs no faster than ``dot``).

The first view (:func:`first_view`) is the finest cut of the module's tree that fits a
:class:`Screen`. An expansion is something it draws as one box: a block, ``×N`` repeat, group
of layers or phase opens in place (:func:`block_expansions`: the same picture with that node
of the cut opened), a layer of the model is drawn open as a picture of its own
(``ViewOptions(scope=…)``: its ops before optimization, the kernels holding them after), a
fusion down to single instructions. A real model has hundreds of layers and fusions, so
expansions are bounded: the biggest first, at most ``max_views`` of each kind, ``max_bytes``
of SVG and ``max_walk`` instructions walked in all; one without a picture still has its panel
(the layer's kernels and instructions, the fusion's body as text) and its highlights.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import accumulate
from typing import TYPE_CHECKING

from ....errors import HlovizError
from ....ir import Instruction
from ...views import OVERVIEW_BUDGET
from .data import Side, ViewSpec, plain_name
from .pairs import Pairing, counterpart

if TYPE_CHECKING:
    from ...layout.wrap import Wrap
    from ...pictures import Picture
    from ...views import Mark, View

__all__ = ["Bounds", "Screen", "block_expansions", "drawn_fusions", "first_view", "fusion_expansions",
           "fusion_owners"]


@dataclass(frozen=True)
class Screen:
    """What "fits a screen" means for the explorer's first view.

    The whole picture, shown in a ``width`` × ``height`` pixel viewport (a 1920×1080 display
    less the browser's and the page's bars), keeps its text at ``scale`` of its size or more
    (1: at full size, its smallest labels at 10 pt, as the explorer opens it; an SVG point is
    4/3 pixel), and no column holds more than ``nodes`` boxes: the overview's (more are not read
    at a glance, however small they are drawn; issue 33). It may be ``pages`` screens tall: the
    explorer opens it at its top, where the input is, and it reads downwards in program order
    (at full size a whole overview rarely fits one screen; cut to fit, it is a handful of boxes).
    """

    width: int = 1900
    height: int = 950
    scale: float = 1.0
    nodes: int = OVERVIEW_BUDGET
    pages: float = 3.0
    #: the fewest boxes a first view is cut down to (a long chain of blocks stays a chain)
    least: int = 8
    #: the most pictures :func:`first_view` lays out looking for the biggest that fits
    tries: int = 4

    def wrap(self, drawn: Wrap) -> Wrap:
        """How the first view is wrapped: as ``drawn`` when the user chose a wrap, else tall
        columns cut into parts side by side to the screen's shape (height over width)."""
        from ...layout.wrap import Wrap

        return drawn if drawn.active else Wrap("auto", aspect=self.height * self.pages / self.width)

    def shrink(self, svg: str) -> float:
        """How much smaller the laid-out ``svg`` must be to fit (1.0: it fits as it is)."""
        m = re.search(r'<svg[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"', svg)
        if m is None:
            return 1.0
        px = 4 / 3 * self.scale
        width, height = float(m.group(1)) * px, float(m.group(2)) * px
        return min(1.0, self.width / max(width, 1.0), self.height * self.pages / max(height, 1.0))


@dataclass(frozen=True)
class Bounds:
    """How much the page may hold beyond its main picture."""

    max_views: int = 48
    max_bytes: int = 8 * 1024 * 1024
    budget: int = 200
    timeout: float = 10.0
    #: Drawing a layer walks the whole module (once per side), so expansions are also bounded
    #: by instructions walked in all: layers up to half, blocks opened in place an eighth,
    #: fusions the rest: one a view draws as a box of its own charged its own fused
    #: instructions (its picture walks its fused computation; the module's scope tree is built
    #: once for the page), one drawn only inside a bigger box the module's size.
    max_walk: int = 400_000
    #: And by time: no expansion starts after this many seconds (the page says which have none).
    seconds: float = 30.0
    #: What the first view must fit (:func:`first_view`).
    screen: Screen = field(default_factory=Screen)
    #: Fusions' pictures are small (one fused computation each) and every fusion a picture of the
    #: page draws as a box of its own should open from it (ResNet50: 90 such fusions, 47 layer
    #: pictures), so they have a bound of their own instead of ``max_views``.
    max_fusions: int = 160


def first_view(picture: Picture, redraw: Callable[[int, Wrap], Picture], screen: Screen = Screen(),
               seconds: float = 8.0) -> Picture:
    """The picture the explorer shows first: ``picture`` itself when it fits ``screen``, else
    the finest cut of the same tree that does: the biggest node budget whose picture, laid out,
    fits (``redraw(budget, wrap)`` draws it, the same options otherwise).

    The explorer draws its pictures unwrapped (it pans and zooms), but a first view is meant to
    be seen whole: a tall column is wrapped into parts side by side, to the screen's shape
    (:meth:`Screen.wrap`), so a chain of blocks uses the screen's width instead of a third of
    it (DenseNet121: 26 boxes a column where 15 fitted unwrapped). The picture's size grows
    with its budget, but not in proportion, so the budget is searched for: down by the factor
    the picture is too big until one fits, then by bisection between the biggest that fits and
    the smallest that does not, until they are within a quarter of each other, ``screen.tries``
    pictures were drawn (twice as many while none fits), or ``seconds`` passed once one fits; never below
    ``screen.least`` (where even that does not fit, the smallest drawn). What the cut closes opens in place
    (:func:`block_expansions`, laid out with the first view's wrap; the layer and fusion
    pictures)."""
    if picture.svg is None:
        return picture
    nodes = max((v.nodes for _, v in picture.views), default=0)
    if nodes <= screen.nodes and screen.shrink(picture.svg.decode("utf-8")) >= 1.0:
        return picture
    wrap = screen.wrap(picture.wrap)
    deadline = time.monotonic() + seconds
    low, high = screen.least, max(screen.least, min(screen.nodes, nodes))  # the answer lies in [low, high]
    fitting: Picture | None = None  # the picture at ``low`` once one fitted
    smallest = picture  # the smallest budget drawn, for when nothing fits
    budget = high
    for tried in range(1, 2 * screen.tries + 1):  # past ``tries`` only while none fitted
        try:
            drawn = redraw(budget, wrap)
        except HlovizError:
            break
        if drawn.svg is None:
            break
        factor = screen.shrink(drawn.svg.decode("utf-8"))
        if factor >= 1.0:
            fitting, low = drawn, budget
        else:
            smallest, high = drawn, budget - 1
        if fitting is None and budget <= screen.least:
            break
        # ``seconds`` only ends the refining: a search that has found no fit yet goes on (up to
        # twice ``tries`` pictures), so a slow or loaded machine gets a slower page, not one
        # whose first view does not fit the screen
        if fitting is not None and (high - low <= max(1, low // 4) or tried >= screen.tries
                                    or time.monotonic() >= deadline):
            break
        # no fit yet: down by the factor, and a tenth more (a picture grows faster than its
        # budget); once one fits, bisect
        budget = (max(low, min(high, int(budget * factor * 0.9))) if fitting is None
                  else (low + high + 1) // 2)
    return fitting if fitting is not None else smallest


def fusion_expansions(side_index: int, side: Side, drawn: View | Sequence[tuple[str, View]], *,
                      marks: Mapping[str, Mark] | None = None, bounds: Bounds = Bounds(), parent: str = "top",
                      walked: int = 0) -> list[ViewSpec]:
    """A view of each fusion kernel of ``side`` that a picture shows, within ``bounds``
    (``walked``: instructions the layer pictures walked). ``drawn`` is one picture (its view key
    is ``parent``) or the pictures of the page in the order they were laid out, (view key, View).

    A fusion's view opens from a picture that draws the fusion as a box of its own (closed, or
    open down to its instructions; :func:`drawn_fusions`): the top picture when it does, else the
    most specific one that does (a layer's picture before a block opened in place, a deeper
    layer before its parent), so its breadcrumb goes back to where its box is. Fusions drawn
    that way come first, biggest first; a fusion only ever drawn inside a box of several ops
    (a closed layer, a group) gets a view after them, when the bounds leave room, opening from
    the first picture holding it."""
    from ...pictures import module_picture
    from ...views import ViewOptions

    pictures = [(parent, drawn)] if not isinstance(drawn, Sequence) else list(drawn)
    if side.kernels is None:
        return []
    owner = fusion_owners(side)
    own: dict[str, list[str]] = {}  # fusion → the view keys drawing it as a box of its own
    for key, view in pictures:
        for name in drawn_fusions(view, owner):
            own.setdefault(name, []).append(key)
    candidates: list[tuple[int, int, Instruction, str]] = []
    for k in side.kernels.kernels:
        if k.fused_computation is None or k.instructions < 2:
            continue
        keys = own.get(k.name)
        if keys:
            where: str | None = keys[0] if keys[0] == pictures[0][0] else max(keys, key=_specificity)
        else:
            where = next((key for key, view in pictures if view.node_of.get(k.name) is not None), None)
        comp = side.module.get_computation(k.computation)
        inst = comp.get(k.name) if comp is not None else None
        if inst is not None and where is not None:
            candidates.append((0 if keys else 1, k.instructions, inst, where))
    candidates.sort(key=lambda c: (c[0], -c[1]))
    # a fusion's picture walks its fused computation, not the module (the scope tree and the
    # optimizer's targets are the page's, built once): one a view draws as a box of its own is
    # charged its own instructions, so every such fusion gets its picture; one drawn only inside
    # a box of several ops keeps a module's walk as its charge (each is a Graphviz run the page
    # waits for, and nothing opens from it but that box: the GPT step, 46k instructions, draws
    # its 53 boxed fusions and 3 more)
    first = candidates[:bounds.max_fusions]
    charge = [c[1] if c[0] == 0 else max(side.module.instruction_count, 1) for c in first]
    chosen = [(inst, where) for (_, _, inst, where), total in zip(first, accumulate(charge))
              if total <= bounds.max_walk - walked]

    deadline = time.monotonic() + bounds.seconds

    def draw(choice: tuple[Instruction, str]):
        inst, where = choice
        if time.monotonic() >= deadline:
            return inst, where, None
        fused = inst.called_computations[0]
        title = f"{inst.name} · {inst.attributes.get('kind', 'fusion')} fusion · {fused.name}"
        try:
            return inst, where, module_picture(side.module,
                                               options=ViewOptions(computation=fused.name, budget=bounds.budget),
                                               marks=marks, title=title, timeout=bounds.timeout)
        except HlovizError:
            return inst, where, None  # no layout in time: the panel still shows the body as text

    workers = max(1, min(4, os.cpu_count() or 1))
    with ThreadPoolExecutor(workers) as pool:
        drawn_all = list(pool.map(draw, chosen))
    out: list[ViewSpec] = []
    total = 0
    for inst, where, picture in drawn_all:
        if picture is None or picture.svg is None:
            continue
        svg = picture.svg.decode("utf-8")
        if total + len(svg) > bounds.max_bytes:
            continue
        total += len(svg)
        out.append(ViewSpec(key=f"{side.key}:{inst.name}", title=inst.name,
                            columns=[(side_index, picture.views[0][1])], svg=svg, parent=where,
                            opens=f"i:{side.key}:{inst.name}"))
    return out


def fusion_owners(side: Side) -> dict[str, str | None]:
    """Instruction name → the fusion kernel of ``side`` it is or belongs to (the fusion
    instruction and every instruction of its fused computation), or None for an instruction of
    a computation a fused body calls (a reduction's ``to_apply``: several fusions may share
    one, and a picture draws it inside whichever box calls it)."""
    out: dict[str, str | None] = {}
    if side.kernels is None:
        return out
    called: list = []
    for k in side.kernels.kernels:
        if k.fused_computation is None:
            continue
        comp = side.module.get_computation(k.computation)
        inst = comp.get(k.name) if comp is not None else None
        if inst is None:
            continue
        out[inst.name] = inst.name
        for body in inst.called_computations:
            for i in body.instructions:
                out[i.name] = inst.name
                called.extend(i.called_computations)
    seen: set[str] = set()
    while called:  # what fused bodies call, and what that calls in turn
        c = called.pop()
        if c.name in seen:
            continue
        seen.add(c.name)
        for i in c.instructions:
            out.setdefault(i.name, None)
            called.extend(i.called_computations)
    return out


def drawn_fusions(view: View, owner: Mapping[str, str | None]) -> set[str]:
    """The fusions ``view`` draws as a box of their own: a box holding one fusion (the fusion,
    or instructions of its body only; ``owner``: :func:`fusion_owners`, whose None entries are
    left out), closed or opened into its instructions — not a box of several ops of which a
    fusion is one part."""
    boxes: dict[str, set[str]] = {}
    for name, key in view.node_of.items():
        if name in owner and owner[name] is None:
            continue  # a reduction's body, drawn with whichever box calls it
        boxes.setdefault(key, set()).add(owner.get(name) or "")
    return {next(iter(owners)) for owners in boxes.values() if len(owners) == 1 and "" not in owners}


def _specificity(key: str) -> tuple[int, int]:
    """How specific a view of the page is, for the view a fusion's picture opens from: a layer's
    picture (``s:<path>``, deeper paths more) before a block opened in place (``t:<side>:<tree
    key>``, deeper keys more) before the top."""
    if key.startswith("s:"):
        return 2, key.count("/")
    if key.startswith("t:"):
        return 1, key.count("/")
    return 0, 0


def _closed(view: View, side: Side, under: str | None = None) -> list[tuple[int, str]]:
    """``(leaves, tree key)`` of the closed nodes of ``view``'s cut that open in place
    (:func:`~hloviz.render.page.explorer.data.opens_in_place`; below tree node ``under`` only, when
    given), biggest first."""
    from .data import opens_in_place

    if view.cut is None:
        return []
    out = []
    for node in view.cut.nodes:
        if node.key in view.drawn_as and (under is None or node.key.startswith(under + "/")) \
                and opens_in_place(node, side):
            out.append((node.size, node.key))
    return sorted(out, key=lambda c: (-c[0], c[1]))


#: A picture column as the explorer draws it: (heading, side index, View).
Column = tuple[str, int, "View"]


def block_expansions(sides: Sequence[Side], columns: Sequence[Column], *,
                     marks: Sequence[Mapping[str, Mark] | None] = (), bounds: Bounds = Bounds(),
                     title: str = "", parent: str = "top", walked: int = 0, wrap: Wrap | None = None,
                     pairing: Pairing | None = None) -> list[ViewSpec]:
    """The picture of ``columns`` with each closed block or repeat opened in place, biggest
    first, within ``bounds`` (``walked``: instructions other expansions walked): the same cut of
    the same column, the same options, one node opened (:func:`hloviz.render.cut.cut.open_in_place`:
    a block's members up to ``bounds.budget`` nodes; a repeat's first copy, and one node naming
    the other copies), the other columns as they were. Blocks closed inside an opened one open
    from its picture in turn, breadth-first, so the top level's blocks are never crowded out by
    deep ones. A view's key and ``opens`` are ``t:<side>:<tree key>``, as the explorer's data
    names the box it opens (:func:`hloviz.render.page.explorer.data.explorer_data`). ``wrap``: as
    the picture was laid out (:mod:`hloviz.render.layout.wrap`).

    ``pairing`` (a page of a module before and after optimization): a block opens in both
    columns — its counterpart in the other column opens with it
    (:func:`hloviz.render.page.explorer.pairs.counterpart`: the same block by name, else the blocks
    holding its ops' kernels), and the view's ``pair`` says what opened there, or why nothing
    did."""
    from dataclasses import replace

    from ...layout.wrap import OFF

    wrap = wrap if wrap is not None else OFF

    from ...cut.apply import scope_title
    from ...layout.dot import columns_drawing, to_drawing
    from ...pictures import build_picture
    from ...views import ViewOptions, draw_module

    walk = max(sum(sides[i].module.instruction_count for _, i, _ in columns[:1]), 1)
    left = min(bounds.max_views, max(bounds.max_walk - walked, 0) // walk)
    deadline = time.monotonic() + bounds.seconds
    # (parent view key, the picture's columns, which column opens, tree key)
    level = [(parent, list(columns), c, key) for c, (_, s, view) in enumerate(columns)
             for _, key in _closed(view, sides[s])]

    def draw(choice: tuple[str, list[Column], int, str]):
        _up, cols, c, key = choice
        heading, s, drawn = cols[c]
        opts = drawn.options
        if time.monotonic() >= deadline or opts is None or drawn.cut is None:
            return choice, None, None
        name = plain_name(scope_title(drawn.cut.tree.nodes[key]))
        pair = counterpart(pairing, sides, [(s2, v) for _, s2, v in cols], c, key) if pairing is not None else None

        def redrawn(k: int, options: ViewOptions, keys: Sequence[str]) -> View:
            """Column ``k`` drawn with ``keys`` opened in place (``options``: as the layout asks)."""
            _, sk, old = cols[k]
            heading_title = old.scene.title[0].text if old.scene.title else sides[sk].module.name
            view = draw_module(sides[sk].module, marks=marks[sk] if sk < len(marks) else None,
                               options=replace(options, open=(*options.open, *keys)),
                               title=heading_title if len(cols) > 1 else f"{heading_title} · {name}")
            return view

        def build(options: ViewOptions, extra: Sequence[str]):
            view = redrawn(c, options, (key,))
            view.scene.notes[:0] = list(extra)
            new = [*cols[:c], (heading, s, view), *cols[c + 1:]]
            if pair is not None and pair.keys:
                d = 1 - c
                other = cols[d][2].options or options
                new[d] = (cols[d][0], cols[d][1], redrawn(d, replace(other, coarse=options.coarse,
                                                                      budget=min(other.budget, options.budget)),
                                                          pair.keys))
            if len(new) == 1:
                return to_drawing(view.scene), [(heading, view)]
            return (columns_drawing([(h, v.scene) for h, _, v in new], title=f"{title} · {name}" if title else name),
                    [(h, v) for h, _, v in new])

        try:
            picture = build_picture(build, opts, "svg", bounds.timeout, name, wrap=wrap)
        except HlovizError:
            return choice, None, None
        if picture.svg is None:
            return choice, None, None
        new = [(h, s2, v) for (h, s2, _), (_, v) in zip(cols, picture.views, strict=True)]
        other_key = sides[cols[1 - c][1]].key if len(cols) == 2 else ""
        return choice, (name, new, pair.to_json(other_key) if pair is not None else None), picture.svg.decode("utf-8")

    out: list[ViewSpec] = []
    seen: set[str] = set()
    total = 0
    workers = max(1, min(4, os.cpu_count() or 1))
    while level and left > 0 and time.monotonic() < deadline:
        level.sort(key=lambda x: (-_size(x[1][x[2]][2], x[3]), x[2], x[3]))  # biggest first
        chosen = []
        for choice in level:
            tag = f"t:{sides[choice[1][choice[2]][1]].key}:{choice[3]}"
            if tag not in seen and len(chosen) < left:
                seen.add(tag)
                chosen.append(choice)
        left -= len(chosen)
        level = []
        with ThreadPoolExecutor(workers) as pool:
            results = list(pool.map(draw, chosen))
        for (up, _cols, c, key), drawn, svg in results:
            if drawn is None or svg is None or total + len(svg) > bounds.max_bytes:
                continue
            total += len(svg)
            name, new, pair = drawn
            tag = f"t:{sides[new[c][1]].key}:{key}"
            out.append(ViewSpec(key=tag, title=name, columns=[(s, v) for _, s, v in new], svg=svg, parent=up,
                                opens=tag, pair=pair))
            # what the opened node holds opens in turn (not the node naming a repeat's other copies)
            level += [(tag, new, c, inner) for _, inner in _closed(new[c][2], sides[new[c][1]], under=key)
                      if not inner.endswith("/x:more")]
    return out


def _size(view: View, key: str) -> int:
    return view.cut.tree.nodes[key].size if view.cut is not None else 0


def closed_scopes(side: Side, drawn: View, within: str | None = None) -> dict[str, int]:
    """Layers worth a picture of their own: path → instructions, for each scope (of at least two
    instructions, and not most of the module) that the picture ``drawn`` does not draw open —
    closed into one box (alone or with other ops), or left out when Graphviz needed a coarser
    view.
    ``within``: ``drawn`` is that layer's own picture, and only the scopes inside it count (its
    sub-layers, one level down: theirs show in their own pictures)."""
    tree = side.scope_tree()
    total = side.module.instruction_count
    own: set[str] = set()
    by_name = {i.name: i for i in side.module.instructions()}
    boxes: dict[str, list[Instruction]] = {}
    for name, key in drawn.node_of.items():
        inst = by_name.get(name)
        if inst is not None:
            boxes.setdefault(key, []).append(inst)
    drawn_of: dict[str, int] = {}  # scope path → how many of its instructions the picture draws
    for members in boxes.values():
        for m in members:
            p = tree.scope_of(m).path
            drawn_of[p] = drawn_of.get(p, 0) + 1
    for members in boxes.values():
        paths = {tree.scope_of(m).path for m in members}
        if len(paths) != 1:
            continue
        path = next(iter(paths))
        if len(members) >= 2 and len(members) == drawn_of.get(path, 0):
            continue  # the whole layer closed into one box: worth opening in a picture of its own
        own.add(path)
    out: dict[str, int] = {}
    inside = within + "/" if within is not None else ""
    for s in tree.walk():  # parents first: a layer's own sub-scopes show in its picture
        if s.kind != "scope" or s.path in own or (s.parent is not None and s.parent.path in out):
            continue
        if not s.path.startswith(inside) or s.path == within:
            continue
        n = sum(s.phases.values())
        if 2 <= n <= total // 2:
            out[s.path] = n
    return out


#: ``draw(path)`` of :func:`scope_expansions`: the layer's title, drawn columns and SVG, or None.
LayerDraw = Callable[[str], "tuple[str, list[tuple[int, View]], str] | None"]
#: ``inner(path, columns)``: the sub-layers the layer's drawn picture shows closed, path → size.
LayerInner = Callable[[str, "list[tuple[int, View]]"], Mapping[str, int]]


def scope_expansions(candidates: Mapping[str, int], draw: LayerDraw, *, walk: int, bounds: Bounds = Bounds(),
                     parent: str = "top", inner: LayerInner | None = None) -> list[ViewSpec]:
    """A view of each scope in ``candidates`` (path → size), biggest first, within ``bounds``;
    ``draw(path)`` returns ``(title, [(side index, View)], svg)`` or None; each walks ``walk``
    instructions.

    With ``inner``, layers open recursively: the sub-layers each drawn picture shows closed get
    pictures of their own (their parent is that picture, so the breadcrumb keeps it), and so on
    down. The bounds are spent breadth-first: every layer of one level (biggest first) before
    any of the next, so a big model's top-level layers are never crowded out by deep ones."""
    left = min(bounds.max_views, bounds.max_walk // 2 // max(walk, 1))
    deadline = time.monotonic() + bounds.seconds
    level: list[tuple[str, str, int]] = [(parent, p, n) for p, n in candidates.items()]
    seen: set[str] = set()
    out: list[ViewSpec] = []
    total = 0

    def one(choice: tuple[str, str, int]):
        up, path, _ = choice
        if time.monotonic() >= deadline:
            return up, path, None
        try:
            return up, path, draw(path)
        except HlovizError:
            return up, path, None

    workers = max(1, min(4, os.cpu_count() or 1))
    while level and left > 0 and time.monotonic() < deadline:
        level = list({c[1]: c for c in level if c[1] not in seen}.values())  # one of each path
        paths = {c[1] for c in level}
        # a scope inside another of this level waits for the next: its ancestor's picture first
        now = [c for c in level if not any(a in paths for a in _ancestors(c[1]))]
        chosen = sorted(now, key=lambda c: (-c[2], c[1]))[:left]
        seen.update(c[1] for c in chosen)
        left -= len(chosen)
        with ThreadPoolExecutor(workers) as pool:
            results = list(pool.map(one, chosen))
        level = [c for c in level if c not in now]
        for up, path, drawn in results:
            if drawn is None:
                continue
            title, columns, svg = drawn
            if total + len(svg) > bounds.max_bytes:
                continue
            total += len(svg)
            out.append(ViewSpec(key=f"s:{path}", title=title, columns=columns, svg=svg, parent=up, opens=f"s:{path}"))
            if inner is not None:
                level += [(f"s:{path}", p, n) for p, n in inner(path, columns).items()]
    drawn_paths = {v.key for v in out}
    for v in out:  # each picture goes back up to its nearest drawn enclosing layer, for the breadcrumb
        up = next((f"s:{a}" for a in reversed(_ancestors(v.key[2:])) if f"s:{a}" in drawn_paths), None)
        if up is not None:
            v.parent = up
    return out


def _ancestors(path: str) -> list[str]:
    """The scope paths enclosing ``path``, outermost first (``a/b/c`` → ``a``, ``a/b``)."""
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def top_view(title: str, columns: Sequence[tuple[int, View]]) -> ViewSpec:
    """The page's own picture (already in the HTML)."""
    return ViewSpec(key="top", title=title, columns=list(columns))
