"""The drawing rules: what becomes a node, a cluster, a label row or an edge."""

from __future__ import annotations

from pathlib import Path

import pytest

import hloviz
from hloviz.errors import InputError
from hloviz.render import Mark, ViewOptions, draw_module

from . import entry_of, present

GOLDEN = Path(__file__).parent / "golden" / "render"
SEED = Path(__file__).resolve().parent.parent / "samples" / "captures" / "fused_additions"


@pytest.fixture(scope="module")
def rules():
    return hloviz.parse_file(GOLDEN / "rules.hlo")


def texts(node) -> list[str]:
    return [r.text for r in node.rows]


def node_named(view, name):
    key = view.node_of[name]
    return key, view.scene.nodes[key]


def edges_between(view, a, b):
    ka, kb = view.node_of[a], view.node_of[b]
    return [e for e in view.scene.edges if e.src == ka and e.dst == kb]


def test_fusion_is_a_cluster_and_its_parameters_are_not_drawn(rules):
    v = draw_module(rules)
    clusters = v.scene.all_clusters()
    fusion = next(c for c in clusters if c.rows[0].text == "fusion kLoop")
    assert [r.text for r in fusion.rows][1:] == ["f", "4 instructions · f32[8]"]  # constants and parameters aside
    assert {v.node_of["m1"], v.node_of["s1"], v.node_of["bq"]} <= set(fusion.nodes)
    assert "pa0" not in v.node_of and "pa1" not in v.node_of and "f" not in v.node_of
    # the arrow comes straight from the fusion's operand, and leaves from the fused root
    assert edges_between(v, "p", "m1") and edges_between(v, "q", "bq") and edges_between(v, "s1", "dv")


def test_small_constants_are_written_into_their_users(rules):
    v = draw_module(rules)
    assert "k" not in v.node_of and "two" not in v.node_of and "b2" not in v.node_of
    _, dv = node_named(v, "dv")
    assert "operand 1 = {1, 2, 3, 4, 5, 6, 7, 8}" in texts(dv)
    _, m1 = node_named(v, "m1")
    assert "operand 1 = 2 (broadcast)" in texts(m1)
    _, big = node_named(v, "big")  # elided literal: drawn, value shown as XLA printed it
    assert "= {...}" in texts(big)


def test_tuple_plumbing_is_simplified(rules):
    v = draw_module(rules)
    assert "res" not in v.node_of and "ci" not in v.node_of and "wx" not in v.node_of
    labels = {e.label for e in edges_between(v, "loop", "out")}
    assert labels == {"[1]"}
    assert {e.label for e in edges_between(v, "w", "wx2")} == {"[1]"}
    assert "init" in v.node_of  # a tuple fed to a while is real data


def test_root_parameters_and_reducers(rules):
    v = draw_module(rules)
    _, out = node_named(v, "out")
    assert texts(out)[0] == "ROOT tuple" and out.penwidth >= 2
    _, p = node_named(v, "p")
    assert texts(p)[0] == "parameter 0" and p.fill == "#ffb74d"
    _, r = node_named(v, "r")
    assert texts(r)[0] == "reduce (add)"
    assert "xy" not in v.node_of  # to_apply computations are named, not drawn


def test_bodies_are_clusters_linked_to_their_caller(rules):
    v = draw_module(rules)
    titles = {c.rows[0].text: c for c in v.scene.all_clusters()}
    assert "body of loop" in titles and "condition of loop" in titles
    calls = [e for e in v.scene.edges if e.dashed]
    assert {e.label for e in calls} == {"body", "condition"}
    assert all(e.src == v.node_of["loop"] and e.to_cluster for e in calls)


def test_operand_index_only_where_order_matters(rules):
    v = draw_module(rules)
    assert {e.head_label for e in edges_between(v, "m1", "s1")} == {"0"}
    assert {e.head_label for e in edges_between(v, "bq", "s1")} == {"1"}
    assert {e.head_label for e in edges_between(v, "sl", "mx")} == {""}  # maximum commutes


