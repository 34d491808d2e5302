"""A training step whose op names name no layer (a Flax NNX step: ``jit(train_step)/jvp()/…``)
is cut into phases — forward, loss, backward, optimizer — and its overview opens the forward
pass, the model's own structure, before the backward pass and the optimizer (issue 33: "a
transformer: embedding, layer ×N, head"). It drew the model as one closed box beside ten boxes
of its backward pass: opening those cost fewer boxes.

The oracle is the op names, read here with a regular expression: the forward pass's
instructions are those differentiated but not transposed (``jvp(`` without ``transpose(``),
the backward pass's those transposed. Which box holds each instruction is the picture's own
record (:attr:`~hloviz.render.views.View.node_of`). The fixture is the pre-optimization module
of ``benchmarks/heldout/round11_nnx.py`` (``hloviz dump benchmarks/heldout/round11_nnx.py:train_step
-o DIR``; ``DIR/pre.hlo``), a four-block NNX transformer with AdamW.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

FIXTURE = Path(__file__).resolve().parent / "data" / "orders" / "nnx_step.hlo"
_OP_NAME = re.compile(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = .*op_name="([^"]*)"', re.MULTILINE)


def _phases() -> dict[str, str]:
    """Instruction name → ``forward``/``backward`` from its op name (the entry's and the rest)."""
    out = {}
    for name, op in _OP_NAME.findall(FIXTURE.read_text()):
        if "transpose(" in op:
            out[name] = "backward"
        elif "jvp(" in op:
            out[name] = "forward"
    return out


def test_an_nnx_steps_overview_opens_its_forward_pass():
    phases = _phases()
    forward = [n for n, p in phases.items() if p == "forward"]
    backward = [n for n, p in phases.items() if p == "backward"]
    assert len(forward) > 300 and len(backward) > 300  # the fixture is the step it says
    view = draw_module(parse(FIXTURE.read_text()), options=ViewOptions(budget=OVERVIEW_BUDGET))
    box = view.node_of
    in_boxes = Counter(box[n] for n in forward if n in box)
    assert sum(in_boxes.values()) > 0.9 * len(forward)
    # the model's parts: embedding, the layers (a repeat), the head — more than a handful of
    # boxes, none holding most of the forward pass
    assert len(in_boxes) >= 6, in_boxes
    assert max(in_boxes.values()) < 0.8 * sum(in_boxes.values()), in_boxes.most_common(3)
    assert view.nodes <= OVERVIEW_BUDGET


def test_a_forward_pass_beside_named_layers_waits_for_them():
    """Where layers name their own forward and backward work (a hand-written TensorFlow
    transformer: ``moments_4/…`` and ``gradient_tape/moments_4/…``), the step's ``(forward)``
    scope holds only what no layer names: opening it first would draw anonymous blocks of
    fusions in place of the layers."""
    folder = Path(__file__).resolve().parent.parent / "samples" / "captures" / "transformer_train-tf2.21"
    text = (folder / "post.hlo").read_text()
    ops = set(re.findall(r'op_name="([^"]*)"', text))
    layers = {op.split("/")[0] for op in ops if "/" in op} & {op.split("/")[1] for op in ops
                                                              if op.startswith("gradient_tape/") and op.count("/") > 1}
    assert {"moments_4", "Gelu_1"} <= layers  # the oracle reads the capture it says
    view = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))
    assert view.cut is not None
    keys = {n.key for n in view.cut.nodes}
    assert "s:(forward)" in keys  # closed: one box of the unnamed forward work
    opened = {name for name in layers if any(f"s:{name}/" in k for k in keys)}
    assert len(opened) >= 5, (sorted(layers), sorted(keys))


