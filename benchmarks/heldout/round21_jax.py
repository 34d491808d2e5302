"""Held out (twenty-first round, JAX): a Flax ``linen`` CNN with ``nn.BatchNorm`` (its running
statistics a mutable collection updated in the step) and ``nn.Dropout`` (a PRNG key passed in),
trained with an optax chain — a global-norm clip, decoupled weight decay, SGD with Nesterov
momentum — its loss ``optax.sigmoid_binary_cross_entropy`` on two labels per example, written in
the step. Parameters closed over; the arrays and the key are the arguments.

Capture with ``hloviz dump benchmarks/heldout/round21_jax.py:bn_step --arg "f32[8,12,12,3]"
--arg "f32[8,2]" --arg "u32[2]" -o DIR``.
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _Net(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.Conv(8, (3, 3), name="conv1")(x)
        x = nn.BatchNorm(use_running_average=not train, name="bn1")(x)
        x = nn.relu(x)
        x = nn.Conv(16, (3, 3), strides=(2, 2), name="conv2")(x)
        x = nn.BatchNorm(use_running_average=not train, name="bn2")(x)
        x = nn.relu(x).mean(axis=(1, 2))
        x = nn.Dropout(0.2, deterministic=not train, name="drop")(x)
        return nn.Dense(2, name="head")(x)


_net = _Net()
_vars = _net.init(jax.random.PRNGKey(0), jnp.zeros((1, 12, 12, 3)), train=False)
_params, _stats = _vars["params"], _vars["batch_stats"]
_opt = optax.chain(optax.clip_by_global_norm(1.0), optax.add_decayed_weights(1e-4),
                   optax.sgd(0.05, momentum=0.9, nesterov=True))
_state = _opt.init(_params)


def bn_step(images, labels, key):
    def loss_fn(p):
        logits, new = _net.apply({"params": p, "batch_stats": _stats}, images, train=True,
                                 rngs={"dropout": key}, mutable=["batch_stats"])
        return optax.sigmoid_binary_cross_entropy(logits, labels).mean(), new["batch_stats"]

    (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(_params)
    updates, state = _opt.update(grads, _state, _params)
    return optax.apply_updates(_params, updates), stats, state, loss
