"""Held out (sixty-seventh round, JAX): written after round 64's rules on loops of micro-batches and
recomputation, and not looked at while they were built.

* ``step_then_eval``: plain JAX (a dict of arrays, no scopes) — one SGD step of an MLP, then the
  loss at the *new* parameters, returned beside them (the line users write to log progress).
* ``scan_accumulate``: a Flax ``linen`` MLP's gradients summed over four micro-batches by
  ``lax.scan`` (the forward and backward passes in its body), applied once by ``optax.adamw``.

Capture with ``hloviz dump benchmarks/heldout/round67_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from jax import lax

_k = jax.random.split(jax.random.PRNGKey(11), 6)
_params = {"w1": jax.random.normal(_k[0], (5, 16)) * 0.3, "b1": jnp.zeros(16),
           "w2": jax.random.normal(_k[1], (16, 1)) * 0.3, "b2": jnp.zeros(1)}


def _loss(p, x, y):
    h = jax.nn.gelu(x @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)


@jax.jit
def step_then_eval(params, x, y):
    grads = jax.grad(_loss)(params, x, y)
    new = jax.tree_util.tree_map(lambda w, g: w - 0.1 * g, params, grads)
    return new, _loss(new, x, y)


class Mlp(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(2, name="out")(nn.relu(nn.Dense(24, name="hidden")(x)))


_mlp = Mlp()
_mlp_params = _mlp.init(_k[2], jnp.ones((1, 5)))["params"]
_adamw = optax.adamw(1e-3)
_adamw_state = _adamw.init(_mlp_params)


@jax.jit
def scan_accumulate(params, opt_state, x, y):
    xs, ys = x.reshape(4, -1, 5), y.reshape(4, -1)

    def loss_fn(p, xb, yb):
        return optax.softmax_cross_entropy_with_integer_labels(_mlp.apply({"params": p}, xb), yb).mean()

    def body(acc, batch):
        loss, g = jax.value_and_grad(loss_fn)(params, *batch)
        return jax.tree_util.tree_map(jnp.add, acc, g), loss

    total, losses = lax.scan(body, jax.tree_util.tree_map(jnp.zeros_like, params), (xs, ys))
    updates, opt_state = _adamw.update(jax.tree_util.tree_map(lambda g: g / 4, total), opt_state, params)
    return optax.apply_updates(params, updates), opt_state, losses.mean()


HLOVIZ_ARGS = {
    "step_then_eval": (_params, jax.random.normal(_k[3], (32, 5)), jax.random.normal(_k[4], (32, 1))),
    "scan_accumulate": (_mlp_params, _adamw_state, jnp.ones((16, 5)), jnp.arange(16) % 2),
}
