"""The node budget: fusions, bodies, repeats, then runs collapse — and the picture says so."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

import hloviz
from hloviz.render import ViewOptions, draw_module
from hloviz.render.collapse import find_repeats

from .render_samples import flat_module, layered_module


def test_find_repeats_blocks_and_runs():
    assert find_repeats(list("xabcabcabcy")) == [(1, 3, 3)]
    assert find_repeats(list("aaaaab")) == [(0, 1, 5)]
    assert find_repeats(list("abcdefg")) == []
    assert find_repeats([]) == []
    # overlapping candidates: the bigger saving wins, the rest does not overlap it
    found = find_repeats(list("ababababzzzz"))
    spans = [(s, s + p * k) for s, p, k in found]
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in pairwise(spans))


def test_small_modules_are_drawn_whole():
    v = draw_module(hloviz.parse(layered_module(2)))
    assert v.levels == () and v.notes == []
    assert any(c.rows[0].text.startswith("fusion") for c in v.scene.all_clusters())


def test_a_deep_model_collapses_fusions_then_repeats():
    # without its scopes (layers=False: what a module without op_name gets)
    m = hloviz.parse(layered_module(60, with_while=True))
    v = draw_module(m, options=ViewOptions(layers=False))
    assert v.nodes <= 300
    assert v.levels[:1] == ("fusions",) and "repeats" in v.levels
    text = " ".join(v.notes)
    assert "180 of 180 fusions drawn as single nodes" in text
    assert "repeated 60 times" in text
    repeat = [n for n in v.scene.nodes.values() if "more copies" in n.rows[0].text]
    assert repeat and repeat[0].rows[0].text == "59 more copies of the 7 nodes above"
    # the first layer stays readable: its fusion is a node saying what it holds
    fused = [n for n in v.scene.nodes.values() if n.rows[0].text == "fusion kLoop"]
    assert fused and fused[0].rows[2].text.startswith("14 instructions: ")


def test_only_the_largest_fusions_collapse_when_that_is_enough():
    m = hloviz.parse(layered_module(3, ops_per_fusion=60))
    full = draw_module(m, options=ViewOptions(expand_chains=True, budget=10_000, layers=False))
    v = draw_module(m, options=ViewOptions(expand_chains=True, budget=full.nodes - 100, layers=False))
    assert v.levels == ("fusions",)
    assert any(c.rows[0].text.startswith("fusion") for c in v.scene.all_clusters())  # small ones stay open
    assert v.notes[0].startswith("2 of 9 fusions drawn as single nodes (largest first)")


def test_no_repeats_falls_back_to_runs_of_instructions():
    lines = ["HloModule distinct", "", "ENTRY %e (x: f32[1]) -> f32[400] {", "  %x = f32[1]{0} parameter(0)"]
    prev = "%x"
    for i in range(2, 401):
        lines.append(f"  %v{i} = f32[{i}]{{0}} pad({prev}, %x), padding=0_1")
        prev = f"%v{i}"
    lines.append(f"  ROOT %r = f32[400]{{0}} copy({prev})")
    lines.append("}")
    v = draw_module(hloviz.parse("\n".join(lines) + "\n"), options=ViewOptions(budget=50))
    assert v.nodes <= 50 and "segments" in v.levels
    assert any("grouped" in n for n in v.notes)
    assert any(n.rows[0].text.endswith("instructions") for n in v.scene.nodes.values())


def test_coarse_collapses_everything_first():
    m = hloviz.parse(layered_module(2, with_while=True))
    v = draw_module(m, options=ViewOptions(coarse=True, budget=100))
    assert not v.scene.all_clusters()
    assert v.levels[:2] == ("fusions", "bodies")


def test_collapsed_instructions_still_map_to_their_node():
    m = hloviz.parse(layered_module(60))
    v = draw_module(m)
    assert v.node_of["e.0.3"] == v.node_of["f.0"]  # inside the first layer's (collapsed) fusion
    assert v.node_of["d.30"] in v.scene.nodes  # inside the "more copies" node


@settings(max_examples=25, deadline=None)
@given(layers=st.integers(1, 40), budget=st.integers(1, 120), flat=st.booleans())
def test_the_budget_always_holds(layers, budget, flat):
    text = flat_module(layers) if flat else layered_module(layers, with_while=True)
    v = draw_module(hloviz.parse(text), options=ViewOptions(budget=budget))
    assert v.nodes <= budget
    if v.levels:
        assert v.notes


def test_grouped_runs_read_as_a_timeline():
    lines = ["HloModule distinct", "", "ENTRY %e (x: f32[1]) -> f32[400] {", "  %x = f32[1]{0} parameter(0)"]
    prev = "%x"
    for i in range(2, 401):
        lines.append(f"  %v{i} = f32[{i}]{{0}} pad({prev}, %x), padding=0_1")
        prev = f"%v{i}"
    lines += [f"  ROOT %r = f32[400]{{0}} copy({prev})", "}"]
    v = draw_module(hloviz.parse("\n".join(lines) + "\n"), options=ViewOptions(budget=50))
    invisible = [e for e in v.scene.edges if e.invisible]
    assert len(invisible) == v.nodes - 1
    assert all(not e.constraint for e in v.scene.edges if not e.invisible)
    assert v.scene.layout == {"splines": "line"}
    from hloviz.render import to_dot

    text = to_dot(v.scene)
    assert "splines=line;" in text and "style=invis" in text


def test_hub_arrows_are_left_out_and_said_so():
    n = 100
    lines = ["HloModule hub", "", "ENTRY %e (p: f32[4], q: f32[4]) -> (" + ", ".join(["f32[4]"] * n) + ") {",
             "  %p = f32[4]{0} parameter(0)", "  %q = f32[4]{0} parameter(1)"]
    ops = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "atan2")
    for i in range(n):
        lines.append(f"  %o{i} = f32[4]{{0}} {ops[i % len(ops)]}(%p, %q)")
    lines += ["  ROOT %t = (" + ", ".join(["f32[4]{0}"] * n) + ") tuple(" + ", ".join(f"%o{i}" for i in range(n)) + ")",
              "}"]
    v = draw_module(hloviz.parse("\n".join(lines) + "\n"), options=ViewOptions(budget=1000))
    # p, q and the ROOT tuple are hubs (TensorBoard's rule): each op would hang on by hub arrows
    # alone, so all 300 arrows become stub rows at their ends, naming the far ends
    assert v.scene.edges == []
    p = v.scene.nodes[v.node_of["p"]]
    assert p.rows[-1].text.startswith("→ 100 users: ")
    assert any(note.startswith("300 arrows drawn as ← / → rows at their ends") for note in v.notes)
    assert [r.text for r in v.scene.nodes[v.node_of["o7"]].rows[-2:]] == ["← 2 inputs: parameter 0, parameter 1",
                                                                          "→ ROOT tuple"]
