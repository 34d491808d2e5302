"""The seed question in JAX: 1000 chained additions on a 100M-element array, and XLA's answer.

``x + delta`` written 1000 times in a Python loop traces into 1000 ``add`` instructions; XLA's
fusion passes put them into one loop fusion, on CPU and on GPU alike: one kernel, one pass
over memory. ``fused_additions_const`` adds a constant instead, which XLA's algebraic simplifier
folds into a single add of 1000. No array is allocated to capture them::

    hloviz stats samples/jax_fused_additions.py:fused_additions
    hloviz dump samples/jax_fused_additions.py:fused_additions -o hloviz-out/adds

The GPU captures under ``samples/captures/gpu/`` were made from this file on an NVIDIA H200
(``samples/gpu_capture.sh``).
"""

import jax.numpy as jnp

HLOVIZ_ARGS = {
    "fused_additions": ["f32[100000000]", "f32[]"],
    "fused_additions_const": ["f32[100000000]"],
}

N_ADDS = 1000


def fused_additions(x, delta):
    """x + delta, 1000 times."""
    for _ in range(N_ADDS):
        x = x + delta
    return x


def fused_additions_const(x):
    """The same chain with a constant: XLA folds the 1000 adds into one add of 1000."""
    for _ in range(N_ADDS):
        x = x + jnp.float32(1.0)
    return x
