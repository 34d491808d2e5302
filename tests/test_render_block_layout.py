"""``render --layout blocks`` (render/layout/blocklayout.py, render/layout/compose.py): each block of a column
laid out on its own, the column around them with each block as one box, each block's drawing
moved into its box.

Everything here is read from the pictures with regular expressions written in this file: the
blocks, their boxes and the arrows from the DOT text ``--layout whole`` writes (``subgraph
cluster_N {`` nesting, ``nA -> nB`` lines), the geometry from the SVG (each node's and cluster's
first ``path``/``polygon``, each composed part's ``<g class="part" transform="translate(dx dy)">``).
The crossing counter is the wrap tests' (tests/test_render_wrap_connectors.py). Nothing of
hloviz's measures the picture.
"""

from __future__ import annotations

import bisect
import re
from pathlib import Path

import pytest

from hloviz.cli import main
from tests.test_render_wrap_connectors import all_crossings, arrows

ROOT = Path(__file__).resolve().parent.parent
INCEPTION = ROOT / "samples" / "captures" / "inception_v3"

_SUBGRAPH = re.compile(r"^\s*subgraph (cluster_\d+) \{$")
_NODE = re.compile(r"^\s*(n\d+) \[")
_EDGE = re.compile(r"^\s*(n\d+) -> (n\d+)(?: \[(.*)\])?;$")
_PART = re.compile(r'<g class="part" transform="translate\(([-\d.]+) ([-\d.]+)\)">')
_GROUP = re.compile(r'<g id="(?:node|edge|clust)\d+" class="(node|edge|cluster)">\s*<title>([^<]*)</title>')
_SHAPE = re.compile(r'<(?:path|polygon)[^>]*? (?:d|points)="([^"]+)"')
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


class Dot:
    """The whole picture's structure, from its DOT text."""

    def __init__(self, text: str) -> None:
        self.children: dict[str, list[str]] = {"": []}
        self.nodes_in: dict[str, list[str]] = {"": []}  # directly inside
        self.edges: list[tuple[str, str]] = []  # drawn ones
        stack = [""]
        for line in text.splitlines():
            if m := _SUBGRAPH.match(line):
                self.children[stack[-1]].append(m.group(1))
                self.children[m.group(1)] = []
                self.nodes_in[m.group(1)] = []
                stack.append(m.group(1))
            elif line.strip() == "}" and len(stack) > 1:
                stack.pop()
            elif m := _EDGE.match(line):
                if "style=invis" not in (m.group(3) or ""):
                    self.edges.append((m.group(1), m.group(2)))
            elif m := _NODE.match(line):
                self.nodes_in[stack[-1]].append(m.group(1))

    def inside(self, cluster: str) -> list[str]:
        out, todo = [], [cluster]
        while todo:
            c = todo.pop()
            out.extend(self.nodes_in[c])
            todo.extend(self.children[c])
        return out

    def blocks(self) -> list[str]:
        """Each column's blocks: the clusters under those that wrap the whole column one inside
        the other (a cluster whose only cluster is one cluster is no block: its insides are)."""
        out = []
        for column in self.children[""]:
            level = self.children[column]
            while len(level) == 1 and self.children[level[0]]:
                level = self.children[level[0]]
            out.extend(level)
        return out


def boxes(svg: str) -> tuple[dict[str, list[tuple[float, float, float, float]]], dict[str, tuple]]:
    """Each node's box (by DOT id; a list, to see one drawn twice) and each cluster's frame, in
    the picture's coordinates (a composed part's shift added)."""
    starts = [0] + [m.start() for m in _PART.finditer(svg)]
    moves = [(0.0, 0.0)] + [(float(m.group(1)), float(m.group(2))) for m in _PART.finditer(svg)]
    groups = list(_GROUP.finditer(svg))
    nodes: dict[str, list[tuple[float, float, float, float]]] = {}
    clusters: dict[str, tuple[float, float, float, float]] = {}
    for k, m in enumerate(groups):
        if m.group(1) == "edge":
            continue
        end = groups[k + 1].start() if k + 1 < len(groups) else len(svg)
        shape = _SHAPE.search(svg, m.end(), end)
        if shape is None:  # plain text (a wrapped picture's "part 2 of 3" captions)
            continue
        nums = [float(v) for v in _NUM.findall(shape.group(1))]
        dx, dy = moves[bisect.bisect_right(starts, m.start()) - 1]
        xs, ys = [x + dx for x in nums[0::2]], [y + dy for y in nums[1::2]]
        box = (min(xs), min(ys), max(xs), max(ys))
        if m.group(1) == "node":
            nodes.setdefault(m.group(2), []).append(box)
        else:
            clusters[m.group(2)] = box
    return nodes, clusters