def test_no_block_is_titled_by_a_state_index():
    """NNX names its weights by their place in the model's state (``model.states[0][5]``), optax
    by the place of a transformation in its chain (``opt_state[0].nu['layers']['k']``): those
    indices name no weight, and a block titled ``0 · block of 12`` says nothing true."""
    text = FIXTURE.read_text()
    entry = text[text.index("\nENTRY "):]
    count = 1 + max(int(n) for n in re.findall(r"parameter\((\d+)\)", entry))
    names = {str(i): f"model.states[0][{i}]" for i in range(count)}  # how hloviz dump names them
    view = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET), info={"parameter_names": names})
    titles = [n.rows[0].text for n in view.scene.nodes.values() if n.rows] + [
        c.rows[0].text for c in view.scene.clusters if c.rows]
    blocks = [t for t in titles if " · block of " in t]
    assert len(blocks) >= 6, titles
    assert not [t for t in blocks if re.match(r"[\d.]", t)], blocks


def test_the_scope_holding_most_of_a_step_opens_before_its_optimizer():
    """A Keras transformer's training step: the model's scope holds two thirds of the step, the
    optimizer's the rest. Opening the optimizer into blocks of its updates cost fewer boxes, so
    the overview drew the whole model as one closed box under six of Adam's (issue 33: the
    model's structure first)."""
    import gzip

    folder = Path(__file__).resolve().parent.parent / "samples" / "captures" / "keras_transformer"
    text = gzip.decompress((folder / "pre.hlo.gz").read_bytes()).decode()
    layer_of = {name: op.split("/")[1] for name, op in _OP_NAME.findall(text)
                if op.startswith("transformer_1/") and op.count("/") >= 2}
    layers = set(layer_of.values())
    assert {"token_embedding_1", "block_0_1", "block_1_1", "logits_1"} <= layers
    module = parse(text)
    for budget in (OVERVIEW_BUDGET, OVERVIEW_BUDGET - 2):  # and as render draws it again, two fewer
        _each_part_in_a_box(draw_module(module, options=ViewOptions(budget=budget)).node_of, layer_of)


def _each_part_in_a_box(box: dict[str, str], layer_of: dict[str, str]) -> None:
    boxes_of: dict[str, Counter[str]] = {}
    for name, layer in layer_of.items():
        if name in box:
            boxes_of.setdefault(layer, Counter())[box[name]] += 1
    # each part in a box of its own: the box holding most of one part's ops holds no other's
    # most (the two transformer blocks, alike, may share one: ``block_0 ×2``)
    main: dict[str, set[str]] = {}
    for layer, boxes in boxes_of.items():
        main.setdefault(re.sub(r"^block_\d+_1$", "blocks", layer), set()).add(boxes.most_common(1)[0][0])
    assert len(main) >= 5, main
    for part, boxes in main.items():
        assert not any(boxes & other for p, other in main.items() if p != part), main


def test_an_optimized_flax_steps_model_opens_before_its_optimizer():
    """The optimized Flax CNN step of ``benchmarks/heldout/jax_round6.py:flax_cond_step`` (fixture
    ``flax_cond_step_post.hlo``: its capture's ``post.hlo``, JAX on the CPU): ``SmallCNN``, the
    scope holding most of the step, opens first — its layers a box each — not the optimizer's
    updates, which cost fewer boxes (drawn so, the model was one closed box of all seven
    layers). Oracle: each instruction's layer from its op name (``jvp(SmallCNN)/<layer>``, not
    transposed: the forward pass)."""
    text = (FIXTURE.parent / "flax_cond_step_post.hlo").read_text()
    entry = text.split("\nENTRY ", 1)[1]
    layer = {}
    for name, op in _OP_NAME.findall(entry):
        m = re.search(r"jvp\(SmallCNN\)/(\w+)", op)
        if m and "transpose(" not in op:
            layer[name] = m.group(1)
    assert {"conv_a", "bn_a", "conv_b", "logits"} <= set(layer.values())
    box = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET)).node_of
    held = {box[n] for n in layer if n in box}
    assert len(held) >= 5, held
