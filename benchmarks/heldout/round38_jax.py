"""Held out (thirty-eighth round, JAX): written at the start of a session, before any change,
and not looked at while anything was built; every command run on each.

* ``dp_sgd_step``: differentially private SGD in plain JAX — an MLP whose parameters are a dict,
  per-example gradients by ``jax.vmap(jax.grad(...))``, each clipped to a norm of 1, summed,
  Gaussian noise from a ``jax.random`` key added, the mean applied.
* ``seg_step``: a Flax ``linen`` segmentation net — two ``nn.Conv`` levels down with
  ``nn.max_pool``, ``jax.image.resize`` up, a skip concatenation, a per-pixel ``nn.Conv`` head —
  trained one step by ``optax.lamb`` on a per-pixel softmax cross-entropy.

Capture with ``hloviz dump benchmarks/heldout/round38_jax.py:dp_sgd_step -o DIR`` and
``…:seg_step -o DIR`` (their arguments are the objects themselves, ``HLOVIZ_ARGS``).
"""
import itertools

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


def _init_mlp(key, sizes):
    params = {}
    for k, (m, n) in enumerate(itertools.pairwise(sizes)):
        key, sub = jax.random.split(key)
        params[f"dense{k}"] = {"w": jax.random.normal(sub, (m, n)) / jnp.sqrt(m), "b": jnp.zeros(n)}
    return params


def _mlp(params, x):
    for k in range(len(params)):
        layer = params[f"dense{k}"]
        x = x @ layer["w"] + layer["b"]
        if k < len(params) - 1:
            x = jax.nn.relu(x)
    return x


def _example_loss(params, x, y):
    return optax.softmax_cross_entropy_with_integer_labels(_mlp(params, x[None]), y[None])[0]


def dp_sgd_step(params, key, x, y):
    grads = jax.vmap(jax.grad(_example_loss), in_axes=(None, 0, 0))(params, x, y)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in jax.tree_util.tree_leaves(grads)))
    scale = jnp.minimum(1.0, 1.0 / (norms + 1e-6))
    clipped = jax.tree_util.tree_map(lambda g: jnp.tensordot(scale, g, axes=1), grads)
    leaves, tree = jax.tree_util.tree_flatten(clipped)
    keys = jax.random.split(key, len(leaves))
    noisy = [g + 1.1 * jax.random.normal(k, g.shape) for g, k in zip(leaves, keys)]
    mean = jax.tree_util.tree_unflatten(tree, [g / x.shape[0] for g in noisy])
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, mean)


class _Segmenter(nn.Module):
    @nn.compact
    def __call__(self, x):
        d1 = nn.relu(nn.Conv(8, (3, 3), name="down1")(x))
        d2 = nn.relu(nn.Conv(16, (3, 3), name="down2")(nn.max_pool(d1, (2, 2), (2, 2))))
        up = jax.image.resize(d2, d1.shape[:3] + (16,), "bilinear")
        h = nn.relu(nn.Conv(8, (3, 3), name="fuse")(jnp.concatenate([up, d1], -1)))
        return nn.Conv(4, (1, 1), name="classes")(h)


_seg = _Segmenter()
_seg_params = _seg.init(jax.random.PRNGKey(0), jnp.zeros((2, 16, 16, 3)))
_lamb = optax.lamb(1e-3)
_lamb_state = _lamb.init(_seg_params)


def seg_step(params, opt_state, images, masks):
    def loss_fn(p):
        logits = _seg.apply(p, images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, masks).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _lamb.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


HLOVIZ_ARGS = {
    "dp_sgd_step": [_init_mlp(jax.random.PRNGKey(0), (12, 32, 16, 4)), jax.random.PRNGKey(7),
                    jnp.ones((8, 12)), jnp.arange(8) % 4],
    "seg_step": [_seg_params, _lamb_state, jnp.ones((2, 16, 16, 3)), jnp.zeros((2, 16, 16), jnp.int32)],
}
