"""Fusions of a drawn picture opened down to single instructions, each a picture of its own.

In: a side, the views that draw it, the marks and the :class:`~.build.Bounds`. Out: a
:class:`~.sides.ViewSpec` per fusion a picture draws as one box (:func:`drawn_fusions`, by
:func:`fusion_owners`), the biggest first, under the view that draws it most specifically,
laid out by ``dot`` in a few threads until the bounds are spent (:func:`fusion_expansions`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import accumulate
from typing import TYPE_CHECKING

from ....errors import HlovizError
from ....ir import Instruction
from .build import Bounds
from .sides import Side, ViewSpec

if TYPE_CHECKING:
    from ...views import Mark, View

__all__ = ["drawn_fusions", "fusion_expansions", "fusion_kernels", "fusion_owners", "fusion_view"]


def fusion_expansions(side_index: int, side: Side, drawn: View | Sequence[tuple[str, View]], *,
                      marks: Mapping[str, Mark] | None = None, bounds: Bounds = Bounds(), parent: str = "top",
                      walked: int = 0, info: Mapping | None = None) -> list[ViewSpec]:
    """A view of each fusion kernel of ``side`` that a picture shows, within ``bounds``
    (``walked``: instructions the layer pictures walked; ``info``: the capture's, as the page's
    other pictures are drawn with: the user's lines in the tooltips). ``drawn`` is one picture (its view key
    is ``parent``) or the pictures of the page in the order they were laid out, (view key, View).

    A fusion's view opens from a picture that draws the fusion as a box of its own (closed, or
    open down to its instructions; :func:`drawn_fusions`): the top picture when it does, else the
    most specific one that does (a layer's picture before a block opened in place, a deeper
    layer before its parent), so its breadcrumb goes back to where its box is. Fusions drawn
    that way come first, biggest first; a fusion only ever drawn inside a box of several ops
    (a closed layer, a group) gets a view after them, when the bounds leave room, opening from
    the first picture holding it."""
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
            return None
        return fusion_view(side_index, side, inst, where, marks=marks, budget=bounds.budget, timeout=bounds.timeout,
                           info=info)

    workers = max(1, min(4, os.cpu_count() or 1))
    with ThreadPoolExecutor(workers) as pool:
        drawn_all = list(pool.map(draw, chosen))
    out: list[ViewSpec] = []
    total = 0
    for view in drawn_all:
        if view is None or view.svg is None or total + len(view.svg) > bounds.max_bytes:
            continue
        total += len(view.svg)
        out.append(view)
    return out


def fusion_view(side_index: int, side: Side, inst: Instruction, parent: str, *,
                marks: Mapping[str, Mark] | None = None, budget: int = 200, timeout: float = 10.0,
                info: Mapping | None = None) -> ViewSpec | None:
    """The picture of fusion ``inst`` of ``side`` down to single instructions (its fused
    computation), opening from view ``parent``; None where it has no layout in ``timeout``
    seconds (the panel still shows the body as text)."""
    from ...pictures import module_picture
    from ...views import ViewOptions

    fused = inst.called_computations[0]
    title = f"{inst.name} · {inst.attributes.get('kind', 'fusion')} fusion · {fused.name}"
    try:
        picture = module_picture(side.module, options=ViewOptions(computation=fused.name, budget=budget),
                                 marks=marks, title=title, timeout=timeout, info=info)
    except HlovizError:
        return None
    if picture.svg is None:
        return None
    return ViewSpec(key=f"{side.key}:{inst.name}", title=inst.name, columns=[(side_index, picture.views[0][1])],
                    svg=picture.svg.decode("utf-8"), parent=parent, opens=f"i:{side.key}:{inst.name}")


def fusion_kernels(side: Side) -> dict[str, Instruction]:
    """The fusion kernels of ``side`` worth a picture of their own (two instructions or more),
    by name."""
    out: dict[str, Instruction] = {}
    for k in side.kernels.kernels if side.kernels is not None else ():
        if k.fused_computation is None or k.instructions < 2:
            continue
        comp = side.module.get_computation(k.computation)
        inst = comp.get(k.name) if comp is not None else None
        if inst is not None:
            out[k.name] = inst
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
