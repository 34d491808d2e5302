"""Held out (sixty-fifth round, JAX): written before any change it might lead to, run through every
command. Haiku is not a project dependency (``pip install dm-haiku``).

* ``haiku_step``: a Haiku CNN (``hk.Conv2D`` ×2, ``hk.Flatten``, ``hk.nets.MLP``) made a pure
  function by ``hk.transform`` — Haiku names no scopes in the op names unless asked — trained one
  step by ``optax.chain(clip_by_global_norm, inject_hyperparams(adamw))`` (the learning rate an
  array in the optimizer's state).
* ``haiku_named_step``: the same step with the forward pass's stages wrapped in ``jax.named_scope``
  by hand (``features``, ``head``): what a Haiku user writes to see names, Haiku 0.0.17 having no
  switch that names its modules in the op names.
* ``accumulated_flax_step``: gradient accumulation by ``lax.fori_loop`` over four micro-batches of
  a Flax ``linen`` MLP with ``nn.LayerNorm``, the mean gradient applied once by ``optax.sgd`` with
  Nesterov momentum.

Capture with ``hloviz dump benchmarks/heldout/round65_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import haiku as hk
import jax
import jax.numpy as jnp
import optax
from jax import lax


def _forward(x):
    x = jax.nn.relu(hk.Conv2D(8, 3, name="conv_a")(x))
    x = jax.nn.relu(hk.Conv2D(8, 3, stride=2, name="conv_b")(x))
    return hk.nets.MLP([32, 5], name="classifier")(hk.Flatten()(x))


_model = hk.without_apply_rng(hk.transform(_forward))
_x0 = jnp.ones((4, 12, 12, 3))
_params = _model.init(jax.random.PRNGKey(0), _x0)
_tx = optax.chain(optax.clip_by_global_norm(1.0), optax.inject_hyperparams(optax.adamw)(learning_rate=1e-3))
_opt_state = _tx.init(_params)


def _step(params, opt_state, x, y):
    def loss_fn(p):
        return optax.softmax_cross_entropy_with_integer_labels(_model.apply(p, x), y).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


haiku_step = jax.jit(_step)


def _named_forward(x):
    with jax.named_scope("features"):
        x = jax.nn.relu(hk.Conv2D(8, 3, name="conv_a")(x))
        x = jax.nn.relu(hk.Conv2D(8, 3, stride=2, name="conv_b")(x))
    with jax.named_scope("head"):
        return hk.nets.MLP([32, 5], name="classifier")(hk.Flatten()(x))


_named = hk.without_apply_rng(hk.transform(_named_forward))


@jax.jit
def haiku_named_step(params, opt_state, x, y):
    def loss_fn(p):
        return optax.softmax_cross_entropy_with_integer_labels(_named.apply(p, x), y).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


class Mlp(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.LayerNorm(name="norm")(x)
        x = nn.gelu(nn.Dense(32, name="up")(x))
        return nn.Dense(4, name="out")(x)


_mlp = Mlp()
_mlp_params = _mlp.init(jax.random.PRNGKey(1), jnp.ones((2, 10)))["params"]
_sgd = optax.sgd(0.05, momentum=0.9, nesterov=True)
_sgd_state = _sgd.init(_mlp_params)


@jax.jit
def accumulated_flax_step(params, opt_state, x, y):
    xs, ys = x.reshape(4, -1, 10), y.reshape(4, -1)

    def loss_fn(p, xb, yb):
        return optax.softmax_cross_entropy_with_integer_labels(_mlp.apply({"params": p}, xb), yb).mean()

    def micro(i, acc):
        g = jax.grad(loss_fn)(params, xs[i], ys[i])
        return jax.tree_util.tree_map(jnp.add, acc, g)

    total = lax.fori_loop(0, 4, micro, jax.tree_util.tree_map(jnp.zeros_like, params))
    grads = jax.tree_util.tree_map(lambda g: g / 4, total)
    updates, opt_state = _sgd.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state


HLOVIZ_ARGS = {
    "haiku_step": (_params, _opt_state, _x0, jnp.array([0, 1, 2, 3])),
    "haiku_named_step": (_params, _opt_state, _x0, jnp.array([0, 1, 2, 3])),
    "accumulated_flax_step": (_mlp_params, _sgd_state, jnp.ones((16, 10)), jnp.arange(16) % 4),
}
