"""One module drawn many times builds its graph of units, its tree and its marks once
(:mod:`hloviz.render.reuse`), and every picture is the one drawn without the reuse.

The oracle is the picture drawn outside a :func:`~hloviz.render.reuse.drawings_reused` block,
where every picture builds its own tree: the DOT text of each picture drawn inside the block, in
an order where the kept tree would be regrouped by the cuts before it (a small budget splits a
crowded node into blocks; a block opened in place splits a repeat; a layer's picture hides the
rest of the graph), must be the same byte for byte. A kept tree or graph that a cut could change,
or a hit that forgot what building the tree told the graph (a training step's counter drawn as
its optimizer's work), changes a later picture.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hloviz.capture import load_target
from hloviz.render import to_dot
from hloviz.render.reuse import drawings_reused
from hloviz.render.tree import layers
from hloviz.render.views import ViewOptions, draw_module

from .test_explorer import read_hlo
from .test_linear_algorithms import count_calls

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"


def _pictures(module, info) -> list[str]:
    """The module drawn at a big budget, then ever smaller ones (each cut regroups its tree at
    the data flow's waists, and a loop's body closed is folded into its caller's node), the big
    one again, then with each closed node of the overview opened in place."""
    out, first = [], None
    for budget in (300, 24, 12, 6, 300):
        view = draw_module(module, options=ViewOptions(budget=budget), info=info)
        # the picture, and which node draws each instruction (a closed body's are its caller's)
        out.append(to_dot(view.scene) + repr(sorted(view.node_of.items())))
        if budget == 24:
            first = view
    assert first is not None and first.cut is not None
    closed = [n.key for n in first.cut.nodes if not n.is_leaf][:4]
    assert closed, "the overview closes some block (the test opens each in place)"
    for key in closed:
        out.append(to_dot(draw_module(module, options=ViewOptions(budget=24, open=(key,)), info=info).scene))
    return out


@pytest.mark.parametrize("capture,stage", [("keras_small_train_step", "pre"), ("resblock_relu", "post"),
                                           ("loops_vit_train", "pre"), ("loops_newton", "post")])
def test_pictures_drawn_from_a_kept_tree_are_the_pictures_drawn_without(capture, stage, monkeypatch):
    cap = load_target(str(CAPTURES / capture))
    module = cap.pre_module() if stage == "pre" else cap.post_module()
    calls = count_calls(monkeypatch, layers, "scope_tree")
    alone = _pictures(module, cap.info)
    assert calls[0] == len(alone)  # outside the block: a tree per picture
    calls[0] = 0
    with drawings_reused():
        kept = _pictures(module, cap.info)
    # inside: one tree for all of them, or two where the big budget opened the fusions (the
    # first look at a small budget closes every fusion: another graph of units)
    assert calls[0] <= 2
    assert len(set(alone)) > 4  # the pictures differ from one another
    assert kept == alone


def test_a_step_counter_is_drawn_as_its_optimizers_work_from_a_kept_tree_too():
    # keras_small_train_step's unoptimized step carries Adam's iteration counter; building the
    # tree files it under the optimizer (ViewGraph.phases), which a kept tree must do as well
    cap = load_target(str(CAPTURES / "keras_small_train_step"))
    module = cap.pre_module()
    alone = to_dot(draw_module(module, options=ViewOptions(budget=40), info=cap.info).scene)
    with drawings_reused():
        draw_module(module, options=ViewOptions(budget=300), info=cap.info)
        kept = to_dot(draw_module(module, options=ViewOptions(budget=40), info=cap.info).scene)
    assert "iteration" in alone or "Adam" in alone
    assert kept == alone


def test_other_marks_info_or_modules_build_their_own_tree(monkeypatch):
    from hloviz.render.views import Mark

    cap = load_target(str(CAPTURES / "resblock_relu"))
    pre, post = cap.pre_module(), cap.post_module()
    calls = count_calls(monkeypatch, layers, "scope_tree")
    with drawings_reused():
        draw_module(pre, options=ViewOptions(budget=24), info=cap.info)
        draw_module(pre, options=ViewOptions(budget=12), info=dict(cap.info))  # an equal copy: kept
        assert calls[0] == 1
        draw_module(post, options=ViewOptions(budget=24), info=cap.info)  # another module
        assert calls[0] == 2
        # other marks: each instruction its own, so no chain joins two (chains join equal marks)
        some = {i.name: Mark(badge=f"#{k}") for k, i in enumerate(pre.instructions())}
        marked = to_dot(draw_module(pre, options=ViewOptions(budget=300), marks=some, info=cap.info).scene)
        assert calls[0] == 3
        draw_module(pre, options=ViewOptions(budget=24, expand_chains=True), info=cap.info)  # other units
        assert calls[0] == 4
        plain = to_dot(draw_module(pre, options=ViewOptions(budget=300), info=cap.info).scene)  # not the marked
        again = to_dot(draw_module(pre, options=ViewOptions(budget=300), marks=some, info=cap.info).scene)
        assert calls[0] == 6  # the marked one again: not the unmarked graph's tree
    draw_module(pre, options=ViewOptions(budget=24), info=cap.info)  # after the block: nothing kept
    assert calls[0] == 7
    assert marked == again
    assert marked == to_dot(draw_module(pre, options=ViewOptions(budget=300), marks=some, info=cap.info).scene)
    assert plain == to_dot(draw_module(pre, options=ViewOptions(budget=300), info=cap.info).scene)
    assert marked != plain


def test_a_pictures_marks_are_made_once_per_module_and_colouring():
    # each of the explorer's layer pictures is a side-by-side picture, which marked both modules
    # again; inside the block the marks are made once, and a heat colouring has its own
    from hloviz.analysis import analyze
    from hloviz.render.layout.sidebyside import post_marks, pre_marks

    cap = load_target(str(CAPTURES / "resblock_relu"))
    pre, post = cap.pre_module(), cap.post_module()
    analysis = analyze(pre, post, info=cap.info)
    assert pre_marks(analysis, pre) is not pre_marks(analysis, pre)  # outside: made each time
    with drawings_reused():
        kernel = pre_marks(analysis, pre)
        assert pre_marks(analysis, pre) is kernel
        flops = pre_marks(analysis, pre, "flops")
        assert flops is not kernel and flops != kernel  # a heat scale colours the kernels otherwise
        assert post_marks(analysis, post) is post_marks(analysis, post)
        assert post_marks(analysis, post) != kernel
        again = analyze(pre, post, info=cap.info)  # another analysis: its own marks
        assert pre_marks(again, pre) is not kernel
    assert kernel == pre_marks(analysis, pre)  # what was kept is what is made


@pytest.mark.parametrize("capture,stage", [("keras_small_train_step", "pre"), ("efficientnet_b0", "post")])
def test_layer_pictures_drawn_from_a_kept_graph_are_the_pictures_drawn_without(capture, stage, monkeypatch):
    # the explorer's layer pictures (ViewOptions(scope=…)) each made the whole module's graph of
    # units and hid all but the layer; inside the block they draw on copies of one graph
    import re
    from collections import Counter

    from hloviz.render import view_graph

    cap = load_target(str(CAPTURES / capture))
    module = cap.pre_module() if stage == "pre" else cap.post_module()
    # layers from the HLO text: the first two parts of op names, where three or more ops share them
    text = read_hlo(CAPTURES / capture / f"{stage}.hlo")
    paths = Counter("/".join(n.split("/")[:2]) for n in re.findall(r'op_name="([^"]+)"', text)
                    if n.count("/") >= 2 and not n.startswith(("gradient_tape", "jit(")))
    layers = sorted(p for p, k in paths.items() if k >= 3)[:6]
    assert len(layers) >= 3, paths
    made = count_calls(monkeypatch, view_graph, "_placed")

    def pictures() -> list[str]:
        out = [to_dot(draw_module(module, options=ViewOptions(budget=24), info=cap.info).scene)]
        for layer in layers:  # a layer, then the whole again: each must start from the whole graph
            out.append(to_dot(draw_module(module, options=ViewOptions(scope=layer), info=cap.info).scene))
            out.append(to_dot(draw_module(module, options=ViewOptions(budget=300), info=cap.info).scene))
        return out

    alone = pictures()
    made_alone, made[0] = made[0], 0
    with drawings_reused():
        kept = pictures()
    assert made[0] < made_alone and made[0] <= 3  # the first look, the whole (fusions open); nothing per layer
    assert len(set(alone)) == len(layers) + 2  # each layer's picture is its own
    assert kept == alone


def test_a_copied_tree_keeps_every_field_of_every_node():
    # a field added to TreeNode must be copied too: every field set to a value of its own
    import dataclasses

    from hloviz.render.tree.nodes import Tree, TreeNode

    root = TreeNode("", "root", "")
    given = {}
    for f in dataclasses.fields(TreeNode):
        if f.name in ("parent", "children"):
            continue
        given[f.name] = True if f.type in ("bool", bool) else (7 if f.type in ("int", int) else f"the {f.name}")
    child = TreeNode(**given, parent=root)
    root.children.append(child)
    leaf = TreeNode("the key/u1", "leaf", "u1", parent=child)
    child.children.append(leaf)
    copied = Tree(root).copy()
    twin = copied.root.children[0]
    assert twin is not child and twin.children[0] is not leaf and twin.children is not child.children
    assert twin.parent is copied.root and twin.children[0].parent is twin
    for name, value in given.items():
        assert getattr(twin, name) == value, name
    assert copied.nodes["the key"] is twin and copied.nodes["the key/u1"] is twin.children[0]


@pytest.mark.parametrize("capture", ["mobilenet_v2", "keras_cnn_train", "jax_gpt_step"])
def test_units_placed_from_kept_answers_are_placed_as_without(capture, monkeypatch):
    """Each unit's place in the program order (:func:`hloviz.render.cut.order.order_keys`, kept
    for a unit of the same members across pictures) is the place computed afresh."""
    from hloviz.render.cut import order

    placed: list[dict] = []
    real = order.order_keys

    def recording(*args, **kwargs):
        keys = real(*args, **kwargs)
        placed.append(dict(keys))
        return keys

    monkeypatch.setattr(order, "order_keys", recording)
    cap = load_target(str(CAPTURES / capture))
    module = cap.pre_module()

    def draw_all() -> list[dict]:
        placed.clear()
        for budget in (24, 12, 6, 40, 24):
            draw_module(module, options=ViewOptions(budget=budget), info=cap.info)
        return list(placed)

    alone = draw_all()
    with drawings_reused():
        kept = draw_all()
    assert alone and kept == alone
