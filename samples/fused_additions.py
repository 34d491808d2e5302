"""The seed example: 1000 chained additions on a 100M-element tensor, and XLA's answer.

Run it through hloviz with no flags (the argument shapes come from ``HLOVIZ_ARGS`` below; no
tensor is allocated to capture it)::

    hloviz stats samples/fused_additions.py:fused_additions
    hloviz dump samples/fused_additions.py:fused_additions_const -o hloviz-out/const

What TensorFlow 2.21 + XLA (CPU) make of them:

* ``fused_additions``: the 1000 adds (``delta`` is a runtime argument) become one loop fusion
  holding all 1000 adds — one kernel, one pass over memory instead of 1000. Nothing folds.
* ``fused_additions_const``: with ``delta`` a constant, XLA's algebraic simplifier folds
  ``x + 1 + 1 + … + 1`` into ``x + 1000``: one fusion with a single add of the constant 1000.
"""

import tensorflow as tf

#: Argument specs for hloviz (HLO shape syntax), by function name. See docs/capture.md,
#: "Argument specs": `--arg` options override these; `input_signature` also works.
HLOVIZ_ARGS = {
    "fused_additions": ["f32[100000000]", "f32[]"],
    "fused_additions_const": ["f32[100000000]"],
}

N_ADDS = 1000


@tf.function(jit_compile=True)
def fused_additions(x, delta):
    """x + delta, 1000 times (a Python loop: traced into 1000 separate AddV2 ops)."""
    for _ in range(N_ADDS):
        x = x + delta
    return x


@tf.function(jit_compile=True)
def fused_additions_const(x):
    """The same chain with a constant delta: XLA folds the 1000 adds into one add of 1000."""
    delta = tf.constant(1.0)
    for _ in range(N_ADDS):
        x = x + delta
    return x
