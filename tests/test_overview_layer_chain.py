"""A CNN's layers are drawn one box each, in the order its forward pass runs through them, before
and after optimization — also where nothing but that order links them.

The fixture is an L2-regularized Keras CNN's training step (``benchmarks/heldout/round17.py:
regularized_step``: three Conv2D → BatchNormalization → ReLU → MaxPooling2D stages, global
average pooling, dropout, a dense head; every kernel with ``kernel_regularizer=l2``; SGD with
Nesterov momentum and ``clipnorm``), captured with TensorFlow 2.21 on the CPU (``hloviz dump …
-o DIR``; ``DIR/pre.hlo`` and ``DIR/post.hlo``, ``source_file``/``source_line`` removed; of
``DIR/capture.json``, the two entries that name the parameters, ``parameter_names`` and
``layer_scopes``: named, the weights XLA copies stand beside the model in its optimized column).

What went wrong, unseen: before optimization the parameterless ``relu_0``, ``relu_1``,
``relu_2`` (each with its ``pool_<i>``) stood where each one's work ends, their gradients, which
run the other way, side by side — and folded into one ``relu_2 ×3 (relu_2 … relu_0)`` box between
``bn_1`` and ``conv_2``. After optimization the weight copies and penalty fusions XLA left
beside the model (``Square``, ``Sum``, ``mul`` of each kernel: top-level ops) took a box each,
and the whole model, ``reg_cnn``, was one closed box of 164 kernels.

Oracles outside the renderer, from the HLO text with regular expressions: each layer's
instructions (``op_name`` ``reg_cnn_1/<layer>_1/…``, forward) and their order (where the entry
computation first runs each layer's forward work); the picture is read from its boxes
(``node_of``) and, for the order, from the SVG's geometry.
"""

from __future__ import annotations

import json
import re
from itertools import pairwise
from pathlib import Path

import pytest

from hloviz.cli import main
from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

HERE = Path(__file__).resolve().parent / "data" / "orders"
PRE, POST = HERE / "regularized_step_pre.hlo", HERE / "regularized_step_post.hlo"
INFO = HERE / "regularized_step_info.json"
_INST = re.compile(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = [^\n]*?op_name="([^"]*)"', re.MULTILINE)
_LAYER = re.compile(r"reg_cnn_1/((?:conv|bn|relu|pool)_\d)_1/")
_NODE = re.compile(r'<g id="node\d+" class="node">.*?xlink:title="([^"]*)".*?(?:points|d)="([^"]+)"', re.DOTALL)
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


def _forward_layers(text: str) -> dict[str, list[str]]:
    """Layer → its forward instructions of the entry computation, layers in the order the entry
    first runs them."""
    entry = text.split("\nENTRY ", 1)[1]
    out: dict[str, list[str]] = {}
    for name, op in _INST.findall(entry):
        m = _LAYER.match(op)
        if m:
            out.setdefault(m.group(1), []).append(name)
    return out


def test_the_fixture_is_a_chain_of_twelve_layers_in_three_stages():
    layers = list(_forward_layers(PRE.read_text(encoding="utf-8")))
    assert layers == [f"{kind}_{i}" for i in range(3) for kind in ("conv", "bn", "relu", "pool")]


def _box_of_each(text: str) -> dict[str, set[str]]:
    info = json.loads(INFO.read_text(encoding="utf-8"))
    boxes = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET), info=info).node_of
    return {layer: {boxes[n] for n in names if n in boxes} for layer, names in _forward_layers(text).items()}


def test_before_optimization_each_layer_is_a_box_of_its_own():
    held = _box_of_each(PRE.read_text(encoding="utf-8"))
    assert len(held) == 12
    assert all(len(b) == 1 for b in held.values()), held
    assert len({next(iter(b)) for b in held.values()}) == 12, held  # no two layers share a box (no ×3 repeat)


def test_after_optimization_the_model_is_drawn_open():
    # XLA fuses a ReLU's maximum into its batch norm's kernel (filed with the batch norm, where
    # most of its work is): a layer may span two boxes; the model, closed, was one for all twelve
    held = _box_of_each(POST.read_text(encoding="utf-8"))
    assert len(held) == 12
    assert len(set().union(*held.values())) >= 12, held


