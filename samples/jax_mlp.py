"""A tiny JAX model: a two-layer MLP's forward pass, summed.

hloviz sees that this file imports jax (and not tensorflow), so it lowers ``mlp`` with
``jax.jit(mlp).lower(...)`` against the shapes below — no arrays are allocated::

    hloviz stats samples/jax_mlp.py:mlp
"""

import jax
import jax.numpy as jnp

HLOVIZ_ARGS = {
    "mlp": ["f32[8,16]", "f32[16,32]", "f32[32,4]"],
}


def mlp(x, w1, w2):
    h = jax.nn.relu(x @ w1)
    return jnp.sum(jnp.tanh(h @ w2))
