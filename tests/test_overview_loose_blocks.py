"""A training step's blocks of loose ops beside its named layers — a loss written inline in the
step, its gradient — are closed boxes of its overview, not opened op by op where room is left.

An unseen Flax sequence classifier (held-out round 20: ``nn.RNN`` between an embedding and a
head, ``optax.softmax_cross_entropy_with_integer_labels`` in the step) drew its inline loss as
a column of thirteen single-op boxes (``reduce_max``, ``is_finite``, ``select``, ``sub`` …)
beside the model: 34 boxes, 2,073 pt tall. Closed after the cut is fitted, nothing else opens
in their place. The ROOT (the output, the last box) stays a box of its own, after its block;
a block holding a loop or a branch, and a block of argument and result handling stay as they were.

Fixtures: ``tests/data/orders/jax_inline_loss_step.hlo`` (a Flax MLP's step, its loss inline,
made by ``jax_inline_loss.py``), ``inline_loss_step.hlo`` (a Keras autoencoder's, its mean
squared error inline, made by ``inline_loss.py``) and ``two_term_loss_step.hlo`` (a Keras CNN's,
two Keras losses weighted and summed inline, made by ``two_term_loss.py``). Oracles from the HLO text by regular
expression: the loss's instructions (op names under the step's ``jvp()`` and
``transpose(jvp())`` with no module, JAX's names for the forward and backward work of code
outside every module) and the layers (``jvp(_MLP)/<layer>/``); the picture read from the SVG.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.cli import main

from . import box_labels

HERE = Path(__file__).resolve().parent / "data" / "orders"
JAX = HERE / "jax_inline_loss_step.hlo"
KERAS = HERE / "inline_loss_step.hlo"

pytestmark = pytest.mark.requires_dot

_INST = re.compile(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = [^\n]*?op_name="([^"]*)"', re.MULTILINE)
_TOOLTIP = re.compile(r'<g id="node\d+" class="node">.*?xlink:title="([^"=\s]+) =', re.DOTALL)


def _render(path: Path, out: Path, *extra: str) -> str:
    try:
        code = main(["render", str(path), *extra, "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    return out.read_text(encoding="utf-8")


def _loss(text: str) -> set[str]:
    entry = text.split("\nENTRY ", 1)[1]
    return {name for name, op in _INST.findall(entry)
            if re.match(r"jit\(inline_loss_step\)/(?:jvp|transpose\(jvp)\(\)\)?/", op)}


def test_an_inline_loss_is_closed_beside_the_layers(tmp_path):
    text = JAX.read_text(encoding="utf-8")
    loss = _loss(text)
    assert len(loss) >= 10  # the situation: the loss's forward and backward work, outside the model
    layers = set(re.findall(r'op_name="jit\(inline_loss_step\)/jvp\(_MLP\)/(\w+)/', text))
    assert layers == {"hidden", "middle", "head"}
    svg = _render(JAX, tmp_path / "o.svg")
    assert not set(_TOOLTIP.findall(svg)) & loss, sorted(set(_TOOLTIP.findall(svg)) & loss)
    assert layers <= {label for _, label in box_labels(svg)}
    detailed = _render(JAX, tmp_path / "d.svg", "--budget", "100")
    assert set(_TOOLTIP.findall(detailed)) & loss  # detail on demand


def test_the_output_stays_the_last_box_of_its_own(tmp_path):
    """The Keras autoencoder's inline mean squared error is blocked with the ROOT, which returns
    it: the ROOT leaves that block and is the picture's last box, of its own, and the loss's
    ops are one closed box, not a column of single ops above the ROOT (seven of them, the
    ``Mean`` and the gradient's first multiplies, before)."""
    text = KERAS.read_text(encoding="utf-8")
    entry = text.split("\nENTRY ", 1)[1]
    [root] = re.findall(r"^\s*ROOT %?([\w.\-]+) =", entry, re.MULTILINE)
    # the loss's forward ops: TensorFlow op names of no scope (``sub``, ``Square``, ``Mean``)
    loss = {name for name, op in _INST.findall(entry) if "/" not in op and not op.startswith("XLA_")
            and op != "Add"}
    assert {op for _, op in _INST.findall(entry) if op in ("sub", "Square", "Mean")} == {"sub", "Square", "Mean"}
    assert len(loss) >= 8
    svg = _render(KERAS, tmp_path / "k.svg")
    boxes = box_labels(svg)
    assert boxes[-1][1] == "ROOT tuple"
    drawn = set(_TOOLTIP.findall(svg))
    assert root in drawn
    assert not drawn & loss, sorted(drawn & loss)
    detailed = _render(KERAS, tmp_path / "d.svg", "--budget", "100")
    assert set(_TOOLTIP.findall(detailed)) & loss  # detail on demand


TWO_TERMS = HERE / "two_term_loss_step.hlo"


def test_loose_ops_beside_a_few_layers_are_one_closed_block(tmp_path):
    """A step's loss summed inline from two Keras losses (``0.7 * ce + 0.3 * mse``): its
    weighting and sum are loose ops beside the model, too few to crowd the picture's top level
    into blocks, and were three single-op boxes (``mul``, ``mul_1``, ``add``) under the losses.
    They are one closed block now; the layers and both losses stay boxes of their own."""
    text = TWO_TERMS.read_text(encoding="utf-8")
    entry = text.split("\nENTRY ", 1)[1]
    summed = {name for name, op in _INST.findall(entry) if op in ("mul", "mul_1", "add")
              and not re.search(rf"%{re.escape(name)} = \S+ constant\(", entry)}
    assert len(summed) == 3, summed  # the situation: two weightings and their sum
    svg = _render(TWO_TERMS, tmp_path / "t.svg")
    drawn = set(_TOOLTIP.findall(svg))
    assert not drawn & summed, sorted(drawn & summed)
    labels = {label for _, label in box_labels(svg)}
    assert {"conv", "flat", "logits", "mean_squared_error", "sparse_categorical_crossentropy"} <= labels
    assert box_labels(svg)[-1][1] == "ROOT tuple"
    detailed = _render(TWO_TERMS, tmp_path / "d.svg", "--budget", "100")
    assert set(_TOOLTIP.findall(detailed)) >= summed  # detail on demand


TRANSFORMER = Path(__file__).resolve().parent.parent / "samples" / "captures" / "keras_transformer"


def test_loose_gradient_sums_beside_the_models_layers_are_one_block():
    """Inside the model's own scope too (pre-optimization): the Keras transformer's gradient
    sums TensorFlow adds outside every layer (``AddN``, ``Sum``: where a value read by several
    layers gets its gradients added up) stood as fourteen single-op boxes below its layers;
    connected by their arrows, they are one block. Each box holding one holds a block or a
    layer: three instructions or more, never one alone."""
    import gzip

    from hloviz.api import render

    text = gzip.decompress((TRANSFORMER / "pre.hlo.gz").read_bytes()).decode("utf-8")
    entry = text[text.index("\nENTRY "):]
    sums = [n for n, op_name in _INST.findall(entry) if re.fullmatch(r"(AddN|Sum)(_\d+)?", op_name)]
    assert len(sums) >= 10  # the situation
    node_of = render(str(TRANSFORMER), stage="both", fmt="dot").views[0][1].node_of
    held: dict[str, set[str]] = {}
    for inst, box in node_of.items():
        held.setdefault(box, set()).add(inst)
    sizes = {node_of[n]: len(held[node_of[n]]) for n in sums if n in node_of}
    assert sizes and min(sizes.values()) >= 3, sorted(sizes.values())


def test_loose_ops_inside_the_models_scope_are_blocked():
    """The same inside the model's own scope: an unseen Flax CNN (held-out round 21, ``bn_step``)
    applies ``nn.relu`` and ``.mean()`` in its ``__call__``, outside every layer; their gradients
    (``transpose(jvp(_Net))/div``, ``broadcast_in_dim``, ``select_n``) stood as single boxes at
    the foot of its model. Connected by their arrows, three or more that do work are one block,
    of one pass.
    Fixture: ``tests/data/orders/bn_step_pre.hlo`` (see ``test_overview_unread_and_closed_over``)."""
    from collections import Counter

    from hloviz.parser import parse
    from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

    text = (HERE / "bn_step_pre.hlo").read_text(encoding="utf-8")
    entry = text[text.index("\nENTRY "):]
    backward = [n for n, op_name in _INST.findall(entry)
                if re.fullmatch(r"jit\(bn_step\)/transpose\(jvp\(_Net\)\)/[a-z_]+", op_name)]
    assert len(backward) >= 3  # the situation: the model's own backward ops, in no layer
    node_of = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET)).node_of
    shared = Counter(node_of[n] for n in backward if n in node_of)
    box, most = shared.most_common(1)[0]
    assert most >= 3, shared
    # of one pass: the relu's forward ops (``jvp(_Net)/gt``) run right after their layer, far
    # above; in one block with its gradient, the block stood up there
    forward = {n for n, op_name in _INST.findall(entry) if re.fullmatch(r"jit\(bn_step\)/jvp\(_Net\)/[a-z_]+", op_name)}
    assert forward and not {n for n, b in node_of.items() if b == box} & forward


