"""Held out (fifty-ninth round, JAX): written before any change it might lead to, run through
every command.

* ``pallas_add_relu``: a Pallas kernel (``pl.pallas_call`` over a grid of 4 blocks, ``interpret=True``
  as on a CPU) adding two arrays and applying ReLU, then a ``jnp`` reduction.
* ``bisect_roots``: roots of ``x**3 - a`` by bisection in a ``lax.while_loop`` whose condition reads
  the data (the widest interval still open), vmapped over 64 values of ``a``.
* ``switch_scan_step``: a ``lax.scan`` (``unroll=4``) whose body picks one of three layers by
  ``lax.switch`` on a step-dependent index, its body under ``jax.checkpoint`` with the
  ``nothing_saveable`` policy, and the gradient of the final state.

Capture with ``hloviz dump benchmarks/heldout/round59_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl


def _add_relu_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = jnp.maximum(x_ref[...] + y_ref[...], 0.0)


@jax.jit
def pallas_add_relu(x, y):
    out = pl.pallas_call(_add_relu_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(4,),
                         in_specs=[pl.BlockSpec((8, 16), lambda i: (i, 0)), pl.BlockSpec((8, 16), lambda i: (i, 0))],
                         out_specs=pl.BlockSpec((8, 16), lambda i: (i, 0)), interpret=True)(x, y)
    return out.sum(axis=0)


def _bisect(a):
    def cond(state):
        lo, hi = state
        return hi - lo > 1e-5

    def body(state):
        lo, hi = state
        mid = 0.5 * (lo + hi)
        below = mid ** 3 < a
        return jnp.where(below, mid, lo), jnp.where(below, hi, mid)

    lo, hi = lax.while_loop(cond, body, (jnp.float32(0.0), jnp.maximum(a, 1.0)))
    return 0.5 * (lo + hi)


@jax.jit
def bisect_roots(a):
    return jax.vmap(_bisect)(a)


_ws = jax.random.normal(jax.random.PRNGKey(59), (3, 8, 8)) * 0.3


def _final(ws, h0):
    @jax.checkpoint
    def body(h, i):
        branch = i % 3
        h = lax.switch(branch, [lambda v: jnp.tanh(v @ ws[0]), lambda v: jax.nn.relu(v @ ws[1]),
                                lambda v: jnp.sin(v @ ws[2])], h)
        return h, h.sum()

    h, sums = lax.scan(body, h0, jnp.arange(12), unroll=4)
    return jnp.sum(h ** 2) + sums.mean()


@jax.jit
def switch_scan_step(ws, h0):
    return jax.value_and_grad(_final)(ws, h0)


HLOVIZ_ARGS = {
    "pallas_add_relu": (jnp.ones((32, 16)), jnp.linspace(-1, 1, 512).reshape(32, 16)),
    "bisect_roots": (jnp.linspace(0.1, 27.0, 64),),
    "switch_scan_step": (_ws, jnp.ones((4, 8))),
}
