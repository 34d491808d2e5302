"""The explorer's pictures: the page's main picture plus pre-rendered expansions, bounded.

Every picture is laid out by Graphviz's ``dot`` here, at build time; the browser only shows
and swaps SVGs (see the README, "The report as an explorer", for why: a WebAssembly Graphviz
would have to be fetched at install time and lays out big graphs no faster than ``dot``).

An expansion is a layer (scope) or a fusion that the main picture draws as one box: a layer
is drawn open (``ViewOptions(scope=…)``: its ops before optimization, the kernels holding
them after), a fusion down to single instructions. A real model has hundreds of layers and
fusions, so expansions are bounded: the biggest first, at most ``max_views`` layers and as many
fusions, and ``max_bytes`` of SVG in all; one without a picture still has its panel (the
layer's kernels and instructions, the fusion's body as text) and its highlights.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import HlovizError
from ...ir import Instruction
from .data import Side, ViewSpec

if TYPE_CHECKING:
    from ..views import Mark, View

__all__ = ["Bounds", "fusion_expansions"]


@dataclass(frozen=True)
class Bounds:
    """How much the page may hold beyond its main picture."""

    max_views: int = 48
    max_bytes: int = 8 * 1024 * 1024
    budget: int = 200
    timeout: float = 10.0
    #: Drawing a layer or a fusion walks the whole module (once per side), so expansions are also
    #: bounded by instructions walked in all, layers first: ResNet50 gets 47 layers and 48
    #: fusions, a 300k-instruction module one fusion.
    max_walk: int = 400_000
    #: And by time: no expansion starts after this many seconds (the page says which have none).
    seconds: float = 30.0


def fusion_expansions(side_index: int, side: Side, drawn: View, *, marks: Mapping[str, Mark] | None = None,
                      bounds: Bounds = Bounds(), parent: str = "top", walked: int = 0) -> list[ViewSpec]:
    """A view of each fusion kernel of ``side`` that the picture ``drawn`` shows folded into a
    box, biggest first, within ``bounds`` (``walked``: instructions the layer pictures walked)."""
    from ..pictures import module_picture
    from ..views import ViewOptions

    count = min(bounds.max_views, (bounds.max_walk - walked) // max(side.module.instruction_count, 1))
    if side.kernels is None or count <= 0:
        return []
    candidates: list[tuple[int, Instruction]] = []
    for k in side.kernels.kernels:
        if k.fused_computation is None or k.instructions < 2 or drawn.node_of.get(k.name) is None:
            continue
        comp = side.module.get_computation(k.computation)
        inst = comp.get(k.name) if comp is not None else None
        if inst is not None:
            candidates.append((k.instructions, inst))
    candidates.sort(key=lambda c: -c[0])
    chosen = [inst for _, inst in candidates[:count]]

    deadline = time.monotonic() + bounds.seconds

    def draw(inst: Instruction):
        if time.monotonic() >= deadline:
            return inst, None
        fused = inst.called_computations[0]
        title = f"{inst.name} · {inst.attributes.get('kind', 'fusion')} fusion · {fused.name}"
        try:
            return inst, module_picture(side.module, options=ViewOptions(computation=fused.name, budget=bounds.budget),
                                        marks=marks, title=title, timeout=bounds.timeout)
        except HlovizError:
            return inst, None  # no layout in time: the panel still shows the body as text

    workers = max(1, min(4, os.cpu_count() or 1))
    with ThreadPoolExecutor(workers) as pool:
        drawn_all = list(pool.map(draw, chosen))
    out: list[ViewSpec] = []
    total = 0
    for inst, picture in drawn_all:
        if picture is None or picture.svg is None:
            continue
        svg = picture.svg.decode("utf-8")
        if total + len(svg) > bounds.max_bytes:
            continue
        total += len(svg)
        out.append(ViewSpec(key=f"{side.key}:{inst.name}", title=inst.name,
                            columns=[(side_index, picture.views[0][1])], svg=svg, parent=parent,
                            opens=f"i:{side.key}:{inst.name}"))
    return out


def closed_scopes(side: Side, drawn: View) -> dict[str, int]:
    """Layers worth a picture of their own: path → instructions, for each scope (of at least two
    instructions, and not most of the module) that the picture ``drawn`` has no box of its own
    for — closed into a box with other ops, or left out when Graphviz needed a coarser view."""
    tree = side.scope_tree()
    total = side.module.instruction_count
    own: set[str] = set()
    by_name = {i.name: i for i in side.module.instructions()}
    boxes: dict[str, list[Instruction]] = {}
    for name, key in drawn.node_of.items():
        inst = by_name.get(name)
        if inst is not None:
            boxes.setdefault(key, []).append(inst)
    for members in boxes.values():
        paths = {tree.scope_of(m).path for m in members}
        if len(paths) == 1:
            own.update(paths)
    out: dict[str, int] = {}
    for s in tree.walk():  # parents first: a layer's own sub-scopes show in its picture
        if s.kind != "scope" or s.path in own or (s.parent is not None and s.parent.path in out):
            continue
        n = sum(s.phases.values())
        if 2 <= n <= total // 2:
            out[s.path] = n
    return out


def scope_expansions(candidates: Mapping[str, int], draw, *, walk: int, bounds: Bounds = Bounds(),
                     parent: str = "top") -> list[ViewSpec]:
    """A view of each scope in ``candidates`` (path → size), biggest first, within ``bounds``;
    ``draw(path)`` returns ``(title, [(side index, View)], svg)`` or None; each walks ``walk``
    instructions."""
    count = min(bounds.max_views, len(candidates), bounds.max_walk // 2 // max(walk, 1))
    chosen = sorted(candidates, key=lambda p: (-candidates[p], p))[:count]

    deadline = time.monotonic() + bounds.seconds

    def one(path: str):
        if time.monotonic() >= deadline:
            return path, None
        try:
            return path, draw(path)
        except HlovizError:
            return path, None

    workers = max(1, min(4, os.cpu_count() or 1))
    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(one, chosen))
    out: list[ViewSpec] = []
    total = 0
    for path, drawn in results:
        if drawn is None:
            continue
        title, columns, svg = drawn
        if total + len(svg) > bounds.max_bytes:
            continue
        total += len(svg)
        out.append(ViewSpec(key=f"s:{path}", title=title, columns=columns, svg=svg, parent=parent, opens=f"s:{path}"))
    return out


def top_view(title: str, columns: Sequence[tuple[int, View]]) -> ViewSpec:
    """The page's own picture (already in the HTML)."""
    return ViewSpec(key="top", title=title, columns=list(columns))
