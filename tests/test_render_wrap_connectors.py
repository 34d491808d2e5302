"""Arrows between the parts of a wrapped picture end at connectors next to the box they belong
to (render/layout/wrap.py), and arrows between clusters dot puts side by side are stubs
(render/cut/arrows.py), measured on the SVG's own geometry.

A shared connector per far box, put wherever dot had room, drew the 12-layer JAX GPT step
(samples/captures/jax_gpt_step12) with arrows up to 17,000 pt long to its connectors and 4.07
crossings per arrow. Everything here is read from the SVG with regular expressions written in
this file: connectors by their tooltips (``continued from part N`` / ``continues in part N``),
arrows by their ``<title>a->b</title>`` and path, each part's shift by its
``<g class="part" transform="translate(dx dy)">``. Nothing of hloviz's measures the picture.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from pathlib import Path

import pytest

from hloviz.cli import main
from hloviz.render.scene import Scene

ROOT = Path(__file__).resolve().parent.parent
GPT12 = ROOT / "samples" / "captures" / "jax_gpt_step12"

#: The longest an arrow to or from a connector may be: a few rows of boxes. Before the
#: connectors went next to their boxes the 12-layer GPT step's were up to 17,214 pt.
SHORT = 300.0

_PART = re.compile(r'<g class="part" transform="translate\(([-\d.]+) ([-\d.]+)\)">')
_EDGE = re.compile(r'<g id="edge\d+" class="edge">\s*<title>(.*?)</title>(.*?)</g>', re.DOTALL)
_PATH = re.compile(r'<path [^>]*?d="([^"]+)"')
_NUM = re.compile(r"-?\d+(?:\.\d+)?")
_CONNECTOR = re.compile(r'<title>(n\d+)</title>\s*<g id="a_node\d+"><a xlink:title="(continued from|continues in) '
                        r'part (\d+)"')


def arrows(svg: str) -> list[tuple[tuple[str, str], list[tuple[float, float]]]]:
    """Every drawn arrow: its ends' node ids and the points of its path, in the picture's
    coordinates (a composed part's shift added)."""
    starts = [0] + [m.start() for m in _PART.finditer(svg)]
    moves = [(0.0, 0.0)] + [(float(m.group(1)), float(m.group(2))) for m in _PART.finditer(svg)]
    out = []
    for m in _EDGE.finditer(svg):
        path = _PATH.search(m.group(2))
        if path is None:
            continue
        dx, dy = moves[bisect.bisect_right(starts, m.start()) - 1]
        nums = [float(x) for x in _NUM.findall(path.group(1))]
        points = [(x + dx, y + dy) for x, y in zip(nums[0::2], nums[1::2], strict=False)]
        a, _, b = m.group(1).replace("&#45;&gt;", "->").partition("->")
        out.append(((a.strip(), b.strip()), points))
    return out


def _crosses(p, q, r, s) -> bool:
    def side(a, b, c):
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    d1, d2, d3, d4 = side(r, s, p), side(r, s, q), side(p, q, r), side(p, q, s)
    return d1 * d2 < 0 and d3 * d4 < 0


def crossings_with(svg: str, mine: set[int], drawn) -> int:
    """How many times the arrows numbered ``mine`` cross other arrows (the path's control
    points joined by straight lines; arrows sharing an end are not counted)."""
    count = 0
    for i in mine:
        ends_i, line_i = drawn[i]
        for j, (ends_j, line_j) in enumerate(drawn):
            if j == i or set(ends_i) & set(ends_j):
                continue
            for p, q in itertools.pairwise(line_i):
                for r, s in itertools.pairwise(line_j):
                    if _crosses(p, q, r, s):
                        count += 1
    return count


def all_crossings(drawn) -> int:
    """Crossing points between drawn arrows (their control polygons), arrows sharing an end not
    counted; pairs whose boxes do not meet are skipped."""
    segs = []
    for i, (ends, line) in enumerate(drawn):
        for p, q in itertools.pairwise(line):
            segs.append((i, set(ends), p, q, min(p[0], q[0]), max(p[0], q[0]), min(p[1], q[1]), max(p[1], q[1])))
    segs.sort(key=lambda s: s[4])
    count = 0
    for a, (i, ends_i, p, q, _x0, x1, y0, y1) in enumerate(segs):
        for j, ends_j, r, s, u0, _u1, v0, v1 in segs[a + 1:]:
            if u0 > x1:
                break
            if j == i or ends_i & ends_j or v0 > y1 or v1 < y0:
                continue
            if _crosses(p, q, r, s):
                count += 1
    return count


@pytest.fixture(scope="module")
def gpt12_svg(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("gpt12") / "step.svg"
    main(["render", str(GPT12), "--stage", "both", "--budget", "300", "-o", str(out)])  # the detailed picture
    return out.read_text()


@pytest.fixture(scope="module")
def gpt12_wrapped(tmp_path_factory) -> str:
    """Cut into 3 parts a column: since an opened repeat's copies stack (render/cut/assemble.py), the
    default picture is near a page's shape and ``--wrap auto`` leaves it whole."""
    out = tmp_path_factory.mktemp("gpt12") / "step3.svg"
    main(["render", str(GPT12), "--stage", "both", "--budget", "300", "--wrap", "3", "-o", str(out)])
    return out.read_text()


@pytest.mark.requires_dot
def test_the_12_layer_gpt_steps_connectors_sit_next_to_their_boxes(gpt12_wrapped):
    svg = gpt12_wrapped
    connectors = {m.group(1): (m.group(2), int(m.group(3))) for m in _CONNECTOR.finditer(svg)}
    parts = {int(n) for n in re.findall(r">part \d+ of (\d+)<", svg)}
    assert connectors and parts, "the 12-layer step's wrapped picture has connectors"
    assert all(1 <= k <= max(parts) for _, k in connectors.values()), "each connector names a part there is"
    drawn = arrows(svg)
    touching = [i for i, ((a, b), _) in enumerate(drawn) if a in connectors or b in connectors]
    assert touching
    lengths = sorted(math.dist(drawn[i][1][0], drawn[i][1][-1]) for i in touching)
    assert lengths[-1] <= SHORT, f"arrows to connectors up to {lengths[-1]:.0f} pt long"
    # and, short, they cross (almost) nothing: at most one crossing per ten connector arrows
    assert crossings_with(svg, set(touching), drawn) <= len(touching) / 10


@pytest.mark.requires_dot
def test_each_box_entered_from_another_part_has_its_own_connector(gpt12_wrapped):
    """One ``▴`` connector per box entered (never one shared by boxes far apart): every entering
    connector has exactly one arrow, to one box."""
    svg = gpt12_wrapped
    entering = {m.group(1) for m in _CONNECTOR.finditer(svg) if m.group(2) == "continued from"}
    assert entering
    out_of: dict[str, set[str]] = {k: set() for k in entering}
    for (a, b), _ in arrows(svg):
        if a in out_of:
            out_of[a].add(b)
    assert all(len(users) == 1 for users in out_of.values()), {k: v for k, v in out_of.items() if len(v) != 1}


@pytest.mark.requires_dot
def test_the_12_layer_gpt_steps_picture_has_at_most_a_quarter_crossing_per_arrow(gpt12_svg):
    """Issue 20's bar, on the picture's own geometry: the arrows from each forward layer to its
    backward ops ran across the picture (0.92 crossings per arrow unwrapped, 4.07 wrapped)."""
    drawn = arrows(gpt12_svg)
    assert len(drawn) > 300
    assert all_crossings(drawn) <= 0.25 * len(drawn)


def _ladder(rungs: int) -> Scene:
    """Two blocks side by side, as a training step's forward and backward are once the backward
    floats up: ``f0 → f1 → …`` in one cluster, ``b0 → b1 → …`` in a sibling, and a rung
    ``f{i} → b{i}`` between them (one row apart: not long by rows). Enough nodes that long
    arrows are stubbed at all (more than 80)."""
    from hloviz.render.scene import Cluster, Edge, Node, Row, Scene

    scene = Scene()
    fwd, bwd = Cluster("fwd", [Row("forward")]), Cluster("bwd", [Row("backward")])
    scene.clusters = [fwd, bwd]
    for i in range(rungs):
        scene.add_node(f"f{i}", Node([Row(f"f{i}", bold=True)]), fwd)
        scene.add_node(f"b{i}", Node([Row(f"b{i}", bold=True)]), bwd)
        if i:
            scene.edges += [Edge(f"f{i - 1}", f"f{i}"), Edge(f"b{i - 1}", f"b{i}")]
        scene.edges.append(Edge(f"f{i}", f"b{i}"))
    return scene


def test_an_arrow_across_to_a_block_beside_its_own_is_a_stub():
    from hloviz.render.cut.arrows import shorten

    scene = _ladder(50)
    stubs = shorten(scene)
    rungs = {(f"f{i}", f"b{i}") for i in range(50)}
    across = {(s.src, s.dst) for s in stubs if s.why == "across"}
    # every rung but the one that keeps the two blocks joined (a picture never falls apart)
    assert len(across) == 49 and across <= rungs
    kept = [(e.src, e.dst) for e in scene.edges if (e.src, e.dst) in rungs]
    assert len(kept) == 1
    assert all((f"f{i - 1}", f"f{i}") in {(e.src, e.dst) for e in scene.edges} for i in range(1, 50))
    for src, dst in across:  # each end names the other
        assert f"→ {dst}" in [r.text for r in scene.nodes[src].rows]
        assert f"← {src}" in [r.text for r in scene.nodes[dst].rows]


def test_blocks_one_below_the_other_keep_their_arrows():
    """The same blocks stacked (the backward's first box below the forward's last): no row
    overlaps, no rung is across, and rungs of at most 6 rows stay arrows."""
    from hloviz.render.cut.arrows import shorten
    from hloviz.render.scene import Edge

    scene = _ladder(50)
    scene.edges = [e for e in scene.edges if e.src[0] == e.dst[0]]
    scene.edges += [Edge("f49", "b0"), Edge("f48", "b2")]
    stubs = shorten(scene)
    assert not [s for s in stubs if s.why == "across"]
    assert ("f48", "b2") in {(e.src, e.dst) for e in scene.edges}  # 3 rows: a short arrow
