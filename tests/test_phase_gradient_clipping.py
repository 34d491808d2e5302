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


def test_adding_a_loops_gradients_into_their_sum_is_the_optimizers_work():
    # ``benchmarks/heldout/round25_jax.py:accumulate_step``, optimized (``accumulate_dict_step_post
    # .hlo.gz``): plain JAX summing an MLP's gradients over micro-batches in a loop whose tuple
    # carries forward values and the gradients' sums side by side. Each ``…/while/body/closed_call/add``
    # reads a gradient (a ``transpose(jvp(…))`` dot, by regex) and the sum the loop carries: the
    # optimizer's work, found element by element of the loop's tuple (read whole, the tuple's
    # forward elements hid it).
    import gzip

    with gzip.open(FIXTURE.parent / "accumulate_dict_step_post.hlo.gz", "rt", encoding="utf-8") as f:
        text = f.read()
    op_name = dict(re.findall(r'^\s*(?:ROOT )?%([\w.\-]+) = [^\n]*?op_name="([^"]*)"', text, re.MULTILINE))
    adds = {}
    for name, operands in re.findall(r'^\s*%([\w.\-]+) = \S+ fusion\(([^)]*)\)[^\n]*op_name="[^"]*/while/body/closed_call/add"',
                                     text, re.MULTILINE):
        grads = [o for o in re.findall(r"%([\w.\-]+)", operands) if "transpose(jvp(" in op_name.get(o, "")]
        if grads:
            adds[name] = grads
    assert len(adds) >= 2, adds  # the situation: sums of weights' gradients
    module = parse(text)
    tree = build_scope_tree(module)
    by_name = {i.name: i for c in module.computations for i in c.instructions}
    assert {n: tree.phase_of(by_name[n]) for n in adds} == dict.fromkeys(adds, "optimizer")


_TUPLE_STEP = """HloModule tupled

ENTRY %step (x: f32[4,3], w: f32[3,2]) -> (f32[], f32[3,2]) {
  %x = f32[4,3]{1,0} parameter(0), metadata={op_name="XLA_Args"}
  %w = f32[3,2]{1,0} parameter(1), metadata={op_name="XLA_Args"}
  %y = f32[4,2]{1,0} dot(f32[4,3]{1,0} %x, f32[3,2]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="model/dense/MatMul"}
  %dw = f32[3,2]{1,0} dot(f32[4,3]{1,0} %x, f32[4,2]{1,0} %y), lhs_contracting_dims={0}, rhs_contracting_dims={0}, metadata={op_name="gradient_tape/model/dense/MatMul_1"}
  %both = (f32[4,2]{1,0}, f32[3,2]{1,0}) tuple(f32[4,2]{1,0} %y, f32[3,2]{1,0} %dw)
  %out = f32[4,2]{1,0} get-tuple-element((f32[4,2]{1,0}, f32[3,2]{1,0}) %both), index=0
  %grad = f32[3,2]{1,0} get-tuple-element((f32[4,2]{1,0}, f32[3,2]{1,0}) %both), index=1
  %zero = f32[] constant(0)
  %loss = f32[] reduce(f32[4,2]{1,0} %out, f32[] %zero), dimensions={0,1}, to_apply=%sum, metadata={op_name="Mean"}
  %lr = f32[] constant(0.1)
  %lrb = f32[3,2]{1,0} broadcast(f32[] %lr), dimensions={}, metadata={op_name="sgd/Mul"}
  %step = f32[3,2]{1,0} multiply(f32[3,2]{1,0} %lrb, f32[3,2]{1,0} %grad), metadata={op_name="sgd/Mul"}
  %norm = f32[] reduce(f32[3,2]{1,0} %grad, f32[] %zero), dimensions={0,1}, to_apply=%sum, metadata={op_name="Sum"}
  %scaled = f32[3,2]{1,0} broadcast(f32[] %norm), dimensions={}, metadata={op_name="Sum"}
  %new_w = f32[3,2]{1,0} subtract(f32[3,2]{1,0} %w, f32[3,2]{1,0} %step), metadata={op_name="sgd/AssignSubVariableOp"}
  %clipped = f32[3,2]{1,0} multiply(f32[3,2]{1,0} %new_w, f32[3,2]{1,0} %scaled), metadata={op_name="sgd/mul_1"}
  ROOT %r = (f32[], f32[3,2]{1,0}) tuple(f32[] %loss, f32[3,2]{1,0} %clipped)
}

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}
"""


def test_an_element_taken_from_a_tuple_reads_a_gradient_only_where_that_element_is_one():
    # TensorFlow takes a loop's results apart and puts them together as a tuple; an op named at
    # the top (``Mean``: the loss) that reads the tuple's forward element reads no gradient, one
    # (``Sum``) that reads its gradient element does. Oracle: this module, as written here.
    module = parse(_TUPLE_STEP)
    tree = build_scope_tree(module)
    by_name = {i.name: i for i in module.entry.instructions}
    assert tree.phase_of(by_name["loss"]) == "forward"
    assert tree.phase_of(by_name["norm"]) == "optimizer"
