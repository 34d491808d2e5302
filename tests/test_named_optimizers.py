"""A Keras optimizer its author named (``Adam(name="c_adam")``) is still the optimizer.

TensorFlow puts an optimizer's update under the optimizer's ``name``; hloviz knew the names Keras
gives each class (``adam``, ``rm_sprop``). A GAN names its two optimizers apart — held-out round
83's WGAN-GP step (``benchmarks/heldout/round83.py``: ``c_adam`` for the critic, ``g_adam`` for
the generator) — and the critic's whole Adam step, 315 ops and 30 kernels, was forward work.

The module is written by hand, TensorFlow style; the phases expected are read off what each op
does: the gradient tape's op is backward, the update of the weight the optimizer's.
"""

from __future__ import annotations

import pytest

from hloviz.analysis.opnames import is_optimizer_scope
from hloviz.analysis.scopes import build_scope_tree
from hloviz.parser import parse

_MODULE = """HloModule a_inference_step, entry_computation_layout={(f32[4,4]{1,0}, f32[4,4]{1,0})->f32[4,4]{1,0}}

ENTRY %main (w: f32[4,4], x: f32[4,4]) -> f32[4,4] {
  %w = f32[4,4]{1,0} parameter(0)
  %x = f32[4,4]{1,0} parameter(1)
  %y = f32[4,4]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_type="MatMul" op_name="critic_1/dense_1/MatMul"}
  %g = f32[4,4]{1,0} dot(%x, %y), lhs_contracting_dims={0}, rhs_contracting_dims={0}, metadata={op_type="MatMul" op_name="gradient_tape/critic_1/dense_1/MatMul/MatMul_1"}
  %lr = f32[] constant(0.001), metadata={op_type="Const" op_name="c_adam/Const"}
  %lrb = f32[4,4]{1,0} broadcast(%lr), dimensions={}, metadata={op_type="Mul" op_name="c_adam/Mul"}
  %step = f32[4,4]{1,0} multiply(%g, %lrb), metadata={op_type="Mul" op_name="c_adam/Mul"}
  ROOT %new = f32[4,4]{1,0} subtract(%w, %step), metadata={op_type="AssignSubVariableOp" op_name="c_adam/AssignSubVariableOp"}
}
"""


def test_a_named_adams_update_is_the_optimizers():
    module = parse(_MODULE)
    tree = build_scope_tree(module, stage="pre")
    phase = {i.name: tree.phases.get(i) for i in module.instructions()}
    assert phase["step"] == phase["new"] == "optimizer"
    assert phase["g"] == "backward" and phase["y"] == "forward"


@pytest.mark.parametrize(("name", "expected"), [
    ("adam", True), ("sgd_1", True), ("c_adam", True), ("g_adam_2", True), ("gen_adam_w", True),
    ("d_optimizer", True), ("critic_rm_sprop", True),
    ("adamantium", False), ("lambda_layer", False), ("pre_training", False), ("critic_1", False), ("dense", False),
])
def test_which_scope_names_are_an_optimizers(name, expected):
    assert is_optimizer_scope(name) is expected