def test_an_optimized_steps_loose_kernels_are_blocked():
    """After optimization too, where each loose op is a kernel: the ViT training step's cross
    entropy, written in the step (``jvp()`` and ``transpose(jvp())``: JAX's names for the forward
    and backward work outside every module), was eight single fusion boxes between its head and
    its labels; connected by their arrows, they are one block (``--budget 100`` opens it)."""
    import gzip
    from collections import Counter

    from hloviz.api import render

    capture = TRANSFORMER.parent / "loops_vit_train"
    path = capture / "post.hlo"
    text = path.read_text(encoding="utf-8") if path.exists() else gzip.decompress(
        (capture / "post.hlo.gz").read_bytes()).decode("utf-8")
    entry = text[text.index("\nENTRY "):]
    loss = [n for n, op_name in _INST.findall(entry)
            if re.match(r"jit\(vit_train_step\)/(transpose\()?jvp\(\)\)?/", op_name)]
    assert len(loss) >= 3  # the situation
    node_of = render(str(capture), stage="both", fmt="dot").views[1][1].node_of
    shared = Counter(node_of[n] for n in loss if n in node_of)
    assert max(shared.values()) >= 3, shared


_POINT = re.compile(r"(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)")


def test_a_step_counter_does_not_take_the_optimizers_loose_kernels_up_to_the_input(tmp_path):
    """A loose block never holds forward work beside the optimizer's: AdamW's step count,
    incremented by a fusion JAX names like the forward pass (``jit(_where)/select_n``), is read
    by Adam's bias corrections (``pow``); blocked together, the optimizer's block stood above the
    ViT's patch embedding, the first layer, by its earliest phase. Oracles: the fusion reading
    the ``count`` parameter, from the optimized module's text; the boxes' places, from the SVG
    (each box's tooltip names its first instruction)."""
    import gzip

    capture = TRANSFORMER.parent / "loops_vit_train"
    path = capture / "post.hlo"
    text = path.read_text(encoding="utf-8") if path.exists() else gzip.decompress(
        (capture / "post.hlo.gz").read_bytes()).decode("utf-8")
    entry = text[text.index("\nENTRY "):]
    count = re.search(r"%([\w.\-]+) = \S+ parameter\(\d+\).*op_name=\"adamw_state\[\\'count\\'\]\"", entry)
    assert count
    [counter] = re.findall(rf"%([\w.\-]+) = \S+ fusion\(%{re.escape(count.group(1))}\)", entry)
    out = tmp_path / "x.svg"
    try:
        main(["render", str(capture), "--stage", "post", "-o", str(out)])
    except SystemExit as stop:
        assert stop.code in (0, None)
    tops = {}
    for node in out.read_text(encoding="utf-8").split('<g id="node')[1:]:
        title = re.search(r'xlink:title="([^"]*)"', node)
        ys = [float(y) for _x, y in _POINT.findall(node)]  # its outline's path or polygon
        if title and ys:
            tops[title.group(1)] = min(ys)
    [counter_top] = [y for t, y in tops.items() if re.match(rf"({re.escape(counter)} =|\d+ instructions \({re.escape(counter)} )", t)]
    # the first layer's box: the one its kernel is folded into (its tooltip names it first)
    [first_layer] = [y for t, y in tops.items() if re.match(r"\d+ instructions \(params__patch_embed____kernel__", t)]
    assert counter_top > first_layer  # SVG y grows downward
