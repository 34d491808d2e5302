"""Held out (fifty-third round, JAX): ops whose FLOPs no round had checked — an ``fft``, a
``cholesky`` and a ``solve_triangular`` (LAPACK calls on the CPU), an ``rng-bit-generator`` — in
programs written as a user writes them.

* ``spectral_conv``: a Fourier neural operator's layer — ``jnp.fft.rfft2``, a product with learned
  complex weights on the low modes, ``jnp.fft.irfft2`` — and its gradient.
* ``gp_posterior``: a Gaussian process's posterior mean and log marginal likelihood:
  ``jnp.linalg.cholesky`` of an RBF kernel matrix, ``jax.scipy.linalg.solve_triangular`` twice.
* ``rbg_dropout``: dropout drawn with ``jax.random.key_data``-free ``rbg`` keys
  (``jax.random.key(…, impl="rbg")``: an ``rng-bit-generator`` in the HLO).

Capture with ``hloviz dump benchmarks/heldout/round53_jax.py:NAME -o DIR``.
"""
import jax
import jax.numpy as jnp
from jax.scipy.linalg import solve_triangular


def _spectral(w, x):
    f = jnp.fft.rfft2(x)
    low = f[:, :6, :5] * (w[0] + 1j * w[1])
    out = jnp.fft.irfft2(jnp.zeros_like(f).at[:, :6, :5].set(low), s=x.shape[1:])
    return jnp.mean((out - x) ** 2)


@jax.jit
def spectral_conv(w, x):
    return jax.value_and_grad(_spectral)(w, x)


@jax.jit
def gp_posterior(xs, ys, xq, lengthscale):
    def rbf(a, b):
        return jnp.exp(-0.5 * ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1) / lengthscale ** 2)
    k = rbf(xs, xs) + 1e-3 * jnp.eye(xs.shape[0])
    chol = jnp.linalg.cholesky(k)
    alpha = solve_triangular(chol.T, solve_triangular(chol, ys, lower=True), lower=False)
    mean = rbf(xq, xs) @ alpha
    log_ml = -0.5 * ys @ alpha - jnp.log(jnp.diag(chol)).sum()
    return mean, log_ml


@jax.jit
def rbg_dropout(x, seed):
    key = jax.random.key(seed, impl="rbg")
    keep = jax.random.bernoulli(key, 0.9, x.shape)
    return jnp.where(keep, x / 0.9, 0.0).sum(-1)


HLOVIZ_ARGS = {
    "spectral_conv": [jnp.ones((2, 6, 5)) * 0.1, jnp.ones((3, 16, 16))],
    "gp_posterior": [jnp.linspace(0, 1, 24).reshape(12, 2), jnp.sin(jnp.arange(12.0)), jnp.ones((5, 2)) * 0.3,
                     jnp.float32(0.5)],
    "rbg_dropout": [jnp.ones((8, 32)), jnp.uint32(7)],
}