def within(inner, outer, slack: float = 0.5) -> bool:
    return (inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack
            and inner[2] <= outer[2] + slack and inner[3] <= outer[3] + slack)


def overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def render(tmp: Path, name: str, *args: str) -> Path:
    out = tmp / name
    # --budget 300: the detailed picture (render's default is the overview, issue 33)
    main(["render", str(INCEPTION), "--budget", "300", "--stage", "both", *args, "-o", str(out)])
    return out


@pytest.fixture(scope="module")
def inception(tmp_path_factory):
    """InceptionV3's pair picture: the DOT, and the SVG laid out block by block (not wrapped:
    the composition is the picture) twice."""
    tmp = tmp_path_factory.mktemp("blocks")
    dot = Dot(render(tmp, "whole.dot", "--layout", "whole").read_text())
    first = render(tmp, "a.svg", "--layout", "blocks", "--wrap", "off").read_bytes()
    second = render(tmp, "b.svg", "--layout", "blocks", "--wrap", "off").read_bytes()
    return dot, first, second


@pytest.mark.requires_dot
def test_the_same_input_gives_the_same_bytes(inception):
    _, first, second = inception
    assert first == second


@pytest.mark.requires_dot
def test_every_box_is_drawn_once_inside_every_frame_around_it(inception):
    dot, first, _ = inception
    nodes, clusters = boxes(first.decode())
    whole = dot.inside("")
    assert len(whole) > 300 and len(dot.blocks()) >= 20, "InceptionV3's picture has many blocks"
    assert all(len(nodes.get(n, [])) == 1 for n in whole), "every box of the whole layout, once"
    for cluster in dot.children:
        if not cluster:
            continue
        frame = clusters[cluster]
        outside = [n for n in dot.inside(cluster) if not within(nodes[n][0], frame)]
        assert not outside, f"{len(outside)} boxes of {cluster} lie outside its frame"


@pytest.mark.requires_dot
def test_no_two_frames_side_by_side_overlap(inception):
    dot, first, _ = inception
    _, clusters = boxes(first.decode())
    for parent, kids in dot.children.items():
        for i, a in enumerate(kids):
            for b in kids[i + 1:]:
                assert not overlap(clusters[a], clusters[b]), f"{a} and {b} (in {parent or 'the picture'}) overlap"


@pytest.mark.requires_dot
def test_connectors_sit_inside_the_block_of_their_box(inception):
    """The boxes that are not the whole layout's are the connectors of arrows crossing a block's
    border: each inside a block's frame."""
    dot, first, _ = inception
    nodes, clusters = boxes(first.decode())
    whole = set(dot.inside(""))
    frames = [clusters[b] for b in dot.blocks()]
    extra = [n for n in nodes if n not in whole]
    assert extra, "arrows crossing a block's border end at connectors"
    assert all(any(within(nodes[n][0], f) for f in frames) for n in extra)


@pytest.mark.requires_dot
def test_every_arrow_between_blocks_is_drawn_once_with_its_real_ends(inception):
    dot, first, _ = inception
    owner = {n: b for b in dot.blocks() for n in dot.inside(b)}
    between = [(a, b) for a, b in dot.edges if owner.get(a) != owner.get(b)]
    assert len(between) >= 30, "InceptionV3's blocks are joined by arrows (43 in its picture)"
    drawn = [ends for ends, _ in arrows(first.decode())]
    crossing = [(a, b) for a, b in drawn if a in owner and b in owner and owner[a] != owner[b]]
    assert sorted(crossing) == sorted((a, b) for a, b in between if a in owner and b in owner)
    titles = set(drawn)
    assert all(e in titles for e in dot.edges), "every arrow of the whole layout is drawn"


@pytest.mark.requires_dot
def test_arrows_cross_at_most_a_quarter_time_each(inception):
    _, first, _ = inception
    drawn = arrows(first.decode())
    assert all_crossings(drawn) <= 0.25 * len(drawn)


