"""Held out (twenty-seventh round, JAX): written after this round's first changes (round 26's),
to check them on models nobody here had captured.

* ``fori_steps``: plain JAX — an MLP whose parameters are a dict passed in, trained five SGD
  steps inside one jitted call by ``lax.fori_loop`` (forward, backward and update in the
  loop's body).
* ``masked_adamw_step``: a Flax ``linen`` MLP of two ``nn.remat``'d blocks (``Dense``,
  ``LayerNorm``), trained with ``optax.adamw`` whose weight decay a mask keeps off the biases
  and scales.

Capture with ``hloviz dump benchmarks/heldout/round27_jax.py:fori_steps -o DIR`` and
``…:masked_adamw_step -o DIR`` (their arguments are the objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


def _mlp(params, x):
    with jax.named_scope("hidden"):
        x = jax.nn.relu(x @ params["w1"] + params["b1"])
    with jax.named_scope("out"):
        return x @ params["w2"] + params["b2"]


def fori_steps(params, x, y):
    def loss_fn(p):
        return jnp.mean((_mlp(p, x) - y) ** 2)

    def step(_, p):
        grads = jax.grad(loss_fn)(p)
        return jax.tree_util.tree_map(lambda w, g: w - 0.05 * g, p, grads)

    return jax.lax.fori_loop(0, 5, step, params)


class _Block(nn.Module):
    width: int

    @nn.compact
    def __call__(self, x):
        return nn.LayerNorm(name="norm")(nn.gelu(nn.Dense(self.width, name="dense")(x)))


class _Net(nn.Module):
    @nn.compact
    def __call__(self, x):
        block = nn.remat(_Block)
        x = block(32, name="block_0")(x)
        x = block(32, name="block_1")(x)
        return nn.Dense(1, name="head")(x)


_net = _Net()
_net_params = _net.init(jax.random.PRNGKey(0), jnp.zeros((1, 12)))["params"]
_mask = jax.tree_util.tree_map_with_path(lambda path, _: path[-1].key == "kernel", _net_params)
_adamw = optax.adamw(1e-3, weight_decay=0.1, mask=_mask)
_adamw_state = _adamw.init(_net_params)


def masked_adamw_step(params, state, x, y):
    def loss_fn(p):
        return jnp.mean((_net.apply({"params": p}, x) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, state = _adamw.update(grads, state, params)
    return optax.apply_updates(params, updates), state, loss


_k = jax.random.split(jax.random.PRNGKey(5), 2)
HLOVIZ_ARGS = {
    "fori_steps": [{"w1": jax.random.normal(_k[0], (6, 16)) * 0.3, "b1": jnp.zeros(16),
                    "w2": jax.random.normal(_k[1], (16, 1)) * 0.3, "b2": jnp.zeros(1)},
                   jnp.ones((32, 6)), jnp.zeros((32, 1))],
    "masked_adamw_step": [_net_params, _adamw_state, jnp.zeros((16, 12)), jnp.zeros((16, 1))],
}
