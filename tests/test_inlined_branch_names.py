"""A ``tf.cond`` branch XLA inlines: its ops come out named twice under the cond.

TensorFlow names a branch's ops in full (``cond/sgd/mul`` in the branch of the ``tf.cond`` named
``cond``); XLA, inlining the branch (here turning the conditional into selects), prefixes them
with the cond's name again: ``cond/cond/sgd/mul``. Read as written, the optimized module had a
scope ``cond/cond`` the program never had, and ``stats --by scope`` listed held-out round 79's
Adadelta (``round79.py:tcn_accum_adadelta_step``, under ``if tf.math.is_finite(norm)``) as 982 ops
with no kernel beside a ``cond/cond`` of 142 kernels and no op.

Fixture ``tests/data/steps/cond_skip_step`` (TensorFlow 2.21, XLA:CPU; ``hloviz dump FILE:cond_update
--arg "f32[8]"``), a step that applies its update only when the gradient's norm is finite::

    v = tf.Variable(tf.ones([8])); n = tf.Variable(0, dtype=tf.int64)

    @tf.function(jit_compile=True)
    def cond_update(x):
        g = x * 2.0
        norm = tf.norm(g)
        def apply():
            with tf.name_scope("sgd"):
                v.assign_sub(0.1 * g)
            return tf.constant(0, tf.int64)
        def skip():
            n.assign_add(1)
            return tf.constant(1, tf.int64)
        return tf.cond(tf.math.is_finite(norm), apply, skip)

Oracles: the HLO text by regular expression (op names written before and after optimization, and
which fusion holds which).
"""

from __future__ import annotations

import re
from pathlib import Path

from hloviz.analysis import analyze
from hloviz.analysis.scopes import build_scope_tree
from hloviz.api import stats
from hloviz.capture import Capture
from hloviz.parser import parse

from .step_texts import step_texts

ORDERS = Path(__file__).resolve().parent / "data" / "orders"
_OP_NAME = re.compile(r'op_name="([^"]+)"')


def _fusions_holding(post: str, name_start: str) -> set[str]:
    """The entry's fusions whose fused computation holds an op named ``name_start…``."""
    bodies = dict(re.findall(r"^%([\w.-]+) \([^\n]*\{\n(.*?)\n\}", post, re.MULTILINE | re.DOTALL))
    holding = {c for c, body in bodies.items() if f'op_name="{name_start}' in body}
    return {f for f, c in re.findall(r"^\s*%([\w.-]+) = [^\n]* fusion\([^\n]*calls=%([\w.-]+)", post, re.MULTILINE)
            if c in holding}


def test_the_situation_xla_names_the_branch_ops_twice():
    pre, post = step_texts("cond_skip_step")
    assert 'op_name="cond/sgd/mul"' in pre and "cond/cond" not in pre
    assert 'op_name="cond/cond/sgd/mul"' in post and "conditional(" not in post


def test_the_optimized_scopes_are_the_programs():
    pre, post = step_texts("cond_skip_step")
    written = set(_OP_NAME.findall(pre))
    s = stats(Capture(pre_text=pre, post_text=post, info={}, label="cond_skip_step"))
    assert s.post_tree is not None
    paths = {x.path for x in s.post_tree.walk() if x.kind == "scope"}
    assert "cond/sgd" in paths
    for path in paths:  # every scope of the optimized side is one the program's op names write
        assert any(n == path or n.startswith(path + "/") for n in written), path


def test_the_branch_kernel_is_filed_in_the_branch_scope():
    pre, post = step_texts("cond_skip_step")
    update = _fusions_holding(post, "cond/cond/sgd/")
    assert len(update) == 1  # the situation: one kernel runs the update (and the select)
    s = stats(Capture(pre_text=pre, post_text=post, info={}, label="cond_skip_step"))
    layers = s.kernel_layers()
    (kernel,) = update
    assert layers[kernel].split(" (")[0] == "cond/sgd"


def test_analyzing_two_modules_pairs_them_too():
    pre_t, post_t = step_texts("cond_skip_step")
    pre, post = parse(pre_t), parse(post_t)
    analyze(pre, post)
    tree = build_scope_tree(post, stage="post")
    assert "cond/sgd" in {x.path for x in tree.walk() if x.kind == "scope"}
    assert not any(x.path.startswith("cond/cond") for x in tree.walk() if x.kind == "scope")


def test_a_cond_nested_in_a_branch_keeps_its_name():
    """``wide_deep_step`` (held-out round 12, Keras Adagrad's sparse update): a ``tf.cond`` inside
    another's branch is named ``adagrad/cond/cond`` by TensorFlow itself; pairing renames none of
    the optimized module's scopes."""
    pre_t = (ORDERS / "wide_deep_step.hlo").read_text()
    post_t = (ORDERS / "wide_deep_step_post.hlo").read_text()
    assert 'op_name="adagrad/cond/cond/GatherV2"' in pre_t  # the situation
    alone = build_scope_tree(parse(post_t), stage="post")
    pre, post = parse(pre_t), parse(post_t)
    analyze(pre, post)
    paired = build_scope_tree(post, stage="post")
    assert "adagrad/cond/cond" in {x.path for x in paired.walk() if x.kind == "scope"}
    assert {x.path for x in paired.walk()} == {x.path for x in alone.walk()}


_NESTED = """HloModule nested

%inner_true (p: f32[]) -> f32[] {
  %p = f32[] parameter(0)
  ROOT %x = f32[] negate(%p), metadata={op_type="Neg" op_name="cond/cond/x"}
}

%inner_false (q: f32[]) -> f32[] {
  ROOT %q = f32[] parameter(0)
}

%outer_true (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %x.1 = f32[] exponential(%a), metadata={op_type="Exp" op_name="cond/x"}
  %t = pred[] constant(true)
  ROOT %c = f32[] conditional(%t, %x.1, %x.1), true_computation=%inner_true, false_computation=%inner_false, metadata={op_type="If" op_name="cond/cond"}
}

%outer_false (b: f32[]) -> f32[] {
  ROOT %b = f32[] parameter(0)
}

ENTRY %main (v: f32[], k: pred[]) -> f32[] {
  %v = f32[] parameter(0)
  %k = pred[] parameter(1)
  ROOT %r = f32[] conditional(%k, %v, %v), true_computation=%outer_true, false_computation=%outer_false, metadata={op_type="If" op_name="cond"}
}
"""


def test_a_doubled_name_the_program_writes_itself_is_not_read_back():
    """The outer branch's ``cond/x`` inlined would be ``cond/cond/x`` — which the inner cond's own
    op is named: that name is the inner op's, not a doubled ``cond/x``."""
    from hloviz.analysis.pre_post.names import inlined_origins

    origins = inlined_origins(parse(_NESTED))
    assert "cond/cond/x" not in origins
    assert origins.get("cond/cond/cond/cond/x") == "cond/cond/x"  # the inner op inlined by its own cond
    assert origins.get("cond/cond/cond") == "cond/cond"  # the inner cond inlined by the outer
