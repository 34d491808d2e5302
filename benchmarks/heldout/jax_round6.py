"""Held out (sixth round): JAX written by hand, not looked at while any rule was built — a
Flax CNN with batch norm and dropout whose step picks its loss with ``lax.cond``. The round's
other model, a residual MLP whose jitted block the model calls six times, showed two faults
(its pre-optimization FLOPs counted the block once; its loss drawn in the optimizer's box) and
became the sample ``samples/jax_resmlp.py``. The arguments are the arrays themselves
(``HLOVIZ_ARGS``): ``hloviz dump benchmarks/heldout/jax_round6.py:flax_cond_step -o DIR``.
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class SmallCNN(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.Conv(12, (3, 3), name="conv_a")(x)
        x = nn.BatchNorm(use_running_average=not train, name="bn_a")(x)
        x = nn.relu(x)
        x = nn.max_pool(x, (2, 2), strides=(2, 2))
        x = nn.Conv(24, (3, 3), strides=(2, 2), name="conv_b")(x)
        x = nn.relu(x).mean(axis=(1, 2))
        x = nn.Dropout(0.2, deterministic=not train, name="drop")(x)
        return nn.Dense(4, name="logits")(x)


_cnn = SmallCNN()
_key = jax.random.PRNGKey(1)
_vars = _cnn.init({"params": _key, "dropout": _key}, jnp.ones((2, 16, 16, 3)), train=False)
cnn_params, cnn_stats = _vars["params"], _vars["batch_stats"]
cnn_tx = optax.sgd(0.05, momentum=0.9)
cnn_state = cnn_tx.init(cnn_params)
cnn_x, cnn_y, cnn_smooth = jnp.ones((4, 16, 16, 3)), jnp.arange(4) % 4, jnp.float32(0.1)


@jax.jit
def flax_cond_step(params, stats, state, x, y, smoothing):
    def loss_fn(p):
        logits, updated = _cnn.apply({"params": p, "batch_stats": stats}, x, train=True, mutable=["batch_stats"],
                                     rngs={"dropout": jax.random.PRNGKey(0)})
        onehot = jax.nn.one_hot(y, 4)
        target = jax.lax.cond(smoothing > 0, lambda t: optax.smooth_labels(t, smoothing), lambda t: t, onehot)
        return optax.softmax_cross_entropy(logits, target).mean(), updated["batch_stats"]

    (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, state = cnn_tx.update(grads, state, params)
    return optax.apply_updates(params, updates), stats, state, loss


HLOVIZ_ARGS = {"flax_cond_step": [cnn_params, cnn_stats, cnn_state, cnn_x, cnn_y, cnn_smooth]}
