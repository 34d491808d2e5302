"""Held out (fiftieth round, JAX): written after round 49's fixes, not looked at while they were made.

* ``neural_ode``: a neural ODE — ``jax.experimental.ode.odeint`` (an adaptive Dormand–Prince
  solver: a ``while_loop`` whose trip count the data decides) of a two-layer MLP, and its
  gradient by the adjoint method (a second adaptive loop, backwards).
* ``batched_eigh``: ``vmap`` of ``jnp.linalg.eigh`` over a batch of symmetric matrices (a batched
  LAPACK call), then a soft top-k of the eigenvalues by ``jax.nn.softmax`` and ``lax.top_k``.

Capture with ``hloviz dump benchmarks/heldout/round50_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import jax
import jax.numpy as jnp
from jax.experimental.ode import odeint


def _field(y, t, w1, w2):
    return jnp.tanh(jnp.tanh(y @ w1) @ w2) - 0.1 * y * t


def _ode_loss(params, y0):
    w1, w2 = params
    ys = odeint(_field, y0, jnp.linspace(0.0, 1.0, 4), w1, w2, rtol=1e-3, atol=1e-3)
    return jnp.mean(ys[-1] ** 2)


@jax.jit
def neural_ode(params, y0):
    return jax.value_and_grad(_ode_loss)(params, y0)


@jax.jit
def batched_eigh(mats, temperature):
    sym = (mats + jnp.swapaxes(mats, -1, -2)) / 2
    values, vectors = jax.vmap(jnp.linalg.eigh)(sym)
    weights = jax.nn.softmax(values / temperature, axis=-1)
    top, idx = jax.lax.top_k(values, 2)
    return (weights[..., None, :] * vectors).sum(-1), top, idx


HLOVIZ_ARGS = {
    "neural_ode": [(jnp.ones((6, 12)) * 0.1, jnp.ones((12, 6)) * 0.1), jnp.ones((3, 6)) * 0.5],
    "batched_eigh": [jnp.arange(4 * 36.0).reshape(4, 6, 6) / 144.0, jnp.float32(0.5)],
}
