"""A JAX training step whose parameters and optimizer state are donated (``donate_argnums``):
XLA may write the updated values into the arguments' buffers (``input_output_alias``).

    hloviz memory samples/jax_donated.py:train_step

(the argument specs are ``HLOVIZ_ARGS`` below).
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp


def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


@partial(jax.jit, donate_argnums=(0, 1))
def train_step(params, momentum, x, y):
    """One step of SGD with momentum; params and momentum are donated."""
    grads = jax.grad(_loss)(params, x, y)
    momentum = jax.tree_util.tree_map(lambda m, g: 0.9 * m + g, momentum, grads)
    params = jax.tree_util.tree_map(lambda p, m: p - 0.01 * m, params, momentum)
    return params, momentum


PARAMS = {"w1": "f32[256,512]", "b1": "f32[512]", "w2": "f32[512,10]", "b2": "f32[10]"}
HLOVIZ_ARGS = {"train_step": [PARAMS, PARAMS, "f32[64,256]", "f32[64,10]"]}
