"""Held out (eighteenth round, JAX): a Flax ``linen`` model that refines its estimate with
``jax.lax.fori_loop`` (a small recurrent core applied eight times inside ``__call__``), an
encoder and a decoder around it, trained with optax ``lion`` and an exponential-decay schedule.
The step is a ``jax.jit`` function taking the parameters and the optimizer state, called from a
wrapper that closes over them (``--arg`` specs are arrays, not pytrees): the capture traces the
wrapper, so the parameters are constants of its module and the step a nested jit.

Capture with ``hloviz dump benchmarks/heldout/round18_jax.py:refine_step --arg "f32[8,12]" --arg
"f32[8,4]" -o DIR``.
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _Refiner(nn.Module):
    @nn.compact
    def __call__(self, x):
        h = nn.relu(nn.Dense(32, name="encoder")(x))
        core = nn.Dense(32, name="core")
        h = jax.lax.fori_loop(0, 8, lambda _i, s: s + 0.1 * jnp.tanh(core(s)), h)
        return nn.Dense(4, name="decoder")(h)


_model = _Refiner()
_params = _model.init(jax.random.PRNGKey(0), jnp.zeros((1, 12)))["params"]
_opt = optax.lion(optax.exponential_decay(1e-3, transition_steps=100, decay_rate=0.9))
_state = _opt.init(_params)


@jax.jit
def _step(params, state, x, y):
    def loss_fn(p):
        return jnp.mean((_model.apply({"params": p}, x) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, state = _opt.update(grads, state, params)
    return optax.apply_updates(params, updates), state, loss


def refine_step(x, y):
    return _step(_params, _state, x, y)
