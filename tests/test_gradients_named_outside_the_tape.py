"""Work of a training step's backward pass and optimizer that TensorFlow and XLA name as neither.

Held-out round 80 (``benchmarks/heldout/round80.py:augment_two_heads_accum_step``, a Keras CNN with
swish activations, max pooling and ``AdamW(gradient_accumulation_steps=4)``) showed two:

* ``tf.nn.silu`` computes its gradient, σ(x)·(1 + x·(1 − σ(x))) times the incoming one, and the
  gradient of its constant β, in ops named at the top (``sub``, ``mul_3``, ``Sum``), outside the
  tape's ``gradient_tape/…``: they were forward work, two "forward" boxes among the backward ones;
* the step returns its variables through copies named ``XLA_Retvals`` of what the optimizer's
  conditional computes: "forward 96 · optimizer 3" in the ``adam_w`` box.

Held-out round 81 (``round81.py:recompute_mha_lion_step``) showed a third: a ``tf.custom_gradient``
that clips its incoming gradient, in a scope of its own beside the model, taken for the update's
clipping (the last test).

Fixture ``tests/data/steps/swish_pool_step`` (TensorFlow 2.21, XLA:CPU), the same two in a small
step (``hloviz dump FILE:swish_pool_step --arg "f32[2,8,8,3]" --arg "s32[2]"``; its max pooling is
there for a third, left as it is: XLA:CPU's unnamed argmax ``reduce-window`` of ``MaxPoolGrad`` is
filed in the activation before the pool, forward)::

    inputs = keras.Input((8, 8, 3))
    x = layers.Conv2D(4, 3, padding="same", name="conv")(inputs)
    x = layers.Activation("swish", name="act")(x)
    x = layers.MaxPooling2D(2, name="pool")(x)
    x = layers.GlobalAveragePooling2D(name="gap")(x)
    model = keras.Model(inputs, layers.Dense(3, name="head")(x), name="net")
    optimizer = keras.optimizers.AdamW(1e-3, gradient_accumulation_steps=2)
    # a GradientTape step: sparse categorical cross entropy, optimizer.apply_gradients

Oracles: the HLO text by regular expression (names, operands, readers).
"""

from __future__ import annotations

import re

from hloviz.analysis.scopes import build_scope_tree
from hloviz.parser import parse

from .step_texts import step_texts

_LINE = re.compile(r'^\s*(?:ROOT )?%([\w.-]+) = [^\n]*?\b([a-z-]+)\(([^\n]*?)\)(?:, [^\n]*)?$', re.MULTILINE)
_NAME = re.compile(r'op_name="([^"]*)"')


def _entry(text: str) -> str:
    body = text[text.index("\nENTRY "):]
    return body[:body.index("\n}")]


def _instructions(text: str) -> dict[str, tuple[str, str, list[str]]]:
    """The entry's instructions: name → (opcode, op name, operand names)."""
    out = {}
    for line in _entry(text).splitlines()[1:]:
        m = re.match(r'\s*(?:ROOT )?%([\w.-]+) = \S+ ([a-z-]+)\((.*)', line)
        if m is None:
            continue
        name = _NAME.search(line)
        out[m.group(1)] = (m.group(2), name.group(1) if name else "", re.findall(r"%([\w.-]+)", m.group(3)))
    return out


def test_the_gradient_tensorflow_names_at_the_top_is_backward():
    pre, _post = step_texts("swish_pool_step")
    insts = _instructions(pre)
    top = {n for n, (_op, name, _) in insts.items() if name and "/" not in name and not name.startswith("XLA_")}
    readers: dict[str, set[str]] = {}
    for n, (_op, _name, operands) in insts.items():
        for o in operands:
            readers.setdefault(o, set()).add(n)

    def tape(n: str) -> bool:
        return insts[n][1].startswith("gradient_tape/")

    # the gradient's ops at the top: those a tape op reads (through others of them), and those
    # reading what a tape op computes (likewise)
    gradient: set[str] = set()
    for n in reversed(list(insts)):  # readers first
        if n in top and any(tape(r) or r in gradient for r in readers.get(n, ())):
            gradient.add(n)
    for n in insts:  # operands first
        if n in top and any(o in insts and (tape(o) or o in gradient) for o in insts[n][2]):
            gradient.add(n)
    assert len(gradient) >= 10  # the situation, and no op of the model or the loss reads one of them:
    assert all(tape(r) or r in top for g in gradient for r in readers.get(g, ()))
    module = parse(pre)
    tree = build_scope_tree(module, stage="pre")
    entry = module.entry
    assert entry is not None
    phases = {i.name: tree.phase_of(i) for i in entry.instructions if i.name in gradient}
    assert set(phases.values()) == {"backward"}, phases


