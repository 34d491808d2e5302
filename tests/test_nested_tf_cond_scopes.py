"""An op in a ``tf.cond`` nested in another's branch is filed under its own name's scope.

TensorFlow names a branch's ops in full, the nested ``tf.cond`` too: held-out round 83's churn
model (``benchmarks/heldout/round83.py``), where centered RMSprop deduplicates an embedding's
sparse gradient in ``rm_sprop/cond/cond`` inside the branch of ``rm_sprop/cond``. The scope tree
prefixed the nested branch with both callers' names and filed its ops under
``rm_sprop/cond/rm_sprop/cond/cond/rm_sprop/cond/cond`` — six nested rows no op name has.

The module is written by hand; the expected scope is each op's own name, read by hand.
"""

from __future__ import annotations

from hloviz.analysis.scopes import build_scope_tree
from hloviz.parser import parse

_MODULE = """HloModule a_inference_step, entry_computation_layout={(pred[], f32[4]{0})->f32[4]{0}}

%inner_true (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  ROOT %Mul.1 = f32[4]{0} multiply(%a, %a), metadata={op_type="Mul" op_name="opt/cond/cond/Mul"}
}

%inner_false (b: f32[4]) -> f32[4] {
  %b = f32[4]{0} parameter(0)
  ROOT %Neg.1 = f32[4]{0} negate(%b), metadata={op_type="Neg" op_name="opt/cond/cond/Neg"}
}

%outer_true (t: (pred[], f32[4])) -> f32[4] {
  %t = (pred[], f32[4]{0}) parameter(0)
  %k = pred[] get-tuple-element(%t), index=0
  %v = f32[4]{0} get-tuple-element(%t), index=1
  %Add.1 = f32[4]{0} add(%v, %v), metadata={op_type="AddV2" op_name="opt/cond/add"}
  ROOT %cond.2 = f32[4]{0} conditional(%k, %Add.1, %Add.1), true_computation=%inner_true, false_computation=%inner_false, metadata={op_type="If" op_name="opt/cond/cond"}
}

%outer_false (f: (pred[], f32[4])) -> f32[4] {
  %f = (pred[], f32[4]{0}) parameter(0)
  ROOT %w = f32[4]{0} get-tuple-element(%f), index=1
}

ENTRY %main (p: pred[], x: f32[4]) -> f32[4] {
  %p = pred[] parameter(0)
  %x = f32[4]{0} parameter(1)
  %both = (pred[], f32[4]{0}) tuple(%p, %x)
  ROOT %cond.1 = f32[4]{0} conditional(%p, %both, %both), true_computation=%outer_true, false_computation=%outer_false, metadata={op_type="If" op_name="opt/cond"}
}
"""


def test_a_nested_conds_ops_keep_their_own_scope():
    module = parse(_MODULE)
    tree = build_scope_tree(module, stage="pre")
    scope = {i.name: tree.scope_of(i).path for i in module.instructions() if i.metadata.op_name}
    assert scope["Mul.1"] == scope["Neg.1"] == "opt/cond/cond"
    assert scope["Add.1"] == "opt/cond"
    assert not any("opt/cond/opt" in s.path for s in tree.walk())  # no scope the op names never had
