"""The overview ranked in program order (the places :mod:`hloviz.render.cut.order` gives each unit).

An arrow against that order (a gradient flowing back to a layer drawn above) no longer ranks
the picture (``constraint=false``: drawn, but dot does not rank by it) where it joins
neighbours in program order; reaching further back it becomes ``←``/``→`` rows at its ends
(:mod:`hloviz.render.cut.arrows`' stubs). A unit fed only by parameters (an optimizer's bias
correction, a weight's reshape) is held under the unit before it in program order by an
invisible arrow instead of floating up to the first row.

A training step (units of the backward pass or of the optimizer of their own) is drawn as one
file: every unit under the one before it in program order (invisible arrows; boxes nothing
links, one after another in one frame, side by side in one row), forward arrows
reaching more than :data:`REACH` places down written as rows too (the ROOT's inputs as one
row on the ROOT alone). Its
layers, loss, backward blocks and optimizer then read top to bottom; measured on the saved
steps (benchmarks/overview_bench.py), the TF CNN step went from 2,901 × 1,458 pt and 0.21
crossings an arrow to about 1,800 × 2,470 and none. An inference model keeps dot's ranks:
its branches (Inception's towers) stand side by side.
"""

from __future__ import annotations

from itertools import pairwise

from ...analysis.opnames import PHASES
from ..scene import Edge, Scene
from .arrows import Stub, write_rows
from .order import BESIDE

__all__ = ["FAR_READS", "RANKSEP", "REACH", "program_order"]

#: In a training step's single file, a forward arrow reaching further down the order than this
#: many places becomes ←/→ rows (it ran beside every box between, crossing the others).
REACH = 3
#: The space between rows of a training step's single file (inches; 0.3 elsewhere): measured
#: on the Flax step, 2,654 pt tall at 0.3, 2,531 at 0.15; 0.1 gained nothing more.
RANKSEP = "0.15"
#: How many boxes far down (more than :data:`REACH` places) must read one value for those reads
#: to be rows in an inference model's overview (:func:`_far_reads`).
FAR_READS = 3


def _far_reads(scene: Scene, place: dict[str, int], boxes: frozenset[str]) -> set[int]:
    """The arrows (``id``) from a unit whose value several closed boxes (``boxes``: a block, a
    layer) far down the order read — more than :data:`REACH` places, :data:`FAR_READS` of them:
    XLA's fusion duplicates a residual sum into every later block that adds to it
    (InceptionResNetV2's optimized column: ``mixed_6a``'s output read by the kernels of all
    twenty ``block17`` layers), and those arrows crossed every block between (0.20 crossings an
    arrow). They are rows in an inference model's overview too. One or two long arrows stay
    (a tower of an Inception module beside the others; a skip connection running beside the
    boxes it skips: DenseNet-like ``concatenate`` blocks), and so does an arrow to anything but a closed
    box (a loop's results, read where the loop ends; a loop body's calls)."""
    far: dict[str, list[int]] = {}
    for e in scene.edges:
        if e.invisible or not e.constraint or e.dashed or e.dst not in boxes:
            continue
        if e.src in place and e.dst in place and place[e.dst] - place[e.src] > REACH:
            far.setdefault(e.src, []).append(id(e))
    return {i for arrows in far.values() if len(arrows) >= FAR_READS for i in arrows}


def program_order(scene: Scene, keys: dict[str, tuple[int, float]], loose: frozenset[str], single: bool,
                  boxes: frozenset[str] = frozenset()) -> list[Stub]:
    """Rank ``scene`` by program order: an arrow against it between neighbours in that order
    stops ranking (drawn, dot does not rank by it); one reaching further back is not drawn but
    written as rows at its ends (``← conv2``, ``→ conv1``: a gradient flowing back past the
    layers between, which as an arrow crossed every one of them); units fed by parameters alone
    hang under the unit before them; ``single``: a training step (:func:`trains`), every unit
    under the one before it; ``boxes``: the closed blocks and layers, whose far reads of one value are
    rows in any overview (:func:`_far_reads`). Returns the arrows written as rows."""
    ordered = sorted((k for k in keys if k in scene.nodes), key=keys.__getitem__)
    place = {k: i for i, k in enumerate(ordered)}
    fanned = _far_reads(scene, place, boxes)
    preds: dict[str, list[str]] = {}
    stubs: list[Stub] = []
    gone: set[int] = set()
    for e in scene.edges:
        if e.invisible or not e.constraint or e.dashed:
            continue
        ks, kd = keys.get(e.src), keys.get(e.dst)
        if ks is not None and kd is not None and ks > kd:
            if place[e.src] - place[e.dst] > 1:
                stubs.append(Stub(e.src, e.dst, e.label, "back"))
                gone.add(id(e))
            e.constraint = False
            continue
        if (single or id(e) in fanned) and ks is not None and kd is not None and place[e.dst] - place[e.src] > REACH:
            stubs.append(Stub(e.src, e.dst, e.label, "long"))
            gone.add(id(e))
            continue
        preds.setdefault(e.dst, []).append(e.src)
    if single:
        scene.layout["ranksep"] = RANKSEP
    if gone:
        scene.edges[:] = [e for e in scene.edges if id(e) not in gone]
        write_rows(scene, stubs, quiet=frozenset(k for k, v in keys.items() if v[0] == len(PHASES)))
    # a training step's file holds no row of parameters (nor of their reshapes): each sits beside
    # the unit before its user
    chain = [k for k in ordered if keys[k][1] % 1 != BESIDE and k not in loose] if single else \
        [k for k in ordered if k not in loose]
    if single:
        _file(scene, chain, stubs)
        return stubs
    for prev, key in pairwise(chain):
        if not any(p in keys for p in preds.get(key, ())):
            # every arrow into it comes from a parameter (or none does): it would sit in the top row
            scene.edges.append(Edge(prev, key, invisible=True))
    return stubs


def _file(scene: Scene, chain: list[str], stubs: list[Stub]) -> None:
    """A training step's single file: each unit of ``chain`` (program order) in the row under the
    one before it, but for boxes nothing links (no arrow drawn, none written as ``←``/``→`` rows
    in ``stubs``) next to each other in one frame, which share one row: an EfficientNetB0 step's
    four ``forward · block of 12`` broadcasts and a folded constant stood one under another, 300 pt
    of a column otherwise empty beside them (and the overview over its 2,500 pt, drawn again
    with fewer boxes). A layer whose arrows are rows keeps its own row: the file's order."""
    touched = {k for e in scene.edges if not e.invisible for k in (e.src, e.dst)}
    touched.update(k for stub in stubs for k in (stub.src, stub.dst))
    home = {key: id(c) for c in scene.all_clusters() for key in c.nodes}  # (a row across two frames widens both)
    rows: list[list[str]] = []
    for key in chain:
        last = rows[-1] if rows else []
        if key not in touched and last and not any(k in touched for k in last) and home.get(key) == home.get(last[0]):
            last.append(key)
        else:
            rows.append([key])
    for above, row in pairwise(rows):
        scene.edges.extend(Edge(prev, key, invisible=True) for prev in above for key in row)
