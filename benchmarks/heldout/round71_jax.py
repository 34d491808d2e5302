"""Round 71 (held out, JAX): loops of steps written after the changes that open a loop of steps'
model first and not looked at while building them.

* ``haiku_scan_steps``: ``lax.scan`` over a stack of batches of optax SGD-with-momentum steps of a
  Haiku MLP (``hk.Linear`` ×2 with ``hk.LayerNorm`` between), the losses stacked.
* ``flax_cnn_fori``: ``lax.fori_loop`` of three optax Adam steps of a Flax CNN (``nn.Conv``,
  ``avg_pool``, ``nn.Dense``) whose parameters come in as arguments.

Capture with ``hloviz dump benchmarks/heldout/round71_jax.py:NAME -o DIR`` (``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import haiku as hk
import jax
import jax.numpy as jnp
import optax


def _mlp(x):
    h = jax.nn.relu(hk.Linear(20, name="hidden")(x))
    h = hk.LayerNorm(-1, True, True, name="ln")(h)
    return hk.Linear(3, name="head")(h)


_net = hk.without_apply_rng(hk.transform(_mlp))
_sgd = optax.sgd(0.05, momentum=0.9)


@jax.jit
def haiku_scan_steps(xs, ys):
    params = _net.init(jax.random.PRNGKey(0), xs[0])
    state = _sgd.init(params)

    def step(carry, batch):
        params, state = carry
        x, y = batch

        def loss(p):
            return optax.softmax_cross_entropy_with_integer_labels(_net.apply(p, x), y).mean()

        value, grads = jax.value_and_grad(loss)(params)
        updates, state = _sgd.update(grads, state, params)
        return (optax.apply_updates(params, updates), state), value

    _, losses = jax.lax.scan(step, (params, state), (xs, ys))
    return losses


class Cnn(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Conv(6, (3, 3), name="conv")(x))
        x = nn.avg_pool(x, (2, 2), (2, 2))
        return nn.Dense(4, name="dense")(x.reshape(x.shape[0], -1))


_cnn = Cnn()
_adam = optax.adam(1e-3)


@jax.jit
def flax_cnn_fori(params, x, y):
    state = _adam.init(params)

    def body(i, carry):
        params, state = carry
        grads = jax.grad(lambda p: optax.softmax_cross_entropy_with_integer_labels(_cnn.apply(p, x), y).mean())(params)
        updates, state = _adam.update(grads, state, params)
        return optax.apply_updates(params, updates), state

    params, _ = jax.lax.fori_loop(0, 3, body, (params, state))
    return params


#: The arguments ``benchmarks/flops_vs_xla.py`` compiles each function with.
HLOVIZ_ARGS = {
    "haiku_scan_steps": [jnp.zeros((4, 6, 10)), jnp.zeros((4, 6), jnp.int32)],
    "flax_cnn_fori": [_cnn.init(jax.random.PRNGKey(0), jnp.zeros((1, 8, 8, 2))), jnp.zeros((5, 8, 8, 2)),
                      jnp.zeros((5,), jnp.int32)],
}
