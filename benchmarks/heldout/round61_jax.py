"""Held out (sixty-first round, JAX): written before any change it might lead to, run through every
command.

* ``bn_dropout_step``: a Flax ``linen`` CNN with ``nn.BatchNorm`` (its ``batch_stats`` updated:
  ``mutable=["batch_stats"]``), ``nn.Dropout`` drawing from an ``rngs={"dropout": key}`` key, and
  ``jax.image.resize`` (bilinear) of the input first; one step of ``optax.lamb``.
* ``avg_pool_upsample``: ``lax.reduce_window`` average pooling, ``jax.image.resize`` back up
  (``"linear"``), and a ``jnp.einsum`` mixing channels — inference.

Capture with ``hloviz dump benchmarks/heldout/round61_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from jax import lax


class Net(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool = True):
        x = jax.image.resize(x, (x.shape[0], 16, 16, x.shape[3]), "bilinear")
        x = nn.Conv(8, (3, 3), name="stem")(x)
        x = nn.BatchNorm(use_running_average=not train, name="bn")(x)
        x = nn.relu(x)
        x = nn.Dropout(0.2, deterministic=not train)(x)
        x = nn.Conv(16, (3, 3), strides=2, name="down")(x)
        return nn.Dense(4, name="head")(x.mean(axis=(1, 2)))


_net = Net()
_vars = _net.init({"params": jax.random.PRNGKey(0), "dropout": jax.random.PRNGKey(1)}, jnp.ones((2, 12, 12, 3)))
_tx = optax.lamb(1e-3)
_opt_state = _tx.init(_vars["params"])


@jax.jit
def bn_dropout_step(params, batch_stats, opt_state, x, y, key):
    def loss_fn(p):
        logits, new_state = _net.apply({"params": p, "batch_stats": batch_stats}, x, mutable=["batch_stats"],
                                       rngs={"dropout": key})
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean(), new_state

    (loss, new_state), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, opt_state = _tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), new_state["batch_stats"], opt_state, loss


_mix = jax.random.normal(jax.random.PRNGKey(2), (6, 6)) * 0.4


@jax.jit
def avg_pool_upsample(x):
    pooled = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
    up = jax.image.resize(pooled, x.shape, "linear")
    return jnp.einsum("bhwc,cd->bhwd", up, _mix)


HLOVIZ_ARGS = {
    "bn_dropout_step": (_vars["params"], _vars["batch_stats"], _opt_state, jnp.ones((4, 12, 12, 3)),
                        jnp.array([0, 1, 2, 3]), jax.random.PRNGKey(7)),
    "avg_pool_upsample": (jnp.ones((2, 16, 16, 6)),),
}
