"""A kernel of no named scope still says its pass (the ``transformer_train`` sample, TF 2.21).

The hand-written TensorFlow transformer computes at the top of its step (``MatMul_12``, no
``tf.name_scope``); the tape names the gradients ``gradient_tape/MatMul_12/MatMul``. Those kernels
belong to no layer, and ``stats`` printed their layer as an empty cell — the backward pass's work
looking like the forward pass's, whose empty cell means the same. Now the cell is ``(backward)``
(``(bwd)`` in the table) and ``show`` says ``(backward pass)``.

Oracle: the op names in the HLO text (a ``gradient_tape/`` name of an op written at the top level).
"""

from __future__ import annotations

import re
from pathlib import Path

from hloviz.api import stats

CAPTURE = Path(__file__).resolve().parent.parent / "samples" / "captures" / "transformer_train-tf2.21"


def test_a_gradient_of_a_top_level_op_is_backward_in_the_layer_column():
    pre = (CAPTURE / "pre.hlo").read_text()
    post = (CAPTURE / "post.hlo").read_text()
    top = set(re.findall(r'op_name="([^"/]+)"', pre))  # ops written at the top of the step
    dots = re.findall(r'^\s*%([\w.-]+) = \S+ dot\([^)]*\), [^\n]*?op_name="gradient_tape/([^"/]+)/[^"]+"', post, re.MULTILINE)
    kernels = [k for k, forward in dots if forward in top]
    assert kernels  # the situation: unfused gradient dots of ops written at the top level
    layers = stats(str(CAPTURE)).kernel_layers()
    assert {layers[k] for k in kernels} == {"(backward)"}
