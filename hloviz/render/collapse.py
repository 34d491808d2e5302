"""Keeping a picture within its node budget, coarsest last, and saying what was collapsed.

:func:`fit` applies these steps, each only while the picture is still over budget:

1. fusions become single nodes, largest first ("fusion kLoop · 1000 ops");
2. while/conditional/call bodies fold into their caller's node;
3. repeated structure collapses: a run of nodes that repeats (the same layer 48 times) keeps
   its first copy and draws the other 47 as one node; a run of identical nodes becomes one;
4. consecutive nodes are grouped into runs ("120 instructions: fusion ×40, copy ×12 …").

Each step adds a note to the picture. Everything here is linear (or a small constant times
linear) in the number of units, so a 300k-instruction module still draws in seconds.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from . import labels
from .model import Place, Unit, ViewGraph
from .scene import Row

__all__ = ["collapse_fusion", "fit", "find_repeats"]


def fit(g: ViewGraph, budget: int, *, coarse: bool = False, notes: list[str]) -> list[str]:
    """Collapse ``g`` until it has at most ``budget`` nodes; returns the steps taken."""
    levels: list[str] = []
    budget = max(budget, 1)
    count = g.alive_count()
    if count <= budget and not coarse:
        return levels
    n, total, count = _fusions(g, budget, count, coarse)
    if n:
        levels.append("fusions")
        notes.append(f"{n} of {total} fusions drawn as single nodes (largest first) to stay within "
                     f"{budget} nodes")
    if count > budget or coarse:
        n, count = _bodies(g, budget, count, coarse)
        if n:
            levels.append("bodies")
            notes.append(f"{n} while/conditional/call bodies folded into their callers' nodes")
    if count > budget:
        n, example, count = _repeats(g, budget, count)
        if n:
            levels.append("repeats")
            notes.append(f"{n} repeated runs collapsed, e.g. {example}")
    if count > budget:
        n, size, count = _segments(g, budget, count)
        if n:
            levels.append("segments")
            notes.append(f"still over {budget} nodes: runs of up to {size} consecutive nodes grouped together "
                         f"({n} groups)")
    return levels


def _descendants(g: ViewGraph) -> dict[str, list[Place]]:
    children: dict[str, list[Place]] = defaultdict(list)
    for p in g.places.values():
        if p.parent is not None:
            children[p.parent.key].append(p)
    return children


def _units_by_scope(g: ViewGraph) -> dict[str | None, list[Unit]]:
    out: dict[str | None, list[Unit]] = defaultdict(list)
    for u in g.units:
        if u.alive:
            out[u.scope].append(u)
    return out


def _subtree(place: Place, children: dict[str, list[Place]]) -> list[Place]:
    out, stack = [], [place]
    while stack:
        p = stack.pop()
        out.append(p)
        stack.extend(children.get(p.key, ()))
    return out


def _fusions(g: ViewGraph, budget: int, count: int, coarse: bool) -> tuple[int, int, int]:
    children = _descendants(g)
    by_scope = _units_by_scope(g)
    outer = [p for p in g.places.values()
             if p.role == "fusion" and p.owner is not None and p.parent is not None and p.parent.role != "fusion"
             and p.parent.key not in g.collapsed_places]
    sized = []
    for p in outer:
        tree = _subtree(p, children)
        units = [u for t in tree for u in by_scope.get(t.key, ())]
        if units:
            sized.append((len(units), p, tree, units))
    sized.sort(key=lambda s: (-s[0], s[1].order))
    done = 0
    for size, place, tree, units in sized:
        if count <= budget and not coarse:
            break
        collapse_fusion(g, place, tree, units)
        count -= size - 1
        done += 1
    return done, len(sized), count


def collapse_fusion(g: ViewGraph, place: Place, tree: list[Place], units: list[Unit]) -> Unit:
    """Draw fusion ``place`` (and the places ``tree`` below it) as one node holding ``units``."""
    owner = place.owner
    assert owner is not None and place.parent is not None
    members = [owner] + [m for u in units for m in u.members]
    parent = place.parent
    pos = g.position(owner)
    unit = g.new_unit("fusion", parent, pos, members)
    unit.root = place.key in g.root_places
    unit.rows = labels.fusion_rows(owner, root=unit.root)
    g.unit_of[id(owner)] = unit.index
    g.merge(units, unit)
    for t in tree:
        g.collapsed_places.add(t.key)
    return unit


def _bodies(g: ViewGraph, budget: int, count: int, coarse: bool) -> tuple[int, int]:
    children = _descendants(g)
    by_scope = _units_by_scope(g)
    cands = []
    for p in g.places.values():
        if p.role in ("", "fusion") or p.owner is None or p.key in g.collapsed_places:
            continue
        owner_index = g.unit_of.get(id(p.owner))
        if owner_index is None or not g.units[g.find(owner_index)].alive:
            continue
        tree = _subtree(p, children)
        units = [u for t in tree for u in by_scope.get(t.key, ()) if u.alive]
        cands.append((len(units), p, tree, units))
    cands.sort(key=lambda s: (-s[0], s[1].order))
    done = 0
    for size, place, tree, units in cands:
        if count <= budget and not coarse:
            break
        owner = g.units[g.find(g.unit_of[id(place.owner)])]
        if owner.scope in {t.key for t in tree}:
            continue
        n = sum(len(t.computation.instructions) for t in tree)
        owner.extra_rows.append(Row(f"{place.role}: {place.computation.name} ({n} instructions)", small=True))
        owner.members.extend(m for u in units for m in u.members)
        g.merge([u for u in units if u is not owner], owner)
        for t in tree:
            g.collapsed_places.add(t.key)
        count -= len(units)
        done += 1
    return done, count


# --- repeated structure ----------------------------------------------------------------------


def _token(g: ViewGraph, u: Unit, signatures: dict[str, int]) -> object:
    rep = u.members[0]
    op = rep.opcode
    if op == "fusion":
        sig = []
        for c in rep.called_computations:
            if c.name not in signatures:
                signatures[c.name] = hash(tuple(i.opcode for i in c.instructions))
            sig.append(signatures[c.name])
        return ("fusion", rep.attributes.get("kind"), rep.shape, tuple(sig))
    if u.kind == "chain":
        return ("chain", op, rep.shape)
    if u.kind in ("repeat", "segment"):
        return ("unique", u.index)
    if op in ("compare", "custom-call"):
        return (op, rep.shape, labels.header(rep), len(u.extra_rows))
    return (op, rep.shape, len(u.extra_rows))


def find_repeats(tokens: list[object], *, candidates: int = 12) -> list[tuple[int, int, int]]:
    """Non-overlapping tandem repeats ``(start, period, copies)`` in ``tokens``, biggest saving first.

    A repeat of period ``p`` with ``k`` copies covers ``tokens[start : start + p*k]``, each copy
    equal to the first. Candidate periods are the most common distances between equal tokens, so
    the search costs ``O(len(tokens) × candidates)``.
    """
    n = len(tokens)
    ids: dict[object, int] = {}
    seq = [ids.setdefault(t, len(ids)) for t in tokens]
    last: dict[int, int] = {}
    gaps: Counter[int] = Counter()
    for i, t in enumerate(seq):
        if t in last:
            gaps[i - last[t]] += 1
        last[t] = i
    runs = []
    for p, _ in gaps.most_common(candidates):
        i = 0
        while i + p < n:
            if seq[i] != seq[i + p]:
                i += 1
                continue
            j = i
            while j + p < n and seq[j] == seq[j + p]:
                j += 1
            copies = (j - i + p) // p
            saving = (copies - 1) * p if p > 1 else copies - 1
            if copies >= 2 and saving >= 2:
                runs.append((saving, i, p, copies))
            i = j + 1
    runs.sort(key=lambda r: (-r[0], r[1], r[2]))
    taken = [False] * n
    out = []
    for saving, start, p, copies in runs:
        end = start + p * copies
        if any(taken[start:end]):
            continue
        for k in range(start, end):
            taken[k] = True
        out.append((start, p, copies))
    out.sort()
    return out


def _repeats(g: ViewGraph, budget: int, count: int) -> tuple[int, str, int]:
    signatures: dict[str, int] = {}
    done, example = 0, ""
    for scope, seq in sorted(_units_by_scope(g).items(), key=lambda kv: kv[0] or ""):
        if count <= budget or len(seq) < 3:
            continue
        seq.sort(key=lambda u: u.pos)
        found = find_repeats([_token(g, u, signatures) for u in seq])
        found.sort(key=lambda r: -((r[2] - 1) * r[1]))
        for start, p, copies in found:
            if count <= budget:
                break
            block = seq[start:start + p * copies]
            rest = block if p == 1 else block[p:]
            first, last = rest[0].members[0], rest[-1].members[-1]
            instructions = [m for u in rest for m in u.members]
            unit = g.new_unit("repeat", g.place_by_key.get(scope) if scope else None, 0, instructions)
            unit.scope, unit.pos = scope, rest[0].pos
            if p == 1:
                text = f"{labels.header(first)} ×{copies}"
                what = f"{copies} × {labels.header(first)} ({first.name} … {last.name})"
            else:
                text = f"{copies - 1} more copies of the {p} nodes above"
                what = f"a run of {p} nodes repeated {copies} times ({first.name} … {last.name})"
            unit.rows = [Row(text, bold=True), Row(f"{first.name} … {last.name}"),
                         Row(f"{len(instructions)} instructions: "
                             f"{labels.histogram_text(m.opcode for m in instructions)}", small=True)]
            unit.root = any(u.root for u in rest)
            g.merge(rest, unit)
            count -= len(rest) - 1
            done += 1
            example = example or what
    return done, example, count


#: A picture that has to group runs of instructions shows at most this many groups: past that,
#: a timeline is no longer an overview.
MAX_GROUPS = 60


def _segments(g: ViewGraph, budget: int, count: int) -> tuple[int, int, int]:
    """Group consecutive units (text order, which is execution order in a scheduled module) into
    runs; consecutive runs are kept one below the other, so the picture reads as a timeline even
    where the runs do not depend on each other (an optimizer's per-parameter updates)."""
    target = max(1, int(min(budget, MAX_GROUPS) * 0.9))
    size = max(2, math.ceil(count / target))
    done = 0
    for scope, seq in sorted(_units_by_scope(g).items(), key=lambda kv: kv[0] or ""):
        seq.sort(key=lambda u: u.pos)
        previous: Unit | None = None
        for start in range(0, len(seq), size):
            chunk = seq[start:start + size]
            if len(chunk) < 2:
                unit = chunk[0]
            else:
                instructions = [m for u in chunk for m in u.members]
                first, last = chunk[0].members[0], chunk[-1].members[-1]
                unit = g.new_unit("segment", None, 0, instructions)
                unit.scope, unit.pos = scope, chunk[0].pos
                unit.rows = [Row(f"{len(instructions)} instructions", bold=True), Row(f"{first.name} … {last.name}"),
                             Row(labels.histogram_text(m.opcode for m in instructions), small=True)]
                unit.root = any(u.root for u in chunk)
                g.merge(chunk, unit)
                count -= len(chunk) - 1
                done += 1
            if previous is not None:
                g.order_edges.append((previous.index, unit.index))
            previous = unit
    return done, size, count
