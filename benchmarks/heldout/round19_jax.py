"""Held out (nineteenth round, JAX): one step of MAML as a user writes it — a Flax ``linen``
regressor adapted to a task by one inner SGD step inside the loss (``jax.grad`` in the forward
pass), its adapted loss on held-out points differentiated again for the meta update with optax
``adam``: second-order gradients, the backward pass of a backward pass. Parameters closed over.

Capture with ``hloviz dump benchmarks/heldout/round19_jax.py:maml_step --arg "f32[10,1]" --arg
"f32[10,1]" --arg "f32[10,1]" --arg "f32[10,1]" -o DIR``.
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _Regressor(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(40, name="layer_1")(x))
        x = nn.relu(nn.Dense(40, name="layer_2")(x))
        return nn.Dense(1, name="out")(x)


_model = _Regressor()
_params = _model.init(jax.random.PRNGKey(0), jnp.zeros((1, 1)))["params"]
_opt = optax.adam(1e-3)
_state = _opt.init(_params)


def _mse(p, x, y):
    return jnp.mean((_model.apply({"params": p}, x) - y) ** 2)


def _adapted_loss(p, support_x, support_y, query_x, query_y):
    grads = jax.grad(_mse)(p, support_x, support_y)
    fast = jax.tree_util.tree_map(lambda w, g: w - 0.01 * g, p, grads)
    return _mse(fast, query_x, query_y)


def maml_step(support_x, support_y, query_x, query_y):
    loss, grads = jax.value_and_grad(_adapted_loss)(_params, support_x, support_y, query_x, query_y)
    updates, _ = _opt.update(grads, _state, _params)
    return optax.apply_updates(_params, updates), loss