def test_chains_collapse_and_expand(rules):
    v = draw_module(rules)
    key = v.node_of["e1"]
    assert all(v.node_of[n] == key for n in ("e2", "e3", "e4"))
    assert texts(v.scene.nodes[key])[:2] == ["exponential ×4", "e1 … e4"]
    expanded = draw_module(rules, options=ViewOptions(expand_chains=True))
    assert len({expanded.node_of[n] for n in ("e1", "e2", "e3", "e4")}) == 4


def test_seed_chain_names_first_and_last_and_absorbs_broadcasts():
    pre = hloviz.parse_file(SEED / "pre.hlo")
    v = draw_module(pre)
    chains = [n for n in v.scene.nodes.values() if texts(n)[0].startswith("add ×")]
    assert len(chains) == 1
    rows = texts(chains[0])
    assert rows[0] == "add ×1000"
    first, last = rows[1].split(" … ")
    entry = entry_of(pre)
    assert present(entry.get(first), first).opcode == "add" and present(entry.get(last), last).opcode == "add"
    assert "+ broadcast ×1000 (one per op)" in rows
    assert any(e.label == "×1000" for e in v.scene.edges)
    assert v.nodes < 10


def test_chains_never_span_two_marks(rules):
    marks = {"e1": Mark(fill="#8ecae6", badge="#1"), "e2": Mark(fill="#8ecae6", badge="#1"),
             "e3": Mark(fill="#ffb703", badge="#2"), "e4": Mark(fill="#ffb703", badge="#2")}
    v = draw_module(rules, marks=marks, options=ViewOptions(min_chain=2))
    assert v.node_of["e1"] == v.node_of["e2"] != v.node_of["e3"] == v.node_of["e4"]


def test_marks_colour_badge_and_note(rules):
    marks = {"dv": Mark(fill="#8ecae6", badge="#3", note="folded → c = 1", dashed=True),
             "k": Mark(highlight=True, note="folded from 2 ops"),
             "f": Mark(fill="#ffb703", badge="#1")}
    v = draw_module(rules, marks=marks)
    _, dv = node_named(v, "dv")
    assert dv.fill == "#8ecae6" and dv.badge == "#3" and dv.dashed
    assert "folded → c = 1" in texts(dv)
    highlighted = [r for r in dv.rows if r.background]
    assert highlighted and "k" in highlighted[0].text and "folded from 2 ops" in highlighted[0].text
    fusion = next(c for c in v.scene.all_clusters() if c.rows[0].text == "fusion kLoop")
    assert fusion.badge == "#1" and fusion.fill != "#f5f5f5"


def test_one_computation(rules):
    v = draw_module(rules, options=ViewOptions(computation="body"))
    assert set(v.node_of) == {"w", "wi2", "wx2", "wt"}
    with pytest.raises(InputError, match="no computation named 'bdy'") as err:
        draw_module(rules, options=ViewOptions(computation="bdy"))
    assert "body" in str(err.value)


def test_focus_draws_a_neighbourhood(rules):
    v = draw_module(rules, options=ViewOptions(focus="mx", radius=1))
    shown = set(v.node_of)
    assert {"mx", "sl", "init"} <= shown and "p" not in shown and "r" not in shown
    assert any(n.startswith("focus: mx") for n in v.notes)
    _, mx = node_named(v, "mx")
    assert mx.border == "#d32f2f"
    zero = draw_module(rules, options=ViewOptions(focus="%mx", radius=0))
    assert set(zero.node_of) == {"mx"}
    assert any("not shown" in r.text for r in zero.scene.nodes[zero.node_of["mx"]].rows)


def test_focus_errors_say_what_to_do(rules):
    with pytest.raises(InputError, match="no instruction, op or scope named 'mxx'") as err:
        draw_module(rules, options=ViewOptions(focus="mxx"))
    assert "mx" in str(err.value)
    with pytest.raises(InputError, match="add_f32") as err:
        draw_module(rules, options=ViewOptions(focus="xy"))
    assert "--computation add_f32" in str(err.value)