@pytest.mark.requires_dot
def test_a_png_is_drawn_from_the_composed_positions(tmp_path):
    # --budget 60 (the last --budget given wins): the whole 300-box column is a 23,700 pt poster
    # whose text a PNG could not show (issue 33, goal 4: refused)
    first = render(tmp_path, "a.png", "--layout", "blocks", "--wrap", "off", "--budget", "60").read_bytes()
    second = render(tmp_path, "b.png", "--layout", "blocks", "--wrap", "off", "--budget", "60").read_bytes()
    assert first[:8] == b"\x89PNG\r\n\x1a\n" and first == second


def test_an_unknown_layout_is_refused_with_the_choices(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["render", str(INCEPTION), "--layout", "tiles", "-o", str(tmp_path / "x.svg")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--layout must be auto, whole, blocks, not 'tiles'" in err and "Traceback" not in err
    assert not (tmp_path / "x.svg").exists()


@pytest.mark.requires_dot
def test_auto_lays_out_the_default_picture_whole(tmp_path):
    """At the default budget (300 boxes a column) no column is large enough for ``auto`` to lay
    it out by blocks: the picture is ``--layout whole``'s, byte for byte."""
    auto = render(tmp_path, "auto.svg").read_bytes()
    assert auto == render(tmp_path, "whole.svg", "--layout", "whole").read_bytes()
    assert auto != render(tmp_path, "blocks.svg", "--layout", "blocks").read_bytes()


@pytest.mark.requires_dot
def test_a_wrapped_picture_laid_out_by_blocks_keeps_every_box_once(tmp_path):
    dot = Dot(render(tmp_path, "whole.dot", "--layout", "whole").read_text())
    svg = render(tmp_path, "wrapped.svg", "--layout", "blocks", "--wrap", "3").read_text()
    assert re.search(r">part 3 of 3<", svg)
    # each part laid out by blocks too: its blocks' drawings are composed parts of their own
    # (3 parts of 2 columns, laid out whole, would be 6)
    assert len(_PART.findall(svg)) > 30
    nodes, _ = boxes(svg)
    assert all(len(nodes.get(n, [])) == 1 for n in dot.inside(""))


def _scene(blocks: int, boxes_each: int):
    """A column of ``blocks`` clusters of ``boxes_each`` boxes, inside one model cluster."""
    from hloviz.render.scene import Cluster, Node, Row, Scene

    scene = Scene()
    model = Cluster("model", [Row("model")])
    scene.clusters.append(model)
    for b in range(blocks):
        block = Cluster(f"block {b}", [Row(f"block_{b}")])
        model.clusters.append(block)
        for k in range(boxes_each):
            scene.add_node(f"{b}/{k}", Node([Row(f"op_{b}_{k}")]), block)
    return scene


def test_auto_picks_blocks_for_a_column_of_800_boxes_in_8_blocks():
    from hloviz.render.layout.blocklayout import pays

    assert pays(_scene(8, 100))  # 800 boxes in 8 blocks under the model's cluster
    assert not pays(_scene(8, 99))  # 792 boxes
    assert not pays(_scene(7, 120))  # 840 boxes in 7 blocks


def test_an_arrow_between_blocks_ends_at_named_connectors_inside_both():
    from hloviz.render.layout.blocklayout import split_column
    from hloviz.render.scene import Edge

    scene = _scene(3, 2)
    scene.edges += [Edge("0/1", "1/0"), Edge("0/1", "2/0"), Edge("0/1", "2/1"), Edge("1/0", "1/1")]
    split = split_column(scene)
    assert split is not None and len(split.blocks) == 3
    assert [(e.src, e.dst) for e in split.parent.edges] == [(split.boxes[0], split.boxes[1]),
                                                            (split.boxes[0], split.boxes[2]),
                                                            (split.boxes[0], split.boxes[2])]
    first = [n.rows[0].text for k, n in split.blocks[0].nodes.items() if k not in scene.nodes]
    assert first == ["▾ block_1: op_1_0, block_2: op_2_0 +1"]
    assert [e.label for e in split.blocks[0].edges] == ["×3"]
    entered = sorted(n.rows[0].text for k, n in split.blocks[2].nodes.items() if k not in scene.nodes)
    assert entered == ["▴ block_0: op_0_1", "▴ block_0: op_0_1"]  # one over each box it enters
    assert [(e.src, e.dst) for e in split.blocks[1].edges if e.src in scene.nodes] == [("1/0", "1/1")]
