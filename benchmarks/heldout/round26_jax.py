"""Held out (twenty-sixth round, JAX): written at the start of the round, before any change,
to check the overview on models nobody here had captured.

* ``multi_transform_step``: a Flax ``linen`` CNN (``nn.Conv``, ``nn.GroupNorm``, a ``Dense``
  head) whose kernels train with ``optax.adamw`` and whose biases and norm scales with plain
  ``optax.adam``, split by ``optax.multi_transform`` on labels made from the parameter tree.
* ``multisteps_step``: a Flax MLP whose updates ``optax.MultiSteps`` accumulates over four
  calls before applying ``optax.adam`` (a ``lax.cond`` inside the optimizer).

Capture with ``hloviz dump benchmarks/heldout/round26_jax.py:multi_transform_step -o DIR``
and ``…:multisteps_step -o DIR`` (their arguments are the objects themselves,
``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _Cnn(nn.Module):
    @nn.compact
    def __call__(self, x):
        for i, width in enumerate((16, 32)):
            x = nn.Conv(width, (3, 3), name=f"conv_{i}")(x)
            x = nn.relu(nn.GroupNorm(num_groups=4, name=f"norm_{i}")(x))
        return nn.Dense(10, name="head")(x.mean(axis=(1, 2)))


_cnn = _Cnn()
_cnn_params = _cnn.init(jax.random.PRNGKey(0), jnp.zeros((1, 16, 16, 3)))["params"]
_labels = jax.tree_util.tree_map_with_path(
    lambda path, _: "decay" if path[-1].key == "kernel" else "plain", _cnn_params)
_split = optax.multi_transform({"decay": optax.adamw(1e-3, weight_decay=0.05),
                                "plain": optax.adam(1e-3)}, _labels)
_split_state = _split.init(_cnn_params)


def multi_transform_step(params, state, images, labels):
    def loss_fn(p):
        logits = _cnn.apply({"params": p}, images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, state = _split.update(grads, state, params)
    return optax.apply_updates(params, updates), state, loss


class _Mlp(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.gelu(nn.Dense(64, name="hidden")(x))
        return nn.Dense(1, name="out")(x)


_mlp = _Mlp()
_mlp_params = _mlp.init(jax.random.PRNGKey(1), jnp.zeros((1, 8)))["params"]
_multi = optax.MultiSteps(optax.adam(1e-3), every_k_schedule=4)
_multi_state = _multi.init(_mlp_params)


def multisteps_step(params, state, x, y):
    def loss_fn(p):
        return jnp.mean((_mlp.apply({"params": p}, x) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, state = _multi.update(grads, state, params)
    return optax.apply_updates(params, updates), state, loss


HLOVIZ_ARGS = {
    "multi_transform_step": [_cnn_params, _split_state, jnp.zeros((4, 16, 16, 3)),
                             jnp.zeros((4,), jnp.int32)],
    "multisteps_step": [_mlp_params, _multi_state, jnp.zeros((16, 8)), jnp.zeros((16, 1))],
}
