"""Held out (fifty-sixth round, JAX): written at the start of a session, before any change it led
to, run through every command.

* ``newton_step``: one Newton step on a small MLP's parameters — ``jax.hessian`` (forward over
  reverse) of the loss in the flattened parameters (``jax.flatten_util.ravel_pytree``), a damped
  ``jnp.linalg.solve``, the update unflattened.
* ``implicit_layer``: a fixed-point layer ``z = tanh(W z + x)`` solved by ``lax.custom_root``
  (a Newton iteration in a ``while_loop``, differentiated implicitly), its input gradient taken.
* ``int8_mlp``: inference of an MLP quantized to int8 — ``lax.dot_general`` with
  ``preferred_element_type=jnp.int32``, per-channel scales, a ``bfloat16`` layer with
  ``lax.reduce_precision``, and a ``lax.sort`` of scores carrying their indices.

Capture with ``hloviz dump benchmarks/heldout/round56_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import jax
import jax.numpy as jnp
from jax import lax
from jax.flatten_util import ravel_pytree

_k = jax.random.split(jax.random.PRNGKey(5), 8)
_params = {"w1": jax.random.normal(_k[0], (3, 8)) * 0.5, "b1": jnp.zeros(8),
           "w2": jax.random.normal(_k[1], (8, 1)) * 0.5, "b2": jnp.zeros(1)}
_x = jax.random.normal(_k[2], (32, 3))
_y = jnp.sin(_x.sum(-1, keepdims=True))


def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


@jax.jit
def newton_step(params, x, y):
    flat, unravel = ravel_pytree(params)
    f = lambda p: _loss(unravel(p), x, y)  # noqa: E731
    g = jax.grad(f)(flat)
    h = jax.hessian(f)(flat)
    step = jnp.linalg.solve(h + 1e-2 * jnp.eye(flat.size), g)
    return unravel(flat - step), f(flat)


_W = jax.random.normal(_k[3], (6, 6)) * 0.3


def _fixed_point(x):
    def residual(z):
        return z - jnp.tanh(_W @ z + x)

    def newton(f, z0):
        def body(state):
            z, _ = state
            jac = jax.jacfwd(f)(z)
            dz = jnp.linalg.solve(jac, f(z))
            return z - dz, jnp.max(jnp.abs(dz))
        z, _ = lax.while_loop(lambda s: s[1] > 1e-6, body, (z0, jnp.inf))
        return z

    def tangent_solve(g, y):
        return jnp.linalg.solve(jax.jacfwd(g)(y), y)

    return lax.custom_root(residual, jnp.zeros_like(x), newton, tangent_solve)


@jax.jit
def implicit_layer(x):
    z = _fixed_point(x)
    return z, jax.grad(lambda v: jnp.sum(_fixed_point(v) ** 2))(x)


_q1 = jax.random.randint(_k[4], (16, 32), -127, 128, dtype=jnp.int8)
_s1 = jnp.linspace(0.01, 0.02, 32)
_w2 = jax.random.normal(_k[5], (32, 10)).astype(jnp.bfloat16)


@jax.jit
def int8_mlp(x):
    scale = jnp.max(jnp.abs(x), axis=-1, keepdims=True) / 127.0
    xq = jnp.clip(jnp.round(x / scale), -127, 127).astype(jnp.int8)
    acc = lax.dot_general(xq, _q1, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    h = jax.nn.relu(acc.astype(jnp.float32) * scale * _s1)
    h = lax.reduce_precision(h, exponent_bits=8, mantissa_bits=7).astype(jnp.bfloat16)
    scores = (h @ _w2).astype(jnp.float32)
    order = jnp.broadcast_to(jnp.arange(10), scores.shape)
    sorted_scores, sorted_index = lax.sort((-scores, order), dimension=1, num_keys=1)
    return -sorted_scores[:, :3], sorted_index[:, :3]


HLOVIZ_ARGS = {"newton_step": (_params, _x, _y), "implicit_layer": (jnp.linspace(-1, 1, 6),),
               "int8_mlp": (jax.random.normal(_k[6], (4, 16)),)}
