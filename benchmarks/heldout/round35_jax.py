"""Held out (thirty-fifth round, JAX): written after this session's first fix, and not looked at
while it was made.

* ``plain_resnet_step``: a residual network in plain ``jax`` — parameters in a nested dict,
  ``lax.conv_general_dilated``, each block under ``jax.named_scope`` — trained one step by
  hand-written SGD with momentum (``jax.tree_util.tree_map``), no Flax, no optax.

Capture with ``hloviz dump benchmarks/heldout/round35_jax.py:plain_resnet_step -o DIR`` (its
arguments are the objects themselves, ``HLOVIZ_ARGS``).
"""
import jax
import jax.numpy as jnp
from jax import lax


def _conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _init(key, channels=8, blocks=3):
    keys = jax.random.split(key, 2 * blocks + 2)
    params = {"stem": jax.random.normal(keys[0], (3, 3, 3, channels)) * 0.1, "blocks": []}
    for b in range(blocks):
        params["blocks"].append({
            "conv_a": jax.random.normal(keys[2 * b + 1], (3, 3, channels, channels)) * 0.1,
            "conv_b": jax.random.normal(keys[2 * b + 2], (3, 3, channels, channels)) * 0.1,
            "scale": jnp.ones((channels,)),
        })
    params["head"] = jax.random.normal(keys[-1], (channels, 10)) * 0.1
    return params


def _forward(params, x):
    with jax.named_scope("stem"):
        h = jax.nn.relu(_conv(x, params["stem"]))
    for b, block in enumerate(params["blocks"]):
        with jax.named_scope(f"block{b}"):
            r = jax.nn.relu(_conv(h, block["conv_a"]))
            h = jax.nn.relu(h + block["scale"] * _conv(r, block["conv_b"]))
    with jax.named_scope("head"):
        return h.mean(axis=(1, 2)) @ params["head"]


def plain_resnet_step(params, velocity, images, labels):
    def loss_fn(p):
        logits = _forward(p, images)
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1))

    loss, grads = jax.value_and_grad(loss_fn)(params)
    velocity = jax.tree_util.tree_map(lambda v, g: 0.9 * v + g, velocity, grads)
    params = jax.tree_util.tree_map(lambda p, v: p - 0.01 * v, params, velocity)
    return params, velocity, loss


_params = _init(jax.random.PRNGKey(0))
HLOVIZ_ARGS = {
    "plain_resnet_step": [_params, jax.tree_util.tree_map(jnp.zeros_like, _params),
                          jax.random.normal(jax.random.PRNGKey(1), (4, 16, 16, 3)), jnp.array([1, 2, 3, 4])],
}
