"""Held out (forty-third round, JAX): written after round 42's fixes, to find what breaks rather
than what draws badly — programs whose HLO holds what the earlier rounds' did not.

* ``debug_step``: a jitted step that prints with ``jax.debug.print`` and calls back into Python
  with ``jax.pure_callback`` (host callbacks: custom calls with side effects and tokens).
* ``linalg_fn``: ``jnp.linalg.eigh``, ``svd`` and ``solve`` on the CPU (LAPACK custom calls),
  a complex ``fft`` and a ``cholesky``.
* ``nested_control``: ``lax.cond`` inside ``lax.scan`` inside ``vmap``, a ``lax.map`` and a
  ``fori_loop`` whose body holds a ``while_loop``.

Capture with ``hloviz dump benchmarks/heldout/round43_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import jax
import jax.numpy as jnp
import numpy as np


def _host_norm(x):
    return np.asarray(np.linalg.norm(x), dtype=np.float32)


@jax.jit
def debug_step(w, x):
    y = jnp.tanh(x @ w)
    jax.debug.print("mean activation {m}", m=y.mean())
    norm = jax.pure_callback(_host_norm, jax.ShapeDtypeStruct((), jnp.float32), y)
    return y / (norm + 1.0)


@jax.jit
def linalg_fn(a, b):
    sym = a @ a.T + 4.0 * jnp.eye(a.shape[0])
    values, vectors = jnp.linalg.eigh(sym)
    u, s, vt = jnp.linalg.svd(a, full_matrices=False)
    x = jnp.linalg.solve(sym, b)
    chol = jnp.linalg.cholesky(sym)
    spectrum = jnp.fft.fft(a.astype(jnp.complex64), axis=-1)
    return values.sum() + s.sum() + x.sum() + chol.sum() + jnp.abs(spectrum).mean() + (u @ vt).sum() + vectors[0, 0]


@jax.jit
def nested_control(xs, threshold):
    def per_row(row):
        def step(carry, v):
            carry = jax.lax.cond(v > threshold, lambda c: c + v, lambda c: c * 0.5, carry)
            return carry, carry
        return jax.lax.scan(step, 0.0, row)[1]

    scanned = jax.vmap(per_row)(xs)
    mapped = jax.lax.map(lambda r: jnp.sort(r)[::-1], xs)

    def outer(i, acc):
        def cond(s):
            return s[1] < i + 3
        def body(s):
            return s[0] * 1.01 + 1.0, s[1] + 1
        return acc + jax.lax.while_loop(cond, body, (acc, 0))[0]

    return scanned.sum() + mapped.sum() + jax.lax.fori_loop(0, 4, outer, 0.0)


HLOVIZ_ARGS = {
    "debug_step": [jnp.ones((8, 8)) * 0.1, jnp.ones((4, 8))],
    "linalg_fn": [jnp.arange(36.0).reshape(6, 6) / 36.0, jnp.ones((6,))],
    "nested_control": [jnp.arange(24.0).reshape(4, 6) / 24.0, jnp.float32(0.3)],
}
