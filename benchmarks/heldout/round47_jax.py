"""Held out (forty-seventh round, JAX): written to break the memory estimate, the FLOPs and the
pictures, before any change they might lead to.

* ``switch_scan``: ``lax.switch`` of three branches inside ``lax.scan`` (a conditional with three
  computations, run per step), its gradient.
* ``int8_matmul``: a quantized dense layer — int8 weights and activations, an ``int32``
  accumulating ``dot`` (``preferred_element_type``), a dequantizing scale — and a ``qr`` +
  ``solve_triangular`` least-squares fit.
* ``depthwise_grad``: a depthwise convolution (``feature_group_count`` = channels) and its
  gradients with respect to input and kernel.

Capture with ``hloviz dump benchmarks/heldout/round47_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import jax
import jax.numpy as jnp
from jax.scipy.linalg import solve_triangular


def _switch_loss(w, xs):
    def step(h, x):
        k = jnp.argmax(x) % 3
        h = jax.lax.switch(k, [lambda h: jnp.tanh(h @ w), lambda h: jax.nn.relu(h) * 0.5, lambda h: h + x.sum()], h)
        return h, h.mean()
    h, means = jax.lax.scan(step, jnp.zeros(w.shape[0]), xs)
    return jnp.sum(h ** 2) + means.sum()


@jax.jit
def switch_scan(w, xs):
    return jax.value_and_grad(_switch_loss)(w, xs)


@jax.jit
def int8_matmul(x, w_q, scale, a, b):
    x_q = jnp.clip(jnp.round(x / 0.05), -127, 127).astype(jnp.int8)
    acc = jax.lax.dot(x_q, w_q, preferred_element_type=jnp.int32)
    y = acc.astype(jnp.float32) * (0.05 * scale)
    q, r = jnp.linalg.qr(a)
    coef = solve_triangular(r, q.T @ b, lower=False)
    return jax.nn.gelu(y), coef


def _depthwise_loss(x, k):
    y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                     feature_group_count=x.shape[-1])
    return jnp.sum(jax.nn.silu(y) ** 2)


@jax.jit
def depthwise_grad(x, k):
    return jax.grad(_depthwise_loss, argnums=(0, 1))(x, k)


HLOVIZ_ARGS = {
    "switch_scan": [jnp.ones((16, 16)) * 0.05, jnp.arange(160.0).reshape(10, 16) / 160.0],
    "int8_matmul": [jnp.ones((8, 32)) * 0.3, jnp.ones((32, 16), jnp.int8), jnp.ones((16,)),
                    jnp.arange(60.0).reshape(12, 5) / 60.0 + jnp.eye(12, 5), jnp.ones((12,))],
    "depthwise_grad": [jnp.ones((2, 12, 12, 8)), jnp.ones((3, 3, 1, 8)) * 0.1],
}