def test_the_returned_variables_are_the_optimizers():
    pre, _post = step_texts("swish_pool_step")
    insts = _instructions(pre)
    # the situation: the variables returned through XLA_Retvals reshapes and copies of elements of
    # the optimizer's conditional's result
    returned: set[str] = set()
    for n, (op, name, operands) in insts.items():
        if name == "XLA_Retvals" and op in ("copy", "reshape") and operands and operands[0] in insts:
            source = insts[operands[0]]
            if operands[0] in returned or (source[0] == "get-tuple-element" and source[1].startswith("adam_w/")):
                returned.add(n)
    assert len(returned) >= 8
    module = parse(pre)
    tree = build_scope_tree(module, stage="pre")
    entry = module.entry
    assert entry is not None
    assert {tree.phase_of(i) for i in entry.instructions if i.name in returned} == {"optimizer"}


def test_a_custom_gradient_in_a_scope_of_its_own_is_backward():
    """``tf.custom_gradient`` whose gradient function clips the incoming gradient
    (``tf.clip_by_norm(dy, 1.0)``; held-out round 81's residual clip in a text classifier): its
    ``clip_by_norm/…`` ops read the gradient and only the layer's gradient below reads them. They
    were the optimizer's, as a step's gradient clipping beside the model is.

    Fixture ``tests/data/steps/clipped_grad_step`` (TensorFlow 2.21, XLA:CPU; ``hloviz dump
    FILE:clipped_grad_step --arg "f32[4,6]" --arg "s32[4]"``)::

        @tf.custom_gradient
        def clip_grad_norm(x):
            def grad(dy):
                return tf.clip_by_norm(dy, 1.0)
            return tf.identity(x), grad

        class ClipGrad(layers.Layer):
            def call(self, x):
                return clip_grad_norm(x)

        inputs = keras.Input((6,))
        x = layers.Dense(8, activation="relu", name="hidden")(inputs)
        x = ClipGrad(name="clip")(x)
        outputs = layers.Add(name="sum")([layers.Dense(3, name="head")(x), layers.Dense(3, name="skip")(x)])
        model = keras.Model(inputs, outputs, name="net")  # two readers: the tape sums their gradients
        # a GradientTape step, SGD(0.1)
    """
    pre, _post = step_texts("clipped_grad_step")
    insts = _instructions(pre)
    clip = {n for n, (_op, name, _) in insts.items() if name.startswith("clip_by_norm/")}
    readers: dict[str, set[str]] = {}
    for n, (_op, _name, operands) in insts.items():
        for o in operands:
            readers.setdefault(o, set()).add(n)
    # what reads the gradient, through others of them (operands first)
    reading: set[str] = set()
    for n in insts:
        if n in clip and any(o in insts and (insts[o][1].startswith(("gradient_tape/", "AddN")) or o in reading)
                             for o in insts[n][2]):
            reading.add(n)
    # the situation: the clip reads the tape's sum of the two heads' gradients, and only the tape's
    # ops read what it computes
    assert any(insts[o][1].startswith("AddN") for n in reading for o in insts[n][2] if o in insts)
    assert len(reading) >= 8
    outside = {r for n in reading for r in readers.get(n, ()) if r not in clip}
    assert outside and all(insts[r][1].startswith("gradient_tape/net_1/hidden_1/") for r in outside)
    module = parse(pre)
    tree = build_scope_tree(module, stage="pre")
    entry = module.entry
    assert entry is not None
    assert {tree.phase_of(i) for i in entry.instructions if i.name in reading} == {"backward"}
