"""A training step's single file puts boxes nothing links side by side, in one row.

Found on a held-out EfficientNetB0 training step (``benchmarks/heldout/apps_round3.py``): four
``forward · block of 12`` broadcasts and a folded constant, no arrow in or out, stood one under
another beside an empty column — 300 pt that put the overview over its 2,500 pt, so it was
drawn a second time with fewer boxes. The oracle is Graphviz's own layout of the scene
(``dot -Tplain``: each box's centre), read against rows worked out by hand.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from hloviz.render.cut.ranks import program_order
from hloviz.render.layout.dot import to_dot
from hloviz.render.scene import Cluster, Edge, Node, Row, Scene

pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


def _file(links: list[tuple[str, str]], framed: str = "bcd") -> dict[str, float]:
    """Boxes ``a``…``f`` in program order, those in ``framed`` inside one frame, ``links`` their
    arrows, ranked as a training step's file; each box's height on the laid-out page."""
    scene = Scene()
    frame = Cluster(key="c0", rows=[Row("frame")])
    scene.clusters.append(frame)
    for key in "abcdef":
        scene.add_node(key, Node(rows=[Row(f"box {key}")]), frame if key in framed else None)
    scene.edges.extend(Edge(src, dst) for src, dst in links)
    keys = {key: (0, float(i)) for i, key in enumerate("abcdef")}
    program_order(scene, keys, frozenset(), True)
    dot = to_dot(scene)
    named = dict(re.findall(r"^\s*(n\d+) \[label=<.*?<TD>box (\w)</TD>", dot, re.MULTILINE))
    plain = subprocess.run(["dot", "-Tplain"], input=dot, capture_output=True, text=True, check=True).stdout
    return {named[m[1]]: float(m[2]) for m in re.finditer(r"^node (\S+) \S+ (\S+)", plain, re.MULTILINE) if m[1] in named}


def test_boxes_nothing_links_share_a_row_in_program_order():
    y = _file([("a", "f")])  # a long arrow: written as rows at a and f, which link them
    assert y["b"] == y["c"] == y["d"]
    assert y["a"] > y["b"] > y["e"] > y["f"]  # (plain coordinates grow upwards)


def test_a_box_whose_arrows_are_rows_keeps_its_own_row():
    y = _file([("a", "f"), ("a", "c")])  # a → c reaches past b: … or is drawn; c is linked either way
    assert y["b"] != y["c"] and y["c"] != y["d"]
    assert y["a"] > y["b"] > y["c"] > y["d"] > y["e"] > y["f"]


def test_boxes_in_two_frames_keep_their_rows():
    y = _file([("a", "f")], framed="bc")  # d stands outside the frame of b and c, as e does
    assert y["b"] == y["c"] and y["d"] == y["e"]
    assert y["a"] > y["c"] > y["d"] > y["f"]
