"""The least number of crossings any top-down drawing with the same ranks could have, beside the
crossings a laid-out SVG has (not a speed benchmark: a check of the crossing figures of
``overview_bench.py`` against what is possible at all).

Graphviz's ``dot`` puts every node on a rank and orders each rank to cut crossings, by
heuristics. Where a picture is over issue 33's goal (0.1 crossings an arrow), this says whether
any order could have met it. For every gap between two neighbouring ranks of the drawing (ranks:
node centres at one height, within one composed part) that has a crossing, it takes the arrows
through that gap — an arrow spanning several ranks enters a gap at a free point of its own, as
dot's virtual nodes do — and counts the crossings of the best order of both ranks, by trying
every order (clusters and the other gaps ignored: each gap is ordered on its own). The sum over
the gaps is a lower bound for the picture's crossings in any order of its ranks; where the
drawing has that many, no ordering heuristic can do better there.

Run: ``python benchmarks/crossing_floor.py PICTURE.svg``. Figures: benchmarks/results/crossing_floor.txt.
"""

from __future__ import annotations

import bisect
import itertools
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from picture_bench import _cross, arrows, crossings, shifts

_NODE = re.compile(r'<g id="node\d+" class="node">\s*<title>([^<]*)</title>(.*?)</g>', re.DOTALL)
_SHAPE = re.compile(r'<(?:polygon|path|ellipse)[^>]*?(?:points|d)="([^"]+)"')
_NUM = re.compile(r"-?\d+(?:\.\d+)?")
#: the most orders of one gap's two ranks tried (8! × 7!); a larger gap is reported, not counted
_MOST = 40320 * 5040


def ranks(svg: str) -> dict[str, tuple[int, float]]:
    """Each node's (part, centre height), from its shape in the SVG."""
    starts, moves = shifts(svg)
    out: dict[str, tuple[int, float]] = {}
    for m in _NODE.finditer(svg):
        shape = _SHAPE.search(m.group(2))
        if shape is None:
            continue
        ys = [float(v) for v in _NUM.findall(shape.group(1))][1::2]
        part = bisect.bisect_right(starts, m.start()) - 1
        out[m.group(1).strip()] = (part, round((min(ys) + max(ys)) / 2 + moves[part][1], 1))
    return out


def gaps(svg: str) -> dict[tuple[int, int], list[tuple[str, str]]]:
    """Each gap between neighbouring ranks of a part → the arrows through it, as (upper, lower)
    items: a node's id, or a free point ``~k@level`` of an arrow that does not end there."""
    at = ranks(svg)
    levels: dict[int, list[float]] = {}
    for part, y in at.values():
        levels.setdefault(part, [])
        if y not in levels[part]:
            levels[part].append(y)
    for ys in levels.values():
        ys.sort()
    out: dict[tuple[int, int], list[tuple[str, str]]] = {}
    for k, (ends, _line) in enumerate(arrows(svg)):
        pair = sorted(ends)
        if len(pair) != 2 or pair[0] not in at or pair[1] not in at or at[pair[0]][0] != at[pair[1]][0]:
            continue
        part = at[pair[0]][0]
        top, bottom = sorted(pair, key=lambda n: at[n][1])
        i, j = levels[part].index(at[top][1]), levels[part].index(at[bottom][1])
        for g in range(i, j):
            upper = top if g == i else f"~{k}@{g}"
            lower = bottom if g + 1 == j else f"~{k}@{g + 1}"
            out.setdefault((part, g), []).append((upper, lower))
    return out


def _crossings(edges: list[tuple[str, str]], upper: dict[str, int], lower: dict[str, int]) -> int:
    return sum(
        1
        for (a, b), (c, d) in itertools.combinations(edges, 2)
        if a != c and b != d and (upper[a] - upper[c]) * (lower[b] - lower[d]) < 0
    )


def least(edges: list[tuple[str, str]]) -> int | None:
    """The fewest crossings of ``edges`` over every order of their two ranks (None: too many)."""
    edges = [
        (a, b) for a, b in edges if not (a.startswith("~") and b.startswith("~"))
    ]  # a through-arrow crosses nothing at a rank's end
    tops = sorted({a for a, _ in edges})
    bottoms = sorted({b for _, b in edges})
    orders = 1
    for n in (len(tops), len(bottoms)):
        for f in range(2, n + 1):
            orders *= f
    if orders > _MOST:
        return None
    best = None
    for up in itertools.permutations(tops):
        u = {x: i for i, x in enumerate(up)}
        for down in itertools.permutations(bottoms):
            n = _crossings(edges, u, {x: i for i, x in enumerate(down)})
            if best is None or n < best:
                best = n
                if n == 0:
                    return 0
    return best


def drawn_per_gap(svg: str) -> dict[tuple[int, int], int]:
    """The drawn crossings of each gap: each crossing point of two arrows (as
    ``picture_bench.crossings`` counts them) filed under the gap whose ranks bracket its height."""
    at = ranks(svg)
    levels: dict[int, list[float]] = {}
    for part, y in at.values():
        levels.setdefault(part, []).append(y)
    for part in levels:
        levels[part] = sorted(set(levels[part]))
    drawn = arrows(svg)
    segs = []
    for e, (ends, line) in enumerate(drawn):
        part = next((at[n][0] for n in ends if n in at), 0)
        segs.extend((e, part, p, q) for p, q in itertools.pairwise(line))
    out: dict[tuple[int, int], int] = {}
    for (e1, part, p, q), (e2, _part2, r, s) in itertools.combinations(segs, 2):
        if e1 == e2 or drawn[e1][0] & drawn[e2][0] or not _cross(p, q, r, s):
            continue
        y = _meet(p, q, r, s)
        g = max(0, bisect.bisect_right(levels.get(part, [0.0]), y) - 1)
        out[(part, g)] = out.get((part, g), 0) + 1
    return out


def _meet(p, q, r, s) -> float:
    """The height where segments p–q and r–s meet (they do: ``_cross``)."""
    d = (q[0] - p[0]) * (s[1] - r[1]) - (q[1] - p[1]) * (s[0] - r[0])
    t = ((r[0] - p[0]) * (s[1] - r[1]) - (r[1] - p[1]) * (s[0] - r[0])) / d
    return p[1] + t * (q[1] - p[1])


def main() -> None:
    svg = Path(sys.argv[1]).read_text()
    drawn, count = crossings(svg)
    through = gaps(svg)
    total, unknown = 0, 0
    for (part, g), now in sorted(drawn_per_gap(svg).items()):
        floor = least(through.get((part, g), []))
        if floor is None:
            unknown += 1
            print(f"  part {part}, gap {g}: {now} crossing(s) drawn; too many orders to try")
            continue
        total += floor
        print(
            f"  part {part}, gap {g}: {now} crossing(s) drawn, at least {floor} in any order "
            f"({len(through.get((part, g), []))} arrows through it)"
        )
    print(
        f"{Path(sys.argv[1]).name}: {drawn} crossings of {count} arrows ({drawn / max(count, 1):.3f} an arrow); "
        f"at least {total} in any order of its ranks ({total / max(count, 1):.3f})"
        + (f"; {unknown} gap(s) not counted" if unknown else "")
    )


if __name__ == "__main__":
    main()
