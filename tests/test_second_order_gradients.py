"""An unnamed contraction of two gradients is backward work of the layers they come from.

A gradient penalty (WGAN-GP) differentiates a gradient: the penalty's filter gradient is a
convolution of the critic's input gradient and its activation's gradient. XLA rebuilds it without
an op name, and only the optimizer reads it; placed by its readers, held-out round 83's
``convolution-window-dilated.2`` (230,400 FLOPs, ``benchmarks/heldout/round83.py``) was the
critic's Adam's work, while its siblings were the critic's. What it is made of says whose it is.

The module is written by hand (TensorFlow's names); the expected layer and phase are read off the
op names of the two gradients it contracts.
"""

from __future__ import annotations

from hloviz.analysis.scopes import build_scope_tree
from hloviz.parser import parse

_MODULE = """HloModule a_inference_step, is_scheduled=true, entry_computation_layout={(f32[4,4]{1,0}, f32[4,4]{1,0})->f32[4,4]{1,0}}

ENTRY %main (x: f32[4,4], w: f32[4,4]) -> f32[4,4] {
  %x = f32[4,4]{1,0} parameter(0)
  %w = f32[4,4]{1,0} parameter(1)
  %y = f32[4,4]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_type="MatMul" op_name="critic_1/dense_1/MatMul"}
  %ga = f32[4,4]{1,0} negate(%y), metadata={op_type="LeakyReluGrad" op_name="gradient_tape/critic_1/act_1/LeakyRelu/LeakyReluGrad"}
  %gb = f32[4,4]{1,0} multiply(%x, %x), metadata={op_type="MatMul" op_name="gradient_tape/critic_1/dense_1/MatMul/MatMul"}
  %pen = f32[4,4]{1,0} dot(%ga, %gb), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT %new = f32[4,4]{1,0} subtract(%w, %pen), metadata={op_type="AssignSubVariableOp" op_name="adam/AssignSubVariableOp"}
}
"""


def test_a_gradient_of_gradients_is_the_layers_backward_work():
    module = parse(_MODULE)
    tree = build_scope_tree(module, stage="post")
    pen = module.entry.get("pen")
    assert tree.scope_of(pen).path == "critic_1"  # the innermost scope holding both gradients
    assert tree.phases.get(pen) == "backward"
    assert tree.phases.get(module.entry.get("new")) == "optimizer"
