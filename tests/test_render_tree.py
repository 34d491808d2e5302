"""The scope tree's cuts through crowded layers (hloviz/render/tree/tree.py), on hand-drawn graphs:
how many arrows cross each gap between siblings, and where a long run of siblings is cut.
Every expected value is counted by hand in the comment beside it."""

from __future__ import annotations

from hloviz.render.tree.nodes import TreeNode
from hloviz.render.tree.waists import _crossings, _greedy


def _leaves(*names: str) -> list[TreeNode]:
    return [TreeNode(n, "leaf", n) for n in names]


def test_crossings_count_each_arrow_over_every_gap_it_spans_once_per_pair():
    kids = _leaves("a", "b", "c", "d", "e")
    # arrows a→c, b→c, c→b (the same pair as b→c: counted once), d→e, a→e, and e→x (x is no
    # sibling: it stays inside e's own slot and crosses nothing)
    succ = {"a": ["c", "e"], "b": ["c"], "c": ["b"], "d": ["e"], "e": ["x"]}
    # gap before: a    b        c                d         e         (end)
    #             0    a→c,a→e  a→c,b→c,a→e      a→e       d→e,a→e   0
    assert _crossings(kids, succ) == [0, 2, 3, 1, 2, 0]


def test_crossings_see_arrows_between_the_leaves_of_nested_siblings():
    inner = TreeNode("blk", "block", "blk", children=_leaves("b1", "b2"))
    kids = [*_leaves("a"), inner, *_leaves("c")]
    # a→b2 spans gap 1; b1→b2 stays inside the block; b2→c spans gap 2
    assert _crossings(kids, {"a": ["b2"], "b1": ["b2"], "b2": ["c"]}) == [0, 1, 1, 0]


def test_a_long_run_is_cut_nearest_the_target_size_where_all_gaps_are_alike():
    # ten siblings, no arrow between them, blocks of about 3: cut after 3 and after 6 (the rest,
    # 4, is within half a block of 3, so it stays one block)
    assert _greedy([0] * 11, 0, 10, 3, None) == [3, 6]


def test_a_long_run_is_cut_at_its_narrowest_gap():
    cross = [0, 2, 2, 2, 1, 2, 2, 2, 2, 2, 0]  # gap 4 is crossed by one arrow, the others by two
    # first block: gaps 1..4 allowed (3 ± 1); the narrowest is 4; from 4: gaps 5..8, all alike → 7
    assert _greedy(cross, 0, 10, 3, None) == [4, 7]


def _layers_module(layers: int, per: int) -> str:
    """``layers`` layers in a row, each ``per`` different unary ops on the layer's input summed
    by ``per - 1`` adds (no chain to fold): ``layers * (2 * per - 1)`` instructions, plus the
    parameter and the ROOT copy."""
    ops = ("negate", "exponential", "sine", "cosine", "tanh")
    lines, prev, k = [], "p", 0
    for layer in range(layers):
        outs = []
        for j in range(per):
            lines.append(f'  %n{k} = f32[2]{{0}} {ops[j % 5]}(%{prev}), metadata={{op_name="model/layer{layer}/op{j}"}}')
            outs.append(f"n{k}")
            k += 1
        acc = outs[0]
        for o in outs[1:]:
            lines.append(f'  %n{k} = f32[2]{{0}} add(%{acc}, %{o}), metadata={{op_name="model/layer{layer}/sum{k}"}}')
            acc = f"n{k}"
            k += 1
        prev = acc
    return ("HloModule m\n\nENTRY %main (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n"
            + "\n".join(lines) + f"\n  ROOT %r = f32[2]{{0}} copy(%{prev})\n}}\n")


def test_a_budget_that_a_cut_fills_exactly_is_filled():
    """The budget is meant to be used: whenever some picture of the module has exactly N boxes
    (seen at a larger budget), a budget of N draws N boxes, not a coarser picture."""
    import hloviz
    from hloviz.render import ViewOptions
    from hloviz.render.views import draw_module

    for layers, per in ((2, 2), (3, 2), (3, 3), (4, 2), (5, 2)):
        module = hloviz.parse(_layers_module(layers, per))
        whole = layers * (2 * per - 1) + 2  # every instruction its own box
        nodes = [draw_module(module, options=ViewOptions(budget=b)).nodes for b in range(1, whole + 2)]
        assert nodes[-1] == nodes[-2] == whole, (layers, per, nodes)
        assert all(n <= b for b, n in enumerate(nodes, 1))
        for size in set(nodes):
            assert nodes[size - 1] == size, (layers, per, size, nodes)


def test_the_owner_of_each_unit_follows_every_merge_and_every_added_unit():
    """``ViewGraph.owners()`` is kept between merges; after each merge or new unit it must be
    :meth:`~hloviz.render.tree.model.ViewGraph.find` of every unit again."""
    import hloviz
    from hloviz.render.tree.model import ViewGraph

    module = hloviz.parse("HloModule m\n\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n")
    g = ViewGraph(module, {})
    units = [g.new_unit("inst", None, i, []) for i in range(6)]
    assert g.owners() == [0, 1, 2, 3, 4, 5]
    g.merge([units[1], units[2]], units[0])
    assert g.owners() == [0, 0, 0, 3, 4, 5]
    g.merge([units[0]], units[4])  # a merged unit merged again: its members follow
    assert g.owners() == [4, 4, 4, 3, 4, 5]
    g.new_unit("inst", None, 6, [])
    assert g.owners() == [4, 4, 4, 3, 4, 5, 6]
    assert g.owners() == [g.find(i) for i in range(len(g.units))]
