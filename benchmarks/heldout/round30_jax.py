"""Held out (thirtieth round, JAX): written after this session's changes (round 29), and not
looked at while they were made.

* ``accumulate_cnn_step``: a Flax ``linen`` CNN with ``nn.BatchNorm`` and ``nn.Dropout``, its
  gradients summed over four micro-batches in a ``lax.scan``, then one ``optax.adamw`` update.

Capture with ``hloviz dump benchmarks/heldout/round30_jax.py:accumulate_cnn_step -o DIR`` (its
arguments are the objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _Cnn(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.Conv(8, (3, 3), name="conv_in")(x)
        x = nn.relu(nn.BatchNorm(use_running_average=not train, name="bn_in")(x))
        x = nn.Conv(16, (3, 3), strides=2, name="conv_mid")(x)
        x = nn.relu(nn.BatchNorm(use_running_average=not train, name="bn_mid")(x))
        x = nn.Dropout(0.2, deterministic=not train, name="drop")(x.mean(axis=(1, 2)))
        return nn.Dense(3, name="classify")(x)


_cnn = _Cnn()
_vars = _cnn.init(jax.random.PRNGKey(0), jnp.zeros((1, 12, 12, 1)), train=False)
_opt = optax.adamw(1e-3)
_opt_state = _opt.init(_vars["params"])


def accumulate_cnn_step(params, batch_stats, opt_state, images, labels, key):
    def micro(carry, batch):
        grads_sum, stats, k = carry
        k, sub = jax.random.split(k)
        x, y = batch

        def loss_fn(p):
            logits, new = _cnn.apply({"params": p, "batch_stats": stats}, x, train=True,
                                     mutable=["batch_stats"], rngs={"dropout": sub})
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean(), new["batch_stats"]

        (_loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        return (jax.tree_util.tree_map(jnp.add, grads_sum, grads), stats, k), None

    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    (grads, batch_stats, _k), _ = jax.lax.scan(
        micro, (zeros, batch_stats, key), (images.reshape(4, -1, 12, 12, 1), labels.reshape(4, -1)))
    updates, opt_state = _opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), batch_stats, opt_state


HLOVIZ_ARGS = {
    "accumulate_cnn_step": [_vars["params"], _vars["batch_stats"], _opt_state, jnp.zeros((8, 12, 12, 1)),
                            jnp.zeros((8,), jnp.int32), jax.random.PRNGKey(3)],
}
