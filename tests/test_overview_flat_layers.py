"""A transformer written as a Keras functional model — its layers flat siblings named by their
number (``attn_3``, ``ln1_3``, ``mlp_up_3`` …), no scope per layer — is drawn as its layers: one
``×N`` box whose copies are single layers, between the embedding and the head.

Each layer norm is a cut of the forward pass, so a layer is several blocks found by structure,
and nothing in the names groups a layer's siblings. The overview drew such an encoder as two
blocks cut at its waists (``norm_b_1 · block of 18`` held the embedding and two layers,
``classifier · block of 11`` the other two and the head) and a pre-norm one as a repeat of two
copies of two layers each; the gradients summed where the residual stream forks were boxes of
their own.

The fixture (``tests/data/orders/flat_encoder_step.hlo``, made by ``flat_encoder.py`` beside it)
is TensorFlow 2.21's HLO before optimization of an SGD step of five pre-norm layers. Oracles
outside the renderer: the layers' numbers from the op names (a regex over the HLO text); the
boxes and their order from the SVG; for the rule itself, hand-built blocks whose layers the test
lays out.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.render.tree.nodes import TreeNode
from hloviz.render.tree.repeat_runs import layer_runs

from . import box_labels

FIXTURE = Path(__file__).resolve().parent / "data" / "orders" / "flat_encoder_step.hlo"

_LAYER_OP = re.compile(r'op_name="(?:gradient_tape/)?functional_1/(?:attn|ln1|ln2|mlp_up|mlp_down)_(\d+)_1/')
_REPEAT = re.compile(r"^([a-z_]+?)_(\d+) ×(\d+) \(([a-z_]+?)_(\d+) … ([a-z_]+?)_(\d+)\)$")


def test_the_fixture_is_a_training_step_of_flat_numbered_layers():
    text = FIXTURE.read_text(encoding="utf-8")
    assert sorted({int(n) for n in _LAYER_OP.findall(text)}) == [1, 2, 3, 4, 5]
    assert "gradient_tape/functional_1/" in text and 'op_name="sgd/' in text
    assert not re.search(r'op_name="[^"]*/(?:layer|block)_?\d+/', text)  # no scope per layer


@pytest.mark.requires_dot
def test_the_layers_are_one_repeat_of_single_layers_between_the_embedding_and_the_head(tmp_path):
    from hloviz.cli import main

    out = tmp_path / "pre.svg"
    main(["render", str(FIXTURE), "-o", str(out)])
    labels = [label for _, label in box_labels(out.read_text(encoding="utf-8"))]
    layers = sorted({int(n) for n in _LAYER_OP.findall(FIXTURE.read_text(encoding="utf-8"))})
    repeats = [m for label in labels if (m := _REPEAT.match(label))]
    assert len(repeats) == 1, labels
    first, count, last = int(repeats[0].group(5)), int(repeats[0].group(3)), int(repeats[0].group(7))
    assert count == last - first + 1 >= 3, labels  # each copy one layer
    assert last == layers[-1], labels
    # what the page names runs top to bottom in the layers' order: the first layer above the
    # repeat, the head below it
    named = [int(n) for label in labels for n in re.findall(r"_(\d+)\b", label.split(" (")[0])]
    assert named == sorted(named) and named[0] == layers[0], labels
    at = {label.split(" ")[0]: i for i, label in enumerate(labels)}
    assert at["head"] > at["pool"] > labels.index(repeats[0].group(0))
    # the gradients summed along the residual stream sit with their layers, not in boxes of their own
    assert not [b for b in labels if b.startswith("backward · block of")], labels


# --- the rule on blocks laid out by hand -------------------------------------------------------

_KINDS = {"E": ("gather", "reshape"), "A": ("dot", "softmax", "dot"), "N": ("reduce", "rsqrt"),
          "F": ("dot", "maximum", "dot"), "M": ("reduce", "rsqrt", "add"), "H": ("reduce", "dot")}


def _chain(kinds: str) -> tuple[list[TreeNode], dict[str, list[str]], dict[str, str]]:
    """One block per letter, its leaves a chain of the letter's ops, each block feeding the next."""
    kids, succ, label, prev = [], {}, {}, None
    for i, kind in enumerate(kinds):
        block = TreeNode(f"b{i}", "block", f"{kind}{i}")
        for op in _KINDS[kind]:
            name = f"u{len(label)}"
            label[name] = op
            block.children.append(TreeNode(f"b{i}/{name}", "leaf", name, parent=block))
            if prev is not None:
                succ.setdefault(prev, []).append(name)
            prev = name
        kids.append(block)
    return kids, succ, label


def test_a_layer_of_four_blocks_repeated_three_times_is_found():
    kids, succ, label = _chain("E" + "ANFN" * 3 + "H")
    assert layer_runs(kids, succ, label) == [(1, 4, 3)]


def test_a_layer_of_two_blocks_is_found_too():
    kids, succ, label = _chain("E" + "AF" * 4 + "H")
    assert layer_runs(kids, succ, label) == [(1, 2, 4)]


def test_copies_end_where_the_run_of_layers_ends():
    # the first layer's attention is bound up with the embedding and the last layer's norm
    # differs (it feeds the head): the three copies that fit end next to that norm
    kids, succ, label = _chain("E" + "NFN" + "ANFN" * 3 + "M" + "H")
    kinds = "ENFN" + "ANFN" * 3 + "MH"
    (start, period, count), = layer_runs(kids, succ, label)
    assert (period, count) == (4, 3)
    assert kinds[start + period * count] == "M"  # nothing of a layer left between the copies and "M"


def test_two_copies_are_no_run():
    kids, succ, label = _chain("E" + "ANFN" * 2 + "H")
    assert layer_runs(kids, succ, label) == []


def test_no_box_holds_only_the_gradients_summed_along_the_residual_stream():
    """Each gradient sum TensorFlow names at the top (``AddN_7``: where the residual stream
    forks, the backward pass adds the gradients of both branches) is drawn in a box with the
    layer work around it, never in a box of sums alone (``add ×3``, nine of them). The oracle:
    the op names, read with a regular expression; which box holds each instruction is the
    picture's own record."""
    from hloviz.parser import parse
    from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

    text = FIXTURE.read_text(encoding="utf-8")
    op_of = dict(re.findall(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = .*op_name="([^"]*)"', text, re.MULTILINE))
    sums = [n for n, op in op_of.items() if re.fullmatch(r"AddN(_\d+)?", op)]
    assert len(sums) > 20  # the fixture is the step it says
    view = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))
    held: dict[str, set[str]] = {}
    for name, box in view.node_of.items():
        if name in op_of:
            held.setdefault(box, set()).add(op_of[name])
    alone = {box for n in sums if (box := view.node_of.get(n)) is not None
             and all(re.fullmatch(r"AddN(_\d+)?", op) for op in held[box])}
    assert not alone, sorted(alone)
