"""DOT text: golden files where exact output is the contract, generated ids, columns."""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

import pytest

import hloviz
from hloviz.render import Edge, Node, Row, Scene, columns_to_dot, draw_module, to_dot
from hloviz.render.scene import Cluster

from . import present

GOLDEN = Path(__file__).parent / "golden" / "render"
SEED = Path(__file__).resolve().parent.parent / "samples" / "captures" / "fused_additions"


def _check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("HLOVIZ_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with HLOVIZ_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from the golden file"


def test_rules_module_golden():
    module = hloviz.parse_file(GOLDEN / "rules.hlo")
    _check_golden("rules.dot", to_dot(draw_module(module).scene))


def test_seed_side_by_side_golden():
    from hloviz.analysis import analyze
    from hloviz.render.layout.sidebyside import side_by_side

    pre = hloviz.parse_file(SEED / "pre.hlo")
    post = hloviz.parse_file(SEED / "post.hlo")
    sbs = side_by_side(pre, post, analyze(pre, post), title="fused_additions")
    _check_golden("fused_additions_both.dot", sbs.dot)


def test_same_scene_same_bytes():
    module = hloviz.parse_file(GOLDEN / "rules.hlo")
    assert to_dot(draw_module(module).scene) == to_dot(draw_module(hloviz.parse_file(GOLDEN / "rules.hlo")).scene)


def test_ids_are_generated_never_from_keys():
    scene = Scene()
    scene.add_node('evil" -> x; y [label="pwned', Node([Row("a")]))
    scene.add_node("<b>", Node([Row("b")]))
    scene.edges.append(Edge('evil" -> x; y [label="pwned', "<b>"))
    text = to_dot(scene)
    assert "pwned" not in text and "<b>" not in text.replace("<B>", "")
    statements = [line.strip() for line in text.splitlines()]
    assert "n0 -> n1;" in statements


def test_edge_to_unknown_node_is_a_bug():
    scene = Scene()
    scene.add_node("a", Node([Row("a")]))
    scene.edges.append(Edge("a", "missing"))
    with pytest.raises(ValueError, match="missing"):
        to_dot(scene)


def test_columns_keep_keys_apart_and_title_each_column():
    a, b = Scene(), Scene()
    for s in (a, b):
        s.add_node("x", Node([Row("x")]))
        s.add_node("y", Node([Row("y")]))
        s.edges.append(Edge("x", "y"))
    text = columns_to_dot([("left", a), ("right", b)], title="both", notes=["a note"])
    assert text.count("subgraph cluster_") == 2
    assert "left" in text and "right" in text and "a note" in text
    assert re.search(r"\bn0 -> n1;", text) and re.search(r"\bn2 -> n3;", text)


def test_cluster_edges_use_compound_lhead():
    s = Scene()
    c = Cluster(key="body", rows=[Row("body")])
    s.clusters.append(c)
    s.add_node("caller", Node([Row("while")]))
    s.add_node("inner", Node([Row("tanh")]), c)
    s.edges.append(Edge("caller", "inner", to_cluster="body", dashed=True))
    text = to_dot(s)
    assert "compound=true;" in text and "lhead=cluster_0" in text


def test_badges_and_highlighted_rows():
    s = Scene()
    s.add_node("k", Node([Row("add", bold=True), Row("= 1000", background="#ffd54f")], badge="#1",
                         badge_fill="#8ecae6"))
    text = to_dot(s)
    assert 'BGCOLOR="#ffd54f"' in text and ">#1<" in text and 'BGCOLOR="#8ecae6"' in text


def _chain(*keys: str) -> Scene:
    scene = Scene()
    for k in keys:
        scene.add_node(k, Node([Row(k)]))
    scene.edges.extend(Edge(a, b) for a, b in itertools.pairwise(keys))
    return scene


def test_aligned_pairs_share_a_level_and_crossing_pairs_are_dropped():
    left, right = _chain("a", "b", "c", "d"), _chain("w", "x", "y", "z")
    dot = columns_to_dot([("L", left), ("R", right)], align=[("a", "w"), ("c", "y"), ("b", "z"), ("d", "x")])
    same = re.findall(r"\{ rank=same; (n\d+); (n\d+); \}", dot)
    ids = {k: present(re.search(rf'(n\d+) \[label=<.*?>{k}<', dot)).group(1) for k in "abcdwxyz"}
    # at most two of these pairs keep the arrows' order on both sides; the ones kept must agree
    names = {v: k for k, v in ids.items()}
    kept = sorted((names[a], names[b]) for a, b in same)
    assert len(kept) == 2 and "newrank=true;" in dot
    assert [r for _, r in kept] == sorted(r for _, r in kept), kept
    assert "rank=same" not in columns_to_dot([("L", left), ("R", right)])


def test_a_timeline_is_never_aligned():
    left, right = _chain("a", "b"), _chain("w", "x")
    right.layout["splines"] = "line"
    assert "rank=same" not in columns_to_dot([("L", left), ("R", right)], align=[("a", "w")])
