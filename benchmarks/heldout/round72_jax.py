"""Round 72 (held out, JAX): a loop of steps whose model scans, written after the changes that
open a loop of steps' model first and not looked at while building them.

* ``rnn_fori_steps``: ``lax.fori_loop`` of three optax Adam steps of a Flax model — an
  ``nn.RNN`` over ``nn.GRUCell`` (a scan inside the loop's body) and a ``nn.Dense`` head — on a
  fixed batch, the parameters passed in.

Capture with ``hloviz dump benchmarks/heldout/round72_jax.py:rnn_fori_steps -o DIR`` (``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class Reader(nn.Module):
    @nn.compact
    def __call__(self, x):
        h = nn.RNN(nn.GRUCell(10), name="rnn")(x)
        return nn.Dense(2, name="head")(h[:, -1])


_model = Reader()
_adam = optax.adam(1e-3)


@jax.jit
def rnn_fori_steps(params, x, y):
    state = _adam.init(params)

    def body(i, carry):
        params, state = carry
        grads = jax.grad(lambda p: jnp.mean((_model.apply(p, x) - y) ** 2))(params)
        updates, state = _adam.update(grads, state, params)
        return optax.apply_updates(params, updates), state

    params, _ = jax.lax.fori_loop(0, 3, body, (params, state))
    return params


#: The arguments ``benchmarks/flops_vs_xla.py`` compiles each function with.
HLOVIZ_ARGS = {"rnn_fori_steps": [_model.init(jax.random.PRNGKey(0), jnp.zeros((4, 5, 3))), jnp.zeros((4, 5, 3)),
                                  jnp.zeros((4, 2))]}