@pytest.mark.requires_dot
def test_the_layers_stand_top_to_bottom_in_the_forward_passs_order(tmp_path):
    out = tmp_path / "p.svg"
    assert main(["render", str(PRE), "-o", str(out)]) in (None, 0)
    tops: dict[str, float] = {}
    for title, points in _NODE.findall(out.read_text(encoding="utf-8")):
        found = {m.group(1) for m in _LAYER.finditer(title)}
        if len(found) == 1:
            y = min(float(v) for v in _NUM.findall(points)[1::2])
            tops[found.pop()] = y
    order = list(_forward_layers(PRE.read_text(encoding="utf-8")))
    assert set(tops) == set(order)
    assert sorted(order, key=lambda layer: tops[layer]) == order, tops


def test_a_few_loose_ops_beside_the_model_are_one_block_so_that_it_opens():
    # the rule the fixture above first needed (its penalties, now the loss's, no longer stand
    # beside the model): six loose ops at the root, each read by a layer — weight copies —
    # beside a model of twenty layers that a budget of 24 could open but for them. Built here
    # (``group_at`` above twenty: no block by structure inside the model), the tree must hold
    # them as one block, and the fitted cut opens the model.
    from hloviz.render.cut.cut import fit
    from hloviz.render.tree.tree import Step, build_tree

    model = Step("scope", "reg_cnn", "reg_cnn")
    names = [f"{kind}_{stage}" for stage in range(5) for kind in ("conv", "bn", "relu", "pool")]
    routes, edges = [], []
    for k, name in enumerate(names):  # a chain of ops each, no two stages alike (no repeat to fold)
        layer = [model, Step("scope", name, f"reg_cnn/{name}")]
        ops = [f"{name}.{j}" for j in range(2 + k % 7)]
        routes += [(layer, op) for op in ops]
        edges += list(pairwise(ops))
        if k:
            edges.append((f"{names[k - 1]}.{1 + (k - 1) % 7}", ops[0]))
    copies = [f"copy.{i}" for i in range(6)]
    routes = [([], c) for c in copies] + routes
    edges += [(c, f"{names[4 * i % len(names)]}.0") for i, c in enumerate(copies)]
    tree = build_tree(routes, group_at=30, run_at=24, edges=edges)
    kids = tree.root.children
    assert sorted(c.kind for c in kids) == ["block", "scope"], [(c.kind, c.name) for c in kids]
    [block] = [c for c in kids if c.kind == "block"]
    assert sorted(leaf.name for leaf in block.children) == sorted(copies)
    cut = fit(tree, 24)
    opened = {n.name for n in cut.nodes}
    assert set(names) <= opened, sorted(opened)


def test_a_scopes_own_ops_that_are_most_of_it_are_not_blocked_beside_its_few_parts():
    # a ``tf.scan``'s scope: twenty ops of its own, a chain, beside six small sub-scopes —
    # more children than the overview's 24, but the ops are what the scope holds, not loose ops
    # beside many layers (a wide-and-deep model's slices beside 15 layers): they stay its
    # children for blocks by structure to show, not two closed blocks of ten cut at waists.
    # Oracle: the tree built here.
    from hloviz.render.tree.tree import Step, build_tree

    top = Step("scope", "step", "step")
    scan = [top, Step("scope", "scan", "step/scan")]
    ops = [f"op{i}" for i in range(20)]
    routes = [(scan, o) for o in ops]
    edges = list(pairwise(ops))
    for k in range(6):
        part = [f"p{k}.{j}" for j in range(2 + k)]
        routes += [([*scan, Step("scope", f"part{k}", f"step/scan/part{k}")], leaf) for leaf in part]
        edges += [*pairwise(part), (ops[3 * k], part[0])]
    routes.append(([top], "loss"))
    edges.append((ops[-1], "loss"))
    tree = build_tree(routes, edges=edges)
    [step] = tree.root.children
    [node] = [c for c in step.children if c.name == "scan"]
    assert sorted(c.name for c in node.children if c.is_leaf) == sorted(ops), [(c.kind, c.name) for c in node.children]
