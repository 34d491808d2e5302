"""Held out (twenty-eighth round, JAX): written after this round's changes (rounds 26 and 27),
and not looked at while they were made.

* ``scan_remat_step``: a Flax ``linen`` model scanning one ``nn.remat``'d MLP block four times
  (``nn.scan`` over ``nn.remat(Block)``, parameters stacked), trained with SGD with momentum.
* ``cond_clip_step``: plain JAX — a two-layer MLP whose update a ``lax.cond`` picks: the
  gradients rescaled when their global norm is over 1, as they are otherwise.

Capture with ``hloviz dump benchmarks/heldout/round28_jax.py:scan_remat_step -o DIR`` and
``…:cond_clip_step -o DIR`` (their arguments are the objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _Block(nn.Module):
    @nn.compact
    def __call__(self, x, _):
        h = nn.relu(nn.Dense(32, name="up")(x))
        return x + nn.Dense(16, name="down")(h), None


class _Stack(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Dense(16, name="embed")(x)
        scanned = nn.scan(nn.remat(_Block), variable_axes={"params": 0}, split_rngs={"params": True},
                          length=4)
        x, _ = scanned(name="blocks")(x, None)
        return nn.Dense(1, name="head")(x)


_stack = _Stack()
_stack_params = _stack.init(jax.random.PRNGKey(0), jnp.zeros((1, 8)))["params"]
_sgd = optax.sgd(0.01, momentum=0.9)
_sgd_state = _sgd.init(_stack_params)


def scan_remat_step(params, state, x, y):
    def loss_fn(p):
        return jnp.mean((_stack.apply({"params": p}, x) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, state = _sgd.update(grads, state, params)
    return optax.apply_updates(params, updates), state, loss


def _mlp(params, x):
    with jax.named_scope("layer_1"):
        x = jnp.tanh(x @ params["w1"])
    with jax.named_scope("layer_2"):
        return x @ params["w2"]


def cond_clip_step(params, x, y):
    grads = jax.grad(lambda p: jnp.mean((_mlp(p, x) - y) ** 2))(params)
    norm = optax.global_norm(grads)
    grads = jax.lax.cond(norm > 1.0, lambda g: jax.tree_util.tree_map(lambda t: t / norm, g),
                         lambda g: g, grads)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


_k = jax.random.split(jax.random.PRNGKey(7), 2)
HLOVIZ_ARGS = {
    "scan_remat_step": [_stack_params, _sgd_state, jnp.zeros((16, 8)), jnp.zeros((16, 1))],
    "cond_clip_step": [{"w1": jax.random.normal(_k[0], (5, 12)), "w2": jax.random.normal(_k[1], (12, 1))},
                       jnp.ones((8, 5)), jnp.zeros((8, 1))],
}