def test_a_module_without_entry_is_an_input_error():
    m = hloviz.HloModule("empty")
    with pytest.raises(InputError, match="no entry"):
        draw_module(m)


def test_node_of_is_made_on_first_read_and_keeps_no_graph_alive():
    """A picture written to a file never reads ``node_of`` (for a 300k-instruction module, a dict
    of every instruction's name): it is made when first read, the same as before; an unread
    view (the explorer holds a page's pictures) keeps nothing of the graph it was built from."""
    import gc

    from hloviz.render.tree.model import ViewGraph

    module = hloviz.parse_file(SEED / "post.hlo")
    view = draw_module(module, options=ViewOptions(budget=1000))
    gc.collect()
    assert not [o for o in gc.get_objects() if isinstance(o, ViewGraph)]
    names = {i.name for c in module.computations for i in c.instructions}
    drawn = view.node_of
    assert drawn is view.node_of  # made once
    assert drawn and set(drawn) <= names and set(drawn.values()) <= set(view.scene.nodes)


def test_chains_never_span_two_scopes():
    """A layer's bias add feeding a sum of skip connections (a WaveNet's ``skip_sum``: eight
    layers' outputs added in a row) is the layer's, not the sum's first term: drawn in one
    chain, every later skip arrow pointed back into the first layer's box. The module is
    written here; the scopes are its op names."""
    lines = ["HloModule skips", "", "ENTRY main {"]
    for k in range(5):
        lines.append(f'  p{k} = f32[8]{{0}} parameter({k})')
        lines.append(f'  b{k} = f32[8]{{0}} add(p{k}, p{k}), metadata={{op_type="BiasAdd" op_name="net/skip_{k}/BiasAdd"}}')
    lines.append('  s1 = f32[8]{0} add(b0, b1), metadata={op_type="AddV2" op_name="net/skip_sum/Add"}')
    for k in range(2, 5):
        lines.append(f'  s{k} = f32[8]{{0}} add(s{k - 1}, b{k}), metadata={{op_type="AddV2" op_name="net/skip_sum/Add_{k}"}}')
    lines.append("  ROOT out = f32[8]{0} negate(s4)")
    lines.append("}")
    v = draw_module(hloviz.parse("\n".join(lines)), options=ViewOptions(budget=300))
    sums = {v.node_of[f"s{k}"] for k in range(1, 5)}
    assert len(sums) == 1  # the sum's four adds: one chain
    assert all(v.node_of[f"b{k}"] not in sums for k in range(5))


_CLOSED_FUSIONS = """HloModule closed_fusions

%fused_sub (a: f32[8], b: f32[8]) -> f32[8] {
  %a = f32[8]{0} parameter(0)
  %b = f32[8]{0} parameter(1)
  ROOT %d = f32[8]{0} subtract(%a, %b)
}

ENTRY %main (p: f32[8], q: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  %q = f32[8]{0} parameter(1)
  %e = f32[8]{0} exponential(%p)
  %l = f32[8]{0} log(%q)
  %f = f32[8]{0} fusion(%e, %l), kind=kLoop, calls=%fused_sub
  ROOT %s = f32[8]{0} subtract(%f, %e)
}
"""


def test_a_closed_fusion_takes_no_operand_index():
    # a fusion's operand order is its fused computation's parameter order, XLA's own: "0" and
    # "1" next to a closed fusion's box say nothing the box shows (a ConvNeXt's optimized column
    # drew a lone "0" on one of a residual fusion's two arrows); a subtract's operands still do
    module = hloviz.parse(_CLOSED_FUSIONS)
    v = draw_module(module, options=ViewOptions(coarse=True))
    assert v.node_of["d"] == v.node_of["f"] in v.scene.nodes  # the fusion drawn closed: one box
    assert {e.head_label for e in edges_between(v, "e", "f")} == {""}
    assert {e.head_label for e in edges_between(v, "l", "f")} == {""}
    assert {e.head_label for e in edges_between(v, "f", "s")} == {"0"}
    assert {e.head_label for e in edges_between(v, "e", "s")} == {"1"}
