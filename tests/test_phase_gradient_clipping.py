"""A TensorFlow training step that clips its gradients (``tf.clip_by_global_norm``) computes
``global_norm/L2Loss…`` and ``clip_by_global_norm/mul…`` from the gradients, after the backward
pass and for the optimizer; their op names, with no ``gradient_tape/`` in front, read as forward
work, and the overview titled them ``forward · block of 12 ×9``. They are the optimizer's. A
gradient penalty's norm (WGAN-GP), also computed from gradients, feeds the loss the outer tape
differentiates: it stays forward work.

The oracle is the op names, read with a regular expression, and the step each test writes or
names. The fixture is the pre-optimization module of
``benchmarks/heldout/round13.py:multitask_step`` (TensorFlow 2.21; ``hloviz dump … -o DIR``,
``DIR/pre.hlo``); the critic step's is ``data/orders/critic_penalty_step.hlo``, made by
``critic_penalty.py`` beside it; the per-example step's is ``data/orders/per_example_step_pre.hlo``
(``benchmarks/heldout/round15.py:per_example_step``).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from hloviz.analysis.scopes import build_scope_tree
from hloviz.parser import parse

FIXTURE = Path(__file__).resolve().parent / "data" / "orders" / "clipped_multitask_step.hlo"
PENALTY = FIXTURE.parent / "critic_penalty_step.hlo"
PER_EXAMPLE = FIXTURE.parent / "per_example_step_pre.hlo"


def _phases_by_prefix(text: str) -> dict[str, Counter]:
    """The phase hloviz gives each named instruction of the module, counted by the first
    component of its op name."""
    module = parse(text)
    tree = build_scope_tree(module, stage="pre")
    out: dict[str, Counter] = {}
    for inst in module.instructions():
        name = inst.metadata.op_name if inst.metadata else ""
        if name:
            out.setdefault(name.split("/")[0], Counter())[tree.phase_of(inst)] += 1
    return out


def test_clipping_the_gradients_is_the_optimizers_work():
    text = FIXTURE.read_text()
    ops = set(re.findall(r'op_name="([^"]*)"', text))
    # the fixture is the step it says: clipped gradients, SGD, a model and two losses
    assert {"global_norm/L2Loss", "clip_by_global_norm/mul_1", "sgd/AssignAddVariableOp"} <= ops
    phases = _phases_by_prefix(text)
    assert set(phases["global_norm"]) == {"optimizer"}, phases["global_norm"]
    assert set(phases["clip_by_global_norm"]) == {"optimizer"}, phases["clip_by_global_norm"]
    # the model's own forward work and the losses' forward work stay forward
    assert phases["multitask_1"]["forward"] > 100 and set(phases["multitask_1"]) == {"forward"}
    assert phases["huber_loss"]["forward"] > 10


def test_a_gradient_penalty_stays_forward_beside_clipped_gradients():
    """A WGAN-GP critic step (``data/orders/critic_penalty.py``): the penalty's ops read
    gradients too (an inner tape's), but the loss adds the penalty and the outer tape
    differentiates it."""
    text = PENALTY.read_text()
    ops = set(re.findall(r'op_name="([^"]*)"', text))
    assert {"penalty/norm/Sqrt", "clip_by_global_norm/mul_1", "gradient_tape/penalty/norm/SqrtGrad"} <= ops
    phases = _phases_by_prefix(text)
    assert phases["clip_by_global_norm"]["optimizer"] > 0 and "forward" not in phases["clip_by_global_norm"]
    assert phases["penalty"]["forward"] > 0 and "optimizer" not in phases["penalty"], phases["penalty"]


def test_a_clipped_steps_model_is_drawn_in_blocks_not_one_closed_box():
    """Beside its optimizer (clipping the gradients by their global norm, then SGD with Nesterov
    momentum: 390 of the step's 851 ops), the model holds too little of the step for the
    overview's rule of nine tenths to open it; with more layers than the overview has boxes,
    it was drawn as one closed box of 851 ops. Its layers (``multitask_1/<layer>_1/…``, a
    regex over the op names) are spread over blocks of the model."""
    from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

    text = FIXTURE.read_text()
    names = dict(re.findall(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = .*?op_name="(multitask_1/[^"]*)"', text, re.MULTILINE))
    layers = {n: m.group(1) for n, op in names.items() if (m := re.match(r"multitask_1/(\w+?)_1/", op))}
    assert len(set(layers.values())) >= 12
    boxes = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET)).node_of
    holding = {boxes[n] for n in layers if n in boxes}
    assert len(holding) >= 6, len(holding)


def test_the_mean_of_what_a_forward_loop_returns_stays_forward():
    """``loss = tf.reduce_mean(tf.map_fn(one_loss, (x, y)))`` then RMSprop: the ``map_fn``'s
    forward loop carries the tape's accumulators (``gradient_tape/…/accumulator``, backward by
    name) beside the losses it computes, and TensorFlow takes the loop's results apart and puts
    them together again before reading them. The ``Mean`` of the losses reads no gradient: it
    is forward work, not the optimizer's (as which the overview titled its block)."""
    text = PER_EXAMPLE.read_text()
    entry = text.split("\nENTRY ", 1)[1]
    # the situation: the top-level Mean reads a tuple element of the forward loop's results,
    # and the loop's initial tuple holds the tape's accumulators
    assert re.search(r'op_name="Mean"', entry)
    assert re.search(r'= \(.*\) while\(', entry) and 'op_name="gradient_tape/map/while/map/while/' in entry
    phases = _phases_by_prefix(text)
    assert set(phases["Mean"]) == {"forward"}, phases["Mean"]
    assert set(phases["rm_sprop"]) == {"optimizer"}, phases["rm_sprop"]
    assert phases["gradient_tape"]["backward"] > 50
